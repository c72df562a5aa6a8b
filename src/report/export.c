/* Export of a session: report.md (seed 000's report outline), metrics as
 * JSON (the compare --format json schema) and CSV; heatmap.svg lives in
 * export_svg.c. Every file is written atomically. */
#include "db_export.h"
#include "db_dequant.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "db_calls.h"
#include "db_cell.h"
#include "db_grid_cache.h"
#include "db_hints.h"
#include "db_noise.h"
#include "db_verdict.h"
#include "db_esc.h"
#include "db_json.h"
#include "db_notes.h"
#include "db_rank_words.h"
#include "db_routing.h"

/* ------------------------------------------------------------ metrics */

static const char *band_or_null(const db_pair *p)
{
	return p->band == DB_BAND_NONE ? NULL : db_band_name(p->band);
}

void db_export_pair_json(FILE *out, const db_compare *c, const db_pair *p)
{
	(void)c;
	const db_metrics *m = &p->m;
	fputs("{\"phase\": ", out);
	db_json_field(out, p->f.phase, false);
	fputs(", \"pass\": ", out);
	db_json_field(out, p->f.pass, true);
	fputs(", \"rank\": ", out);
	if (p->merged || p->f.rank < 0)
		fputs("null", out);
	else
		fprintf(out, "%d", p->f.rank);
	if (p->slot.side == DB_SLOT_IN_TREE)
		fprintf(out, ", \"slot\": %d", p->slot.k);
	if (p->slot.side == DB_SLOT_IN_TREE && p->slot.ranked)
		fprintf(out, ", \"slot_rank\": %d", p->slot.rank);     /* rank is rank x slot */
	if (p->slot.alone && p->ref) {  /* the passes were aligned */
		fputs(", \"ref_pass\": ", out);
		db_json_field(out, p->ref->f.pass, true);
	}
	fputs(", \"layer\": ", out);
	if (p->f.layer < 0)
		fputs("null", out);
	else
		fprintf(out, "%d", p->f.layer);
	fputs(", \"stage\": ", out);
	db_json_str(out, p->f.stage);
	char *rn = db_item_name(p->ref), *tn = db_item_name(p->tgt);
	fputs(", \"ref_name\": ", out);
	db_json_str(out, rn);
	fputs(", \"target_name\": ", out);
	db_json_str(out, tn);
	free(rn);
	free(tn);
	fputs(", \"shape\": ", out);
	if (p->ndim_ref >= 0)
		db_json_shape(out, p->ndim_ref, p->shape_ref);
	else
		db_json_shape(out, p->ndim_tgt, p->shape_tgt);
	if (p->status == DB_ST_SHAPE_MISMATCH) {
		fputs(", \"shape_target\": ", out);
		db_json_shape(out, p->ndim_tgt, p->shape_tgt);
	}
	fputs(", \"dtype_ref\": ", out);
	db_json_str(out, p->ndim_ref >= 0 ? db_dtype_name(p->dtype_ref) : NULL);
	fputs(", \"dtype_target\": ", out);
	db_json_str(out, p->ndim_tgt >= 0 ? db_dtype_name(p->dtype_tgt) : NULL);
	fputs(", \"status\": ", out);
	db_json_str(out, db_status_name(p->status));
	const char *names[] = {"cos", "rel", "rel_l2", "rel_diff", "max_abs", "mean_abs"};
	const double v[] = {m->cos, m->rel, m->rel_l2, m->rel_diff, m->max_abs, m->mean_abs};
	for (size_t k = 0; k < 6; k++) {
		fprintf(out, ", \"%s\": ", names[k]);
		db_json_num(out, v[k]);
	}
	fputs(", \"severity\": ", out);
	db_json_str(out, band_or_null(p));
	/* the word every surface prints and what judged it (db_verdict.h);
	 * "word", not "verdict": a gate's JSONL line has its own verdict */
	db_judgement vd;
	db_pair_verdict(p, &vd);
	fputs(", \"word\": ", out);
	db_json_str(out, vd.word);
	fprintf(out, ", \"diverges\": %s, \"judged_by\": ", vd.diverges ? "true" : "false");
	db_json_str(out, db_judge_key(vd.by));
	fputs(", \"error\": ", out);
	db_json_str(out, p->status == DB_ST_ERROR ? p->error : NULL);
	if (p->status == DB_ST_NOT_COMPARABLE && p->error) {
		fputs(", \"reason\": ", out);      /* why, as the table says it */
		db_json_str(out, p->error);
	}
	char fd[1024];
	if (db_call_finding(c, (size_t)(p - c->pairs), fd, sizeof fd, NULL)) {
		fputs(", \"finding\": ", out);      /* a call only one side makes */
		db_json_str(out, fd);
	}
	fprintf(out, ", \"occurrence\": %d, \"merged\": %s, \"dtype_differs\": %s",
	        p->occurrence, p->merged ? "true" : "false", p->dtype_differs ? "true" : "false");
	if (p->merged)
		fprintf(out, ", \"ref_shards\": %zu, \"target_shards\": %zu", p->n_ref_shards,
		        p->n_tgt_shards);
	fputs(", \"argmax\": ", out);
	if (p->status == DB_ST_OK && m->argmax >= 0)
		fprintf(out, "%lld", (long long)m->argmax);
	else
		fputs("null", out);
	fputs(", \"byte_equal\": ", out);
	db_json_num(out, m->byte_equal);
	if (p->status == DB_ST_OK && m->dc_dtype) {        /* diff_downcast (db_metrics.h) */
		fputs(", \"downcast_dtype\": ", out);
		db_json_str(out, db_dtype_name(m->dc_dtype));
		const char *dn[] = {"cos", "rel", "rel_l2", "rel_diff", "max_abs", "mean_abs",
		                    "byte_equal"};
		const double dv[] = {m->dc.cos, m->dc.rel, m->dc.rel_l2, m->dc.rel_diff,
		                     m->dc.max_abs, m->dc.mean_abs, m->dc.byte_equal};
		fputs(", \"downcast\": {", out);
		for (int k = 0; k < 7; k++) {
			fprintf(out, "%s\"%s\": ", k ? ", " : "", dn[k]);
			db_json_num(out, dv[k]);
		}
		fputc('}', out);
	}
	if (p->status == DB_ST_OK && m->stats_only) {
		/* measured on the dumper's statistics: what they can tell */
		const char *sn[] = {"max", "min", "mean", "norm"};
		fputs(", \"statistics_only\": true, \"stat_rel\": {", out);
		for (int k = 0; k < 4; k++) {
			fprintf(out, "%s\"%s\": ", k ? ", " : "", sn[k]);
			db_json_num(out, m->st_rel[k]);
		}
		fputs("}, \"md5_equal\": ", out);
		fputs(m->md5_eq < 0 ? "null" : m->md5_eq ? "true" : "false", out);
		/* no statistic a number on both sides (issue 37): not ok, said */
		if (p->band == DB_BAND_NONE)
			fputs(", \"nothing_to_compare\": true", out);
	}
	if (db_noise_root(c)) { /* --noise: the floor and where this pair stands */
		fputs(", \"noise_floor\": ", out);
		db_json_num(out, p->noise_floor);
		fputs(", \"noise_ratio\": ", out);
		db_json_num(out, p->noise_ratio);
		fputs(", \"noise\": ", out);
		db_json_str(out, p->noise == DB_NOISE_WITHIN ? "within" : p->noise == DB_NOISE_BEYOND
		                 ? "beyond" : p->noise == DB_NOISE_NO_FLOOR ? "no_floor" : NULL);
	}
	db_hint h;
	db_pair_hint(c, p, &h);
	fputs(", \"hint\": ", out);
	db_hint_json(out, &h);
	db_routing rt;
	db_err e;
	if (p->status == DB_ST_OK && db_routing_compare(c, p, &rt, &e) == 1)
		fprintf(out, ", \"routing\": {\"tokens\": %lld, \"rerouted\": %lld, \"k\": %d}",
		        (long long)rt.tokens, (long long)rt.rerouted, rt.k);
	if (db_pair_dequantized(p)) {
		fputs(", \"dequant\": ", out);
		db_pair_dequant_json(out, p);
	}
	const char *xf = db_pair_xform_name(c, p);
	if (xf) {
		fputs(", \"transform\": ", out);
		db_json_str(out, xf);
	}
	if (p->status == DB_ST_OK)
		fprintf(out, ", \"nan_ref\": %llu, \"nan_target\": %llu, \"inf_ref\": %llu, "
		        "\"inf_target\": %llu", (unsigned long long)m->nan_ref,
		        (unsigned long long)m->nan_tgt, (unsigned long long)m->inf_ref,
		        (unsigned long long)m->inf_tgt);
	fputc('}', out);
}

void db_export_divergence_json(FILE *out, const db_compare *c)
{
	long fd = db_first_divergence(c, NULL, NULL, -2);
	fputs(", \"first_divergence\": ", out);
	if (fd >= 0)
		fprintf(out, "%ld", fd);
	else
		fputs("null", out);
	fputs(", \"first_divergent_phase\": ", out);
	db_json_str(out, fd >= 0 ? c->pairs[fd].f.phase : NULL);
	long fb = db_first_beyond_drift(c);
	fputs(", \"first_beyond_drift\": ", out);
	if (fb >= 0)
		fprintf(out, "%ld", fb);
	else
		fputs("null", out);
	/* what first_divergence was judged by: the noise run, the
	 * bit-identical regime, or the bands */
	fputs(", \"judged_by\": ", out);
	db_json_str(out, db_judged_by_key(c));
	if (db_noise_root(c)) {
		fputs(", \"noise\": ", out);
		db_json_str(out, db_noise_root(c));
		fprintf(out, ", \"noise_k\": %.17g, \"noise_min_rel\": %.17g",
		        c->profile->thresholds.noise_k, c->profile->thresholds.noise_min_rel);
	}
	/* what was compared: no "every pair ok" beside pairs never measured */
	db_tally t;
	db_compare_tally(c, &t);
	fprintf(out, ", \"compared\": {\"pairs\": %zu, \"ok\": %zu, \"diverge\": %zu, "
	        "\"not_comparable\": %zu, \"nothing_to_compare\": %zu, \"pending\": %zu, "
	        "\"reasons\": [", t.pairs, t.ok, t.diverge, t.not_comparable, t.nothing, t.pending);
	for (size_t k = 0; k < t.n_reasons; k++) {
		fputs(k ? ", {\"reason\": " : "{\"reason\": ", out);
		db_json_str(out, t.reason[k].why);
		fprintf(out, ", \"pairs\": %zu, \"first\": %ld}", t.reason[k].n, t.reason[k].first);
	}
	fputs("]}", out);
	if (fd < 0) {
		char nd[1400];
		fputs(", \"no_divergence\": ", out);
		db_json_str(out, db_no_divergence_text(c, nd, sizeof nd));
	}
	db_slots_json(out, c);
	db_align_json(out, c, fd, fb);
	db_passes_json(out, c);
}

int db_export_metrics_json(FILE *out, const db_compare *c)
{
	fputs("{\"profile\": ", out);
	db_json_str(out, c->profile ? c->profile->name : NULL);
	fputs(", \"why\": ", out);
	db_json_str(out, c->why);
	fputs(", \"ref\": ", out);
	db_json_str(out, c->ref_root);
	fputs(", \"target\": ", out);
	db_json_str(out, c->tgt_root);
	db_export_divergence_json(out, c);
	char xn[400];
	if (*db_compare_xform_note(c, xn, sizeof xn)) {      /* only when one was found */
		fputs(", \"transform\": ", out);
		db_json_str(out, xn);
	}
	fputs(", \"pairs\": [", out);
	for (size_t i = 0; i < c->n_pairs; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		db_export_pair_json(out, c, &c->pairs[i]);
	}
	fputs("\n]}\n", out);
	return ferror(out) ? -1 : 0;
}

int db_export_metrics_csv(FILE *out, const db_compare *c)
{
	return db_export_metrics_csv_where(out, c, NULL);
}

int db_export_metrics_csv_where(FILE *out, const db_compare *c, bool (*keep)(const db_pair *))
{
	fputs("phase,pass,rank,layer,stage,ref_name,target_name,shape,dtype_ref,dtype_target,"
	      "status,cos,rel,rel_l2,rel_diff,max_abs,mean_abs,byte_equal,severity,error,"
	      "statistics_only,hint\n", out);
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (keep && !keep(p))
			continue;
		char shape[256];
		if (p->ndim_ref >= 0)
			db_fmt_shape(p->ndim_ref, p->shape_ref, shape, sizeof shape);
		else
			db_fmt_shape(p->ndim_tgt, p->shape_tgt, shape, sizeof shape);
		char *rn = db_item_name(p->ref), *tn = db_item_name(p->tgt);
		db_esc_csv(p->f.phase, out);
		fputc(',', out);
		db_esc_csv(p->f.pass, out);
		fputc(',', out);
		if (!p->merged && p->f.rank >= 0)
			fprintf(out, "%d", p->f.rank);
		fputc(',', out);
		if (p->f.layer >= 0)
			fprintf(out, "%d", p->f.layer);
		fputc(',', out);
		db_esc_csv(p->f.stage, out);
		fputc(',', out);
		db_esc_csv(rn, out);
		fputc(',', out);
		db_esc_csv(tn, out);
		fputc(',', out);
		db_esc_csv(shape, out);
		fputc(',', out);
		db_esc_csv(p->ndim_ref >= 0 ? db_dtype_name(p->dtype_ref) : NULL, out);
		fputc(',', out);
		db_esc_csv(p->ndim_tgt >= 0 ? db_dtype_name(p->dtype_tgt) : NULL, out);
		fputc(',', out);
		db_esc_csv(db_status_name(p->status), out);
		const double v[] = {p->m.cos, p->m.rel, p->m.rel_l2, p->m.rel_diff, p->m.max_abs,
		                    p->m.mean_abs, p->status == DB_ST_OK ? p->m.byte_equal : NAN};
		for (size_t k = 0; k < 7; k++) {
			fputc(',', out);
			if (v[k] == v[k])
				fprintf(out, "%.17g", v[k]);
		}
		fputc(',', out);
		db_esc_csv(band_or_null(p), out);
		fputc(',', out);
		db_esc_csv(p->status == DB_ST_ERROR ? p->error : NULL, out);
		/* measured on the dump's statistics (no cos): 1 */
		fputs(p->status == DB_ST_OK && p->m.stats_only ? ",1" : ",", out);
		db_hint h;
		db_pair_hint(c, p, &h);
		fputc(',', out);
		db_esc_csv(h.kind != DB_HINT_NONE ? db_hint_kind_name(h.kind) : NULL, out);
		fputc('\n', out);
		free(rn);
		free(tn);
	}
	return ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------- report */

/* Seed 000's severity guide, by rel_diff. */
static const char *severity_meaning(double rd)
{
	if (!isfinite(rd))
		return "not measurable (non-finite values or a zero norm)";
	if (rd < 1e-7)
		return "identical (fp rounding only)";
	if (rd < 1e-5)
		return "numerically equivalent (recompute / op order)";
	if (rd < 1e-3)
		return "minor difference — may be acceptable (e.g. a different attention backend)";
	if (rd < 1e-1)
		return "significant divergence — likely a bug";
	return "severe — completely wrong computation";
}

/* The pair the report centres on: the culprit of the bisect, else the
 * first divergence of the comparison. DB_NO_PAIR when nothing diverges. */
static size_t focus_pair(const db_export_ctx *x)
{
	const db_bisect_result *r = x->res;
	const db_compare *c = x->c;
	if (r && r->n_walk)
		for (size_t i = 0; i < r->n_walk; i++)
			if (r->walk[i].culprit && r->walk[i].pair != DB_NO_PAIR)
				return r->walk[i].pair;
	if (r && r->input_ids_mismatch && r->input_ids_stage)
		for (size_t i = 0; i < c->n_pairs; i++)
			if (!strcmp(c->pairs[i].f.stage, r->input_ids_stage))
				return i;
	long fd = db_first_divergence(c, NULL, NULL, -2);
	return fd >= 0 ? (size_t)fd : DB_NO_PAIR;
}

/* A link target: escaped, and what would end the (...) or break it
 * percent-encoded. */
static void md_url(FILE *f, const char *s)
{
	for (const char *e = db_esc(s); *e; e++) {
		if (strchr(" ()<>[]", *e))
			fprintf(f, "%%%02X", (unsigned char)*e);
		else
			fputc(*e, f);
	}
}

/* One heatmap cell as text: "0.8623 bug", "0.7550 bug r1" for a single
 * rank's pair in the all-ranks view, a status when not comparable. */
static void md_cell(FILE *f, const db_compare *c, const db_grid *g, size_t pi)
{
	if (pi == DB_NO_PAIR)
		return;
	const db_pair *p = &c->pairs[pi];
	if (p->status != DB_ST_OK) {
		fputs(db_status_name(p->status), f);
		return;
	}
	if (p->m.stats_only)    /* statistics only: no cos, the rel they give */
		fprintf(f, "stats rel %.3g %s", p->m.rel,
		        p->band == DB_BAND_NONE ? "-" : db_band_name(p->band));
	else
		fprintf(f, "%.4f %s", p->m.cos, p->band == DB_BAND_NONE ? "-" : db_band_name(p->band));
	if (g->rank == DB_RANK_ANY && !p->merged && p->f.rank >= 0)
		fprintf(f, " r%d", p->f.rank);
}

/* The SVG's cells as a table (same grid, same pairs), for readers of the
 * Markdown alone. */
static void md_heatmap(FILE *f, const db_compare *c, const db_grid *g)
{
	if (g->rank == DB_RANK_ANY)
		fputs("cos and band per cell: merged where sharded, else the worst rank (rN).\n\n", f);
	else
		fprintf(f, "cos and band per cell, rank %d.\n\n", g->rank);
	for (size_t i = 0; i < c->n_pairs; i++)
		if (c->pairs[i].status == DB_ST_OK && c->pairs[i].m.stats_only) {
			fputs("\"stats\": statistics only (the dump holds Max, Min, Mean, Norm, not the "
			      "values): no cos, the rel measured on them.\n\n", f);
			break;
		}
	fputs("| |", f);
	for (size_t k = 0; k < g->n_cols; k++) {
		fputc(' ', f);
		db_esc_md_cell(g->cols[k], f);
		fputs(" |", f);
	}
	fputs("\n|---|", f);
	for (size_t k = 0; k < g->n_cols; k++)
		fputs("---|", f);
	fputc('\n', f);
	for (size_t r = 0; r < g->n_rows; r++) {
		const db_grid_row *row = &g->rows[r];
		fputs("| ", f);
		db_esc_md_text(row->label, f);
		fputs(" |", f);
		size_t nc = row->layer < 0 ? 1 : g->n_cols;
		for (size_t k = 0; k < g->n_cols; k++) {
			fputc(' ', f);
			if (k < nc)
				md_cell(f, c, g, row->cells[k]);
			fputs(" |", f);
		}
		fputc('\n', f);
	}
}

/* Every pair with a root-cause hint, in execution order (the first
 * HINTS_MAX of them: a missing all-reduce hints on every rank of every
 * layer after it, and the first ones are what matters). */
#define HINTS_MAX 20
static void report_hints(FILE *f, db_compare *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		db_hint h;
		char ht[256], l[32];
		db_pair_hint(c, p, &h);
		if (h.kind == DB_HINT_NONE)
			continue;
		if (!n)
			fputs("\n### Root-cause hints\n\n| phase | pass | layer | stage | rank | hint |\n"
			      "|---|---|---|---|---|---|\n", f);
		if (++n > HINTS_MAX)
			continue;
		char rank[16];
		snprintf(rank, sizeof rank, p->merged ? "merged" : p->f.rank >= 0 ? "%d" : "-",
		         p->f.rank);
		/* names from the dump: escaped as everywhere in the report */
		fputs("| ", f);
		db_esc_md_text(p->f.phase[0] ? p->f.phase : "-", f);
		fputs(" | ", f);
		db_esc_md_text(p->f.pass[0] ? p->f.pass : "-", f);
		fprintf(f, " | %s | ", p->f.layer >= 0 ? db_layer_label(p->f.layer, l, sizeof l) : "model");
		db_esc_md_cell(p->f.stage, f);
		fprintf(f, " | %s | %s |\n", rank, db_hint_text(&h, false, ht, sizeof ht));
	}
	if (n > HINTS_MAX)
		fprintf(f, "\n... and %zu more.\n", n - HINTS_MAX);
}

int db_export_report_md(FILE *f, const db_export_ctx *x)
{
	const db_session *s = x->s;
	db_compare *c = x->c;
	const db_bisect_result *r = x->res;
	char l1[32];
	size_t fp = focus_pair(x);
	const db_pair *p = fp != DB_NO_PAIR ? &c->pairs[fp] : NULL;

	fputs("# dumpbisect report\n\n", f);
	if (x->generation)
		fprintf(f, "_Export generation %s: the heatmap.svg and metrics.json beside this "
		        "report carry the same stamp._\n\n", x->generation);
	/* Every name below is foreign text: code spans or escaped prose
	 * (db_esc_md_*), never raw HTML or control bytes. */
	fputs("- reference: ", f);
	db_esc_md_code(c->ref_root ? c->ref_root : "", f);
	fputs("\n- target: ", f);
	if (c->tgt_root)
		db_esc_md_code(c->tgt_root, f);
	else
		fputs("(same tree)", f);
	fputs("\n- profile: ", f);
	db_esc_md_text(c->profile ? c->profile->name : "-", f);
	fputs(" (", f);
	db_esc_md_text(c->why, f);
	fputs(")\n", f);
	if (s && s->path) {
		/* absolute: whose report this is, read again by db_export_dir_for */
		char abs[PATH_MAX];
		fputs("- session: ", f);
		db_esc_md_code(realpath(s->path, abs) ? abs : s->path, f);
		fputc('\n', f);
	}
	char jb[1024];
	fputs("- verdicts judged by: ", f);
	db_esc_md_text(db_judged_by_text(c, jb, sizeof jb), f);
	fputc('\n', f);
	db_align_md(f, c, r && r->has_token ? r->token : -1);
	fputs("\n## Summary\n\n", f);
	if (r) {
		db_esc_md_text(r->summary, f);
		fputs(".\n", f);
	} else if (p) {
		fputs("No bisect run yet; the first divergent pair is ", f);
		db_esc_md_code(p->f.stage, f);
		fprintf(f, " in layer %s.\n",
		        p->f.layer >= 0 ? db_layer_label(p->f.layer, l1, sizeof l1) : "-");
	} else {
		char nd[1400];
		db_esc_md_text(db_no_divergence_text(x->c, nd, sizeof nd), f);
		fputs(".\n", f);
	}

	fputs("\n## Divergence point\n\n", f);
	if (p) {
		char *rn = db_item_name(p->ref), *tn = db_item_name(p->tgt);
		char rank[96], every[48];
		size_t pi = (size_t)(p - c->pairs);
		/* the tensors are one rank's; the culprit is every rank's (db_rank_words.h) */
		if (db_every_rank_diverges(c, pi, NULL))
			snprintf(rank, sizeof rank, "%s: rank %d's tensors shown",
			         db_rank_words(c, pi, every, sizeof every), p->f.rank);
		else if (p->merged)
			snprintf(rank, sizeof rank, "merged");
		else if (p->f.rank >= 0)
			snprintf(rank, sizeof rank, "%d", p->f.rank);
		else
			snprintf(rank, sizeof rank, "-");
		fputs("| phase | pass | layer | stage | rank | ref tensor | target tensor |\n"
		      "|---|---|---|---|---|---|---|\n| ", f);
		db_esc_md_text(p->f.phase[0] ? p->f.phase : "-", f);
		fputs(" | ", f);
		db_esc_md_text(p->f.pass[0] ? p->f.pass : "-", f);
		fprintf(f, " | %s | ", p->f.layer >= 0 ? db_layer_label(p->f.layer, l1, sizeof l1) : "model");
		db_esc_md_cell(p->f.stage, f);
		fprintf(f, " | %s | ", rank);
		if (rn)
			db_esc_md_cell(rn, f);
		else
			fputs("(missing)", f);
		fputs(" | ", f);
		if (tn)
			db_esc_md_cell(tn, f);
		else
			fputs("(missing)", f);
		fputs(" |\n", f);
		free(rn);
		free(tn);
		db_hint h;
		char ht[256];
		db_pair_hint(x->c, p, &h);
		if (h.kind != DB_HINT_NONE)
			fprintf(f, "\nHint: **%s**.\n", db_hint_text(&h, false, ht, sizeof ht));
		if (r && r->layer_class)
			fprintf(f, "\nLayer class: **%s**.\n", r->layer_class);
		if (r && r->n_bad_ranks) {
			fputs(r->all_ranks_bad ? "\nBad ranks: every rank (" : "\nBad ranks:", f);
			for (size_t i = 0; i < r->n_bad_ranks; i++)
				fprintf(f, r->all_ranks_bad && !i ? "%d" : " %d", r->bad_ranks[i]);
			fputs(r->all_ranks_bad ? ").\n" : " (the others are good).\n", f);
		}
		if (r && r->has_crossing)
			fprintf(f, "\nThe probe leaves the band at %s.\n",
			        db_layer_label(r->crossing_layer, l1, sizeof l1));
	} else {
		fputs("None: nothing leaves the ok band.\n", f);
	}

	report_hints(f, x->c);

	fputs("\n## Severity\n\n", f);
	if (p && p->status == DB_ST_OK && p->m.stats_only) {
		/* the dump holds statistics, not values: what was measured on them */
		fprintf(f, "**Statistics only**: the dump holds Max, Min, Mean and Norm for this "
		        "tensor, not its values, so there is no cos. rel = %.4g (Max %.4g, Min %.4g, "
		        "Mean %.4g, Norm %.4g)%s, band **%s**.\n", p->m.rel, p->m.st_rel[0],
		        p->m.st_rel[1], p->m.st_rel[2], p->m.st_rel[3], p->m.md5_eq < 0 ? ""
		        : p->m.md5_eq ? "; md5 equal" : "; md5 differs", db_verdict_word(p));
	} else if (p && p->status == DB_ST_OK && db_pair_judged_bitwise(p) && db_pair_diverges(p) &&
	           p->band <= DB_BAND_DRIFT) {
		/* judged bitwise: the bits decide, not the size (issue 33) */
		fprintf(f, "rel_diff = %.3g: %s by size. cos = %.8f, rel = %.4g, rel_l2 = %.4g, band "
		        "%s; judged bitwise, verdict **%s**.\n", p->m.rel_diff,
		        severity_meaning(p->m.rel_diff), p->m.cos, p->m.rel, p->m.rel_l2,
		        db_band_name(p->band), db_verdict_word(p));
		fprintf(f, "\nJudged bitwise: **%s** (max |diff| %.3g).\n", db_verdict_word(p),
		        p->m.max_abs);
	} else if (p && p->status == DB_ST_OK) {
		fprintf(f, "rel_diff = %.3g: %s. cos = %.8f, rel = %.4g, rel_l2 = %.4g, band **%s**.\n",
		        p->m.rel_diff, severity_meaning(p->m.rel_diff), p->m.cos, p->m.rel,
		        p->m.rel_l2, db_verdict_word(p));
		char nz[96];
		if (*db_noise_str(p, nz, sizeof nz))
			fprintf(f, "\nAgainst the noise run: **%s**.\n", nz);
		else if (db_pair_judged_bitwise(p))
			fprintf(f, "\nJudged bitwise: **%s** (max |diff| %.3g).\n",
			        db_verdict_word(p), p->m.max_abs);
	} else if (p) {
		fprintf(f, "Status %s%s", db_status_name(p->status), p->error ? ": " : "");
		db_esc_md_text(p->error, f);
		fputs(".\n", f);
	} else {
		fputs("None.\n", f);
	}
	db_export_walk_md(f, r);

	fputs("\n## Bisect log\n\n", f);
	db_export_bisects_md(f, x);

	fputs("\n## Marks\n\n", f);
	db_export_marks_md(f, s);

	fputs("\n## Notes\n\n", f);
	char *ndir = x->notes_dir ? strdup(x->notes_dir) : db_notes_dir_for(s ? s->path : NULL);
	db_note_entry *ne = NULL;
	size_t nn = ndir ? db_notes_list(ndir, &ne) : 0;
	if (nn) {
		for (size_t i = 0; i < nn; i++) {
			fputs("- [", f);
			db_esc_md_text(ne[i].name, f);
			fputs("](", f);
			/* relative to report.md, wherever the notes are */
			char *rel = db_rel_path(x->out_dir ? x->out_dir : ".", ne[i].path);
			md_url(f, rel ? rel : ne[i].path);
			free(rel);
			fputs(") — ", f);
			db_esc_md_text(ne[i].title, f);
			fputc('\n', f);
		}
	} else {
		fputs("No notes in ", f);
		db_esc_md_code(ndir ? ndir : "notes", f);
		fputs(".\n", f);
	}
	db_notes_list_free(ne, nn);
	free(ndir);

	fputs("\n## Heatmap\n\n", f);
	db_grid g;
	if (x->grid) {
		md_heatmap(f, c, x->grid);
	} else if (db_export_grid(x, &g) == 0) {
		md_heatmap(f, c, &g);
		db_grid_free(&g);
	} else {
		fputs("Out of memory.\n", f);
	}

	fputs("\n## Files\n\n![heatmap](heatmap.svg)\n\n"
	      "- `heatmap.svg`: layer × stage, coloured by band, cos in each cell, marks outlined\n"
	      "- `metrics.json`, `metrics.csv`: every pair (the `compare --format json` schema)\n", f);
	return ferror(f) ? -1 : 0;
}

/* The selection the screen would show for x (see db_export_ctx). */
int db_export_grid(const db_export_ctx *x, db_grid *g)
{
	const db_session *s = x->s;
	const char *phase = x->phase, *pass = x->pass;
	int rank = x->rank;
	if (!x->view) {
		const char *vp = s ? db_session_view_get(s, "phase") : NULL;
		const char *vs = s ? db_session_view_get(s, "pass") : NULL;
		const char *vr = s ? db_session_view_get(s, "rank") : NULL;
		phase = vp ? vp : s ? s->phase : NULL;
		pass = vs ? vs : s ? s->pass : NULL;
		rank = vr && strcmp(vr, "all") && atoi(vr) >= 0 ? atoi(vr) : DB_RANK_ANY;
	}
	/* the workbench's builder, so the files show what the screen shows */
	db_grid_cache *gc = db_grid_cache_new();
	if (!gc)
		return -1;
	int rc = db_grid_cache_build(gc, x->c, phase, pass, rank, g);
	if (rc == 0)
		db_grid_cache_worst_ranks(gc, x->c, g, NULL);
	db_grid_cache_free(gc);
	return rc < 0 ? -1 : 0;
}
