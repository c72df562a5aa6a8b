/* Sub-stages of a cell in execution order (seed Phase 5): cos, rel and the
 * single-step cos change from the previous sub-stage; the first one that
 * drops more than 0.001 or leaves the ok band is highlighted. In the
 * bisect's culprit layer the view shows the bisect's intra-layer walk
 * instead (the core's rows, db_bisect_result.walk: error in and out,
 * amplification, SQNR, role, the stages not comparable in their place and
 * "at or before"), so the screen says what `bisect` and report.md say. */
#include "base/app.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_bisect.h"
#include "db_calls.h"
#include "db_notes.h"
#include "db_verdict.h"
#include "base/draw.h"
#include "base/hint_ui.h"

#define DROP_LIMIT 0.001

struct stages {
	size_t *pairs, n;
	struct list_nav nav;
	int page;
	bool moved;                     /* the user moved: stop following the culprit */
	struct list_nav wnav;           /* the walk's rows (culprit layer) */
	bool wmoved;
};

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* The bisect's analysis when this cell is in its culprit layer (same
 * phase, pass and layer) and it walked that layer; else NULL. */
static const db_bisect_result *walk_of(struct view *v, struct tui *t)
{
	/* only once the search is over, as the bisect view: analysing a
	 * search under way would compute pairs here, on the input thread */
	if (!t->bisect || v->pair == DB_NO_PAIR || !db_bisect_done(&t->bisect->sm))
		return NULL;
	const db_bisect_result *r = tui_bisect_result(t);
	if (!r || !r->n_walk || !r->has_first_bad)
		return NULL;
	const db_pair *p = &t->cmp->pairs[v->pair];
	if (p->f.layer != r->first_bad_layer || !same(p->f.phase, r->phase) ||
	    !same(p->f.pass, r->pass))
		return NULL;
	return r;
}

static const char *num(double x, char *buf, size_t len)
{
	if (isnan(x))
		snprintf(buf, len, "-");
	else if (isinf(x))
		snprintf(buf, len, "inf");
	else
		fmt_sci(x, buf, len, 8);
	return buf;
}

/* The walk: one row per stage of the layer in execution order. */
static void walk_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h,
                      const db_bisect_result *r)
{
	struct stages *s = v->priv;
	int W = getmaxx(w);
	char buf[512], l[32];
	int x = draw_textf(w, y0, 0, W, C_DEFAULT, A_BOLD, "Intra-layer walk of %s",
	                   db_layer_label(r->first_bad_layer, l, sizeof l));
	draw_textf(w, y0, x, W - x, C_DIM, 0, "  %zu stages in execution order; error = rel L2 in -> out",
	           r->n_walk);
	long cul = -1;
	for (size_t i = 0; i < r->n_walk; i++)
		if (r->walk[i].culprit && cul < 0)
			cul = (long)i;
	if (!s->wmoved && cul >= 0)
		s->wnav.cur = (int)cul;         /* start on the culprit */
	int ny = y0 + 1;
	if (cul >= 0) {
		const db_substage_row *c = &r->walk[cul];
		x = draw_text(w, ny, 0, W, C_MARK, A_BOLD, G("▸ ", "* "));
		x += draw_textf(w, ny, x, W - x, C_HILITE, 0, "culprit %s %s", c->stage,
		                db_stage_role_name(c->role));
		if (r->at_or_before)
			draw_textf(w, ny, x, W - x, C_HILITE, 0, "; at or before it: %s could not be compared",
			           r->at_or_before);
	} else {
		draw_text(w, ny, 0, W, C_GOOD, 0, "no stage of this layer introduces the error");
	}
	if (r->calls[0])        /* a call only one side makes, in this layer */
		draw_textf(w, ++ny, 0, W, C_MISSING, 0, "calls: %s", r->calls);
	/* the Python frame that made the culprit (the dump's stack record) */
	if (r->frame_ref[0] && !strcmp(r->frame_ref, r->frame_tgt))
		draw_textf(w, ++ny, 0, W, C_DIM, 0, "made at: %s", r->frame_ref);
	else if (r->frame_ref[0] || r->frame_tgt[0]) {
		draw_textf(w, ++ny, 0, W, C_DIM, 0, "made at: reference %s",
		           r->frame_ref[0] ? r->frame_ref : "-");
		draw_textf(w, ++ny, 0, W, C_DIM, 0, "         target    %s",
		           r->frame_tgt[0] ? r->frame_tgt : "-");
	}
	int nw = 5;
	for (size_t i = 0; i < r->n_walk; i++) {
		int k = draw_width(r->walk[i].stage);
		nw = k > nw ? k : nw;
	}
	if (nw > W / 3)
		nw = W / 3;
	/* the verdict column: wider for words other than a band's ("bits
	 * differ", "beyond noise"); a band's keep the layout as it was */
	int bw = 9;
	for (size_t i = 0; i < r->n_walk; i++) {
		const db_substage_row *row = &r->walk[i];
		if (row->word && strcmp(row->word, db_band_name(row->band)) &&
		    draw_width(row->word) + 3 > bw)
			bw = draw_width(row->word) + 3;
	}
	int hy = ny + 2;
	int xs = 6, xc = xs + nw + 1, xr = xc + 11, xb = xr + 9, xi = xb + bw, xo = xi + 9,
	    xa = xo + 9, xq = xa + 11, xl = xq + 7;
	const struct col_head heads[] = {{xs, "stage"}, {xc, "cos"}, {xr, "rel"},
	                                  {xb, bw > 9 ? "verdict" : "band"}, {xi, "err in"}, {xo, "err out"},
	                                  {xa, "amp"}, {xq, "SQNR"}, {xl, "role"}};
	draw_heads(w, hy, W, heads, sizeof heads / sizeof *heads);
	s->page = h - 4 - (hy - y0);
	list_nav_fix(&s->wnav, (int)r->n_walk, s->page);
	for (int k = 0; k < s->page; k++) {
		size_t i = (size_t)(s->wnav.top + k);
		if (i >= r->n_walk)
			break;
		const db_substage_row *row = &r->walk[i];
		int y = hy + 1 + k;
		attr_t a = (int)i == s->wnav.cur ? A_REVERSE : 0;
		draw_fill(w, y, 0, W, C_DEFAULT, a);
		draw_text(w, y, 0, 2, C_MARK, A_BOLD | a, row->culprit ? G("▸ ", "* ") : "  ");
		draw_textf(w, y, 2, 4, C_DEFAULT, a, "%zu", i + 1);
		draw_text(w, y, xs, nw, C_DEFAULT, a | (row->culprit ? A_BOLD : 0),
		          draw_fit(row->stage, nw, buf, sizeof buf));
		if (row->one_side || row->role == DB_ROLE_NOT_COMPARABLE) {
			/* in its place, with why: nothing measured to show */
			draw_textf(w, y, xc, W - xc, C_MISSING, a, "%s: %s", db_stage_role_name(row->role),
			           row->one_side ? row->one_side : row->reason ? row->reason : "-");
			continue;
		}
		char v1[32], v2[32];
		if (row->stats_only)
			snprintf(v1, sizeof v1, "stats");       /* statistics only: no cos */
		else
			snprintf(v1, sizeof v1, "%.6f", row->cos);
		draw_text(w, y, xc, W - xc, C_DEFAULT, a, v1);
		draw_text(w, y, xr, W - xr, C_DEFAULT, a, num(row->rel, v2, sizeof v2));
		/* the pair's word, as its status line and bisect's walk: a stage
		 * judged bitwise whose bits are off is not "ok" (issue 33) */
		bool off = row->word && !strcmp(row->word, "bits differ");
		x = xb + draw_text(w, y, xb, W - xb, draw_band_color(off ? DB_BAND_DRIFT : row->band),
		                   a, off ? G("≢", "#") : draw_band_glyph(row->band));
		draw_textf(w, y, x, W - x, C_DEFAULT, a, " %s",
		           row->word ? row->word : db_band_name(row->band));
		draw_text(w, y, xi, W - xi, C_DEFAULT, a, num(row->err_in, v1, sizeof v1));
		draw_text(w, y, xo, W - xo, C_DEFAULT, a, num(row->err_out, v1, sizeof v1));
		if (isinf(row->amp) || isnan(row->amp))
			num(row->amp, v1, sizeof v1);
		else
			snprintf(v1, sizeof v1, "%.3g", row->amp);
		draw_textf(w, y, xa, W - xa, C_DEFAULT, a, "x%s", v1);
		if (isinf(row->sqnr_db))
			snprintf(v1, sizeof v1, "inf");
		else
			snprintf(v1, sizeof v1, "%.1f", row->sqnr_db);
		draw_text(w, y, xq, W - xq, C_DEFAULT, a, v1);
		draw_text(w, y, xl, W - xl, row->role == DB_ROLE_INTRODUCES || row->role == DB_ROLE_AMPLIFIES
		                             ? C_HILITE : C_DEFAULT, a | (row->culprit ? A_BOLD : 0),
		          db_stage_role_name(row->role));
	}
	if (r->at_or_before && hy + 1 + s->page < y0 + h - 2)
		draw_textf(w, y0 + h - 3, 0, W, C_DIM, 0, "the culprit is at or before %s: %s before it could not be compared",
		           r->first_bad_substage ? r->first_bad_substage : r->first_bad_stage,
		           r->at_or_before);
	size_t sel = r->walk[s->wnav.cur].pair;
	tui_draw_pair_status(t, w, y0 + h - 2, sel);
}

static int stages_open(struct view *v, struct tui *t)
{
	struct stages *s = v->priv;
	s->n = db_substages(t->cmp, v->pair, &s->pairs);
	if (!s->n) {
		free(s->pairs);
		s->pairs = malloc(sizeof *s->pairs);
		if (!s->pairs)
			return -1;
		s->pairs[0] = v->pair;
		s->n = 1;
	}
	/* Start on the culprit when there is one, else on the first row. */
	return 0;
}

static void stages_done(struct view *v, struct tui *t)
{
	struct stages *s = v->priv;
	free(s->pairs);
}

/* Index of the first row dropping > 0.001 or leaving ok; -1 none or not
 * computed yet. Before the first row the input counts as cos 1, ok. */
static long culprit(struct tui *t, struct stages *s)
{
	double prev = 1.0;
	db_band prev_band = DB_BAND_OK;
	for (size_t i = 0; i < s->n; i++) {
		const db_pair *p = &t->cmp->pairs[s->pairs[i]];
		if (p->status != DB_ST_OK)
			return (long)i;
		if (!draw_pair_done(p))
			return -1;
		/* statistics only: no cos, the band alone says it */
		bool drop = !p->m.stats_only && (prev - p->m.cos > DROP_LIMIT || isnan(p->m.cos));
		bool leaves = p->band > DB_BAND_OK && prev_band <= DB_BAND_OK;
		/* judged bitwise: the first whose bits are off (issue 33) */
		bool bits = db_pair_judged_bitwise(p) && db_pair_diverges(p);
		if (drop || leaves || bits)
			return (long)i;
		prev = p->m.stats_only ? prev : p->m.cos, prev_band = p->band;
	}
	return -1;
}

/* "[12, 64]" of the side that has one, "-" for neither. */
static const char *shape_of(const db_pair *p, char *shape, size_t len)
{
	int nd = p->ndim_ref >= 0 ? p->ndim_ref : p->ndim_tgt;
	const int64_t *sh = p->ndim_ref >= 0 ? p->shape_ref : p->shape_tgt;
	size_t o = (size_t)snprintf(shape, len, nd >= 0 ? "[" : "-");
	for (int d = 0; d < nd && o < len; d++)
		o += (size_t)snprintf(shape + o, len - o, "%s%lld", d ? ", " : "", (long long)sh[d]);
	if (nd >= 0 && o < len)
		snprintf(shape + o, len - o, "]");
	return shape;
}

static void stages_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct stages *s = v->priv;
	const db_bisect_result *wr = walk_of(v, t);
	if (wr) {
		walk_draw(v, t, w, y0, h, wr);
		return;
	}
	int W = getmaxx(w);
	char lab[300], buf[512];
	tui_pair_label(t, v->pair, lab, sizeof lab);
	int x = draw_text(w, y0, 0, W, C_DEFAULT, A_BOLD, "Sub-stages of ");
	x += draw_text(w, y0, x, W - x, C_DEFAULT, A_BOLD, lab);
	draw_textf(w, y0, x, W - x, C_DIM, 0, "  %zu in execution order", s->n);
	long cul = culprit(t, s);
	if (!s->moved && cul >= 0)
		s->nav.cur = (int)cul;          /* start on the culprit */
	int ny = y0 + 1;
	if (cul >= 0) {
		tui_pair_label(t, s->pairs[cul], buf, sizeof buf);
		x = draw_text(w, ny, 0, W, C_MARK, A_BOLD, G("▸ ", "* "));
		const db_pair *cp = &t->cmp->pairs[s->pairs[cul]];
		if (db_pair_judged_bitwise(cp) && db_pair_diverges(cp))
			draw_textf(w, ny, x, W - x, C_HILITE, 0, "first whose bits differ (judged "
			           "bitwise): %s", buf);
		else
			draw_textf(w, ny, x, W - x, C_HILITE, 0, "first drop > %g or leaving ok: %s",
			           DROP_LIMIT, buf);
	} else if (!tui_computing(t)) {
		draw_text(w, ny, 0, W, C_GOOD, 0, "no sub-stage drops more than 0.001 or leaves ok");
	} else {
		draw_text(w, ny, 0, W, C_PENDING, 0, "computing…");
	}
	int nw = 5, shw = 5;
	char shape[64];
	for (size_t i = 0; i < s->n; i++) {
		const db_pair *p = &t->cmp->pairs[s->pairs[i]];
		int k = draw_width(p->f.stage), ks = draw_width(shape_of(p, shape, sizeof shape));
		nw = k > nw ? k : nw;
		shw = ks > shw ? ks : shw;
	}
	if (shw > 16)
		shw = 16;
	/* the names take what the numbers and the band ("✗✗ scramble") leave,
	 * cut in the middle so sub-stages that share a prefix stay apart */
	int room = W - (8 + 1 + shw + 1 + 11 + 11 + 9 + 11);
	if (nw > room)
		nw = room > 12 ? room : 12;
	int hy = y0 + 3;
	/* column positions */
	int xs = 8, xsh = xs + nw + 1, xc = xsh + shw + 1, xst = xc + 11, xr = xst + 11,
	    xb = xr + 9;
	const struct col_head heads[] = {{4, "#"},       {xs, "stage"}, {xsh, "shape"},
	                                  {xc, "cos"},     {xst, "step"}, {xr, "rel"},
	                                  {xb, "band"}};
	draw_heads(w, hy, W, heads, sizeof heads / sizeof *heads);
	s->page = h - 7;
	list_nav_fix(&s->nav, (int)s->n, s->page);
	for (int r = 0; r < s->page; r++) {
		size_t i = (size_t)(s->nav.top + r);
		if (i >= s->n)
			break;
		int y = hy + 1 + r;
		const db_pair *p = &t->cmp->pairs[s->pairs[i]];
		bool cur = (int)i == s->nav.cur, hi = (long)i == cul;
		attr_t a = cur ? A_REVERSE : 0;
		draw_fill(w, y, 0, W, C_DEFAULT, a);
		draw_text(w, y, 0, 2, C_MARK, A_BOLD | a, hi ? G("▸ ", "* ") : "  ");
		char cosv[32] = "", step[32] = "", rel[32] = "";
		shape_of(p, shape, sizeof shape);
		enum tui_color bc = C_PENDING;
		const char *band = G("…", "...");
		bool big = false;
		if (p->status != DB_ST_OK) {
			bc = draw_status_color(p->status);
			band = db_status_name(p->status);
		} else if (draw_pair_done(p)) {
			/* statistics only (a side without the tensor): no cos to show */
			snprintf(cosv, sizeof cosv, p->m.stats_only ? "stats" : "%.6f", p->m.cos);
			fmt_sci(p->m.rel, rel, sizeof rel, 8);
			double prev = 1.0;
			const db_pair *q = i > 0 ? &t->cmp->pairs[s->pairs[i - 1]] : NULL;
			if (q && q->status == DB_ST_OK && draw_pair_done(q))
				prev = q->m.cos;
			double d = p->m.cos - prev;
			if (!p->m.stats_only)
				snprintf(step, sizeof step, fabs(d) < 5e-7 ? " 0" : "%+.6f", d);
			big = prev - p->m.cos > DROP_LIMIT;
			bc = draw_band_color(p->band);
			band = db_verdict_word(p);
		}
		draw_textf(w, y, 2, W - 2, C_DEFAULT, a, "  %zu", i + 1);
		draw_text(w, y, xs, nw, C_DEFAULT, a | (hi ? A_BOLD : 0),
		          draw_fit_mid(p->f.stage, nw, -1, buf, sizeof buf));
		draw_text(w, y, xsh, shw, C_DEFAULT, a, draw_fit(shape, shw, buf, sizeof buf));
		draw_text(w, y, xc, W - xc, C_DEFAULT, a, cosv);
		draw_text(w, y, xst, W - xst, big ? C_HILITE : C_DEFAULT, a, step);
		draw_text(w, y, xr, W - xr, C_DEFAULT, a, rel);
		x = xb;
		bool off = p->status == DB_ST_OK && draw_pair_done(p) && db_pair_judged_bitwise(p) &&
		           db_pair_diverges(p) && p->band < DB_BAND_ALGO;
		if (off)        /* bits off in an ok band: not a ✓, as its heatmap cell */
			x += draw_text(w, y, x, W - x, draw_band_color(DB_BAND_DRIFT), a, G("≢", "#"));
		else if (p->status == DB_ST_OK && draw_pair_done(p))
			x += draw_text(w, y, x, W - x, bc, a, draw_band_glyph(p->band));
		else
			x += draw_text(w, y, x, W - x, bc, a, draw_status_glyph(p->status));
		x += draw_textf(w, y, x, W - x, bc == C_PENDING ? C_PENDING : C_DEFAULT, a, " %s",
		                band);
		const char *hint = tui_pair_hint_kind(t->cmp, s->pairs[i]);
		char fd[512];
		size_t first;
		if (db_call_finding(t->cmp, s->pairs[i], fd, sizeof fd, &first) && first == s->pairs[i])
			draw_textf(w, y, x, W - x, C_MISSING, a, "  %s", fd);  /* once per run */
		else if (hint)
			draw_textf(w, y, x, W - x, C_HILITE, a, "  %s", hint);
	}
	size_t sel = s->n ? s->pairs[s->nav.cur] : DB_NO_PAIR;
	tui_draw_pair_status(t, w, y0 + h - 2, sel);
}

static bool stages_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct stages *s = v->priv;
	const db_bisect_result *wr = walk_of(v, t);
	if (wr) {
		s->wmoved = true;
		if (list_nav_request(&s->wnav, a, (int)wr->n_walk, s->page)) {
			t->dirty = true;
			return true;
		}
		list_nav_fix(&s->wnav, (int)wr->n_walk, s->page > 0 ? s->page : 1);
		size_t p = wr->walk[s->wnav.cur].pair;
		if (a == A_ENTER && p != DB_NO_PAIR) {
			tui_push(t, &tensor_view, p);
			return true;
		}
		if (a == A_FIRST_DIVERGENCE) {
			for (size_t i = 0; i < wr->n_walk; i++)
				if (wr->walk[i].culprit) {
					s->wnav.cur = (int)i;
					break;
				}
			return true;
		}
		return a == A_ENTER;
	}
	s->moved = true;
	if (list_nav_request(&s->nav, a, (int)s->n, s->page)) {
		t->dirty = true;
		return true;
	}
	if (a == A_ENTER) {
		tui_push(t, &tensor_view, s->pairs[s->nav.cur]);
		return true;
	}
	if (a == A_FIRST_DIVERGENCE) {
		long c = culprit(t, s);
		if (c >= 0)
			s->nav.cur = (int)c;
		else
			tui_msg(t, false, "no sub-stage drops or leaves ok");
		return true;
	}
	return false;
}

static size_t stages_selected(struct view *v, struct tui *t)
{
	struct stages *s = v->priv;
	const db_bisect_result *wr = walk_of(v, t);
	if (wr) {
		list_nav_fix(&s->wnav, (int)wr->n_walk, s->page > 0 ? s->page : 1);
		return wr->walk[s->wnav.cur].pair;
	}
	return s->n ? s->pairs[s->nav.cur] : DB_NO_PAIR;
}

static void stages_note(struct view *v, struct tui *t, FILE *out)
{
	char *md = db_md_substages(t->cmp, v->pair);
	if (md) {
		fputs(md, out);
		free(md);
	}
}

const struct view_ops stages_view = {
	.name = "sub-stages",
	.keymap = KM_GENERIC,
	.private_size = sizeof(struct stages),
	.open = stages_open,
	.draw = stages_draw,
	.request = stages_request,
	.done = stages_done,
	.selected = stages_selected,
	.note_data = stages_note,
};
