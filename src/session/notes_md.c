/* Markdown renderers for the Data section of notes (and the export):
 * real numbers from the comparison and the bisect. */
#include "db_notes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_esc.h"
#include "db_grid.h"
#include "db_hints.h"
#include "db_rank_split.h"
#include "db_verdict.h"

static const db_pair *computed(db_compare *c, size_t i)
{
	db_pair *p = &c->pairs[i];
	if (p->status == DB_ST_OK)
		db_compare_pair(c, p);
	return p;
}

/* label: a stage name (foreign text, as a code span) or a rank number. */
static void cell_row(FILE *f, const db_pair *p, const char *label)
{
	fputs("| ", f);
	db_esc_md_cell(label, f);
	if (p->status != DB_ST_OK) {
		fprintf(f, " | %s | | | | |\n", db_status_name(p->status));
		return;
	}
	fprintf(f, " | %.8f | %.4g | %.4g | %.4g | %s |\n", p->m.cos, p->m.rel,
	        p->m.rel_l2, p->m.max_abs, db_verdict_word(p));
}

/* "- hint on `stage` rank r: ..." for each of the pairs that has one */
static void hint_lines(FILE *f, db_compare *c, const size_t *v, size_t n)
{
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		const db_pair *p = &c->pairs[v[i]];
		db_hint h;
		char t[256];
		db_pair_hint(c, p, &h);
		if (h.kind == DB_HINT_NONE)
			continue;
		fprintf(f, "%s- hint on `%s`", first ? "\n" : "", p->f.stage);
		if (!p->merged && p->f.rank >= 0)
			fprintf(f, " rank %d", p->f.rank);
		fprintf(f, ": **%s**\n", db_hint_text(&h, false, t, sizeof t));
		first = false;
	}
}

/* open_memstream sets the buffer pointer at fclose, hence char **. */
static char *finish(FILE *f, char **buf)
{
	if (fclose(f) != 0) {
		free(*buf);
		return NULL;
	}
	return *buf;
}

char *db_md_cell(db_compare *c, size_t pair)
{
	char *buf = NULL;
	size_t len = 0;
	if (pair >= c->n_pairs)
		return NULL;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	const db_pair *p = computed(c, pair);
	char lab[32], rank[32];
	if (p->merged)
		snprintf(rank, sizeof rank, "merged");
	else if (p->f.rank < 0)
		snprintf(rank, sizeof rank, "-");
	else
		snprintf(rank, sizeof rank, "%d", p->f.rank);
	/* Names from the dumps go in code spans (db_esc_md_code): no HTML,
	 * no control byte. */
	fputs("- phase ", f);
	db_esc_md_code(p->f.phase[0] ? p->f.phase : "-", f);
	fputs(", pass ", f);
	db_esc_md_code(p->f.pass[0] ? p->f.pass : "-", f);
	fprintf(f, ", %s, stage ",
	        p->f.layer >= 0 ? db_layer_label(p->f.layer, lab, sizeof lab) : "model-level");
	db_esc_md_code(p->f.stage, f);
	fprintf(f, ", rank %s\n", rank);
	char *rn = db_item_name(p->ref), *tn = db_item_name(p->tgt);
	fputs("- ref ", f);
	db_esc_md_code(rn ? rn : "(missing)", f);
	fputs("\n- target ", f);
	db_esc_md_code(tn ? tn : "(missing)", f);
	fputc('\n', f);
	free(rn);
	free(tn);
	fputs("\n| stage | cos | rel | rel_l2 | max_abs | band |\n|---|---|---|---|---|---|\n", f);
	cell_row(f, p, p->f.stage);
	if (p->status == DB_ST_OK) {
		fprintf(f, "\nrel_diff %.4g, mean_abs %.4g, argmax %lld, %llu elements compared\n",
		        p->m.rel_diff, p->m.mean_abs, (long long)p->m.argmax,
		        (unsigned long long)p->m.n);
	} else if (p->error) {
		fputs("\nerror: ", f);
		db_esc_md_text(p->error, f);
		fputc('\n', f);
	}
	hint_lines(f, c, &pair, 1);
	return finish(f, &buf);
}

char *db_md_substages(db_compare *c, size_t pair)
{
	char *buf = NULL;
	size_t len = 0;
	size_t *v = NULL;
	if (pair >= c->n_pairs)
		return NULL;
	size_t n = db_substages(c, pair, &v);
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		free(v);
		return NULL;
	}
	fputs("| sub-stage | cos | rel | band | step drop |\n|---|---|---|---|---|\n", f);
	double prev = NAN;
	for (size_t i = 0; i < n; i++) {
		const db_pair *p = computed(c, v[i]);
		if (p->status != DB_ST_OK) {
			fputs("| ", f);
			db_esc_md_cell(p->f.stage, f);
			fprintf(f, " | %s | | | |\n", db_status_name(p->status));
			continue;
		}
		double drop = prev - p->m.cos;
		fputs("| ", f);
		db_esc_md_cell(p->f.stage, f);
		fprintf(f, " | %.8f | %.4g | %s | ", p->m.cos, p->m.rel,
		        db_verdict_word(p));
		if (isfinite(drop))
			fprintf(f, "%+.6f%s", -drop, drop > 0.001 ? " **drop**" : "");
		fputs(" |\n", f);
		prev = p->m.cos;
	}
	hint_lines(f, c, v, n);
	free(v);
	return finish(f, &buf);
}

/* A merged pair whose ranks have no pairs (one side whole, the other
 * sharded): each shard against its slice of the whole, or why not. */
static void split_rows(FILE *f, db_compare *c, const db_pair *m)
{
	db_rank_part *parts = NULL;
	char why[256];
	db_err e = {{0}};
	long n = db_pair_rank_split(c, computed(c, (size_t)(m - c->pairs)), &parts, why,
	                            sizeof why, &e);
	if (n <= 0) {
		/* why is our own words; an error names a file: escaped */
		fputs(n < 0 ? "| (ranks not measured: " : "| (ranks not separable: ", f);
		if (n < 0)
			db_esc_md_cell(e.msg, f);
		else
			fputs(why, f);
		fputs(") | | | | | |\n", f);
		return;
	}
	for (long k = 0; k < n; k++) {
		db_pair tmp;
		memcpy(&tmp, m, sizeof tmp);   /* only m and band are read */
		tmp.m = parts[k].m;
		tmp.band = parts[k].band;
		char lab[96];
		snprintf(lab, sizeof lab, "%d (slice [%lld, %lld) of the whole)", parts[k].rank,
		         (long long)parts[k].lo, (long long)(parts[k].lo + parts[k].len));
		cell_row(f, &tmp, lab);
	}
	free(parts);
}

char *db_md_ranks(db_compare *c, size_t pair)
{
	char *buf = NULL;
	size_t len = 0;
	size_t *v = NULL;
	if (pair >= c->n_pairs)
		return NULL;
	size_t n = db_rank_pairs(c, pair, &v);
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		free(v);
		return NULL;
	}
	db_esc_md_code(c->pairs[pair].f.stage, f);
	fputs(" per rank:\n\n| rank | cos | rel | rel_l2 | max_abs | band |\n"
	      "|---|---|---|---|---|---|\n", f);
	for (size_t i = 0; i < n; i++) {
		char lab[32];
		const db_pair *p = computed(c, v[i]);
		snprintf(lab, sizeof lab, "%d", p->f.rank);
		cell_row(f, p, lab);
	}
	if (!n && c->pairs[pair].merged)
		split_rows(f, c, &c->pairs[pair]);
	else if (!n)
		fputs("| (no per-rank tensors) | | | | | |\n", f);
	hint_lines(f, c, v, n);
	free(v);
	return finish(f, &buf);
}

char *db_md_bisect(const db_bisect *b, const db_bisect_result *res)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	char l1[32], l2[32];
	if (res && res->kind != DB_KIND_NONE) {
		fprintf(f, "Verdict: **%s** — ", db_bisect_kind_name(res->kind));
		db_esc_md_text(res->summary, f);
		fputs("\n\n", f);
	}
	bool drift = res && res->kind == DB_KIND_DRIFT;
	fprintf(f, "Bisect state: **%s** — ", drift ? "drift" : db_bisect_phase_name(b->phase));
	db_esc_md_text(b->msg, f);
	fputs("\n\n", f);
	if (b->n_layers)
		fprintf(f, "- candidates: %s..%s (%zu)\n",
		        db_layer_label(b->layers[0], l1, sizeof l1),
		        db_layer_label(b->layers[b->n_layers - 1], l2, sizeof l2), b->n_layers);
	fprintf(f, "- good bound: %s\n",
	        b->good >= 0 ? db_layer_label(b->layers[b->good], l1, sizeof l1) : "input");
	fprintf(f, "- bad bound: %s\n",
	        b->bad >= 0 ? db_layer_label(b->layers[b->bad], l1, sizeof l1) : "not known yet");
	fprintf(f, "- remaining: %zu layers (%zu skipped), about %d probes left\n",
	        b->n_remaining, b->n_skipped_inside, b->probes_left);
	if (b->next >= 0)
		fprintf(f, "- next: %s\n", db_layer_label(b->layers[b->next], l1, sizeof l1));
	if (b->n_steps) {
		fputs("\n| # | layer | verdict | by | cos | rel | band |\n|---|---|---|---|---|---|---|\n", f);
		for (size_t i = 0; i < b->n_steps; i++) {
			const db_bisect_step *s = &b->steps[i];
			fprintf(f, "| %zu | %s | %s | %s | %.8f | %.4g | %s |\n", i + 1,
			        db_layer_label(s->layer, l1, sizeof l1), db_verdict_name(s->verdict),
			        s->by_user ? "user" : "auto", s->cos, s->rel, db_band_name(s->band));
		}
	}
	return finish(f, &buf);
}
