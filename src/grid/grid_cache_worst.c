/* db_grid_cache_worst_ranks: db_grid_worst_ranks (cell.c) through the
 * index; see db_grid_cache.h. */
#include "db_grid_cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db_cell.h"
#include "grid_cache_priv.h"
#include "grid_priv.h"

/* The per-rank cells of db_grid_cache_worst_ranks are grid_worst tallies
 * (as in cell.c), found by (layer, stage id) in a table, not by strcmp. */
typedef grid_worst wcell;

static size_t layer_at(const int *v, size_t n, int layer)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid] < layer)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == layer ? lo : SIZE_MAX;
}

/* Cells of a row of g (model rows use cells[0] only). */
static size_t row_cells(const db_grid *g, size_t r)
{
	return g->rows[r].layer < 0 ? 1 : g->n_cols;
}

/* g has the layout of the kept all-ranks grid, so worst_cells fit it. */
static bool same_layout(const db_grid_cache *gc, const db_grid *g)
{
	const db_grid *a = &gc->any;
	if (!gc->have_any || a->n_rows != g->n_rows || a->n_cols != g->n_cols ||
	    a->first_layer_row != g->first_layer_row)
		return false;
	for (size_t r = 0; r < g->n_rows; r++)
		if (a->rows[r].layer != g->rows[r].layer)
			return false;
	return true;
}

/* The settled pass again, from worst_cells: each per-rank cell of g takes
 * the kept pair of the same cell (layer and stage checked); false, g
 * untouched, when g is not the grid they were kept for. */
static bool apply_settled(const db_grid_cache *gc, const db_compare *c, db_grid *g,
                          bool *changed)
{
	if (!gc->worst_cells || !same_layout(gc, g))
		return false;
	for (int pass = 0; pass < 2; pass++) {
		const size_t *w = gc->worst_cells;
		for (size_t r = 0; r < g->n_rows; r++)
			for (size_t k = 0; k < row_cells(g, r); k++, w++) {
				size_t i = g->rows[r].cells[k];
				const db_pair *p = i < c->n_pairs ? &c->pairs[i] : NULL;
				if (!p || p->merged || p->f.rank < 0) {
					if (*w != i)
						return false;
					continue;
				}
				if (!pass && (*w >= c->n_pairs || c->pairs[*w].f.layer != p->f.layer ||
				              gc->sid[*w] != gc->sid[i]))
					return false;
				if (pass && i != *w) {
					g->rows[r].cells[k] = *w;
					*changed = true;
				}
			}
	}
	return true;
}

/* Keep g's cells (settled) for apply_settled. */
static void keep_settled(db_grid_cache *gc, const db_grid *g)
{
	if (!same_layout(gc, g))
		return;
	size_t n = 0;
	for (size_t r = 0; r < g->n_rows; r++)
		n += row_cells(g, r);
	size_t *w = realloc(gc->worst_cells, (n + 1) * sizeof *w);
	if (!w)
		return;
	gc->worst_cells = w;
	for (size_t r = 0; r < g->n_rows; r++)
		for (size_t k = 0; k < row_cells(g, r); k++)
			*w++ = g->rows[r].cells[k];
}

bool db_grid_cache_worst_ranks(db_grid_cache *gc, const db_compare *c, db_grid *g,
                               bool *settled_out)
{
	if (settled_out)
		*settled_out = true;
	if (g->rank != DB_RANK_ANY)
		return false;
	if (grid_cache_ensure(gc, c, g->phase, g->pass) != 0)
		return db_grid_worst_ranks(c, g, settled_out);
	bool changed = false, settled = true;
	if (apply_settled(gc, c, g, &changed))
		return changed;
	size_t cap = 0, n = 0, nl = 0, ns = gc->n_stages;
	for (size_t r = 0; r < g->n_rows; r++)
		cap += g->rows[r].layer < 0 ? 1 : g->n_cols;
	wcell *v = malloc((cap + 1) * sizeof *v);
	int *layers = malloc((cap + 1) * sizeof *layers);
	size_t *at = NULL;
	if (v && layers) {      /* the cells' layers, distinct ascending */
		for (size_t r = 0; r < g->n_rows; r++)
			for (size_t k = 0; k < row_cells(g, r); k++) {
				size_t i = g->rows[r].cells[k];
				if (i < c->n_pairs)
					layers[nl++] = c->pairs[i].f.layer;
			}
		qsort(layers, nl, sizeof *layers, grid_cmp_int);
		size_t d = 0;
		for (size_t k = 0; k < nl; k++)
			if (!d || layers[k] != layers[d - 1])
				layers[d++] = layers[k];
		nl = d;
		at = malloc((nl * ns + 1) * sizeof *at);
	}
	if (!at) {
		free(v);
		free(layers);
		if (settled_out)
			*settled_out = false;
		return false;
	}
	for (size_t k = 0; k < nl * ns; k++)
		at[k] = SIZE_MAX;
	for (size_t r = 0; r < g->n_rows; r++)
		for (size_t k = 0; k < row_cells(g, r); k++) {
			size_t i = g->rows[r].cells[k];
			const db_pair *p = i < c->n_pairs ? &c->pairs[i] : NULL;
			if (!p || p->merged || p->f.rank < 0)
				continue;       /* sharded (merged) or rank-less: as built */
			size_t *slot = &at[layer_at(layers, nl, p->f.layer) * ns + gc->sid[i]];
			if (*slot == SIZE_MAX)
				*slot = n;
			v[n++] = (wcell){&g->rows[r].cells[k], DB_NO_PAIR, 0, 0};
		}
	/* the selection's rank pairs in order: cell.c's pass over every pair
	 * (phase, pass; the cells are all occurrence 0) */
	for (size_t j = 0; n && j < gc->n_all; j++) {
		size_t i = gc->all[j];
		const db_pair *q = &c->pairs[i];
		if (q->merged || q->f.rank < 0)
			continue;
		size_t l = layer_at(layers, nl, q->f.layer);
		if (l == SIZE_MAX || at[l * ns + gc->sid[i]] == SIZE_MAX)
			continue;
		grid_worst_add(&v[at[l * ns + gc->sid[i]]], c, i);
	}
	for (size_t k = 0; k < n; k++)
		settled &= grid_worst_settle(&v[k], &changed);
	free(v);
	free(layers);
	free(at);
	if (settled)
		keep_settled(gc, g);
	if (settled_out)
		*settled_out = settled;
	return changed;
}
