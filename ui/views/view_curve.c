/* Layer curve: cos and rel of the probe stage over the layers as line plots
 * (braille dots in UTF-8, '*' in ASCII) with the band boundaries drawn, so
 * accumulated drift and a sudden drop look different. Both axes run "up =
 * better": cos as its count of nines, -log10(1 - cos); rel as -log10(rel). */
#include "base/app.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/draw.h"
#include "db_bisect.h"
#include "db_verdict.h"

#define NINES_MAX 7.0           /* cos >= 1 - 1e-7 is drawn at the top */

struct curve {
	int cur;                        /* selected layer index */
	size_t col;                     /* its stage's column in the grid */
	/* the stage shown: the probe at first; [ ] browse others without
	 * touching the bisect's probe (:probe sets that) */
	char stage[256];
	unsigned gen;
	size_t *pairs;                  /* per layer row: the probe pair or DB_NO_PAIR */
	int *layers;
	int n;
};

static void load(struct tui *t, struct curve *c)
{
	free(c->pairs);
	free(c->layers);
	c->pairs = NULL;
	c->layers = NULL;
	c->n = 0;
	c->gen = t->grid_gen;
	if (!t->have_grid || !t->grid.n_cols)
		return;
	c->col = t->grid.n_cols - 1;
	for (size_t k = 0; k < t->grid.n_cols; k++)
		if (!strcmp(t->grid.cols[k], c->stage))
			c->col = k;
	snprintf(c->stage, sizeof c->stage, "%s", t->grid.cols[c->col]);
	size_t n = t->grid.n_layer_rows;
	c->pairs = malloc((n + 1) * sizeof *c->pairs);
	c->layers = malloc((n + 1) * sizeof *c->layers);
	if (!c->pairs || !c->layers)
		return;
	for (size_t r = 0; r < n; r++) {
		const db_grid_row *row = &t->grid.rows[t->grid.first_layer_row + r];
		c->pairs[c->n] = row->cells[c->col];
		c->layers[c->n++] = row->layer;
	}
	if (c->cur >= c->n)
		c->cur = c->n ? c->n - 1 : 0;
}

static int curve_open(struct view *v, struct tui *t)
{
	struct curve *c = v->priv;
	snprintf(c->stage, sizeof c->stage, "%s", t->probe);
	load(t, c);
	if (!c->n) {
		tui_msg(t, true, "no layers to plot");
		return -1;
	}
	/* Start on the layer of the cell the user came from. */
	if (v->pair != DB_NO_PAIR)
		for (int i = 0; i < c->n; i++)
			if (c->layers[i] == t->cmp->pairs[v->pair].f.layer)
				c->cur = i;
	return 0;
}

static void curve_done(struct view *v, struct tui *t)
{
	struct curve *c = v->priv;
	free(c->pairs);
	free(c->layers);
}

/* Value of layer i on the panel's scale ("up = better"); NAN when absent. */
static double yval(struct tui *t, struct curve *c, int i, bool rel)
{
	size_t p = c->pairs[i];
	if (p == DB_NO_PAIR)
		return NAN;
	const db_pair *q = &t->cmp->pairs[p];
	if (q->status != DB_ST_OK || !draw_pair_done(q))
		return NAN;
	if (rel) {
		double r = q->m.rel;
		return r <= 0 ? NINES_MAX : fmin(NINES_MAX, fmax(-1.0, -log10(r)));
	}
	double e = 1.0 - q->m.cos;
	if (isnan(e))
		return 0;
	return e <= 0 ? NINES_MAX : fmin(NINES_MAX, fmax(0.0, -log10(e)));
}

/* A plot panel: a dot canvas of pw × ph cells (braille: 2 × 4 dots each). */
struct canvas {
	int pw, ph;
	unsigned char *dots;            /* (2 pw) × (4 ph) */
};

static void dot(struct canvas *cv, int x, int y)
{
	if (x >= 0 && y >= 0 && x < 2 * cv->pw && y < 4 * cv->ph)
		cv->dots[y * 2 * cv->pw + x] = 1;
}

static void line(struct canvas *cv, int x0, int y0, int x1, int y1)
{
	int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
	int e = dx + dy;
	for (;;) {
		dot(cv, x0, y0);
		if (x0 == x1 && y0 == y1)
			break;
		int e2 = 2 * e;
		if (e2 >= dy)
			e += dy, x0 += sx;
		if (e2 <= dx)
			e += dx, y0 += sy;
	}
}

static void panel(struct tui *t, struct curve *c, WINDOW *w, int y0, int ph, bool rel)
{
	int W = getmaxx(w), ax = 11, pw = W - ax - 8;
	if (pw < 4 || ph < 2)
		return;
	const db_thresholds *th = &t->cmp->profile->thresholds;
	double ymin = rel ? -1.0 : 0.0, ymax = NINES_MAX;
	/* dot row of a scale value: top row = ymax */
	int rows = 4 * ph;
#define DOT_Y(v) ((int)lround((ymax - (v)) / (ymax - ymin) * (rows - 1)))
	struct {
		double v;
		const char *name;
		double raw;
	} bounds[3];
	if (rel) {
		bounds[0].v = -log10(th->ok_rel), bounds[0].raw = th->ok_rel;
		bounds[1].v = -log10(th->drift_rel), bounds[1].raw = th->drift_rel;
		bounds[2].v = -log10(th->algo_rel), bounds[2].raw = th->algo_rel;
	} else {
		bounds[0].v = -log10(1 - th->ok_cos), bounds[0].raw = th->ok_cos;
		bounds[1].v = -log10(1 - th->drift_cos), bounds[1].raw = th->drift_cos;
		bounds[2].v = -log10(1 - th->algo_cos), bounds[2].raw = th->algo_cos;
	}
	bounds[0].name = "ok", bounds[1].name = "drift", bounds[2].name = "algo";
	/* axis labels at the band boundaries, boundary lines across; a
	 * boundary sharing a row with the previous one is left out */
	int last_cy = -1;
	for (int b = 0; b < 3; b++) {
		int cy = DOT_Y(bounds[b].v) / 4;
		if (cy == last_cy)
			continue;
		last_cy = cy;
		char lab[32];
		if (rel)
			snprintf(lab, sizeof lab, "%g", bounds[b].raw);
		else
			snprintf(lab, sizeof lab, "%.*f", b == 0 ? 4 : b == 1 ? 2 : 1, bounds[b].raw);
		draw_textf(w, y0 + cy, 0, ax - 1, C_DIM, 0, "%*s", ax - 2, lab);
		for (int x = 0; x < pw; x++)
			draw_text(w, y0 + cy, ax + x, 1, C_DIM, 0, G("┄", "-"));
		draw_textf(w, y0 + cy, ax + pw + 1, W - ax - pw - 1, C_DIM, 0, "%s", bounds[b].name);
	}
	draw_textf(w, y0, 0, ax - 1, C_DIM, 0, "%*s", ax - 2, rel ? "1e-7" : "1-1e-7");
	draw_textf(w, y0 + ph - 1, 0, ax - 1, C_DIM, 0, "%*s", ax - 2, rel ? "10" : "0");
	for (int y = 0; y < ph; y++)
		draw_text(w, y0 + y, ax - 1, 1, C_DIM, 0, G("│", "|"));

	/* points */
	struct canvas cv = {pw, ph, calloc((size_t)(8 * pw * ph), 1)};
	if (!cv.dots)
		return;
	int px = -1, py = -1;
	for (int i = 0; i < c->n; i++) {
		double v = yval(t, c, i, rel);
		if (isnan(v)) {
			px = -1;
			continue;
		}
		int x = c->n > 1 ? (int)lround((double)i * (2 * pw - 1) / (c->n - 1)) : 0;
		int y = DOT_Y(v);
		if (px >= 0)
			line(&cv, px, py, x, y);
		else
			dot(&cv, x, y);
		px = x, py = y;
	}
	enum tui_color col = rel ? C_LINE_REL : C_LINE_COS;
	for (int cy = 0; cy < ph; cy++) {
		for (int cx = 0; cx < pw; cx++) {
			/* braille bit layout: dots 1-3 + 7 in the left column, 4-6 + 8 right */
			static const int bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
			int m = 0;
			for (int dy = 0; dy < 4; dy++)
				for (int dx = 0; dx < 2; dx++)
					if (cv.dots[(cy * 4 + dy) * 2 * pw + cx * 2 + dx])
						m |= bit[dy][dx];
			if (!m)
				continue;
			if (draw_utf8) {
				char u[4];
				int cp = 0x2800 + m;
				u[0] = (char)(0xe0 | (cp >> 12));
				u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
				u[2] = (char)(0x80 | (cp & 0x3f));
				u[3] = '\0';
				draw_text(w, y0 + cy, ax + cx, 1, col, A_BOLD, u);
			} else {
				draw_text(w, y0 + cy, ax + cx, 1, col, A_BOLD, "*");
			}
		}
	}
	free(cv.dots);
	/* the selected layer */
	if (c->n > 0) {
		int x = c->n > 1 ? (int)lround((double)c->cur * (2 * pw - 1) / (c->n - 1)) / 2 : 0;
		double v = yval(t, c, c->cur, rel);
		if (!isnan(v))
			draw_text(w, y0 + DOT_Y(v) / 4, ax + x, 1, C_MARK, A_BOLD | A_REVERSE,
			          G("●", "o"));
	}
#undef DOT_Y
}

static void curve_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct curve *c = v->priv;
	int W = getmaxx(w);
	if (c->gen != t->grid_gen)
		load(t, c);
	int x = draw_text(w, y0, 0, W, C_DEFAULT, A_BOLD, "Layer curve of ");
	x += draw_text(w, y0, x, W - x, C_DEFAULT, A_BOLD, c->stage);
	draw_textf(w, y0, x, W - x, C_DIM, 0, "  ([ ] another stage; up = better)");
	if (!c->n)
		return;
	int ph = (h - 6) / 2;
	/* every band named: each dashed line is the lower edge of the band
	 * it names; below the last, bug (and scramble, cos < 0) */
	static const char bands[] = "  bands top down: ok, drift, algo, bug, scramble";
	int x1 = draw_text(w, y0 + 1, 0, W, C_LINE_COS, A_BOLD, "cos (nines: -log10(1-cos))");
	draw_text(w, y0 + 1, x1, W - x1, C_DIM, 0, bands);
	panel(t, c, w, y0 + 2, ph, false);
	x1 = draw_text(w, y0 + 2 + ph, 0, W, C_LINE_REL, A_BOLD, "rel (-log10 rel)");
	draw_text(w, y0 + 2 + ph, x1, W - x1, C_DIM, 0, bands);
	panel(t, c, w, y0 + 3 + ph, ph, true);
	/* x axis: first, selected and last layer */
	int ax = 11, pw = W - ax - 8, ay = y0 + 3 + 2 * ph;
	char a[16], b[16], s[16];
	snprintf(a, sizeof a, "L%d", c->layers[0]);
	snprintf(b, sizeof b, "L%d", c->layers[c->n - 1]);
	snprintf(s, sizeof s, "L%d", c->layers[c->cur]);
	draw_text(w, ay, ax, pw, C_DIM, 0, a);
	draw_text(w, ay, ax + pw - (int)strlen(b), (int)strlen(b), C_DIM, 0, b);
	int cx = c->n > 1 ? (int)lround((double)c->cur * (2 * pw - 1) / (c->n - 1)) / 2 : 0;
	if (cx + (int)strlen(s) > pw)
		cx = pw - (int)strlen(s);
	draw_text(w, ay, ax + cx, (int)strlen(s), C_MARK, A_BOLD, s);
	tui_draw_pair_status(t, w, y0 + h - 2, c->pairs[c->cur]);
}

static bool curve_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct curve *c = v->priv;
	switch (a) {
	case A_MOVE_LEFT: case A_MOVE_UP: if (c->cur > 0) c->cur--; break;
	case A_MOVE_RIGHT: case A_MOVE_DOWN: if (c->cur + 1 < c->n) c->cur++; break;
	case A_MOVE_HOME: case A_MOVE_FIRST: c->cur = 0; break;
	case A_MOVE_END: case A_MOVE_LAST: c->cur = c->n ? c->n - 1 : 0; break;
	case A_PROBE_PREV: case A_PROBE_NEXT: {
		size_t n = t->grid.n_cols;
		if (!n)
			break;
		size_t k = (c->col + (a == A_PROBE_NEXT ? 1 : n - 1)) % n;
		snprintf(c->stage, sizeof c->stage, "%s", t->grid.cols[k]);
		load(t, c);
		/* browsing is not choosing: the bisect's probe stays, and says so */
		const char *bp = t->bisect ? t->bisect->stage : t->probe;
		if (!*bp || !strcmp(bp, DB_PROBE_LAST))
			bp = "each layer's last stage";
		if (strcmp(c->stage, bp))
			tui_msg(t, false, "the bisect's probe stays %s (:probe %s makes this one it)",
			        bp, c->stage);
		break;
	}
	case A_ENTER:
		if (c->n && c->pairs[c->cur] != DB_NO_PAIR)
			heatmap_goto_pair(t, c->pairs[c->cur]);
		break;
	default:
		return false;
	}
	t->dirty = true;
	return true;
}

static size_t curve_selected(struct view *v, struct tui *t)
{
	struct curve *c = v->priv;
	return c->n ? c->pairs[c->cur] : DB_NO_PAIR;
}

static void curve_note(struct view *v, struct tui *t, FILE *out)
{
	struct curve *c = v->priv;
	fputs("Stage ", out);
	db_esc_md_code(c->stage, out);
	fputs(" over layers:\n\n| layer | cos | rel | band |\n|---|---|---|---|\n", out);
	for (int i = 0; i < c->n; i++) {
		if (c->pairs[i] == DB_NO_PAIR)
			continue;
		const db_pair *p = &t->cmp->pairs[c->pairs[i]];
		fprintf(out, "| L%d | %.6f | %.3g | %s |\n", c->layers[i], p->m.cos, p->m.rel,
		        db_verdict_word(p));
	}
}

const struct view_ops curve_view = {
	.name = "curve",
	.keymap = KM_CURVE,
	.private_size = sizeof(struct curve),
	.open = curve_open,
	.draw = curve_draw,
	.request = curve_request,
	.done = curve_done,
	.selected = curve_selected,
	.note_data = curve_note,
};
