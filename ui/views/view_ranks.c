/* One row per rank of a cell plus the merged comparison; a rank that alone
 * is bad stands out ("compare per-rank to isolate a TP/EP shard"). */
#include "base/app.h"

#include <stdlib.h>
#include <string.h>

#include "db_notes.h"
#include "base/draw.h"

struct ranks {
	size_t *pairs, n;               /* rows: merged first (when any), then ranks */
	bool has_merged;
	struct list_nav nav;
	int page;
};

/* The merged (rank -1) pair of the same cell as pair, or DB_NO_PAIR. */
static size_t merged_of(const db_compare *c, size_t pair)
{
	const db_pair *p = &c->pairs[pair];
	if (p->merged || p->f.rank < 0)
		return pair;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *q = &c->pairs[i];
		if (q->f.rank < 0 && q->f.layer == p->f.layer && q->occurrence == p->occurrence &&
		    !strcmp(q->f.stage, p->f.stage) && !strcmp(q->f.phase, p->f.phase) &&
		    !strcmp(q->f.pass, p->f.pass))
			return i;
	}
	return DB_NO_PAIR;
}

static int ranks_open(struct view *v, struct tui *t)
{
	struct ranks *r = v->priv;
	size_t *rp = NULL;
	size_t n = db_rank_pairs(t->cmp, v->pair, &rp);
	size_t m = merged_of(t->cmp, v->pair);
	r->pairs = malloc((n + 1) * sizeof *r->pairs);
	if (!r->pairs) {
		free(rp);
		return -1;
	}
	if (m != DB_NO_PAIR) {
		r->pairs[r->n++] = m;
		r->has_merged = true;
	}
	for (size_t i = 0; i < n; i++)
		if (rp[i] != m)
			r->pairs[r->n++] = rp[i];
	free(rp);
	if (r->n <= (r->has_merged ? 1u : 0u))
		tui_msg(t, false, "this tensor has no per-rank dumps");
	/* Start on the rank the user came from. */
	for (size_t i = 0; i < r->n; i++)
		if (r->pairs[i] == v->pair)
			r->nav.cur = (int)i;
	return 0;
}

static void ranks_done(struct view *v, struct tui *t)
{
	struct ranks *r = v->priv;
	free(r->pairs);
}

static bool is_bad(const db_pair *p)
{
	return p->status != DB_ST_OK || (draw_pair_done(p) && p->band > DB_BAND_OK);
}

static void ranks_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct ranks *r = v->priv;
	int W = getmaxx(w);
	char lab[300];
	const db_pair *p0 = &t->cmp->pairs[v->pair];
	int x = draw_text(w, y0, 0, W, C_DEFAULT, A_BOLD, "Ranks of ");
	if (p0->f.layer >= 0)
		x += draw_textf(w, y0, x, W - x, C_DEFAULT, A_BOLD, "L%d ", p0->f.layer);
	draw_text(w, y0, x, W - x, C_DEFAULT, A_BOLD, p0->f.stage);

	size_t first = r->has_merged ? 1 : 0, n_ranks = r->n - first, n_bad = 0;
	bool all_done = true;
	for (size_t i = first; i < r->n; i++) {
		const db_pair *p = &t->cmp->pairs[r->pairs[i]];
		n_bad += is_bad(p);
		all_done &= p->status != DB_ST_OK || draw_pair_done(p);
	}
	bool alone = n_bad > 0 && n_bad < n_ranks;
	if (!all_done)
		draw_text(w, y0 + 1, 0, W, C_PENDING, 0, "computing…");
	else if (alone)
		draw_textf(w, y0 + 1, 0, W, C_MARK, A_BOLD,
		           "%s %zu of %zu ranks bad: a shard-specific problem (TP/EP split, "
		           "per-rank weights)", G("▸", "*"), n_bad, n_ranks);
	else if (n_bad)
		draw_textf(w, y0 + 1, 0, W, C_HILITE, 0,
		           "all %zu ranks bad: not one shard's fault", n_ranks);
	else if (n_ranks)
		draw_textf(w, y0 + 1, 0, W, C_GOOD, 0, "all %zu ranks ok", n_ranks);

	int hy = y0 + 3, xr = 4, xc = 14, xl = 26, xm = 36, xe = 46, xb = 54;
	draw_text(w, hy, xr, W - xr, C_DIM, A_BOLD, "rank");
	draw_text(w, hy, xc, W - xc, C_DIM, A_BOLD, "cos");
	draw_text(w, hy, xl, W - xl, C_DIM, A_BOLD, "rel");
	draw_text(w, hy, xm, W - xm, C_DIM, A_BOLD, "max_abs");
	draw_text(w, hy, xe, W - xe, C_DIM, A_BOLD, "bytes=");
	draw_text(w, hy, xb, W - xb, C_DIM, A_BOLD, "band");
	r->page = h - 7;
	list_nav_fix(&r->nav, (int)r->n, r->page);
	for (int k = 0; k < r->page; k++) {
		size_t i = (size_t)(r->nav.top + k);
		if (i >= r->n)
			break;
		int y = hy + 1 + k;
		const db_pair *p = &t->cmp->pairs[r->pairs[i]];
		bool merged = r->has_merged && i == 0;
		bool stand = alone && !merged && is_bad(p);
		attr_t a = (int)i == r->nav.cur ? A_REVERSE : 0;
		draw_fill(w, y, 0, W, C_DEFAULT, a);
		draw_text(w, y, 0, 2, C_MARK, A_BOLD | a, stand ? G("▸ ", "* ") : "  ");
		if (merged)
			draw_text(w, y, xr, W - xr, C_DEFAULT, a | A_BOLD,
			          p->f.rank < 0 && !p->merged ? "all" : "merged");
		else
			draw_textf(w, y, xr, W - xr, C_DEFAULT, a | (stand ? A_BOLD : 0), "%d",
			           p->f.rank);
		if (p->status != DB_ST_OK) {
			draw_textf(w, y, xc, W - xc, draw_status_color(p->status), a, "%s %s",
			           draw_status_glyph(p->status), db_status_name(p->status));
			continue;
		}
		if (!draw_pair_done(p)) {
			draw_text(w, y, xc, W - xc, C_PENDING, a, G("…", "..."));
			continue;
		}
		char rel[16], ma[16];
		fmt_sci(p->m.rel, rel, sizeof rel, 8);
		fmt_sci(p->m.max_abs, ma, sizeof ma, 8);
		draw_textf(w, y, xc, W - xc, C_DEFAULT, a, "%.6f", p->m.cos);
		draw_text(w, y, xl, W - xl, C_DEFAULT, a, rel);
		draw_text(w, y, xm, W - xm, C_DEFAULT, a, ma);
		char be[16];
		draw_text(w, y, xe, W - xe, C_DEFAULT, a,
		          db_fmt_byte_equal(p->m.byte_equal, draw_utf8, be, sizeof be));
		x = xb + draw_text(w, y, xb, W - xb, draw_band_color(p->band), a,
		                   draw_band_glyph(p->band));
		x += draw_textf(w, y, x, W - x, C_DEFAULT, a, " %s", db_band_name(p->band));
		if (stand)
			draw_text(w, y, x, W - x, C_MARK, a | A_BOLD,
			          G("  ◀ bad alone", "  <- bad alone"));
	}
	(void)lab;
	tui_draw_pair_status(t, w, y0 + h - 2, r->n ? r->pairs[r->nav.cur] : DB_NO_PAIR);
}

static bool ranks_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct ranks *r = v->priv;
	if (list_nav_request(&r->nav, a, (int)r->n, r->page)) {
		t->dirty = true;
		return true;
	}
	if (a == A_ENTER && r->n) {
		tui_push(t, &tensor_view, r->pairs[r->nav.cur]);
		return true;
	}
	return false;
}

static size_t ranks_selected(struct view *v, struct tui *t)
{
	struct ranks *r = v->priv;
	return r->n ? r->pairs[r->nav.cur] : DB_NO_PAIR;
}

static void ranks_note(struct view *v, struct tui *t, FILE *out)
{
	char *md = db_md_ranks(t->cmp, v->pair);
	if (md) {
		fputs(md, out);
		free(md);
	}
}

const struct view_ops ranks_view = {
	.name = "ranks",
	.keymap = KM_GENERIC,
	.private_size = sizeof(struct ranks),
	.open = ranks_open,
	.draw = ranks_draw,
	.request = ranks_request,
	.done = ranks_done,
	.selected = ranks_selected,
	.note_data = ranks_note,
};
