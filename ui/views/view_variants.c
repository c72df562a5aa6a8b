/* Variants side by side (fix isolation): one row per layer, one column per
 * target, each cell the probe stage of that layer in that variant. A layer
 * one variant has bad and another ok is the change that variant reverts;
 * the last column names the variants where it is ok. Also the variant
 * switch every view shares (tui_variant_select). */
#include "base/app.h"

#include <stdlib.h>
#include <string.h>

#include "db_atomic.h"
#include "db_variants.h"
#include "base/draw.h"

void tui_variant_select(struct tui *t, size_t k)
{
	if (k >= t->n_variants || k == t->variant)
		return;
	/* Every view above the heatmap holds pair indices of this comparison;
	 * the bisect too. */
	while (t->n_views > 1)
		tui_pop(t);
	db_compare_stop(t->cmp);
	tui_bisect_close(t);
	t->cmp = t->variants[k];
	t->passes_valid = false;
	t->variant = k;
	t->tgt_path = t->variant_paths[k];
	if (t->watch) {         /* files may have come while another was shown */
		db_err err = {{0}};
		if (db_compare_rescan(t->cmp, &err) < 0)
			tui_msg(t, true, "rescan: %s", err.msg);
	}
	free(t->ranks);
	t->ranks = NULL;
	t->has_merged = false;
	t->pass = 0;
	bool keep_probe = t->probe_given;
	char probe[sizeof t->probe];
	memcpy(probe, t->probe, sizeof probe);
	tui_init_selection(t);
	if (keep_probe)
		memcpy(t->probe, probe, sizeof probe);
	db_compare_start(t->cmp);
	tui_msg(t, false, "variant %zu of %zu: %s", k + 1, t->n_variants, t->tgt_path);
}

struct variants {
	db_variant_matrix m;
	struct list_nav nav;
	size_t col;                     /* variant under the cursor */
	int page;
	const struct tui *t;            /* for busy() */
};

static db_variants all(const struct tui *t)
{
	return (db_variants){t->variants, t->n_variants};
}

static int variants_open(struct view *v, struct tui *t)
{
	struct variants *r = v->priv;
	db_variants vs = all(t);
	/* The other variants have no worker pool running: their few probe
	 * pairs are computed here. The shown one's pool gets to them. */
	if (db_variants_matrix(&vs, tui_phase(t), tui_pass(t), t->probe[0] ? t->probe : NULL,
	                       true, t->variant, &r->m) < 0)
		return -1;
	if (!r->m.n_layers) {
		db_variant_matrix_free(&r->m);
		tui_msg(t, true, "no layers in these trees");
		return -1;
	}
	r->col = t->variant;
	r->t = t;
	return 0;
}

static void variants_done(struct view *v, struct tui *t)
{
	struct variants *r = v->priv;
	(void)t;
	db_variant_matrix_free(&r->m);
}

static void variants_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct variants *r = v->priv;
	db_variants vs = all(t);
	int W = getmaxx(w);
	int x = draw_textf(w, y0, 0, W, C_DEFAULT, A_BOLD, "Variants: probe %s per layer",
	                   r->m.stage);
	draw_textf(w, y0, x, W - x, C_DIM, 0, "  (shown: variant %zu)", t->variant + 1);
	/* One line per variant naming its tree: the columns are numbered. */
	int y = y0 + 1;
	for (size_t k = 0; k < t->n_variants && y < y0 + h - 4; k++, y++)
		draw_textf(w, y, 0, W, k == t->variant ? C_TAB : C_DIM, 0, "%2zu %s", k + 1,
		           t->variant_paths[k]);
	int hy = y + 1, xl = 0, xc = 7, cw = 10;
	draw_text(w, hy, xl, W, C_DIM, A_BOLD, "layer");
	for (size_t k = 0; k < t->n_variants; k++)
		draw_textf(w, hy, xc + (int)k * cw, W - xc - (int)k * cw, C_DIM, A_BOLD, "%9zu",
		           k + 1);
	int xf = xc + (int)t->n_variants * cw + 1;
	draw_text(w, hy, xf, W - xf, C_DIM, A_BOLD, "ok in");
	r->page = y0 + h - 2 - (hy + 1);
	if (r->page < 1)
		r->page = 1;
	list_nav_fix(&r->nav, (int)r->m.n_layers, r->page);
	for (int i = 0; i < r->page; i++) {
		size_t l = (size_t)(r->nav.top + i);
		if (l >= r->m.n_layers)
			break;
		int yy = hy + 1 + i;
		bool cur = (int)l == r->nav.cur;
		draw_textf(w, yy, xl, W, C_DEFAULT, cur ? A_BOLD : 0, "L%-4d", r->m.layers[l]);
		for (size_t k = 0; k < t->n_variants; k++) {
			int xx = xc + (int)k * cw;
			const db_pair *p = db_variant_cell(&vs, &r->m, l, k);
			attr_t a = cur && k == r->col ? A_REVERSE : 0;
			if (!p) {
				draw_text(w, yy, xx, W - xx, C_MISSING, a, "        -");
				continue;
			}
			char buf[32];
			int color;
			tui_cell_text(p, t->metric, buf, sizeof buf, &color);
			draw_text(w, yy, xx, W - xx, (enum tui_color)color, a, buf);
		}
		char fb[128];
		draw_text(w, yy, xf, W - xf, C_GOOD, 0, db_variant_fixed_by(&vs, &r->m, l, fb,
		                                                            sizeof fb));
	}
	size_t sel = v->ops->selected(v, t);
	tui_draw_pair_status(t, w, y0 + h - 2, sel);
}

static bool variants_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct variants *r = v->priv;
	if (list_nav_request(&r->nav, a, (int)r->m.n_layers, r->page)) {
		t->dirty = true;
		return true;
	}
	switch (a) {
	case A_MOVE_LEFT:
		r->col = r->col ? r->col - 1 : 0;
		return true;
	case A_MOVE_RIGHT:
		r->col = r->col + 1 < t->n_variants ? r->col + 1 : r->col;
		return true;
	case A_ENTER: {
		/* Show that variant, its cell under the heatmap's cursor. */
		long p = r->m.pair[(size_t)r->nav.cur * t->n_variants + r->col];
		tui_variant_select(t, r->col);   /* closes this view when it switches */
		while (t->n_views > 1)
			tui_pop(t);
		if (p >= 0)
			heatmap_goto_pair(t, (size_t)p);
		return true;
	}
	default:
		return false;
	}
}

/* Pairs index the shown variant's comparison: notes and marks take the
 * cursor's layer there, whichever column it is on. */
static size_t variants_selected(struct view *v, struct tui *t)
{
	struct variants *r = v->priv;
	if (!r->m.n_layers)
		return DB_NO_PAIR;
	long p = r->m.pair[(size_t)r->nav.cur * t->n_variants + t->variant];
	return p >= 0 ? (size_t)p : DB_NO_PAIR;
}

/* Until the shown variant's pool has computed its probe pairs. */
static bool variants_busy(struct view *v)
{
	const struct variants *r = v->priv;
	const struct tui *t = r->t;
	if (!t)
		return false;
	db_variants vs = all(t);
	for (size_t l = 0; l < r->m.n_layers; l++) {
		const db_pair *p = db_variant_cell(&vs, &r->m, l, t->variant);
		if (p && p->status == DB_ST_OK && !draw_pair_done(p))
			return true;
	}
	return false;
}

/* The table as Markdown, for a note's Data. */
static void variants_note(struct view *v, struct tui *t, FILE *out)
{
	struct variants *r = v->priv;
	db_variants vs = all(t);
	db_variants_md(out, &vs, &r->m);
}

static int write_md(FILE *f, void *ctx, db_err *err)
{
	const struct tui *t = ctx;
	db_variants vs = all(t);
	db_variant_matrix m;
	if (db_variants_matrix(&vs, tui_phase(t), tui_pass(t), t->probe[0] ? t->probe : NULL,
	                       true, (size_t)-1, &m) < 0)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	int rc = db_variants_md(f, &vs, &m);
	db_variant_matrix_free(&m);
	return rc < 0 ? db_err_set(err, NULL, NULL, -1, "write error") : 0;
}

int tui_variants_export(struct tui *t, const char *dir, db_err *err)
{
	/* the export runs once the scan is done: the shown variant's pairs are
	 * computed, the others' probe pairs are computed here */
	char path[4096];
	if ((size_t)snprintf(path, sizeof path, "%s/variants.md", dir) >= sizeof path)
		return db_err_set(err, dir, NULL, -1, "path too long");
	return db_atomic_write(path, write_md, t, err);
}

const struct view_ops variants_view = {
	.name = "variants",
	.keymap = KM_GENERIC,
	.private_size = sizeof(struct variants),
	.open = variants_open,
	.draw = variants_draw,
	.request = variants_request,
	.done = variants_done,
	.busy = variants_busy,
	.selected = variants_selected,
	.note_data = variants_note,
};
