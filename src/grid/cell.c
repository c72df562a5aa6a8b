/* The pair a heatmap cell stands for; see db_cell.h. Moved here from the
 * workbench so the exports choose exactly as the screen does. */
#include "db_cell.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "grid_priv.h"

bool db_pair_done(const db_pair *p)
{
	return atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire) ==
	       DB_PAIR_DONE;
}

bool db_pair_worse(const db_pair *a, const db_pair *b)
{
	int sa = a->status != DB_ST_OK ? DB_BAND_INPUTS + 1 : (int)a->band;
	int sb = b->status != DB_ST_OK ? DB_BAND_INPUTS + 1 : (int)b->band;
	if (sa != sb)
		return sa > sb;
	/* slots judged bitwise: bits off beats bit-identical in one band */
	if (a->status == DB_ST_OK && db_pair_judged_bitwise(a) &&
	    (a->m.byte_equal == 1.0) != (b->m.byte_equal == 1.0))
		return b->m.byte_equal == 1.0;
	if (a->status == DB_ST_OK) {
		double ca = a->m.cos, cb = b->m.cos;
		if (isnan(ca) != isnan(cb))
			return isnan(ca);
		if (!isnan(ca) && ca != cb)
			return ca < cb;
	}
	return a->f.rank < b->f.rank;
}

void grid_worst_add(grid_worst *w, const db_compare *c, size_t i)
{
	const db_pair *q = &c->pairs[i];
	w->n++;
	if (!db_pair_done(q))
		return;
	w->n_done++;
	if (w->worst == DB_NO_PAIR || db_pair_worse(q, &c->pairs[w->worst]))
		w->worst = i;
}

bool grid_worst_settle(const grid_worst *w, bool *changed)
{
	if (w->n_done < w->n)
		return false;
	if (w->worst != DB_NO_PAIR && *w->cell != w->worst) {
		*w->cell = w->worst;
		*changed = true;
	}
	return true;
}

/* One per-rank cell: its (layer, stage, occurrence) and the ranks seen. */
struct worst_cell {
	int layer, occurrence;
	const char *stage;              /* borrowed from the pairs */
	grid_worst t;
};

static int cmp_key(int layer, const char *stage, int occ, const struct worst_cell *b)
{
	if (layer != b->layer)
		return layer < b->layer ? -1 : 1;
	int c = strcmp(stage, b->stage);
	if (c)
		return c;
	return (occ > b->occurrence) - (occ < b->occurrence);
}

static int cmp_cell(const void *va, const void *vb)
{
	const struct worst_cell *a = va;
	return cmp_key(a->layer, a->stage, a->occurrence, vb);
}

static struct worst_cell *find_cell(struct worst_cell *v, size_t n, const db_pair *q)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_key(q->f.layer, q->f.stage, q->occurrence, &v[mid]);
		if (!c)
			return &v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

bool db_grid_worst_ranks(const db_compare *c, db_grid *g, bool *settled_out)
{
	if (settled_out)
		*settled_out = true;
	if (g->rank != DB_RANK_ANY)
		return false;
	size_t n = 0, cap = 0;
	for (size_t r = 0; r < g->n_rows; r++)
		cap += g->rows[r].layer < 0 ? 1 : g->n_cols;
	struct worst_cell *v = malloc((cap + 1) * sizeof *v);
	if (!v) {
		if (settled_out)
			*settled_out = false;
		return false;
	}
	for (size_t r = 0; r < g->n_rows; r++) {
		size_t nc = g->rows[r].layer < 0 ? 1 : g->n_cols;
		for (size_t k = 0; k < nc; k++) {
			size_t i = g->rows[r].cells[k];
			const db_pair *p = i == DB_NO_PAIR ? NULL : &c->pairs[i];
			if (!p || p->merged || p->f.rank < 0)
				continue;       /* sharded (merged) or rank-less: as built */
			v[n++] = (struct worst_cell){p->f.layer, p->occurrence, p->f.stage,
			                             {&g->rows[r].cells[k], DB_NO_PAIR, 0, 0}};
		}
	}
	qsort(v, n, sizeof *v, cmp_cell);
	for (size_t i = 0; n && i < c->n_pairs; i++) {
		const db_pair *q = &c->pairs[i];
		if (q->merged || q->f.rank < 0 || strcmp(q->f.phase, g->phase) ||
		    strcmp(q->f.pass, g->pass))
			continue;
		struct worst_cell *w = find_cell(v, n, q);
		if (w)
			grid_worst_add(&w->t, c, i);
	}
	bool changed = false, settled = true;
	for (size_t k = 0; k < n; k++)
		settled &= grid_worst_settle(&v[k].t, &changed);
	free(v);
	if (settled_out)
		*settled_out = settled;
	return changed;
}
