/* db_rank_pairs from the index of the pairs by place (pair_index.c): the
 * headline and the rank note ask for a cell's ranks on every draw. */
#include "db_grid.h"

#include <stdlib.h>
#include <string.h>

#include "grid_priv.h"

size_t db_rank_pairs(const db_compare *c, size_t pair, size_t **out)
{
	size_t m = grid_place_pairs(c, pair, out);
	size_t *v = *out, n = 0;
	if (!v)
		return 0;
	const char *stage = c->pairs[pair].f.stage;
	for (size_t a = 0; a < m; a++) {
		const db_pair *q = &c->pairs[v[a]];
		if (q->merged || q->f.rank < 0 || (q->f.stage != stage && strcmp(q->f.stage, stage)))
			continue;
		/* insertion by rank (few ranks), stable: pair order among equals */
		size_t i = v[a], j = n++;
		while (j > 0 && c->pairs[v[j - 1]].f.rank > q->f.rank) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = i;
	}
	return n;
}
