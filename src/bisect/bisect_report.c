/* Outputs of a headless bisect: the JSON the issue specifies and text. */
#include "db_bisect.h"

#include <math.h>
#include <stdio.h>

#include "util/text.h"
#include "db_esc.h"
#include "db_json.h"

static void json_layer(FILE *out, int layer)
{
	if (layer == DB_LAYER_FINAL)
		fputs("\"final\"", out);
	else
		fprintf(out, "%d", layer);
}

void db_bisect_result_json(FILE *out, const db_bisect *b,
                           const db_bisect_result *res)
{
	fputs("{\"kind\": ", out);
	db_json_str(out, db_bisect_kind_name(res->kind));
	fputs(", \"first_bad_layer\": ", out);
	if (res->has_first_bad)
		json_layer(out, res->first_bad_layer);
	else
		fputs("null", out);
	fputs(", \"first_bad_stage\": ", out);
	db_json_str(out, res->first_bad_stage);
	fputs(", \"first_bad_substage\": ", out);
	db_json_str(out, res->first_bad_substage);
	fputs(", \"first_bad_hint\": ", out);
	db_hint_json(out, &res->first_bad_hint);
	fputs(", \"bad_ranks\": [", out);
	for (size_t i = 0; i < res->n_bad_ranks; i++)
		fprintf(out, "%s%d", i ? ", " : "", res->bad_ranks[i]);
	fprintf(out, "], \"all_ranks_bad\": %s, \"ranks_separable\": %s, \"probe\": {\"stage\": ",
	        res->all_ranks_bad ? "true" : "false", res->ranks_unknown ? "false" : "true");
	db_json_str(out, res->probe);
	fputs(", \"how\": ", out);
	db_json_str(out, db_probe_how_name(res->probe_how));
	fputs(", \"why\": ", out);
	db_json_str(out, res->probe_why);
	fputs("}, \"phase\": ", out);
	db_json_str(out, res->phase[0] ? res->phase : NULL);
	fputs(", \"pass\": ", out);
	db_json_field(out, res->pass, true);
	fputs(", \"pass_why\": ", out);
	db_json_str(out, res->pass_why[0] ? res->pass_why : NULL);
	fputs(", \"crossing_layer\": ", out);
	if (res->has_crossing)
		json_layer(out, res->crossing_layer);
	else
		fputs("null", out);
	fprintf(out, ", \"input_ids_mismatch\": %s, \"steps\": [",
	        res->input_ids_mismatch ? "true" : "false");
	for (size_t i = 0; i < b->n_steps; i++) {
		const db_bisect_step *s = &b->steps[i];
		fputs(i ? ",\n  {\"layer\": " : "\n  {\"layer\": ", out);
		json_layer(out, s->layer);
		fputs(", \"verdict\": ", out);
		db_json_str(out, db_verdict_name(s->verdict));
		fprintf(out, ", \"by\": \"%s\", \"cos\": ", s->by_user ? "user" : "auto");
		db_json_num(out, s->cos);
		fputs(", \"rel\": ", out);
		db_json_num(out, s->rel);
		fputc('}', out);
	}
	fputs(b->n_steps ? "\n]}\n" : "]}\n", out);
}

void db_bisect_result_text(FILE *out, const db_bisect *b,
                           const db_bisect_result *res)
{
	char l[32];
	fprintf(out, "%s\n", db_esc(res->summary));
	if (res->phase[0])
		fprintf(out, "  phase:    %s\n", db_esc(res->phase));
	if (res->pass_why[0])
		fprintf(out, "  pass:     %s (%s)\n", db_esc(res->pass), db_esc(res->pass_why));
	if (res->probe_why[0])
		fprintf(out, "  probe:    %s\n", db_esc(res->probe_why));
	if (res->first_bad_stage && res->kind == DB_KIND_SUDDEN) {
		fprintf(out, "  stage:    %s\n", db_esc(res->first_bad_stage));
		if (res->first_bad_substage)
			fprintf(out, "  substage: %s\n", db_esc(res->first_bad_substage));
		if (res->first_bad_hint.kind != DB_HINT_NONE) {
			char h[256];
			fprintf(out, "  hint:     %s\n",
			        db_hint_text(&res->first_bad_hint, !db_term_utf8(), h, sizeof h));
		}
	}
	if (res->n_bad_ranks) {
		fputs("  bad ranks:", out);
		for (size_t i = 0; i < res->n_bad_ranks; i++)
			fprintf(out, " %d", res->bad_ranks[i]);
		fputs(res->all_ranks_bad ? " (every rank)\n" : " (the other ranks are good)\n", out);
	}
	if (res->ranks_unknown)
		fputs("  bad ranks: not separable (the culprit is compared merged: the other side "
		      "has another parallel layout)\n", out);
	if (res->has_crossing)
		fprintf(out, "  crosses the band at %s\n",
		        db_layer_label(res->crossing_layer, l, sizeof l));
	if (res->standout_layer != INT_MIN && res->kind == DB_KIND_DRIFT)
		fprintf(out, "  note: %s drops on its own beyond the drift; bisect again with a "
		        "looser predicate (--band drift) to isolate it\n",
		        db_layer_label(res->standout_layer, l, sizeof l));
	if (res->n_walk) {
		fputs("\nintra-layer walk:\n", out);
		for (size_t i = 0; i < res->n_walk; i++) {
			const db_substage_row *w = &res->walk[i];
			if (w->one_side)
				fprintf(out, "  %s %-32s %s (the other layers have it in both)\n",
				        w->culprit ? ">" : " ", db_esc(w->stage), db_esc(w->one_side));
			else
				fprintf(out, "  %s %-32s cos %-12.8f rel %-10.3g %-8s dcos %+.3g\n",
				        w->culprit ? ">" : " ", db_esc(w->stage), w->cos, w->rel,
				        db_band_name(w->band), isfinite(w->step_drop) ? -w->step_drop : NAN);
		}
	}
	if (b->n_steps) {
		fputs("\nsteps:\n", out);
		for (size_t i = 0; i < b->n_steps; i++) {
			const db_bisect_step *s = &b->steps[i];
			fprintf(out, "  %2zu. %-6s %-4s (%s) cos %.8f rel %.3g %s\n", i + 1,
			        db_layer_label(s->layer, l, sizeof l), db_verdict_name(s->verdict),
			        s->by_user ? "user" : "auto", s->cos, s->rel, db_band_name(s->band));
		}
	}
	/* the search always ends on a layer; with accumulated drift the
	 * analysis says no layer is the culprit, and the state must agree */
	if (res->kind == DB_KIND_DRIFT && b->phase == DB_BP_FOUND && b->first_bad >= 0)
		fprintf(out, "\nstate: drift: no single layer stands out; the band is crossed at %s\n",
		        db_layer_label(b->layers[b->first_bad], l, sizeof l));
	else
		fprintf(out, "\nstate: %s\n", db_esc(b->msg));
}
