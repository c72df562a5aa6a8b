/* One row per rank of a cell plus the merged comparison; a rank that alone
 * is bad stands out ("compare per-rank to isolate a TP/EP shard"). A
 * merged pair whose ranks have no pairs of their own (one side whole, the
 * other sharded) shows each shard against its slice of the whole
 * (db_rank_split.h), measured by a thread, or why the ranks cannot be
 * told apart. */
#include "base/app.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "db_notes.h"
#include "db_rank_split.h"
#include "db_slot.h"
#include "db_verdict.h"
#include "base/draw.h"

struct ranks {
	size_t *pairs, n;               /* rows: merged first (when any), then ranks */
	bool has_merged;
	struct list_nav nav;
	int page;
	/* the split of the merged pair, rows after pairs; written by the
	 * thread before done */
	db_compare *cmp;
	size_t merged;
	pthread_t th;
	bool started;
	atomic_bool done;
	db_rank_part *parts;
	long n_parts;                   /* 0: not separable (why), -1: error (why) */
	char why[256];
};

static void *split_work(void *arg)
{
	struct ranks *r = arg;
	db_err e = {{0}};
	r->n_parts = db_pair_rank_split(r->cmp, &r->cmp->pairs[r->merged], &r->parts, r->why,
	                                sizeof r->why, &e);
	if (r->n_parts < 0)
		snprintf(r->why, sizeof r->why, "%.250s", e.msg);
	atomic_store(&r->done, true);
	return NULL;
}

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
	if (r->has_merged && r->n == 1 && t->cmp->pairs[m].merged) {
		/* no rank has a pair: the shards against their slices */
		r->cmp = t->cmp;
		r->merged = m;
		atomic_init(&r->done, false);
		if (pthread_create(&r->th, NULL, split_work, r) != 0) {
			tui_msg(t, true, "cannot start a thread");
			return -1;
		}
		r->started = true;
	} else if (r->n <= (r->has_merged ? 1u : 0u)) {
		tui_msg(t, false, "this tensor has no per-rank dumps");
	}
	/* Start on the rank the user came from. */
	for (size_t i = 0; i < r->n; i++)
		if (r->pairs[i] == v->pair)
			r->nav.cur = (int)i;
	return 0;
}

static void ranks_done(struct view *v, struct tui *t)
{
	struct ranks *r = v->priv;
	if (r->started)
		pthread_join(r->th, NULL);
	free(r->pairs);
	free(r->parts);
}

static bool ranks_busy(struct view *v)
{
	struct ranks *r = v->priv;
	return r->started && !atomic_load(&r->done);
}

/* Rows: the pairs, then the split's parts once measured. */
static size_t n_rows(struct ranks *r)
{
	return r->n + (r->started && atomic_load(&r->done) && r->n_parts > 0 ? (size_t)r->n_parts : 0);
}

/* bad as the headline judges it (db_verdict.h): a slot with a bit off is
 * bad in the ok band, a pair within its noise floor is not */
static bool is_bad(const db_pair *p)
{
	return p->status != DB_ST_OK || (draw_pair_done(p) && db_pair_diverges(p));
}

enum { XR = 4, XC = 14, XL = 26, XM = 36, XE = 46, XB = 54 };

/* cos, rel, max_abs, bytes= and the band of one row from column XC on
 * (p: the row's pair, NULL for a shard's part: a slot window reads "⊂");
 * returns the column after the band. */
static int draw_numbers(WINDOW *w, int y, int W, attr_t a, const db_metrics *m, db_band band,
                        const db_pair *p)
{
	char rel[16], ma[16], be[16];
	fmt_sci(m->rel, rel, sizeof rel, 8);
	fmt_sci(m->max_abs, ma, sizeof ma, 8);
	draw_textf(w, y, XC, W - XC, C_DEFAULT, a, "%.6f", m->cos);
	draw_text(w, y, XL, W - XL, C_DEFAULT, a, rel);
	draw_text(w, y, XM, W - XM, C_DEFAULT, a, ma);
	draw_text(w, y, XE, W - XE, C_DEFAULT, a, p ? db_fmt_pair_bytes(p, draw_utf8, be, sizeof be)
	                                            : db_fmt_byte_equal(m->byte_equal, draw_utf8, be, sizeof be));
	int x = XB + draw_text(w, y, XB, W - XB, draw_band_color(band), a, draw_band_glyph(band));
	return x + draw_textf(w, y, x, W - x, C_DEFAULT, a, " %s",
	                      p ? db_verdict_word(p) : db_band_name(band));
}

/* The concat dim of merged pair p, counted from 0. */
static int split_dim(const db_pair *p)
{
	int nd = p->ndim_ref >= 0 ? p->ndim_ref : p->ndim_tgt;
	return p->unshard.dim < 0 ? p->unshard.dim + nd : p->unshard.dim;
}

/* The second line for a split: how the shards were judged and the bad
 * ranks ("bad ranks: 0 1 (every rank; ...)" as bisect says it), or why
 * they cannot be told apart. */
static void split_head(struct ranks *r, struct tui *t, WINDOW *w, int y, int W)
{
	const db_pair *m = &t->cmp->pairs[r->merged];
	bool whole_ref = m->n_ref_shards <= 1;
	int x = 0;
	if (!atomic_load(&r->done)) {
		draw_text(w, y, 0, W, C_PENDING, 0, "measuring each shard against its slice…");
		return;
	}
	if (r->n_parts <= 0) {
		draw_textf(w, y, 0, W, r->n_parts < 0 ? C_ERROR : C_HILITE, 0, "%s: %s",
		           r->n_parts < 0 ? "error" : "not separable", r->why);
		return;
	}
	size_t n_bad = 0;
	for (long k = 0; k < r->n_parts; k++)
		n_bad += r->parts[k].band > DB_BAND_OK;
	if (!n_bad) {
		x += draw_textf(w, y, 0, W, m->band > DB_BAND_OK ? C_HILITE : C_GOOD, 0,
		                "no rank's slice is bad on its own%s",
		                m->band > DB_BAND_OK ? ", only the merged tensor" : "");
	} else {
		x += draw_text(w, y, 0, W, C_MARK, A_BOLD, n_bad < (size_t)r->n_parts ? G("▸ ", "* ") : "");
		x += draw_text(w, y, x, W - x, C_MARK, A_BOLD, "bad ranks:");
		for (long k = 0; k < r->n_parts; k++)
			if (r->parts[k].band > DB_BAND_OK)
				x += draw_textf(w, y, x, W - x, C_MARK, A_BOLD, " %d", r->parts[k].rank);
		x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, n_bad == (size_t)r->n_parts
		                ? " (every rank: not one shard's fault)"
		                : " (%zu of %ld: a shard-specific problem)", n_bad, r->n_parts);
	}
	draw_textf(w, y + 1, 0, W, C_DIM, 0, "each %s shard against its slice of the %s's whole "
	           "along dim %d", whole_ref ? "target" : "reference",
	           whole_ref ? "reference" : "target", split_dim(m));
}

static void ranks_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct ranks *r = v->priv;
	int W = getmaxx(w);
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
	bool slots = t->cmp->n_slots > 0;      /* --slots: slot k in the rank's place */
	if (r->started)
		split_head(r, t, w, y0 + 1, W);
	else if (!all_done)
		draw_text(w, y0 + 1, 0, W, C_PENDING, 0, "computing…");
	else if (alone)
		draw_textf(w, y0 + 1, 0, W, C_MARK, A_BOLD,
		           slots ? "%s %zu of %zu slots bad: a batch position the kernels treat "
		                   "differently (judged bitwise)"
		                 : "%s %zu of %zu ranks bad: a shard-specific problem (TP/EP split, "
		                   "per-rank weights)", G("▸", "*"), n_bad, n_ranks);
	else if (n_bad)
		draw_textf(w, y0 + 1, 0, W, C_HILITE, 0, slots ? "all %zu slots bad (judged bitwise)"
		           : "all %zu ranks bad: not one shard's fault", n_ranks);
	else if (n_ranks)
		draw_textf(w, y0 + 1, 0, W, C_GOOD, 0, slots ? "all %zu slots bit-identical"
		           : "all %zu ranks ok", n_ranks);

	int hy = y0 + 3;
	bool split = n_rows(r) > r->n;
	const struct col_head heads[] = {{XR, slots ? "slot" : "rank"}, {XC, "cos"},    {XL, "rel"},
	                                  {XM, "max_abs"}, {XE, "bytes="}, {XB, "band"},
	                                  {XB + 14, "slice of the whole"}};
	draw_heads(w, hy, W, heads, sizeof heads / sizeof *heads - !split);
	r->page = h - 7;
	size_t nr = n_rows(r);
	list_nav_fix(&r->nav, (int)nr, r->page);
	for (int k = 0; k < r->page; k++) {
		size_t i = (size_t)(r->nav.top + k);
		if (i >= nr)
			break;
		int y = hy + 1 + k;
		attr_t a = (int)i == r->nav.cur ? A_REVERSE : 0;
		draw_fill(w, y, 0, W, C_DEFAULT, a);
		if (i >= r->n) {
			/* a shard against its slice */
			const db_rank_part *pt = &r->parts[i - r->n];
			bool bad = pt->band > DB_BAND_OK;
			draw_text(w, y, 0, 2, C_MARK, A_BOLD | a, bad ? G("▸ ", "* ") : "  ");
			draw_textf(w, y, XR, W - XR, C_DEFAULT, a | (bad ? A_BOLD : 0), "%d", pt->rank);
			draw_numbers(w, y, W, a, &pt->m, pt->band, NULL);
			draw_textf(w, y, XB + 14, W - XB - 14, C_DEFAULT, a, "[%lld, %lld)",
			           (long long)pt->lo, (long long)(pt->lo + pt->len));
			continue;
		}
		const db_pair *p = &t->cmp->pairs[r->pairs[i]];
		bool merged = r->has_merged && i == 0;
		bool stand = alone && !merged && is_bad(p);
		draw_text(w, y, 0, 2, C_MARK, A_BOLD | a, stand ? G("▸ ", "* ") : "  ");
		if (merged)
			draw_text(w, y, XR, W - XR, C_DEFAULT, a | A_BOLD,
			          p->f.rank < 0 && !p->merged ? "all" : "merged");
		else
			draw_textf(w, y, XR, W - XR, C_DEFAULT, a | (stand ? A_BOLD : 0), "%d",
			           p->f.rank);
		if (p->status != DB_ST_OK) {
			draw_textf(w, y, XC, W - XC, draw_status_color(p->status), a, "%s %s",
			           draw_status_glyph(p->status), db_status_name(p->status));
			continue;
		}
		if (!draw_pair_done(p)) {
			draw_text(w, y, XC, W - XC, C_PENDING, a, G("…", "..."));
			continue;
		}
		/* a slot judged bitwise and bad in the ok band: not a ✓ */
		db_judgement vd;
		db_pair_verdict(p, &vd);
		x = draw_numbers(w, y, W, a, &p->m, vd.by == DB_JUDGED_BITWISE && vd.diverges &&
		                 p->band < DB_BAND_ALGO ? DB_BAND_DRIFT : p->band, p);
		if (stand)
			draw_text(w, y, x, W - x, C_MARK, a | A_BOLD,
			          G("  ◀ bad alone", "  <- bad alone"));
	}
	size_t sel = (size_t)r->nav.cur < r->n ? r->pairs[r->nav.cur] : r->merged;
	tui_draw_pair_status(t, w, y0 + h - 2, r->n ? sel : DB_NO_PAIR);
}

static size_t ranks_selected(struct view *v, struct tui *t)
{
	struct ranks *r = v->priv;
	/* a shard's row: the merged pair it is part of */
	if (!r->n)
		return DB_NO_PAIR;
	return (size_t)r->nav.cur < r->n ? r->pairs[r->nav.cur] : r->merged;
}

static bool ranks_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct ranks *r = v->priv;
	if (list_nav_request(&r->nav, a, (int)n_rows(r), r->page)) {
		t->dirty = true;
		return true;
	}
	if (a == A_ENTER && r->n) {
		tui_push(t, &tensor_view, ranks_selected(v, t));
		return true;
	}
	return false;
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
	.busy = ranks_busy,
	.selected = ranks_selected,
	.note_data = ranks_note,
};
