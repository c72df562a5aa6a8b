/* Column order of the grid: a topological merge of each layer's stage
 * order (grid_order_cols, see grid_priv.h). */
#include "grid_priv.h"

#include <stdint.h>
#include <stdlib.h>

/* Tie order among columns free to go next: first seq when the trees record
 * their execution order (stage_order only breaks ties), else the profile's
 * stage_order (their seq follows it anyway) then first seq. */
static bool col_before(const colrec *a, const colrec *b, bool records)
{
	if (!records && a->pos != b->pos)
		return a->pos < b->pos;
	if (a->first_seq != b->first_seq)
		return a->first_seq < b->first_seq;
	return a->pos < b->pos;
}

typedef struct col_edge { size_t from, to; } col_edge;

static int cmp_edge(const void *va, const void *vb)
{
	const col_edge *a = va, *b = vb;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return (a->to > b->to) - (a->to < b->to);
}

/* Min-heap of column indices under col_before. */
typedef struct col_heap {
	size_t *v, n;
	const colrec *cols;
	bool records;
} col_heap;

static bool heap_lt(const col_heap *h, size_t i, size_t j)
{
	return col_before(&h->cols[h->v[i]], &h->cols[h->v[j]], h->records);
}

static void heap_swap(col_heap *h, size_t i, size_t j)
{
	size_t t = h->v[i];
	h->v[i] = h->v[j];
	h->v[j] = t;
}

static void heap_push(col_heap *h, size_t col)
{
	size_t i = h->n++;
	h->v[i] = col;
	while (i && heap_lt(h, i, (i - 1) / 2)) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static size_t heap_pop(col_heap *h)
{
	size_t top = h->v[0];
	h->v[0] = h->v[--h->n];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && heap_lt(h, l, m))
			m = l;
		if (r < h->n && heap_lt(h, r, m))
			m = r;
		if (m == i)
			break;
		heap_swap(h, i, m);
		i = m;
	}
	return top;
}

static int cmp_lcol(const void *va, const void *vb)
{
	const lcol *a = va, *b = vb;
	if (a->layer != b->layer)
		return a->layer < b->layer ? -1 : 1;
	return (a->at > b->at) - (a->at < b->at);
}

/* See grid_priv.h. */
int grid_order_cols(const colrec *cols, size_t ncols, lcol *lc, size_t nlc,
                    bool records, size_t *rank)
{
	col_edge *e = malloc((nlc + 1) * sizeof *e);
	size_t *seen = malloc((ncols + 1) * sizeof *seen);      /* layer run */
	size_t *indeg = calloc(ncols + 1, sizeof *indeg);
	size_t *start = calloc(ncols + 2, sizeof *start);       /* edges by from */
	bool *done = calloc(ncols + 1, sizeof *done);
	col_heap h = {malloc((ncols + 1) * sizeof *h.v), 0, cols, records};
	int rc = e && seen && indeg && start && done && h.v ? 0 : -1;
	if (rc == 0) {
		qsort(lc, nlc, sizeof *lc, cmp_lcol);
		for (size_t j = 0; j < ncols; j++)
			seen[j] = SIZE_MAX;
		size_t ne = 0, prev = SIZE_MAX, run = 0;
		for (size_t k = 0; k < nlc; k++) {
			size_t col = lc[k].col;
			if (k && lc[k].layer != lc[k - 1].layer) {
				run++;
				prev = SIZE_MAX;
			}
			if (seen[col] == run)
				continue;       /* a node counts where it first appears */
			seen[col] = run;
			if (prev != SIZE_MAX)
				e[ne++] = (col_edge){prev, col};
			prev = col;
		}
		qsort(e, ne, sizeof *e, cmp_edge);
		for (size_t k = 0; k < ne; k++) {
			start[e[k].from + 1]++;
			indeg[e[k].to]++;
		}
		for (size_t j = 0; j < ncols; j++)
			start[j + 1] += start[j];
		for (size_t j = 0; j < ncols; j++)
			if (!indeg[j])
				heap_push(&h, j);
		for (size_t n = 0; n < ncols; n++) {
			size_t col = SIZE_MAX;
			if (h.n)
				col = heap_pop(&h);
			else    /* a cycle */
				for (size_t j = 0; j < ncols; j++)
					if (!done[j] && (col == SIZE_MAX || cols[j].first_seq < cols[col].first_seq))
						col = j;
			done[col] = true;
			rank[col] = n;
			for (size_t k = start[col]; k < start[col + 1]; k++) {
				size_t to = e[k].to;
				if (indeg[to] && !--indeg[to] && !done[to])
					heap_push(&h, to);
			}
		}
	}
	free(e);
	free(seen);
	free(indeg);
	free(start);
	free(done);
	free(h.v);
	return rc;
}
