/* Selection, grid, metrics text, filter, view stack; see app.h. */
#include "app.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_calls.h"
#include "db_dequant.h"
#include "db_bisect.h"
#include "db_cell.h"
#include "db_noise.h"
#include "db_routing.h"
#include "db_slot.h"
#include "db_verdict.h"
#include "draw.h"
#include "hint_ui.h"

const char *tui_phase(const struct tui *t)
{
	if (!t->cmp->n_phases || !t->cmp->phases[t->phase][0])
		return NULL;
	return t->cmp->phases[t->phase];
}

const char *tui_pass(const struct tui *t)
{
	return t->n_passes ? t->passes[t->pass] : NULL;
}

int tui_rank(const struct tui *t)
{
	return t->rank_sel ? t->ranks[t->rank_sel - 1] : DB_RANK_ANY;
}

bool tui_computing(const struct tui *t)
{
	return !db_compare_finished(t->cmp);
}

static void free_passes(struct tui *t)
{
	for (size_t i = 0; i < t->n_passes; i++)
		free(t->passes[i]);
	free(t->passes);
	t->passes = NULL;
	t->n_passes = t->pass = 0;
}

/* Passes of the current phase; keeps the selected pass name when it exists
 * in the new phase, else takes the profile's default. */
static void load_passes(struct tui *t)
{
	if (t->passes_valid && t->passes_phase == t->phase)
		return;
	t->passes_valid = true;
	t->passes_phase = t->phase;
	char *keep = t->n_passes ? strdup(t->passes[t->pass]) : NULL;
	free_passes(t);
	t->n_passes = db_passes(t->cmp, tui_phase(t), &t->passes);
	const char *def = db_default_pass(t->cmp, tui_phase(t));
	t->default_pass = def;
	for (size_t i = 0; i < t->n_passes; i++)
		if (def && !strcmp(t->passes[i], def))
			t->pass = i;
	for (size_t i = 0; keep && i < t->n_passes; i++)
		if (!strcmp(t->passes[i], keep))
			t->pass = i;
	free(keep);
}

/* The rank-independent part of tui_update_first_div is still that of the
 * pairs as they are. n_done is read first: a pair done after it changes
 * n_done again. */
static bool div_current(struct tui *t, const char *pa, size_t done)
{
	return t->div_cmp == t->cmp && t->div_gen == t->cmp->pairs_gen && t->div_done == done &&
	       t->div_phase == t->phase && t->div_pass && !strcmp(t->div_pass, pa);
}

/* The selected rank's first divergence from what tui_update_first_div
 * keeps: all ranks is first_div itself (the same call, DB_RANK_ANY), a rank
 * its rank_div entry; a pass over the pairs only when rank_div could not be
 * allocated. Issue 24: that pass, back to all ranks (R), was 14 ms of the key
 * at 10^6 files, a cache miss per 784-byte pair. */
static long first_div_sel(const struct tui *t, const char *ph, const char *pa)
{
	if (!t->rank_sel)       /* beyond drift where it only drifts: the headline's */
		return t->first_beyond >= 0 ? t->first_beyond : t->first_div;
	return t->rank_div ? t->rank_div[t->rank_sel - 1]
	                   : db_first_divergence(t->cmp, ph, pa, tui_rank(t));
}

/* A tree of statistics only (msprobe's default task) has no cos: once it
 * is measured, the heatmap opens on rel, the metric the tree has, unless
 * the user or the session chose one (issue 33: not a screen of nan). */
static void stats_metric(struct tui *t)
{
	if (t->metric_chosen || t->metric != M_COS || !t->first_div_known)
		return;
	size_t n = 0;
	for (size_t i = 0; i < t->cmp->n_pairs; i++) {
		const db_pair *p = &t->cmp->pairs[i];
		if (p->status != DB_ST_OK || !draw_pair_done(p))
			continue;
		if (!p->m.stats_only)
			return;
		n++;
	}
	if (n)
		t->metric = M_REL;
	t->metric_chosen = true;        /* decided once */
}

void tui_update_first_div(struct tui *t)
{
	tui_grid_worst(t);
	const char *ph = tui_phase(t) ? tui_phase(t) : "", *pa = tui_pass(t) ? tui_pass(t) : "";
	size_t done = atomic_load(&t->cmp->n_done);
	t->first_div_known = !tui_computing(t);
	if (div_current(t, pa, done)) {
		t->first_div_sel = first_div_sel(t, ph, pa);
		return;
	}
	t->first_div = db_first_divergence(t->cmp, ph, pa, -2);
	t->first_beyond = t->first_div_known ? db_first_beyond_drift_of(t->cmp, t->first_div) : -1;
	stats_metric(t);
	/* Cached for the draws (each is a pass over every pair). */
	free(t->phase_div);
	t->phase_div = calloc(t->cmp->n_phases + 1 + t->n_ranks, sizeof *t->phase_div);
	t->rank_div = t->phase_div ? t->phase_div + t->cmp->n_phases + 1 : NULL;
	for (size_t i = 0; t->phase_div && i < t->cmp->n_phases; i++)
		t->phase_div[i] = db_first_divergence(t->cmp, t->cmp->phases[i], "", -2);
	if (t->rank_div)        /* every rank at once: a rank key is then a lookup */
		db_first_divergence_ranks(t->cmp, ph, pa, t->ranks, t->n_ranks, t->rank_div);
	t->first_div_sel = first_div_sel(t, ph, pa);
	t->n_diverge = 0;
	for (size_t i = 0; i < t->cmp->n_pairs; i++)
		t->n_diverge += db_pair_diverges(&t->cmp->pairs[i]);
	free(t->div_pass);
	t->div_pass = strdup(pa);       /* NULL: computed again next time */
	t->div_cmp = t->cmp;
	t->div_gen = t->cmp->pairs_gen;
	t->div_done = done;
	t->div_phase = t->phase;
}

/* The grid cell pair falls in: its layer's row, the column of its stage or
 * of its top-level stage; NULL when the grid has none. */
static size_t *cell_of(struct tui *t, size_t pair)
{
	const db_grid *g = &t->grid;
	const db_pair *p = &t->cmp->pairs[pair];
	if (!t->have_grid)
		return NULL;
	char buf[256];
	const char *top = db_profile_parent(t->cmp->profile, p->f.stage,
	                                    (const char *const *)g->cols, g->n_cols, buf,
	                                    sizeof buf);
	if (!top)
		top = p->f.stage;
	for (size_t r = 0; r < g->n_rows; r++) {
		db_grid_row *row = &g->rows[r];
		if (row->layer != p->f.layer)
			continue;
		if (p->f.layer < 0) {
			if (!strcmp(row->label, p->f.stage) || !strcmp(row->label, top))
				return &row->cells[0];
			continue;
		}
		for (size_t c = 0; c < g->n_cols; c++)
			if (!strcmp(g->cols[c], p->f.stage) || !strcmp(g->cols[c], top))
				return &row->cells[c];
	}
	return NULL;
}

bool tui_select_rank_of(struct tui *t, size_t pair)
{
	const db_pair *p = &t->cmp->pairs[pair];
	size_t sel = 0;
	if (!p->merged && p->f.rank >= 0)
		for (size_t k = 0; k < t->n_ranks; k++)
			if (t->ranks[k] == p->f.rank)
				sel = k + 1;
	if (sel && !t->rank_sel) {
		/* The all-ranks view shows the pair when its cell holds that rank. */
		tui_grid_worst(t);
		size_t *cell = cell_of(t, pair);
		const db_pair *q = cell && *cell != DB_NO_PAIR ? &t->cmp->pairs[*cell] : NULL;
		if (q && !q->merged && q->f.rank == p->f.rank)
			sel = 0;
	}
	if (sel == t->rank_sel)
		return false;
	t->rank_sel = sel;
	tui_selection_changed(t);
	return true;
}

/* The all-ranks grid's per-rank cells take their worst rank (db_cell.h:
 * the exports choose the same way), again whenever more pairs finished. */
void tui_grid_worst(struct tui *t)
{
	size_t done = atomic_load(&t->cmp->n_done);
	if (!t->have_grid || t->grid.rank != DB_RANK_ANY || t->n_ranks < 2)
		return;
	if (t->worst_gen == t->grid_gen && (t->worst_settled || t->worst_done == done))
		return;
	bool settled;
	if (t->grid_cache ? db_grid_cache_worst_ranks(t->grid_cache, t->cmp, &t->grid, &settled)
	                  : db_grid_worst_ranks(t->cmp, &t->grid, &settled)) {
		t->grid_gen++;          /* views holding cells reload them */
		t->dirty = true;
	}
	t->worst_gen = t->grid_gen;
	t->worst_done = done;
	t->worst_settled = settled;
}

char *tui_cell_rank_note(const struct tui *t, size_t pair, char *buf, size_t len)
{
	buf[0] = '\0';
	if (t->rank_sel || t->n_ranks < 2 || pair >= t->cmp->n_pairs)
		return buf;
	const db_pair *p = &t->cmp->pairs[pair];
	if (p->merged || p->f.rank < 0)
		return buf;
	size_t *rp = NULL, n = db_rank_pairs(t->cmp, pair, &rp), n_done = 0;
	for (size_t i = 0; i < n; i++)
		n_done += draw_pair_done(&t->cmp->pairs[rp[i]]);
	free(rp);
	const char *what = t->cmp->n_slots ? "slot" : "rank";   /* --slots: slots in its place */
	if (n < 2)
		snprintf(buf, len, " (the only %s)", what);
	else if (n_done < n)
		snprintf(buf, len, " (lowest of %zu %ss until all are computed)", n, what);
	else
		snprintf(buf, len, " (worst of %zu %ss)", n, what);
	return buf;
}

void tui_rescanned(struct tui *t)
{
	free(t->ranks);
	t->n_ranks = db_ranks(t->cmp, &t->ranks);
	if (t->rank_sel > t->n_ranks)
		t->rank_sel = 0;
	tui_selection_changed(t);
	db_compare_start(t->cmp);
}

void tui_selection_changed(struct tui *t)
{
	load_passes(t);
	if (t->have_grid)
		db_grid_free(&t->grid);
	memset(&t->grid, 0, sizeof t->grid);
	if (!t->grid_cache)
		t->grid_cache = db_grid_cache_new();
	t->have_grid = (t->grid_cache ? db_grid_cache_build(t->grid_cache, t->cmp, tui_phase(t),
	                                                    tui_pass(t), tui_rank(t), &t->grid)
	                              : db_grid_build(t->cmp, tui_phase(t), tui_pass(t),
	                                              tui_rank(t), &t->grid)) == 0;
	t->grid_gen++;
	tui_update_first_div(t);
	t->dirty = true;
}

void tui_init_selection(struct tui *t)
{
	t->n_ranks = db_ranks(t->cmp, &t->ranks);
	t->phase = 0;           /* causal order: the first phase first */
	for (size_t i = 0; i < t->cmp->n_pairs; i++)
		t->has_merged |= t->cmp->pairs[i].merged;
	/* All ranks: merged where sharded, else the worst rank (tui_grid_worst),
	 * so a rank that alone goes bad shows on the first screen. */
	t->rank_sel = 0;
	/* the curve starts on the probe the bisect would choose, unless that
	 * means computing pairs before the first frame (a weights profile) */
	bool computes = db_probe_computes(t->cmp, tui_phase(t), tui_pass(t));
	char *probe = NULL, why[384];
	db_probe_how how;
	db_err err = {{0}};
	if (!computes &&
	    db_bisect_choose_probe(t->cmp, tui_phase(t), tui_pass(t), NULL, &probe, &how, why,
	                           sizeof why, &err) == 0 && strcmp(probe, DB_PROBE_LAST))
		snprintf(t->probe, sizeof t->probe, "%s", probe);
	free(probe);
	tui_selection_changed(t);
}

/* The heatmap's top line; here with the selection it shows. */
void tui_draw_selection(struct tui *t, WINDOW *w, int y)
{
	int W0 = getmaxx(w), x = 0;
	draw_fill(w, y, 0, W0, C_DEFAULT, 0);
	/* the metric (and the filter, cut in the middle past 16 columns) keep
	 * their room: the phases, pass and rank give way before they do */
	const char *metric = tui_metric_label(t->metric);
	char pat[300];
	if (t->filter_re)
		draw_fit_mid(t->filter_pat, draw_width(t->filter_pat) > 16 ? 16 : 300, -1, pat,
		             sizeof pat);
	int right = draw_width("  metric ") + draw_width(metric) +
	            (t->filter_re ? draw_width("  filter /") + draw_width(pat) : 0);
	int W = W0 - right < 20 ? 20 : W0 - right;
	x += draw_text(w, y, x, W - x, C_DIM, 0, "phase ");
	if (!tui_phase(t)) {
		x += draw_text(w, y, x, W - x, C_DEFAULT, 0, "-");
	} else {
		for (size_t i = 0; i < t->cmp->n_phases; i++) {
			bool sel = i == t->phase;
			x += draw_textf(w, y, x, W - x, sel ? C_TAB : C_DEFAULT, 0, sel ? "[%s]" : " %s ",
			                t->cmp->phases[i]);
		}
	}
	x += draw_text(w, y, x, W - x, C_DIM, 0, "  pass ");
	if (!t->n_passes || (t->n_passes == 1 && !*tui_pass(t))) {
		/* the layout has no passes: nothing to choose, not "[]" */
		x += draw_text(w, y, x, W - x, C_DEFAULT, 0, "-");
	} else {
		const char *def = t->default_pass;
		x += draw_textf(w, y, x, W - x, C_TAB, 0, "[%s]", tui_pass(t));
		x += draw_textf(w, y, x, W - x, C_DIM, 0, " %zu/%zu%s", t->pass + 1, t->n_passes,
		                def && !strcmp(def, tui_pass(t)) ? " default" : "");
		/* the pass the bisect's triage names (triage_ui.c) */
		if (t->triaged && t->pass_why[0] && !strcmp(t->triaged_pass, tui_pass(t)) &&
		    !strcmp(t->triaged_phase, tui_phase(t) ? tui_phase(t) : "") &&
		    t->triaged_div && t->triaged_div_gen == t->cmp->pairs_gen + 1 &&
		    t->triaged_div_done == t->cmp->n_done)     /* tui_triaged_diverges */
			x += draw_text(w, y, x, W - x, C_MARK, 0, " first diverging");
	}
	/* --slots: slot k is rank k (src/compare/slots.c) */
	x += draw_text(w, y, x, W - x, C_DIM, 0, t->cmp->n_slots ? "  slot " : "  rank ");
	if (t->rank_sel)
		x += draw_textf(w, y, x, W - x, C_TAB, 0, "[%d]", tui_rank(t));
	else
		x += draw_text(w, y, x, W - x, C_TAB, 0, t->n_ranks ? "[all]" : "[-]");
	if (t->n_ranks)
		x += draw_textf(w, y, x, W - x, C_DIM, 0, " of %zu", t->n_ranks);
	if (t->n_variants) {
		x += draw_text(w, y, x, W - x, C_DIM, 0, "  variant ");
		x += draw_textf(w, y, x, W - x, C_TAB, 0, "[%zu]", t->variant + 1);
		x += draw_textf(w, y, x, W - x, C_DIM, 0, " of %zu", t->n_variants);
	}
	/* What "all" shows, when it fits beside the metric and the filter. */
	const char *how = t->has_merged ? " (merged where sharded, else worst)"
	                                : " (the worst per cell)";
	if (!t->rank_sel && t->n_ranks > 1 && x + draw_width(how) <= W)
		x += draw_text(w, y, x, W - x, C_DIM, 0, how);
	x += draw_text(w, y, x, W0 - x, C_DIM, 0, "  metric ");
	x += draw_text(w, y, x, W0 - x, C_TAB, 0, metric);
	if (t->filter_re)
		draw_textf(w, y, x, W0 - x, C_HILITE, A_BOLD, "  filter /%s", pat);
}

double tui_metric_value(const db_pair *p, enum tui_metric m)
{
	switch (m) {
	case M_COS: return p->m.cos;
	case M_REL: return p->m.rel;
	case M_REL_DIFF: return p->m.rel_diff;
	case M_MAX_ABS: return p->m.max_abs;
	case M_NOISE:
		return p->noise == DB_NOISE_WITHIN || p->noise == DB_NOISE_BEYOND ? p->noise_ratio
		                                                                   : NAN;
	default: return NAN;
	}
}

const char *tui_metric_name(enum tui_metric m)
{
	static const char *const names[M__COUNT] = {"cos", "rel", "rel_diff", "max_abs", "noise"};
	return m < M__COUNT ? names[m] : "?";
}

const char *tui_metric_label(enum tui_metric m)
{
	return m == M_NOISE ? G("× noise", "x noise") : tui_metric_name(m);
}

enum tui_metric tui_metric_next(const struct tui *t)
{
	enum tui_metric m = (enum tui_metric)((t->metric + 1) % M__COUNT);
	if (m == M_NOISE && !db_noise_root(t->cmp))
		m = (enum tui_metric)((m + 1) % M__COUNT);
	return m;
}

/* "x93", "x0.35", "x8e+05": a noise ratio in 7 columns */
static void fmt_ratio(double x, char *buf, size_t len)
{
	if (isnan(x))
		snprintf(buf, len, "-");
	else if (x == 0)
		snprintf(buf, len, "x0");
	else if (x < 10)
		snprintf(buf, len, "x%.2f", x);
	else if (x < 1e5)
		snprintf(buf, len, "x%.0f", x);
	else
		snprintf(buf, len, "x%.0e", x);
}

void tui_cell_text(const db_pair *p, enum tui_metric m, char *buf, size_t len,
                   int *color)
{
	char v[32];
	if (p->status != DB_ST_OK) {
		static const char *const what[] = {
			[DB_ST_REF_ONLY] = "no tgt", [DB_ST_TARGET_ONLY] = "no ref",
			[DB_ST_SHAPE_MISMATCH] = "shape", [DB_ST_ERROR] = "error",
			[DB_ST_NOT_COMPARABLE] = "layout"};
		snprintf(buf, len, "%s %7s", draw_status_glyph(p->status),
		         p->status <= DB_ST_NOT_COMPARABLE && what[p->status] ? what[p->status] : "?");
		*color = draw_status_color(p->status);
		return;
	}
	if (!draw_pair_done(p)) {
		/* 9 columns; "…" is one column but three bytes */
		snprintf(buf, len, "%s", G("        …", "      ..."));
		*color = C_PENDING;
		return;
	}
	double x = tui_metric_value(p, m);
	if (m == M_COS)
		fmt_cos(x, v, sizeof v);
	else if (m == M_NOISE)
		fmt_ratio(x, v, sizeof v);
	else
		fmt_sci(x, v, sizeof v, 6);
	/* x noise: the colour is the noise run's verdict, the glyph the band */
	if (m == M_NOISE && (p->noise == DB_NOISE_WITHIN || p->noise == DB_NOISE_BEYOND)) {
		snprintf(buf, len, "%s%7s", draw_band_glyph2(p->band), v);
		*color = draw_band_color(p->noise == DB_NOISE_BEYOND ? DB_BAND_BUG : DB_BAND_OK);
		return;
	}
	/* a slot judged bitwise whose bits are off: not "ok", whatever the band */
	bool off = db_pair_judged_bitwise(p) && p->band == DB_BAND_OK &&
	           !(p->m.byte_equal == 1.0);
	snprintf(buf, len, "%s%7s", off ? G("≢ ", "# ") : draw_band_glyph2(p->band), v);
	*color = draw_band_color(off ? DB_BAND_DRIFT : p->band);
}

/* ---- messages ---- */

void tui_msg(struct tui *t, bool err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof t->msg, fmt, ap);
	va_end(ap);
	t->msg_err = err;
	t->dirty = true;
}

/* ---- pair text ---- */

char *tui_item_shape(const db_item *it, char *buf, size_t len)
{
	if (!it) {
		snprintf(buf, len, "-");
		return buf;
	}
	size_t o = 0;
	o += (size_t)snprintf(buf + o, len - o, "[");
	for (int d = 0; d < it->ndim && o < len; d++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? ", " : "",
		                      (long long)it->shape[d]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
	return buf;
}

static char *shape_str(int ndim, const int64_t *shape, char *buf, size_t len)
{
	if (ndim < 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	size_t o = (size_t)snprintf(buf, len, "[");
	for (int d = 0; d < ndim && o < len; d++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? ", " : "",
		                      (long long)shape[d]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
	return buf;
}

char *tui_item_path(const struct tui *t, const db_item *it, bool ref)
{
	const db_index *ix = ref ? t->cmp->ref : t->cmp->tgt;
	if (!ix)
		ix = t->cmp->ref;
	return it ? db_index_path(ix, it) : NULL;
}

char *tui_pair_label(const struct tui *t, size_t pair, char *buf, size_t len)
{
	if (pair == DB_NO_PAIR || pair >= t->cmp->n_pairs) {
		snprintf(buf, len, "-");
		return buf;
	}
	const db_pair *p = &t->cmp->pairs[pair];
	char lay[32] = "";
	if (p->f.layer >= 0)
		snprintf(lay, sizeof lay, "L%d ", p->f.layer);
	char rk[32] = "";
	if (p->merged)
		snprintf(rk, sizeof rk, " (merged)");
	else if (p->slot.side == DB_SLOT_IN_TREE && p->slot.ranked)
		snprintf(rk, sizeof rk, " rank %d slot %d", p->slot.rank, p->slot.k);
	else if (p->f.rank >= 0)
		snprintf(rk, sizeof rk, p->slot.side == DB_SLOT_IN_TREE ? " slot %d" : " rank %d",
		         p->f.rank);
	snprintf(buf, len, "%s%s%s", lay, p->f.stage, rk);
	return buf;
}

/* Flat index -> "[i, j, k]" over the pair's shape. */
static void unravel(int64_t flat, int ndim, const int64_t *shape, char *buf, size_t len)
{
	int64_t idx[DB_MAX_DIMS];
	for (int d = ndim - 1; d >= 0; d--) {
		int64_t s = shape[d] > 0 ? shape[d] : 1;
		idx[d] = flat % s;
		flat /= s;
	}
	size_t o = (size_t)snprintf(buf, len, "[");
	for (int d = 0; d < ndim && o < len; d++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? ", " : "", (long long)idx[d]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

void tui_draw_pair_status(struct tui *t, WINDOW *w, int y, size_t pair)
{
	tui_draw_pair_status_note(t, w, y, pair, NULL);
}

void tui_draw_pair_status_note(struct tui *t, WINDOW *w, int y, size_t pair,
                               const char *note)
{
	int W = getmaxx(w);
	draw_fill(w, y, 0, W, C_DEFAULT, 0);
	draw_fill(w, y + 1, 0, W, C_DEFAULT, 0);
	if (pair == DB_NO_PAIR || pair >= t->cmp->n_pairs) {
		draw_text(w, y, 0, W, C_DIM, 0, "(no tensor here)");
		return;
	}
	const db_pair *p = &t->cmp->pairs[pair];
	char lab[512], sr[128], stg[128];
	tui_pair_label(t, pair, lab, sizeof lab);
	shape_str(p->ndim_ref, p->shape_ref, sr, sizeof sr);
	shape_str(p->ndim_tgt, p->shape_tgt, stg, sizeof stg);
	char sel[128] = "";
	size_t o = 0;
	if (p->f.phase[0])
		o += (size_t)snprintf(sel + o, sizeof sel - o, " %s", p->f.phase);
	if (p->f.pass[0] && o < sizeof sel)
		snprintf(sel + o, sizeof sel - o, " pass %s", p->f.pass);
	int x = draw_text(w, y, 0, W, C_DEFAULT, A_BOLD, lab);
	if (note && *note)
		x += draw_text(w, y, x, W - x, C_DEFAULT, 0, note);
	x += draw_textf(w, y, x, W - x, C_DIM, 0, "%s", sel);
	x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, "  ref %s %s  target %s %s%s", sr,
	                p->ndim_ref >= 0 ? db_dtype_name(p->dtype_ref) : "(missing)", stg,
	                p->ndim_tgt >= 0 ? db_dtype_name(p->dtype_tgt) : "(missing)",
	                db_pair_dequantized(p) ? " (dequantized)"
	                : p->dtype_differs ? " (cast to float64)" : "");
	if (p->merged)
		x += draw_textf(w, y, x, W - x, C_DIM, 0, "  merged from %zu+%zu shards",
		                p->n_ref_shards, p->n_tgt_shards);
	const db_item *it = p->ref ? p->ref : p->tgt;
	if (it && x + 4 < W)
		draw_textf(w, y, x, W - x, C_DIM, 0, "  %s%s%s", it->path, it->key[0] ? ":" : "",
		           it->key);

	y++;
	char fd[512];   /* a call only one side makes (pairing: calls): say which */
	if (db_call_finding(t->cmp, pair, fd, sizeof fd, NULL)) {
		draw_text(w, y, 0, W, C_MISSING, 0, fd);
		return;
	}
	switch (p->status) {
	case DB_ST_REF_ONLY:
		draw_text(w, y, 0, W, C_MISSING, 0, "only in the reference: the target has no such tensor");
		return;
	case DB_ST_TARGET_ONLY:
		draw_text(w, y, 0, W, C_MISSING, 0, "only in the target: the reference has no such tensor");
		return;
	case DB_ST_SHAPE_MISMATCH: {
		const char *hint = tui_pair_hint(t->cmp, pair);
		draw_textf(w, y, 0, W, C_SHAPE, 0, "shape mismatch: ref %s vs target %s%s%s", sr, stg,
		           hint ? "  hint " : "", hint ? hint : "");
		return;
	}
	case DB_ST_ERROR:
		draw_textf(w, y, 0, W, C_ERROR, 0, "error: %s", p->error ? p->error : "?");
		return;
	default:
		break;
	}
	if (!draw_pair_done(p)) {
		draw_text(w, y, 0, W, C_PENDING, 0, "computing…");
		return;
	}
	const db_metrics *m = &p->m;
	char rel[16], rl2[16], rd[16], ma[16], me[16], at[128] = "";
	fmt_sci(m->rel, rel, sizeof rel, 9);
	fmt_sci(m->rel_l2, rl2, sizeof rl2, 9);
	fmt_sci(m->rel_diff, rd, sizeof rd, 9);
	fmt_sci(m->max_abs, ma, sizeof ma, 9);
	fmt_sci(m->mean_abs, me, sizeof me, 9);
	if (m->argmax >= 0 && p->ndim_ref > 0)
		unravel(m->argmax, p->ndim_ref, p->shape_ref, at, sizeof at);
	/* a slot with a bit off is not a ✓, whatever its band (as its cell) */
	db_judgement vd;
	db_pair_verdict(p, &vd);
	bool off = vd.by == DB_JUDGED_BITWISE && vd.diverges && p->band < DB_BAND_ALGO;
	x = draw_text(w, y, 0, W, draw_band_color(off ? DB_BAND_DRIFT : p->band), 0,
	              off ? G("≢", "#") : draw_band_glyph(p->band));
	x += draw_textf(w, y, x, W - x, C_DEFAULT, A_BOLD, " %s", vd.word);
	char nz[96];
	if (*db_routing_words(t->cmp, p, nz, sizeof nz))    /* as compare says it */
		x += draw_textf(w, y, x, W - x, C_DEFAULT, A_BOLD, " (%s)", nz);
	/* what backs the word: the ratio to the floor that judged it */
	if (p->noise == DB_NOISE_WITHIN || p->noise == DB_NOISE_BEYOND)
		x += draw_textf(w, y, x, W - x, p->noise == DB_NOISE_BEYOND ? C_MARK : C_DEFAULT,
		                A_BOLD, "%s", db_noise_str(p, nz, sizeof nz) + strlen(db_verdict_word(p)));
	else if (p->noise == DB_NOISE_NO_FLOOR)
		x += draw_text(w, y, x, W - x, C_DEFAULT, A_BOLD, " (no noise floor)");
	const char *hint = tui_pair_hint(t->cmp, pair);
	if (hint)
		x += draw_textf(w, y, x, W - x, C_DEFAULT, A_BOLD, "  hint %s", hint);
	if (m->stats_only) {    /* measured on the dumper's statistics: say so, no cos */
		char r4[4][16];
		for (int k = 0; k < 4; k++)
			fmt_sci(m->st_rel[k], r4[k], sizeof r4[k], 9);
		draw_textf(w, y, x, W - x, C_DEFAULT, 0, "  statistics only  rel %s (Max %s Min %s Mean %s "
		           "Norm %s)%s", rel, r4[0], r4[1], r4[2], r4[3], m->md5_eq < 0 ? ""
		           : m->md5_eq ? "  md5 equal" : "  md5 differs");
		return;
	}
	char be[16];
	db_fmt_pair_bytes(p, draw_utf8, be, sizeof be);      /* "⊂": a part, not "≡" */
	x += draw_textf(w, y, x, W - x, C_DEFAULT, 0,
	                "  cos %.6f  bytes= %s  rel %s  rel_l2 %s  rel_diff %s  max_abs %s%s%s  mean_abs %s",
	                m->cos, be, rel, rl2, rd, ma, at[0] ? " at " : "", at, me);
	if (m->nan_ref || m->nan_tgt || m->inf_ref || m->inf_tgt)
		draw_textf(w, y, x, W - x, C_ERROR, 0, "  nan %llu/%llu inf %llu/%llu",
		           (unsigned long long)m->nan_ref, (unsigned long long)m->nan_tgt,
		           (unsigned long long)m->inf_ref, (unsigned long long)m->inf_tgt);
}
