/* The heatmap's headline: see heatmap_head.h. */
#include "heatmap_head.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/draw.h"
#include "db_noise.h"
#include "db_rank_words.h"
#include "db_slot.h"
#include "db_verdict.h"

/* The batch slot the comparison measures on (the first pair that has
 * one; pairs of one run share it), "" when none. Found again only when
 * the pairs or their progress moved: a pass over every pair on every draw
 * was a millisecond a key at 10^6 files (issue 24). */
static char *slot_note(const struct tui *t, char *buf, size_t len)
{
	static const db_compare *kc;
	static unsigned long kgen;
	static size_t kdone = SIZE_MAX, at = SIZE_MAX;
	const db_compare *c = t->cmp;
	if (c->align_whole) {   /* --align tokens: the headline pair's rows */
		long fd = t->first_beyond >= 0 ? t->first_beyond : t->first_div;
		if (fd >= 0 && (size_t)fd < c->n_pairs && c->pairs[fd].slot.tokens)
			return db_slot_str(&c->pairs[fd], buf, len);
		snprintf(buf, len, "aligned by token");
		return buf;
	}
	/* the first divergence's own block (a pass's blocks may differ pair
	 * by pair when the prompt fills several: db_slot_pick), as its status
	 * line names it */
	long fd = t->first_div;
	if (fd >= 0 && (size_t)fd < c->n_pairs && c->pairs[fd].slot.side &&
	    c->pairs[fd].slot.side != DB_SLOT_IN_TREE)
		return db_slot_str(&c->pairs[fd], buf, len);
	size_t done = atomic_load(&t->cmp->n_done);
	if (kc != c || kgen != c->pairs_gen || kdone != done) {
		kc = c, kgen = c->pairs_gen, kdone = done, at = SIZE_MAX;
		for (size_t i = 0; i < c->n_pairs && at == SIZE_MAX; i++)
			if (c->pairs[i].slot.side && draw_pair_done(&c->pairs[i]) &&
			    c->pairs[i].slot.side != DB_SLOT_IN_TREE)  /* --slots: the label says */
				at = i;
	}
	buf[0] = 0;
	if (at < c->n_pairs)
		db_slot_str(&c->pairs[at], buf, len);
	return buf;
}

/* The headline's name of a pair in width columns: "L7 <stage> rank 1",
 * the stage cut in the middle when it must be (the layer and the rank
 * stay); the rank part as compare says it (db_rank_words.h: "every rank
 * (of 2)" when every rank of its cell diverges). */
static char *headline_label(const struct tui *t, size_t pair, int width, char *buf, size_t len)
{
	const db_pair *p = &t->cmp->pairs[pair];
	char lay[32] = "", rk[48], st[300];
	if (p->f.layer >= 0)
		snprintf(lay, sizeof lay, "L%d ", p->f.layer);
	rk[0] = ' ';
	db_rank_words(t->cmp, pair, rk + 1, sizeof rk - 1);
	if (!rk[1])
		rk[0] = '\0';
	int room = width - draw_width(lay) - draw_width(rk);
	/* cut, it keeps what tells it from the columns (issue 34: "L1
	 * se…ion" read as self_attention, the stage was its sub-stage): as
	 * wide as that takes, the numbers after it give way then */
	const char *const *cols = t->have_grid ? (const char *const *)t->grid.cols : NULL;
	snprintf(buf, len, "%s%s%s", lay,
	         draw_fit_telling(p->f.stage, cols, cols ? t->grid.n_cols : 0, room < 6 ? 6 : room,
	                          st, sizeof st), rk);
	return buf;
}

void heatmap_draw_head(struct tui *t, WINDOW *w, int y)
{
	int W = getmaxx(w), x = 0;
	draw_fill(w, y, 0, W, C_DEFAULT, 0);
	if (tui_computing(t)) {
		draw_text(w, y, 0, W, C_PENDING, 0,
		          "computing… the first divergence is named when the scan is done");
		return;
	}
	if (!t->first_div_known)
		tui_update_first_div(t);
	if (tui_phase(t) && t->cmp->n_phases > 1) {
		const char *first = NULL;
		x += draw_text(w, y, x, W - x, C_DIM, 0, "phases ");
		for (size_t i = 0; i < t->cmp->n_phases; i++) {
			long d = t->phase_div ? t->phase_div[i] : -1;
			if (d >= 0 && !first)
				first = t->cmp->phases[i];
			x += draw_textf(w, y, x, W - x, d >= 0 ? C_MARK : C_GOOD, 0, "%s %s%s ",
			                t->cmp->phases[i], d >= 0 ? G("✗", "x") : G("✓", "."),
			                i + 1 < t->cmp->n_phases ? G(" →", " >") : "");
		}
		if (first)
			x += draw_textf(w, y, x, W - x, C_MARK, A_BOLD, "first divergent phase: %s  ",
			                first);
		else
			x += draw_text(w, y, x, W - x, C_GOOD, 0, "no phase diverges  ");
	}
	char sn[128];
	if (t->first_div < 0) {
		/* the same sentence as compare's: pairs not compared are named */
		char nd[600];
		x += draw_text(w, y, x, W - x, C_GOOD, 0,
		               x ? "this phase: every pair is ok" : db_no_divergence_text(t->cmp, nd,
		                                                                          sizeof nd));
		if (*slot_note(t, sn, sizeof sn))
			draw_textf(w, y, x, W - x, C_HILITE, 0, "  %s", sn);
		return;
	}
	char lab[300], v[32], r[16], nums[200], fit[300], judged[100] = "";
	/* where the first divergence only drifts, where the bug shows (the
	 * pair compare names beyond drift and bisect's walk ends on: one rule,
	 * db_first_beyond_drift_of), the drift named after the numbers */
	long shown = t->first_beyond >= 0 ? t->first_beyond : t->first_div;
	const db_pair *p = &t->cmp->pairs[shown];
	if (p->status != DB_ST_OK) {
		snprintf(nums, sizeof nums, "  %s", db_status_name(p->status));
	} else {
		fmt_cos(p->m.cos, v, sizeof v);
		fmt_sci(p->m.rel, r, sizeof r, 8);
		/* what judged it: the noise run, or the bit-identical regime */
		char nz[96];
		if (p->noise == DB_NOISE_WITHIN || p->noise == DB_NOISE_BEYOND)
			snprintf(judged, sizeof judged, "%s",
			         db_noise_str(p, nz, sizeof nz) + strlen(db_verdict_word(p)));
		else if (*db_noise_str(p, nz, sizeof nz))
			snprintf(judged, sizeof judged, "  %s", nz);
		else if (shown == db_first_not_identical(t->cmp))
			snprintf(judged, sizeof judged, "  (bit-identical regime)");
		else if (db_pair_judged_bitwise(p) && p->slot.side != DB_SLOT_IN_TREE)
			snprintf(judged, sizeof judged, "  (judged bitwise: batch slot)");
		const char *cl = p->m.stats_only ? "statistics only," : "cos";   /* no cos: no nan */
		if (p->m.stats_only)
			v[0] = '\0';
		snprintf(nums, sizeof nums, " %s  %s %s rel %s%s", db_verdict_word(p), cl, v, r,
		         judged);
	}
	x += draw_text(w, y, x, W - x, C_MARK, A_BOLD, G("▸ ", "* "));
	/* on a narrow screen the words give way first */
	int full = draw_width(headline_label(t, (size_t)shown, 1000, lab, sizeof lab));
	x += draw_text(w, y, x, W - x, C_DEFAULT, 0,
	               x + 17 + full + draw_width(nums) > W ? "first: "
	               : shown != t->first_div ? "first beyond drift " : "first divergence ");
	/* the name gives way, cut in the middle, before the numbers do */
	x += draw_text(w, y, x, W - x, C_DEFAULT, A_BOLD,
	               headline_label(t, (size_t)shown, W - x - draw_width(nums), lab,
	                              sizeof lab));
	int room = W - x - draw_width(nums) - draw_width(" (here: )");
	if (t->first_div_sel != shown && room >= 12) {
		if (t->first_div_sel >= 0)
			headline_label(t, (size_t)t->first_div_sel, room, fit, sizeof fit);
		x += draw_textf(w, y, x, W - x, C_DIM, 0, " (here: %s)",
		                t->first_div_sel >= 0 ? fit : "none");
	}
	if (p->status != DB_ST_OK) {
		x += draw_text(w, y, x, W - x, draw_status_color(p->status), 0, nums);
	} else {
		x += draw_textf(w, y, x, W - x, draw_band_color(p->band), 0, " %s ",
		                db_verdict_word(p));
		x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, " %s%s%s rel %s",
		                p->m.stats_only ? "statistics only," : "cos", *v ? " " : "", v, r);
		x += draw_text(w, y, x, W - x, C_MARK, 0, judged);
	}
	if (shown != t->first_div && W - x > 30) {
		const db_pair *d = &t->cmp->pairs[t->first_div];
		char dl[48] = "";
		if (d->f.layer >= 0)
			snprintf(dl, sizeof dl, "L%d ", d->f.layer);
		x += draw_textf(w, y, x, W - x, C_DIM, 0, "  (drift from %s%s)", dl, d->f.stage);
	}
	x += draw_text(w, y, x, W - x, C_DIM, 0, "  (f jumps)");
	if (*slot_note(t, sn, sizeof sn))
		draw_textf(w, y, x, W - x, C_HILITE, 0, "  %s", sn);
}
