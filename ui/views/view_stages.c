/* Sub-stages of a cell in execution order (seed Phase 5): cos, rel and the
 * single-step cos change from the previous sub-stage; the first one that
 * drops more than 0.001 or leaves the ok band is highlighted. */
#include "base/app.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_notes.h"
#include "base/draw.h"
#include "base/hint_ui.h"

#define DROP_LIMIT 0.001

struct stages {
	size_t *pairs, n;
	struct list_nav nav;
	int page;
	bool moved;                     /* the user moved: stop following the culprit */
};

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
		bool drop = prev - p->m.cos > DROP_LIMIT || isnan(p->m.cos);
		bool leaves = p->band > DB_BAND_OK && prev_band <= DB_BAND_OK;
		if (drop || leaves)
			return (long)i;
		prev = p->m.cos, prev_band = p->band;
	}
	return -1;
}

static void stages_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct stages *s = v->priv;
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
		draw_textf(w, ny, x, W - x, C_HILITE, 0, "first drop > %g or leaving ok: %s",
		           DROP_LIMIT, buf);
	} else if (!tui_computing(t)) {
		draw_text(w, ny, 0, W, C_GOOD, 0, "no sub-stage drops more than 0.001 or leaves ok");
	} else {
		draw_text(w, ny, 0, W, C_PENDING, 0, "computing…");
	}
	int nw = 5;
	for (size_t i = 0; i < s->n; i++) {
		int k = draw_width(t->cmp->pairs[s->pairs[i]].f.stage);
		nw = k > nw ? k : nw;
	}
	if (nw > W / 3)
		nw = W / 3;
	int hy = y0 + 3;
	/* column positions */
	int xs = 8, xsh = xs + nw + 1, xc = xsh + 17, xst = xc + 11, xr = xst + 11,
	    xb = xr + 9;
	draw_text(w, hy, 4, W - 4, C_DIM, A_BOLD, "#");
	draw_text(w, hy, xs, W - xs, C_DIM, A_BOLD, "stage");
	draw_text(w, hy, xsh, W - xsh, C_DIM, A_BOLD, "shape");
	draw_text(w, hy, xc, W - xc, C_DIM, A_BOLD, "cos");
	draw_text(w, hy, xst, W - xst, C_DIM, A_BOLD, "step");
	draw_text(w, hy, xr, W - xr, C_DIM, A_BOLD, "rel");
	draw_text(w, hy, xb, W - xb, C_DIM, A_BOLD, "band");
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
		char shape[64], cosv[32] = "", step[32] = "", rel[32] = "";
		int nd = p->ndim_ref >= 0 ? p->ndim_ref : p->ndim_tgt;
		const int64_t *sh = p->ndim_ref >= 0 ? p->shape_ref : p->shape_tgt;
		size_t o = (size_t)snprintf(shape, sizeof shape, nd >= 0 ? "[" : "-");
		for (int d = 0; d < nd && o < sizeof shape; d++)
			o += (size_t)snprintf(shape + o, sizeof shape - o, "%s%lld", d ? ", " : "",
			                      (long long)sh[d]);
		if (nd >= 0 && o < sizeof shape)
			snprintf(shape + o, sizeof shape - o, "]");
		enum tui_color bc = C_PENDING;
		const char *band = G("…", "...");
		bool big = false;
		if (p->status != DB_ST_OK) {
			bc = draw_status_color(p->status);
			band = db_status_name(p->status);
		} else if (draw_pair_done(p)) {
			snprintf(cosv, sizeof cosv, "%.6f", p->m.cos);
			fmt_sci(p->m.rel, rel, sizeof rel, 8);
			double prev = 1.0;
			const db_pair *q = i > 0 ? &t->cmp->pairs[s->pairs[i - 1]] : NULL;
			if (q && q->status == DB_ST_OK && draw_pair_done(q))
				prev = q->m.cos;
			double d = p->m.cos - prev;
			snprintf(step, sizeof step, fabs(d) < 5e-7 ? " 0" : "%+.6f", d);
			big = prev - p->m.cos > DROP_LIMIT;
			bc = draw_band_color(p->band);
			band = db_band_name(p->band);
		}
		draw_textf(w, y, 2, W - 2, C_DEFAULT, a, "  %zu", i + 1);
		draw_text(w, y, xs, nw, C_DEFAULT, a | (hi ? A_BOLD : 0),
		          draw_fit(p->f.stage, nw, buf, sizeof buf));
		draw_text(w, y, xsh, W - xsh, C_DEFAULT, a, shape);
		draw_text(w, y, xc, W - xc, C_DEFAULT, a, cosv);
		draw_text(w, y, xst, W - xst, big ? C_HILITE : C_DEFAULT, a, step);
		draw_text(w, y, xr, W - xr, C_DEFAULT, a, rel);
		x = xb;
		if (p->status == DB_ST_OK && draw_pair_done(p))
			x += draw_text(w, y, x, W - x, bc, a, draw_band_glyph(p->band));
		else
			x += draw_text(w, y, x, W - x, bc, a, draw_status_glyph(p->status));
		x += draw_textf(w, y, x, W - x, bc == C_PENDING ? C_PENDING : C_DEFAULT, a, " %s",
		                band);
		const char *hint = tui_pair_hint_kind(t->cmp, s->pairs[i]);
		if (hint)
			draw_textf(w, y, x, W - x, C_HILITE, a, "  %s", hint);
	}
	size_t sel = s->n ? s->pairs[s->nav.cur] : DB_NO_PAIR;
	tui_draw_pair_status(t, w, y0 + h - 2, sel);
}

static bool stages_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct stages *s = v->priv;
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
