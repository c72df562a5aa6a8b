/* The time view: passes (steps, micro-batches, calls) against layers, each
 * cell the worst verdict of that pass and layer over every stage and rank,
 * in the heatmap's glyphs and colours. "Prefill fine, decode bad", "the
 * first tokens fine, then drift" and "one micro-batch bad" are each one
 * look; <Enter> selects the pass and returns to its heatmap. The table is
 * the core's (db_pass_grid): built once per set of pairs and refilled as
 * metrics arrive, so a thousand passes scroll without scanning pairs. */
#include "base/app.h"

#include <stdlib.h>
#include <string.h>

#include "db_passes.h"
#include "base/draw.h"

struct time_view {
	db_pass_grid g;
	struct list_nav nav;
	size_t col, left;               /* cursor column, first column shown */
	int page;
};

static void time_refresh(struct time_view *r, struct tui *t)
{
	if (db_pass_grid_update(t->cmp, &r->g) < 0)
		tui_msg(t, true, "out of memory");
}

/* "prefill 3", "3", or "-" without passes. */
static const char *row_label(const struct tui *t, const db_pass_line *l, char *buf, size_t len)
{
	if (t->cmp->n_phases > 1 && l->phase[0])
		snprintf(buf, len, "%s %s", l->phase, l->pass[0] ? l->pass : "-");
	else
		snprintf(buf, len, "%s", l->pass[0] ? l->pass : "-");
	return buf;
}

static int time_open(struct view *v, struct tui *t)
{
	struct time_view *r = v->priv;
	time_refresh(r, t);
	if (!r->g.n_lines) {
		tui_msg(t, true, "no passes in these trees");
		return -1;
	}
	/* start on the pass the heatmap shows */
	const char *ph = tui_phase(t), *pa = tui_pass(t);
	for (size_t i = 0; i < r->g.n_lines; i++)
		if (!strcmp(r->g.lines[i].phase, ph ? ph : "") &&
		    !strcmp(r->g.lines[i].pass, pa ? pa : ""))
			r->nav.cur = (int)i;
	return 0;
}

static void time_done(struct view *v, struct tui *t)
{
	struct time_view *r = v->priv;
	(void)t;
	db_pass_grid_free(&r->g);
}

/* Glyph and colour of a cell: a band algo or worse first, then a side
 * missing / shapes / error, then ok or drift; "…" while only pending. */
static const char *cell_glyph(const db_pass_cell *c, enum tui_color *color)
{
	if (c->band >= DB_BAND_ALGO && c->band != DB_BAND_INPUTS) {
		*color = draw_band_color(c->band);
		return draw_band_glyph2(c->band);
	}
	if (c->status != DB_ST_OK) {
		*color = draw_status_color(c->status);
		return draw_status_glyph(c->status);
	}
	if (c->band != DB_BAND_NONE) {
		*color = draw_band_color(c->band);
		return draw_band_glyph2(c->band);
	}
	*color = C_PENDING;
	return c->n_pending ? G("… ", ". ") : "  ";
}

/* The pass's worst band and the first layer that shows it; stages outside
 * the layers (inputs, logits) count for the band, not for "from". */
static void row_summary(const db_pass_grid *g, size_t row, char *buf, size_t len)
{
	db_band worst = DB_BAND_NONE, worst_l = DB_BAND_NONE;
	long at = -1;
	for (size_t c = 0; c < g->n_layers; c++) {
		db_band b = db_pass_grid_cell(g, row, c)->band;
		if (b == DB_BAND_INPUTS)
			continue;
		if (b > worst)
			worst = b;
		if (g->layers[c] >= 0 && b > worst_l) {
			worst_l = b;
			at = (long)c;
		}
	}
	if (worst == DB_BAND_NONE)
		snprintf(buf, len, "-");
	else if (worst_l <= DB_BAND_OK)
		snprintf(buf, len, "%s", db_band_name(worst));
	else
		snprintf(buf, len, "%s from L%d", db_band_name(worst), g->layers[at]);
}

static void time_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct time_view *r = v->priv;
	time_refresh(r, t);
	const db_pass_grid *g = &r->g;
	int W = getmaxx(w);
	char buf[160];
	int x = draw_text(w, y0, 0, W, C_DEFAULT, A_BOLD, "Time: passes against layers");
	draw_textf(w, y0, x, W - x, C_DIM, 0, "  (%zu passes; each cell the worst stage and rank)",
	           g->n_lines);
	if (!g->n_lines || !g->n_layers)
		return;
	/* label width: the longest label on this page, 4..24 */
	int lw = 5;
	int cw = 3;
	for (size_t c = 0; c < g->n_layers; c++) {
		int d = snprintf(buf, sizeof buf, "%d", g->layers[c]) + 1;
		if (d > cw)
			cw = d;
	}
	r->page = h - 4;
	if (r->page < 1)
		r->page = 1;
	list_nav_fix(&r->nav, (int)g->n_lines, r->page);
	for (int i = 0; i < r->page && (size_t)(r->nav.top + i) < g->n_lines; i++) {
		int lx = draw_width(row_label(t, &g->lines[r->nav.top + i], buf, sizeof buf)) + 1;
		if (lx > lw)
			lw = lx < 24 ? lx : 24;
	}
	int ncols = (W - lw - 18) / cw;
	if (ncols < 1)
		ncols = 1;
	if (r->col < r->left)
		r->left = r->col;
	if (r->col >= r->left + (size_t)ncols)
		r->left = r->col + 1 - (size_t)ncols;
	int hy = y0 + 1;
	draw_text(w, hy, 0, lw, C_DIM, A_BOLD, "pass");
	size_t right = r->left + (size_t)ncols < g->n_layers ? r->left + (size_t)ncols : g->n_layers;
	for (size_t c = r->left; c < right; c++) {
		int xx = lw + (int)(c - r->left) * cw;
		if (g->layers[c] < 0)
			draw_textf(w, hy, xx, cw, C_DIM, A_BOLD, "%*s", cw - 1, "-");
		else
			draw_textf(w, hy, xx, cw, C_DIM, A_BOLD, "%*d", cw - 1, g->layers[c]);
	}
	int xs = lw + (int)(right - r->left) * cw + 1;
	draw_text(w, hy, xs, W - xs, C_DIM, A_BOLD, "worst");
	for (int i = 0; i < r->page; i++) {
		size_t row = (size_t)(r->nav.top + i);
		if (row >= g->n_lines)
			break;
		int yy = hy + 1 + i;
		bool cur = (int)row == r->nav.cur;
		draw_text(w, yy, 0, lw - 1, C_DEFAULT, cur ? A_BOLD : 0,
		          row_label(t, &g->lines[row], buf, sizeof buf));
		for (size_t c = r->left; c < right; c++) {
			int xx = lw + (int)(c - r->left) * cw + cw - 3;
			enum tui_color color;
			const char *gl = cell_glyph(db_pass_grid_cell(g, row, c), &color);
			draw_text(w, yy, xx, 2, color, cur && c == r->col ? A_REVERSE : 0, gl);
		}
		row_summary(g, row, buf, sizeof buf);
		draw_text(w, yy, xs, W - xs, C_DEFAULT, cur ? A_BOLD : 0, buf);
	}
	draw_legend(w, y0 + h - 1, false, false);
}

/* Select the pass of row and go back to its heatmap. */
static void open_pass(struct tui *t, const db_pass_line *l)
{
	for (size_t i = 0; i < t->cmp->n_phases; i++)
		if (!strcmp(t->cmp->phases[i], l->phase) && i != t->phase) {
			t->phase = i;
			tui_selection_changed(t);       /* the phase's passes */
		}
	for (size_t i = 0; i < t->n_passes; i++)
		if (!strcmp(t->passes[i], l->pass) && i != t->pass) {
			t->pass = i;
			tui_selection_changed(t);
		}
	while (t->n_views > 1)
		tui_pop(t);
	tui_msg(t, false, "pass %s%s%s", l->pass[0] ? l->pass : "-",
	        t->cmp->n_phases > 1 ? " of " : "", t->cmp->n_phases > 1 ? l->phase : "");
}

static bool time_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct time_view *r = v->priv;
	size_t nl = r->g.n_layers;
	if (a == A_MOVE_HOME || a == A_MOVE_END || a == A_MOVE_LEFT || a == A_MOVE_RIGHT) {
		if (a == A_MOVE_HOME || !nl)
			r->col = 0;
		else if (a == A_MOVE_END)
			r->col = nl - 1;
		else if (a == A_MOVE_LEFT)
			r->col = r->col ? r->col - 1 : 0;
		else if (r->col + 1 < nl)
			r->col++;
		t->dirty = true;
		return true;
	}
	if (list_nav_request(&r->nav, a, (int)r->g.n_lines, r->page)) {
		t->dirty = true;
		return true;
	}
	if (a == A_ENTER && (size_t)r->nav.cur < r->g.n_lines) {
		db_pass_line l = r->g.lines[r->nav.cur];        /* the view closes */
		open_pass(t, &l);
		return true;
	}
	return false;
}

/* The cursor cell's first pair: notes and marks name that pass and layer. */
static size_t time_selected(struct view *v, struct tui *t)
{
	struct time_view *r = v->priv;
	(void)t;
	const db_pass_cell *c = db_pass_grid_cell(&r->g, (size_t)r->nav.cur, r->col);
	return c && c->first != SIZE_MAX ? c->first : DB_NO_PAIR;
}

const struct view_ops time_view = {
	.name = "time",
	.keymap = KM_GENERIC,
	.private_size = sizeof(struct time_view),
	.open = time_open,
	.draw = time_draw,
	.request = time_request,
	.done = time_done,
	.selected = time_selected,
};
