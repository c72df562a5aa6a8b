/* Variants side by side (fix isolation): one row per layer, one column per
 * target, each cell the probe stage of that layer in that variant. A layer
 * one variant has bad and another ok is the change that variant reverts;
 * the last column names the variants where it is ok. Also the variant
 * switch every view shares (tui_variant_select). */
#include "app.h"

#include <stdlib.h>
#include <string.h>

#include "db_bisect.h"
#include "db_variants.h"
#include "draw.h"

void tui_variant_select(struct tui *t, size_t k)
{
	if (k >= t->n_variants || k == t->variant)
		return;
	/* Every view above the heatmap holds pair indices of this comparison;
	 * the bisect too. */
	while (t->n_views > 1)
		tui_pop(t);
	db_compare_stop(t->cmp);
	tui_bisect_replay_drop(t);
	db_bisect_run_free(t->bisect);
	t->bisect = NULL;
	t->cmp = t->variants[k];
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
	int *layers;
	size_t n_layers;
	long *pair;                     /* [layer * n_variants + variant], -1 none */
	struct list_nav nav;
	size_t col;                     /* variant under the cursor */
	const struct tui *t;            /* for busy() */
	int page;
};

static const char *probe_of(const struct tui *t)
{
	return t->probe[0] ? t->probe : DB_PROBE_LAST;
}

static bool bad(const db_pair *p)
{
	return p->status != DB_ST_OK || (draw_pair_done(p) && db_pair_diverges(p));
}

static bool ok_done(const db_pair *p)
{
	return p->status == DB_ST_OK && draw_pair_done(p) && !db_pair_diverges(p);
}

static int variants_open(struct view *v, struct tui *t)
{
	struct variants *r = v->priv;
	db_variants vs = {t->variants, t->n_variants};
	r->n_layers = db_variants_layers(&vs, &r->layers);
	if (!r->n_layers) {
		tui_msg(t, true, "no layers in these trees");
		return -1;
	}
	r->pair = malloc(r->n_layers * t->n_variants * sizeof *r->pair);
	if (!r->pair) {
		free(r->layers);
		return -1;
	}
	const char *ph = tui_phase(t), *pa = tui_pass(t);
	for (size_t l = 0; l < r->n_layers; l++)
		for (size_t k = 0; k < t->n_variants; k++) {
			db_compare *c = t->variants[k];
			long p = db_variant_probe_pair(c, ph, pa, probe_of(t), r->layers[l]);
			r->pair[l * t->n_variants + k] = p;
			/* The other variants have no worker pool running: their few
			 * probe pairs are computed here. The shown one's pool gets
			 * to them itself. */
			if (p >= 0 && k != t->variant)
				db_compare_pair(c, &c->pairs[p]);
		}
	r->col = t->variant;
	r->t = t;
	return 0;
}

static void variants_done(struct view *v, struct tui *t)
{
	struct variants *r = v->priv;
	(void)t;
	free(r->layers);
	free(r->pair);
}

static const db_pair *cell(const struct tui *t, const struct variants *r, size_t l, size_t k)
{
	long p = r->pair[l * t->n_variants + k];
	return p >= 0 ? &t->variants[k]->pairs[p] : NULL;
}

/* "2 3" into buf: the variants whose probe is ok at row l while another's
 * is bad (they fix this layer); "" when none. */
static char *fixed_by(const struct tui *t, const struct variants *r, size_t l, char *buf,
                      size_t len)
{
	bool any_bad = false;
	for (size_t k = 0; k < t->n_variants; k++) {
		const db_pair *p = cell(t, r, l, k);
		any_bad |= p && bad(p);
	}
	size_t n = 0;
	buf[0] = 0;
	for (size_t k = 0; any_bad && k < t->n_variants && n < len; k++) {
		const db_pair *p = cell(t, r, l, k);
		if (p && ok_done(p))
			n += (size_t)snprintf(buf + n, len - n, "%s%zu", n ? " " : "", k + 1);
	}
	return buf;
}

static void variants_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct variants *r = v->priv;
	int W = getmaxx(w);
	int x = draw_textf(w, y0, 0, W, C_DEFAULT, A_BOLD, "Variants: probe %s per layer",
	                   probe_of(t));
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
	list_nav_fix(&r->nav, (int)r->n_layers, r->page);
	for (int i = 0; i < r->page; i++) {
		size_t l = (size_t)(r->nav.top + i);
		if (l >= r->n_layers)
			break;
		int yy = hy + 1 + i;
		bool cur = (int)l == r->nav.cur;
		draw_textf(w, yy, xl, W, C_DEFAULT, cur ? A_BOLD : 0, "L%-4d", r->layers[l]);
		for (size_t k = 0; k < t->n_variants; k++) {
			int xx = xc + (int)k * cw;
			const db_pair *p = cell(t, r, l, k);
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
		draw_text(w, yy, xf, W - xf, C_GOOD, 0, fixed_by(t, r, l, fb, sizeof fb));
	}
	size_t sel = v->ops->selected(v, t);
	tui_draw_pair_status(t, w, y0 + h - 2, sel);
}

static bool variants_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct variants *r = v->priv;
	if (list_nav_request(&r->nav, a, (int)r->n_layers, r->page)) {
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
		long p = r->pair[(size_t)r->nav.cur * t->n_variants + r->col];
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
	if (!r->n_layers)
		return DB_NO_PAIR;
	long p = r->pair[(size_t)r->nav.cur * t->n_variants + t->variant];
	return p >= 0 ? (size_t)p : DB_NO_PAIR;
}

/* Until the shown variant's pool has computed its probe pairs. */
static bool variants_busy(struct view *v)
{
	const struct variants *r = v->priv;
	const struct tui *t = r->t;
	for (size_t l = 0; t && l < r->n_layers; l++) {
		const db_pair *p = cell(t, r, l, t->variant);
		if (p && p->status == DB_ST_OK && !draw_pair_done(p))
			return true;
	}
	return false;
}

/* The table as Markdown, for a note's Data. */
static void variants_note(struct view *v, struct tui *t, FILE *out)
{
	struct variants *r = v->priv;
	fprintf(out, "Probe `%s` per layer and variant (cos; band):\n\n", probe_of(t));
	for (size_t k = 0; k < t->n_variants; k++)
		fprintf(out, "- variant %zu: `%s`\n", k + 1, t->variant_paths[k]);
	fputs("\n| layer |", out);
	for (size_t k = 0; k < t->n_variants; k++)
		fprintf(out, " %zu |", k + 1);
	fputs(" ok in |\n|---|", out);
	for (size_t k = 0; k < t->n_variants; k++)
		fputs("---|", out);
	fputs("---|\n", out);
	for (size_t l = 0; l < r->n_layers; l++) {
		fprintf(out, "| L%d |", r->layers[l]);
		for (size_t k = 0; k < t->n_variants; k++) {
			const db_pair *p = cell(t, r, l, k);
			if (!p)
				fputs(" - |", out);
			else if (p->status != DB_ST_OK)
				fprintf(out, " %s |", db_status_name(p->status));
			else if (!draw_pair_done(p))
				fputs(" … |", out);
			else
				fprintf(out, " %.6f %s |", p->m.cos, db_band_name(p->band));
		}
		char fb[128];
		fprintf(out, " %s |\n", fixed_by(t, r, l, fb, sizeof fb));
	}
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
