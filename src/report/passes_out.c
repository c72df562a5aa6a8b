/* The comparison over time as text and JSON (compare's per-pass lines):
 * one line per pass with where it first diverges, and the first pass that
 * diverges (db_passes.h). Only written when the tree has several passes. */
#include "db_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_esc.h"
#include "db_json.h"
#include "db_passes.h"
#include "db_rank_words.h"
#include "db_verdict.h"

/* json: the pass's first-divergence object, its first bad token inside
 * (beyond: judged beyond drift). */
static void where(FILE *out, const db_compare *c, long i, bool json, bool beyond)
{
	const db_pair *p = &c->pairs[i];
	if (json) {
		fputs("{\"pair\": ", out);
		fprintf(out, "%ld, \"layer\": ", i);
		if (p->f.layer >= 0)
			fprintf(out, "%d", p->f.layer);
		else
			fputs("null", out);
		/* the stage is pairs[pair]'s (a line per pair names a stage) */
		fprintf(out, ", \"all_ranks_bad\": %s, \"severity\": ",
		        db_every_rank_diverges(c, (size_t)i, NULL) ? "true" : "false");
		db_json_str(out, db_verdict_word(p));
		db_token_fields_json(out, c, i, beyond);
		fputc('}', out);
		return;
	}
	char rank[48];
	db_rank_words(c, (size_t)i, rank, sizeof rank);
	if (p->f.layer >= 0)
		fprintf(out, "L%d ", p->f.layer);
	fprintf(out, "%s%s%s [%s]", db_esc(p->f.stage), rank[0] ? " " : "", rank,
	        db_verdict_word(p));
}

static void label(FILE *out, const db_pass_line *l)
{
	if (l->phase[0])
		fprintf(out, "phase %s ", db_esc(l->phase));
	fprintf(out, "pass %s", l->pass[0] ? db_esc(l->pass) : "-");
}

void db_passes_text(FILE *out, const db_compare *c)
{
	db_pass_line *v;
	size_t n = db_pass_lines(c, &v);
	if (n > 1) {
		fputs("passes (first divergence of each):\n", out);
		for (size_t i = 0; i < n; i++) {
			const db_pass_line *l = &v[i];
			fputs("  ", out);
			label(out, l);
			fputs(": ", out);
			if (l->first_div < 0)
				fputs(l->identical ? "bit-identical" : "ok", out);
			else {
				where(out, c, l->first_div, false, false);
				if (l->first_beyond >= 0 && l->first_beyond != l->first_div) {
					fputs(", beyond drift ", out);
					where(out, c, l->first_beyond, false, true);
				}
			}
			fprintf(out, " (%zu pairs)\n", l->n_pairs);
		}
		long k = db_pass_first_diverging(c, v, n);
		if (k >= 0) {
			fputs("first diverging pass: ", out);
			fputs(v[k].pass[0] ? db_esc(v[k].pass) : "-", out);
			if (v[k].phase[0])
				fprintf(out, " phase %s", db_esc(v[k].phase));
			size_t same = 0, before = 0;
			for (size_t i = 0; i < (size_t)k; i++)
				if (!strcmp(v[i].phase, v[k].phase)) {
					before++;
					same += v[i].identical;
				}
			if (before && same == before)
				fprintf(out, " (the %zu before it bit-identical)", before);
			fputc('\n', out);
		}
	}
	free(v);
}

void db_passes_json(FILE *out, const db_compare *c)
{
	db_pass_line *v;
	size_t n = db_pass_lines(c, &v);
	if (n > 1) {
		fputs(", \"passes\": [", out);
		for (size_t i = 0; i < n; i++) {
			const db_pass_line *l = &v[i];
			fputs(i ? ", {\"phase\": " : "{\"phase\": ", out);
			db_json_field(out, l->phase, false);
			fputs(", \"pass\": ", out);
			db_json_field(out, l->pass, true);
			fprintf(out, ", \"pairs\": %zu, \"bit_identical\": %s, \"worst\": ", l->n_pairs,
			        l->identical ? "true" : "false");
			db_json_str(out, l->worst == DB_BAND_NONE ? NULL : db_band_name(l->worst));
			fputs(", \"first_divergence\": ", out);
			if (l->first_div >= 0)
				where(out, c, l->first_div, true, false);
			else
				fputs("null", out);
			fputs(", \"first_beyond_drift\": ", out);
			if (l->first_beyond >= 0)
				where(out, c, l->first_beyond, true, true);
			else
				fputs("null", out);
			fputc('}', out);
		}
		long k = db_pass_first_diverging(c, v, n);
		fputs("], \"first_diverging_pass\": ", out);
		if (k >= 0) {
			fputs("{\"phase\": ", out);
			db_json_field(out, v[k].phase, false);
			fputs(", \"pass\": ", out);
			db_json_field(out, v[k].pass, true);
			fputc('}', out);
		} else {
			fputs("null", out);
		}
	}
	free(v);
}
