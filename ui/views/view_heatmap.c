/* The home view: layers × top-level stages, each cell coloured by band and
 * showing the current metric; selectors on top, legend and the cell's full
 * status at the bottom. Transposable; columns filtered by "/". */
#include "base/app.h"

#include <stdlib.h>
#include <string.h>

#include "base/draw.h"
#include "base/triage_ui.h"
#include "heatmap_head.h"
#include "db_session.h"
#include "db_slot.h"

#define CELL_W 9                /* 2 glyph + 7 value */
#define NAME_MAX_W 32           /* column names wider than this stay cut */

struct heatmap {
	size_t cr, cc;                  /* cursor: display row / column */
	size_t top, left;               /* first display row / column shown */
	unsigned gen;                   /* grid_gen the lists belong to */
	size_t *vrows, n_vrows;         /* visible grid rows */
	size_t *vcols, n_vcols;         /* visible grid columns */
	int cur_layer;                  /* cursor identity, kept across rebuilds */
	char cur_row_label[128], cur_stage[256];
	bool keep_cursor;
	char pat[256];                  /* filter the lists were made with */
	/* geometry of the last draw (mouse, paging) */
	int gy, gx, lw, grows, gcols;
	int cw;                         /* column width: CELL_W or wider for names */
};

/* Display dimensions: untransposed rows = grid rows, cols = stages. */
static size_t n_drows(const struct tui *t, const struct heatmap *h)
{
	return t->transposed ? h->n_vcols : h->n_vrows;
}

static size_t n_dcols(const struct tui *t, const struct heatmap *h)
{
	return t->transposed ? h->n_vrows : h->n_vcols;
}

/* Grid row and column of a display position. */
static void to_grid(const struct tui *t, const struct heatmap *h, size_t dr, size_t dc,
                    size_t *gr, size_t *gc)
{
	size_t vr = t->transposed ? dc : dr, vc = t->transposed ? dr : dc;
	*gr = vr < h->n_vrows ? h->vrows[vr] : 0;
	*gc = vc < h->n_vcols ? h->vcols[vc] : 0;
}

static size_t pair_at(const struct tui *t, const struct heatmap *h, size_t dr, size_t dc)
{
	if (!t->have_grid || dr >= n_drows(t, h) || dc >= n_dcols(t, h))
		return DB_NO_PAIR;
	size_t gr, gc;
	to_grid(t, h, dr, dc, &gr, &gc);
	const db_grid_row *row = &t->grid.rows[gr];
	if (row->layer < 0) {
		/* Model-level rows hold one cell: any column of the row selects it
		 * (drawn once, in the leftmost column shown); transposed, it sits
		 * in the first stage row. */
		if (t->transposed)
			return dr == 0 ? row->cells[0] : DB_NO_PAIR;
		return row->cells[0];
	}
	return row->cells[gc];
}

static bool row_visible(struct tui *t, size_t r)
{
	const db_grid_row *row = &t->grid.rows[r];
	return row->layer >= 0 || tui_filter_match(t, row->label);
}

static void remember_cursor(struct tui *t, struct heatmap *h)
{
	if (!t->have_grid || !h->n_vrows || !h->n_vcols)
		return;
	size_t gr, gc;
	to_grid(t, h, h->cr, h->cc, &gr, &gc);
	h->cur_layer = t->grid.rows[gr].layer;
	snprintf(h->cur_row_label, sizeof h->cur_row_label, "%s", t->grid.rows[gr].label);
	snprintf(h->cur_stage, sizeof h->cur_stage, "%s", t->grid.cols[gc]);
	h->keep_cursor = true;
}

/* Rebuild the visible lists after a grid rebuild or filter change and put
 * the cursor back on the same layer and stage when they still exist. */
static void refresh_lists(struct tui *t, struct heatmap *h)
{
	free(h->vrows);
	free(h->vcols);
	h->vrows = h->vcols = NULL;
	h->n_vrows = h->n_vcols = 0;
	h->gen = t->grid_gen;
	if (!t->have_grid)
		return;
	h->vrows = malloc((t->grid.n_rows + 1) * sizeof *h->vrows);
	h->vcols = malloc((t->grid.n_cols + 1) * sizeof *h->vcols);
	if (!h->vrows || !h->vcols)
		return;
	for (size_t r = 0; r < t->grid.n_rows; r++)
		if (row_visible(t, r))
			h->vrows[h->n_vrows++] = r;
	for (size_t c = 0; c < t->grid.n_cols; c++)
		if (tui_col_visible(t, c))
			h->vcols[h->n_vcols++] = c;
	if (h->keep_cursor) {
		size_t vr = 0, vc = 0;
		for (size_t i = 0; i < h->n_vrows; i++)
			if (!strcmp(t->grid.rows[h->vrows[i]].label, h->cur_row_label))
				vr = i;
		for (size_t i = 0; i < h->n_vcols; i++)
			if (!strcmp(t->grid.cols[h->vcols[i]], h->cur_stage))
				vc = i;
		h->cr = t->transposed ? vc : vr;
		h->cc = t->transposed ? vr : vc;
	}
	h->keep_cursor = false;
}

/* The lists follow the grid and the filter; the cursor identity was saved
 * by remember_cursor after the last action or draw (the old grid is gone). */
static void sync(struct tui *t, struct heatmap *h)
{
	if (h->gen != t->grid_gen || strcmp(h->pat, t->filter_pat)) {
		snprintf(h->pat, sizeof h->pat, "%s", t->filter_pat);
		refresh_lists(t, h);
	}
}

/* Grid position of a pair: directly, else the cell of its top-level stage
 * (a sub-stage), else its layer row. */
static bool locate(struct tui *t, size_t pair, size_t *gr, size_t *gc)
{
	if (!t->have_grid || pair == DB_NO_PAIR)
		return false;
	const db_grid *g = &t->grid;
	for (size_t r = 0; r < g->n_rows; r++) {
		size_t nc = g->rows[r].layer < 0 ? 1 : g->n_cols;
		for (size_t c = 0; c < nc; c++)
			if (g->rows[r].cells[c] == pair) {
				*gr = r, *gc = c;
				return true;
			}
	}
	const db_pair *p = &t->cmp->pairs[pair];
	char buf[256];
	const char *par = db_profile_parent(t->cmp->profile, p->f.stage,
	                                    (const char *const *)g->cols, g->n_cols, buf,
	                                    sizeof buf);
	for (size_t r = 0; r < g->n_rows; r++) {
		if (g->rows[r].layer != p->f.layer)
			continue;
		if (p->f.layer < 0 && (!par || strcmp(g->rows[r].label, par)))
			continue;
		*gr = r, *gc = 0;
		for (size_t c = 0; par && c < g->n_cols; c++)
			if (!strcmp(g->cols[c], par))
				*gc = c;
		return true;
	}
	return false;
}

static bool set_cursor_grid(struct tui *t, struct heatmap *h, size_t gr, size_t gc)
{
	size_t vr = (size_t)-1, vc = (size_t)-1;
	for (size_t i = 0; i < h->n_vrows; i++)
		if (h->vrows[i] == gr)
			vr = i;
	for (size_t i = 0; i < h->n_vcols; i++)
		if (h->vcols[i] == gc)
			vc = i;
	if (t->grid.rows[gr].layer < 0)
		vc = 0;
	if (vr == (size_t)-1 || vc == (size_t)-1)
		return false;
	h->cr = t->transposed ? vc : vr;
	h->cc = t->transposed ? vr : vc;
	return true;
}

void heatmap_goto_pair(struct tui *t, size_t pair)
{
	struct heatmap *h = t->views[0].priv;
	sync(t, h);
	size_t gr, gc;
	if (!locate(t, pair, &gr, &gc)) {
		tui_msg(t, true, "that tensor is not in this phase / pass / rank");
		return;
	}
	if (!set_cursor_grid(t, h, gr, gc)) {
		tui_filter_set(t, NULL);
		sync(t, h);
		set_cursor_grid(t, h, gr, gc);
	}
	remember_cursor(t, h);
	while (t->n_views > 1)
		tui_pop(t);
}

static int heatmap_open(struct view *v, struct tui *t)
{
	struct heatmap *h = v->priv;
	h->gen = 0;
	sync(t, h);
	return 0;
}

static void heatmap_done(struct view *v, struct tui *t)
{
	struct heatmap *h = v->priv;
	free(h->vrows);
	free(h->vcols);
}

/* Label width: the widest visible row label (or stage name, transposed). */
static int label_width(struct tui *t, struct heatmap *h, int maxw)
{
	int w = 4;
	if (t->transposed) {
		for (size_t i = 0; i < h->n_vcols; i++) {
			int x = draw_width(t->grid.cols[h->vcols[i]]);
			w = x > w ? x : w;
		}
	} else {
		for (size_t i = 0; i < h->n_vrows; i++) {
			int x = draw_width(t->grid.rows[h->vrows[i]].label);
			w = x > w ? x : w;
		}
	}
	w += 2;                         /* marker column + space */
	return w > maxw ? maxw : w;
}

/* The cursor's pair; on the cell of a merged first divergence that is not
 * the cell's own pair (a sub-stage merged across layouts, the cell one
 * rank's), that pair, so `a` and `t` open the culprit. */
static size_t cell_pick(struct tui *t, struct heatmap *h)
{
	size_t p = pair_at(t, h, h->cr, h->cc), gr, gc, fr, fc;
	long fd = t->first_div_sel;
	if (p == DB_NO_PAIR || !t->first_div_known || fd < 0 || (size_t)fd == p ||
	    !t->cmp->pairs[fd].merged || !locate(t, (size_t)fd, &fr, &fc))
		return p;
	to_grid(t, h, h->cr, h->cc, &gr, &gc);
	return gr == fr && (gc == fc || t->grid.rows[gr].layer < 0) ? (size_t)fd : p;
}

static const char *col_label(struct tui *t, struct heatmap *h, size_t dc);

static void fix_scroll(struct tui *t, struct heatmap *h)
{
	size_t nr = n_drows(t, h), nc = n_dcols(t, h);
	if (h->cr >= nr)
		h->cr = nr ? nr - 1 : 0;
	if (h->cc >= nc)
		h->cc = nc ? nc - 1 : 0;
	size_t pr = h->grows > 0 ? (size_t)h->grows : 1, pc = h->gcols > 0 ? (size_t)h->gcols : 1;
	if (h->top > h->cr)
		h->top = h->cr;
	if (h->cr >= h->top + pr)
		h->top = h->cr - pr + 1;
	if (h->left > h->cc)
		h->left = h->cc;
	if (h->cc >= h->left + pc)
		h->left = h->cc - pc + 1;
	/* show as much as fits: after a shrink and a grow (or a filter that
	 * leaves fewer columns), nothing stays scrolled off for no reason */
	if (h->top > (nr > pr ? nr - pr : 0))
		h->top = nr > pr ? nr - pr : 0;
	if (h->left > (nc > pc ? nc - pc : 0))
		h->left = nc > pc ? nc - pc : 0;
}

/* Column width: CELL_W, widened up to the widest column name (capped) when
 * every column still fits on the screen at that width. */
static int col_width(struct tui *t, struct heatmap *h, int room)
{
	size_t nc = n_dcols(t, h);
	if (!nc)
		return CELL_W;
	int want = CELL_W;
	for (size_t dc = 0; dc < nc && want < NAME_MAX_W; dc++) {
		const char *l = col_label(t, h, dc);
		int x = draw_width(l);
		want = x > want ? x : want;
	}
	if (want > NAME_MAX_W)
		want = NAME_MAX_W;
	int fit = room / (int)nc - 1;   /* widest that shows every column */
	if (fit < CELL_W)
		return CELL_W;
	return want < fit ? want : fit;
}

/* Header text of display column dc. */
static const char *col_label(struct tui *t, struct heatmap *h, size_t dc)
{
	size_t gr, gc;
	to_grid(t, h, 0, dc, &gr, &gc);
	if (t->transposed) {
		to_grid(t, h, 0, dc, &gr, &gc);
		return t->grid.rows[gr].label;
	}
	return t->grid.cols[h->vcols[dc]];
}

static const char *row_label(struct tui *t, struct heatmap *h, size_t dr)
{
	size_t gr, gc;
	to_grid(t, h, dr, 0, &gr, &gc);
	return t->transposed ? t->grid.cols[h->vcols[dr]] : t->grid.rows[gr].label;
}

/* A mark is on pair p's place as the screen shows it: its phase, pass,
 * layer and stage, and the rank chosen (all ranks: a mark of any). */
static bool marked(struct tui *t, size_t p)
{
	const db_ifields *f = &t->cmp->pairs[p].f;
	return db_session_mark_at(t->session, f->phase, f->pass, f->layer, f->stage,
	                          t->rank_sel ? tui_rank(t) : -1, false) >= 0;
}

/* Cells may read ≢ (bits differ): --slots, or slots found and judged
 * bitwise (measure/slot.c). */
static bool judged_bitwise(const struct tui *t)
{
	return t->cmp && (t->cmp->n_slots || db_slot_regime_holds(t->cmp));
}

/* A mark of the session is on the pass shown: the legend says "marked". */
static bool marks_here(struct tui *t)
{
	const char *ph = tui_phase(t), *pa = tui_pass(t);
	for (size_t i = 0; t->session && i < t->session->n_marks; i++) {
		const db_mark *m = &t->session->marks[i];
		if ((!m->phase || !strcmp(m->phase, ph ? ph : "")) &&
		    (!m->pass || !strcmp(m->pass, pa ? pa : "")))
			return true;
	}
	return false;
}

/* Some cell of display row dr carries a mark. */
static bool row_marked(struct tui *t, struct heatmap *h, size_t dr)
{
	for (size_t dc = 0; dc < n_dcols(t, h); dc++) {
		size_t p = pair_at(t, h, dr, dc);
		if (p != DB_NO_PAIR && marked(t, p))
			return true;
	}
	return false;
}

static void heatmap_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int hgt)
{
	struct heatmap *h = v->priv;
	int W = getmaxx(w);
	sync(t, h);
	tui_triaged_diverges(t);        /* the pass line's "first diverging", kept in t */
	tui_draw_selection(t, w, y0);
	heatmap_draw_head(t, w, y0 + 1);
	int hy = y0 + 2;                /* column header */
	h->gy = hy + 1;
	h->grows = hgt - 6;             /* tabs, triage, header | legend, 2 status */
	if (!t->have_grid || !h->n_vrows || !h->n_vcols) {
		draw_text(w, h->gy, 0, W, C_DIM, 0,
		          t->have_grid ? "nothing to show: the filter hides every stage (/ and "
		                         "<Enter> clears it)"
		                       : "no tensors in this phase / pass / rank");
		draw_legend(w, y0 + hgt - 3, marks_here(t), judged_bitwise(t));
		tui_draw_pair_status(t, w, y0 + hgt - 2, DB_NO_PAIR);
		return;
	}
	h->lw = label_width(t, h, t->transposed ? 24 : 16);
	h->gx = h->lw;
	h->cw = col_width(t, h, W - h->lw);
	h->gcols = (W - h->lw) / (h->cw + 1);   /* a separator before each cell */
	if (h->gcols < 1)
		h->gcols = 1;
	fix_scroll(t, h);

	/* First divergence position, for the marker. */
	size_t fr = (size_t)-1, fc = (size_t)-1, fdr = (size_t)-1, fdc = (size_t)-1;
	if (t->first_div_known && t->first_div_sel >= 0 &&
	    locate(t, (size_t)t->first_div_sel, &fr, &fc)) {
		for (size_t i = 0; i < h->n_vrows; i++)
			if (h->vrows[i] == fr)
				fdr = i;
		for (size_t i = 0; i < h->n_vcols; i++)
			if (h->vcols[i] == fc)
				fdc = i;
		if (t->grid.rows[fr].layer < 0)
			fdc = t->transposed ? 0 : h->left;
		if (t->transposed) {
			size_t tmp = fdr;
			fdr = fdc, fdc = tmp;
		}
	}

	/* Header: metric name over the labels, then the column names. */
	draw_fill(w, hy, 0, W, C_DEFAULT, 0);
	draw_textf(w, hy, 0, h->lw, C_DIM, 0, "%s%s", t->transposed ? "stage\\" : "",
	           tui_metric_label(t->metric));
	size_t nr = n_drows(t, h), nc = n_dcols(t, h);
	char buf[512];
	/* the names on screen, so a cut one never reads as its neighbour */
	const char *shown[128] = {NULL};
	size_t ns = 0;
	for (int i = 0; i < h->gcols && h->left + (size_t)i < nc && ns < 128; i++)
		shown[ns++] = col_label(t, h, h->left + (size_t)i);
	for (int i = 0; i < h->gcols && h->left + (size_t)i < nc; i++) {
		size_t dc = h->left + (size_t)i;
		int x = h->gx + i * (h->cw + 1) + 1;
		/* cut in the middle, each in its own column: the cursor's name in
		 * full is on the status line, never over its neighbours' */
		draw_text(w, hy, x, h->cw, C_DEFAULT, dc == h->cc ? A_BOLD | A_UNDERLINE : A_BOLD,
		          draw_fit_apart(col_label(t, h, dc), shown, ns, h->cw, buf, sizeof buf));
	}
	ns = 0;
	for (int r = 0; r < h->grows && h->top + (size_t)r < nr && ns < 128; r++)
		shown[ns++] = row_label(t, h, h->top + (size_t)r);
	if (h->left > 0)
		draw_text(w, hy, h->gx, 1, C_DIM, 0, G("◂", "<"));
	if (h->left + (size_t)h->gcols < nc)
		draw_text(w, hy, W - 1, 1, C_DIM, 0, G("▸", ">"));

	for (int r = 0; r < h->grows; r++) {
		int y = h->gy + r;
		draw_fill(w, y, 0, W, C_DEFAULT, 0);
		size_t dr = h->top + (size_t)r;
		if (dr >= nr)
			continue;
		bool mark_row = dr == fdr;
		draw_text(w, y, 0, 1, C_MARK, A_BOLD, mark_row ? G("▸", "*") : " ");
		draw_text(w, y, 1, h->lw - 2, C_DEFAULT, dr == h->cr ? A_BOLD | A_REVERSE : 0,
		          draw_fit_apart(row_label(t, h, dr), shown, ns, h->lw - 2, buf, sizeof buf));
		if (t->session && t->session->n_marks && row_marked(t, h, dr))
			draw_text(w, y, h->lw - 1, 1, C_HILITE, A_BOLD, G("◆", "+"));
		for (int i = 0; i < h->gcols && h->left + (size_t)i < nc; i++) {
			size_t dc = h->left + (size_t)i;
			int x = h->gx + i * (h->cw + 1);
			size_t p = pair_at(t, h, dr, dc);
			bool model = !t->transposed && t->grid.rows[h->vrows[dr]].layer < 0;
			if (model && i > 0)
				continue;       /* its one cell is drawn in the first column */
			/* a mark wins the cell's one column: the first divergence is
			 * still told by its row's marker and the headline */
			if (p != DB_NO_PAIR && t->session && t->session->n_marks && marked(t, p))
				draw_text(w, y, x, 1, C_HILITE, A_BOLD, G("◆", "+"));
			else if (mark_row && dc == fdc)
				draw_text(w, y, x, 1, C_MARK, A_BOLD, G("▸", "*"));
			bool cur = dr == h->cr && (dc == h->cc || model);
			if (p == DB_NO_PAIR) {
				if (cur)
					draw_fill(w, y, x + 1, h->cw, C_DEFAULT, A_REVERSE);
				continue;
			}
			int color;
			tui_cell_text(&t->cmp->pairs[p], t->metric, buf, sizeof buf, &color);
			if (cur && h->cw > CELL_W)
				draw_fill(w, y, x + 1, h->cw, C_DEFAULT, A_REVERSE);
			draw_text(w, y, x + 1, h->cw, (enum tui_color)color, cur ? A_REVERSE | A_BOLD : 0,
			          buf);
		}
	}
	if (h->top > 0)
		draw_text(w, h->gy, 0, 1, C_DIM, 0, G("▴", "^"));
	if (h->top + (size_t)h->grows < nr)
		draw_text(w, h->gy + h->grows - 1, 0, 1, C_DIM, 0, G("▾", "v"));
	draw_legend(w, y0 + hgt - 3, marks_here(t), judged_bitwise(t));
	size_t cur = cell_pick(t, h);
	char note[96];
	tui_draw_pair_status_note(t, w, y0 + hgt - 2, cur,
	                          cur == DB_NO_PAIR ? NULL
	                                            : tui_cell_rank_note(t, cur, note, sizeof note));
	remember_cursor(t, h);
}

static size_t heatmap_selected(struct view *v, struct tui *t)
{
	struct heatmap *h = v->priv;
	sync(t, h);
	return cell_pick(t, h);
}

/* n / N: the next visible cell holding a pair, reading order, wrapping. */
static void search(struct tui *t, struct heatmap *h, int dir)
{
	if (!t->filter_re) {
		tui_msg(t, true, "no filter: / sets one");
		return;
	}
	size_t nr = n_drows(t, h), nc = n_dcols(t, h), n = nr * nc;
	if (!n)
		return;
	size_t at = h->cr * nc + h->cc;
	for (size_t k = 1; k <= n; k++) {
		size_t i = dir > 0 ? (at + k) % n : (at + n - k % n) % n;
		size_t p = pair_at(t, h, i / nc, i % nc);
		if (p == DB_NO_PAIR ||
		    (!t->transposed && t->grid.rows[h->vrows[i / nc]].layer < 0 && i % nc))
			continue;
		if (!tui_filter_match(t, t->cmp->pairs[p].f.stage) &&
		    !tui_filter_match(t, row_label(t, h, i / nc)) &&
		    !tui_filter_match(t, col_label(t, h, i % nc)))
			continue;
		if ((dir > 0 && i <= at) || (dir < 0 && i >= at))
			tui_msg(t, false, "search wrapped");
		h->cr = i / nc, h->cc = i % nc;
		return;
	}
	tui_msg(t, true, "no cell matches /%s", t->filter_pat);
}

static bool heatmap_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct heatmap *h = v->priv;
	sync(t, h);
	size_t nr = n_drows(t, h), nc = n_dcols(t, h);
	size_t page = h->grows > 1 ? (size_t)h->grows - 1 : 1;
	switch (a) {
	case A_MOVE_UP: if (h->cr > 0) h->cr--; break;
	case A_MOVE_DOWN: if (h->cr + 1 < nr) h->cr++; break;
	case A_MOVE_LEFT: if (h->cc > 0) h->cc--; break;
	case A_MOVE_RIGHT: if (h->cc + 1 < nc) h->cc++; break;
	case A_PAGE_UP: h->cr = h->cr > page ? h->cr - page : 0; break;
	case A_PAGE_DOWN: h->cr = h->cr + page < nr ? h->cr + page : (nr ? nr - 1 : 0); break;
	case A_MOVE_FIRST: h->cr = 0; break;
	case A_MOVE_LAST: h->cr = nr ? nr - 1 : 0; break;
	case A_MOVE_HOME: h->cc = 0; break;
	case A_MOVE_END: h->cc = nc ? nc - 1 : 0; break;
	case A_TRANSPOSE:
		remember_cursor(t, h);
		t->transposed = !t->transposed;
		refresh_lists(t, h);
		tui_msg(t, false, t->transposed ? "transposed: stages down, layers across"
		                                : "layers down, stages across");
		break;
	case A_FIRST_DIVERGENCE:
		if (tui_computing(t)) {
			tui_msg(t, true, "still computing; f works once the scan is done");
			break;
		}
		/* the pass the bisect's triage names (phase and pass switched
		 * as needed), then its first divergence over all ranks */
		tui_select_triaged(t, "first divergence in ");
		sync(t, h);
		tui_update_first_div(t);
		if (t->first_div < 0) {
			tui_msg(t, false, "no divergence in any phase / pass%s%s",
			        t->pass_why[0] ? ": " : "", t->pass_why);
			break;
		}
		/* The earliest over all ranks (beyond drift where it only
		 * drifts: the headline's): switch to its rank unless the
		 * all-ranks view shows that rank in its cell. */
		long go = t->first_beyond >= 0 ? t->first_beyond : t->first_div;
		if (tui_select_rank_of(t, (size_t)go))
			sync(t, h);
		heatmap_goto_pair(t, (size_t)go);
		return true;
	case A_SEARCH_NEXT: search(t, h, 1); break;
	case A_SEARCH_PREV: search(t, h, -1); break;
	case A_ENTER: {
		size_t p = pair_at(t, h, h->cr, h->cc);
		if (p == DB_NO_PAIR)
			tui_msg(t, true, "no tensor in this cell");
		else
			tui_push(t, &stages_view, p);
		break;
	}
	default:
		return false;
	}
	fix_scroll(t, h);
	remember_cursor(t, h);
	t->dirty = true;
	return true;
}

static void heatmap_click(struct view *v, struct tui *t, int y, int x)
{
	struct heatmap *h = v->priv;
	if (y < h->gy || y >= h->gy + h->grows || x < h->gx)
		return;
	size_t dr = h->top + (size_t)(y - h->gy), dc = h->left + (size_t)((x - h->gx) / (h->cw > 0 ? h->cw + 1 : CELL_W + 1));
	if (dr < n_drows(t, h) && dc < n_dcols(t, h)) {
		h->cr = dr, h->cc = dc;
		t->dirty = true;
	}
}

const struct view_ops heatmap_view = {
	.name = "heatmap",
	.keymap = KM_HEATMAP,
	.private_size = sizeof(struct heatmap),
	.open = heatmap_open,
	.draw = heatmap_draw,
	.request = heatmap_request,
	.done = heatmap_done,
	.selected = heatmap_selected,
	.click = heatmap_click,
};
