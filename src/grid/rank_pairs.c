/* db_rank_pairs from the index of the pairs by cell (pair_index.c): the
 * headline and the rank note ask for a cell's ranks on every draw. */
#include "db_grid.h"

#include <stdlib.h>

#include "grid_priv.h"

size_t db_rank_pairs(const db_compare *c, size_t pair, size_t **out)
{
	size_t n = grid_index_pairs(GRID_IX_CELL, c, pair, out);
	size_t *v = *out;
	/* insertion by rank (few ranks), stable: pair order among equals */
	for (size_t a = 1; a < n; a++) {
		size_t i = v[a], j = a;
		while (j > 0 && c->pairs[v[j - 1]].f.rank > c->pairs[i].f.rank) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = i;
	}
	return n;
}
