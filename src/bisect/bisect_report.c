/* Outputs of a headless bisect: the JSON the issue specifies and text. */
#include "db_bisect.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
	fputs(", \"first_bad_role\": ", out);
	db_json_str(out, res->n_walk && res->first_bad_stage ? db_stage_role_name(res->first_bad_role)
	                                                     : NULL);
	fputs(", \"first_bad_calls\": ", out);
	db_json_str(out, res->calls[0] ? res->calls : NULL);
	fputs(", \"first_bad_frame\": {\"ref\": ", out);
	db_json_str(out, res->frame_ref[0] ? res->frame_ref : NULL);
	fputs(", \"target\": ", out);
	db_json_str(out, res->frame_tgt[0] ? res->frame_tgt : NULL);
	fputc('}', out);
	fputs(", \"first_bad_at_or_before\": ", out);
	db_json_str(out, res->at_or_before);
	fputs(", \"first_bad_hint\": ", out);
	db_hint_json(out, &res->first_bad_hint);
	fputs(", \"bad_ranks\": [", out);
	for (size_t i = 0; i < res->n_bad_ranks; i++)
		fprintf(out, "%s%d", i ? ", " : "", res->bad_ranks[i]);
	fputc(']', out);
	if (res->slots) {       /* --slots: the first slot whose bits differ */
		fputs(", \"slot\": ", out);
		if (res->n_bad_ranks)
			fprintf(out, "%d", res->bad_ranks[0]);
		else
			fputs("null", out);
		fputs(", \"bad_slots\": [", out);
		for (size_t i = 0; i < res->n_bad_ranks; i++)
			fprintf(out, "%s%d", i ? ", " : "", res->bad_ranks[i]);
		fputc(']', out);
		if (res->slot_n) {      /* over several ranks: each as rank and slot */
			fputs(", \"bad_rank_slots\": [", out);
			for (size_t i = 0; i < res->n_bad_ranks; i++)
				fprintf(out, "%s{\"rank\": %d, \"slot\": %d}", i ? ", " : "",
				        res->bad_ranks[i] / res->slot_n, res->bad_ranks[i] % res->slot_n);
			fputc(']', out);
		}
	}
	fprintf(out, ", \"all_ranks_bad\": %s, \"ranks_separable\": %s, \"ranks_sliced\": %s",
	        res->all_ranks_bad ? "true" : "false", res->ranks_unknown ? "false" : "true",
	        res->ranks_sliced ? "true" : "false");
	fputs(", \"ranks_why\": ", out);
	db_json_str(out, res->ranks_unknown && res->ranks_why[0] ? res->ranks_why : NULL);
	fputs(", \"probe\": {\"stage\": ", out);
	db_json_str(out, res->probe);
	fputs(", \"how\": ", out);
	db_json_str(out, db_probe_how_name(res->probe_how));
	fputs(", \"why\": ", out);
	db_json_str(out, res->probe_why);
	fputs("}, \"phase\": ", out);
	db_json_str(out, res->phase[0] ? res->phase : NULL);
	fputs(", \"pass\": ", out);
	db_json_field(out, res->pass, true);
	fputs(", \"ref_pass\": ", out);
	db_json_field(out, res->ref_pass, true);
	fputs(", \"pass_why\": ", out);
	db_json_str(out, res->pass_why[0] ? res->pass_why : NULL);
	fputs(", \"crossing_layer\": ", out);
	if (res->has_crossing)
		json_layer(out, res->crossing_layer);
	else
		fputs("null", out);
	fputs(", \"token\": ", out);       /* the culprit's first bad token (db_token.h) */
	if (res->has_token)
		fprintf(out, "%lld, \"token_row\": %lld, \"token_rows\": %lld", (long long)res->token,
		        (long long)res->token_row, (long long)res->token_rows);
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
	/* the walk after the steps: the first line stays the summary */
	fputs(b->n_steps ? "\n], \"walk\": [" : "], \"walk\": [", out);
	for (size_t i = 0; i < res->n_walk; i++) {
		const db_substage_row *w = &res->walk[i];
		fputs(i ? ",\n  {\"stage\": " : "\n  {\"stage\": ", out);
		db_json_str(out, w->stage);
		fputs(", \"top\": ", out);
		db_json_str(out, w->top);
		fputs(", \"role\": ", out);
		db_json_str(out, db_stage_role_name(w->role));
		fputs(", \"reason\": ", out);
		db_json_str(out, w->reason ? w->reason : w->one_side);
		fputs(", \"word\": ", out);  /* as compare words its pair */
		db_json_str(out, w->word);
		fputs(", \"cos\": ", out);
		db_json_num(out, w->cos);
		fputs(", \"rel\": ", out);
		db_json_num(out, w->rel);
		fputs(", \"err_in\": ", out);
		db_json_num(out, w->err_in);
		fputs(", \"err_out\": ", out);
		db_json_num(out, w->err_out);
		fputs(", \"amplification\": ", out);
		db_json_num(out, w->amp);
		fputs(", \"sqnr_db\": ", out);
		db_json_num(out, w->sqnr_db);
		fprintf(out, ", \"statistics_only\": %s, \"culprit\": %s}",
		        w->stats_only ? "true" : "false", w->culprit ? "true" : "false");
	}
	fputs(res->n_walk ? "\n]}\n" : "]}\n", out);
}

/* A step's word, as db_verdict_word worded its probe pair: with a noise
 * run the floor decided the band (ok = within, algo or worse = beyond; a
 * pair without a floor keeps drift); judged bitwise, the auto verdict is
 * the bits' (a band worse than drift keeps its name). */
static const char *step_word(const db_bisect_result *res, const db_bisect_step *s)
{
	db_band b = s->band;
	if (res->by_bits && b <= DB_BAND_DRIFT && b != DB_BAND_NONE &&
	    (s->auto_verdict == DB_V_GOOD || s->auto_verdict == DB_V_BAD))
		return s->auto_verdict == DB_V_BAD ? "bits differ" : "bit-identical";
	if (res->by_noise && b == DB_BAND_OK)
		return "within noise";
	if (res->by_noise && b >= DB_BAND_ALGO && b <= DB_BAND_SCRAMBLE)
		return "beyond noise";
	return db_band_name(b);
}

void db_bisect_result_text(FILE *out, const db_bisect *b,
                           const db_bisect_result *res)
{
	char l[32];
	fprintf(out, "%s\n", db_esc(res->summary));
	if (res->phase[0])
		fprintf(out, "  phase:    %s\n", db_esc(res->phase));
	if (res->pass_why[0] && res->ref_pass[0])
		fprintf(out, "  pass:     %s, the alone run's pass %s (%s)\n", db_esc(res->pass),
		        db_esc(res->ref_pass), db_esc(res->pass_why));
	else if (res->pass_why[0])
		fprintf(out, "  pass:     %s (%s)\n", db_esc(res->pass), db_esc(res->pass_why));
	if (res->probe_why[0])
		fprintf(out, "  probe:    %s\n", db_esc(res->probe_why));
	if (res->first_bad_stage && res->kind == DB_KIND_SUDDEN) {
		fprintf(out, "  stage:    %s\n", db_esc(res->first_bad_stage));
		if (res->has_token)
			fprintf(out, "  token:    %lld (row %lld of the pass's %lld)\n", (long long)res->token,
			        (long long)res->token_row, (long long)res->token_rows);
		if (res->first_bad_substage)
			fprintf(out, "  substage: %s\n", db_esc(res->first_bad_substage));
		if (res->calls[0])
			fprintf(out, "  calls:    %s\n", db_esc(res->calls));
		if (res->frame_ref[0] && !strcmp(res->frame_ref, res->frame_tgt))
			fprintf(out, "  made at:  %s\n", db_esc(res->frame_ref));
		else if (res->frame_ref[0] || res->frame_tgt[0])
			fprintf(out, "  made at:  reference %s\n            target    %s\n",
			        res->frame_ref[0] ? db_esc(res->frame_ref) : "-",
			        res->frame_tgt[0] ? db_esc(res->frame_tgt) : "-");
		if (res->n_walk)
			fprintf(out, "  role:     %s%s%s\n", db_stage_role_name(res->first_bad_role),
			        res->at_or_before ? "; at or before it, not comparable: " : "",
			        res->at_or_before ? db_esc(res->at_or_before) : "");
		if (res->first_bad_hint.kind != DB_HINT_NONE) {
			char h[256];
			fprintf(out, "  hint:     %s\n",
			        db_hint_text(&res->first_bad_hint, !db_term_utf8(), h, sizeof h));
		}
	}
	if (res->n_bad_ranks) {
		const char *w = res->slots ? "slot" : "rank";
		fprintf(out, "  bad %ss:", w);
		for (size_t i = 0; i < res->n_bad_ranks; i++)
			if (res->slot_n)        /* --slots over ranks: rank x slot */
				fprintf(out, " rank %d slot %d%s", res->bad_ranks[i] / res->slot_n,
				        res->bad_ranks[i] % res->slot_n, i + 1 < res->n_bad_ranks ? "," : "");
			else
				fprintf(out, " %d", res->bad_ranks[i]);
		fprintf(out, res->all_ranks_bad ? " (every %s" : " (the other %ss are good", w);
		fputs(res->ranks_sliced ? "; each shard against its slice of the other side)\n"
		                        : ")\n", out);
	}
	if (res->ranks_unknown)
		fprintf(out, "  bad ranks: not separable (the culprit is compared merged: the other "
		        "side has another parallel layout%s%s)\n", res->ranks_why[0] ? "; " : "",
		        db_esc(res->ranks_why));
	if (res->has_crossing)
		fprintf(out, "  crosses the band at %s\n",
		        db_layer_label(res->crossing_layer, l, sizeof l));
	if (res->standout_layer != INT_MIN && res->kind == DB_KIND_DRIFT)
		fprintf(out, "  note: %s drops on its own beyond the drift; bisect again with a "
		        "looser predicate (--band drift) to isolate it\n",
		        db_layer_label(res->standout_layer, l, sizeof l));
	if (res->n_walk) {
		fputs("\nintra-layer walk (error = relative L2; in -> out, amplification, SQNR):\n", out);
		for (size_t i = 0; i < res->n_walk; i++) {
			const db_substage_row *w = &res->walk[i];
			const char *mk = w->culprit ? ">" : " ";
			if (w->one_side)
				fprintf(out, "  %s %-32s %s (the other layers have it in both)\n",
				        mk, db_esc(w->stage), db_esc(w->one_side));
			else if (w->role == DB_ROLE_NOT_COMPARABLE)
				fprintf(out, "  %s %-32s not comparable: %s\n", mk, db_esc(w->stage),
				        db_esc(w->reason));
			else {
				char amp[32], sq[32];
				if (isinf(w->amp))
					snprintf(amp, sizeof amp, "x inf");
				else
					snprintf(amp, sizeof amp, "x%.3g", w->amp);
				if (isinf(w->sqnr_db))
					snprintf(sq, sizeof sq, "inf");
				else
					snprintf(sq, sizeof sq, "%.1f", w->sqnr_db);
				char cs[32];
				snprintf(cs, sizeof cs, w->stats_only ? "stats only" : "%.8f", w->cos);
				fprintf(out, "  %s %-32s cos %-12s rel %-10.3g %-8s err %.3g -> %.3g %-8s "
				        "SQNR %s dB  %s\n", mk, db_esc(w->stage), cs, w->rel,
				        w->word ? w->word : db_band_name(w->band), w->err_in, w->err_out, amp, sq,
				        db_stage_role_name(w->role));
			}
		}
		if (res->at_or_before)
			fprintf(out, "  the culprit is at or before %s: %s before it could not be "
			        "compared\n", db_esc(res->first_bad_substage ? res->first_bad_substage
			                                                   : res->first_bad_stage),
			        db_esc(res->at_or_before));
	}
	if (b->n_steps) {
		fputs("\nsteps:\n", out);
		for (size_t i = 0; i < b->n_steps; i++) {
			const db_bisect_step *s = &b->steps[i];
			/* no cos beside a finite rel: measured on the dump's statistics */
			char cs[32];
			snprintf(cs, sizeof cs, isnan(s->cos) && isfinite(s->rel) ? "stats only" : "%.8f",
			         s->cos);
			fprintf(out, "  %2zu. %-6s %-4s (%s) cos %s rel %.3g %s\n", i + 1,
			        db_layer_label(s->layer, l, sizeof l), db_verdict_name(s->verdict),
			        s->by_user ? "user" : "auto", cs, s->rel,
			        step_word(res, s));
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
