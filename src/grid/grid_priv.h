/* Internals the grid builders share: grid.c (db_grid_build, from scratch:
 * the reference the tests hold the cache to), grid_cache.c (indexed by
 * rank, for the workbench) and grid_order.c (column order). Not a public
 * header. */
#ifndef DB_GRID_PRIV_H
#define DB_GRID_PRIV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_grid.h"

struct db_strmap;

typedef struct colrec {
	char *name;
	int pos;                /* stage_order position; INT_MAX none */
	int64_t first_seq;
} colrec;

/* One layer pair of the selection: its layer, position in execution
 * order, column. */
typedef struct lcol {
	int layer;
	size_t at, col;
} lcol;

/* Execution order of stages (or columns) merged over layers that differ
 * (hybrid models: attention kinds, dense and MoE mlps), where the first seq
 * alone would put a late layer's own stages after an early layer's last
 * ones: inside each layer a node goes before the next node to appear;
 * Kahn's sort of those edges, ties by col_before, a cycle (layers that
 * disagree) broken at its waiting node of lowest first seq. lc (sorted
 * here) maps layer pairs to nodes; rank[node] is its place in the order. */
int grid_order_cols(const colrec *cols, size_t ncols, lcol *lc, size_t nlc,
                    bool records, size_t *rank);

/* DB_RANK_ANY's preference: merged first, then rank-less, then the lowest
 * rank (lower is better). */
int grid_rank_prio(const db_pair *p);
/* Should cand replace cur in a cell of column col? */
bool grid_cell_better(const db_pair *cur, const db_pair *cand, const char *col);
/* Append a row (label copied) with every cell DB_NO_PAIR but cells[0] =
 * first_cell; -1 when out of memory or past cap_rows. */
int grid_add_row(db_grid *g, size_t cap_rows, int layer, const char *label,
                 size_t first_cell);
/* The top-level stage of stage among the known stages (buf or stage). */
const char *grid_parent_of(const db_compare *c, const char *stage, const char **known,
                           size_t n_known, char *buf, size_t len);
/* g emptied and named: phase (NULL: the first), pass (NULL: the default
 * pass of phase; both resolved in place) and rank. False on OOM. */
bool grid_begin(const db_compare *c, const char **phase, const char **pass, int rank,
                db_grid *g);
/* Model-level pair i of c into its row: rows maps the labels of the rows
 * added so far on this side (before or after the layers) to their index; a
 * new row (grid_add_row), or the row's cell when i's rank is preferred.
 * A map, not a search of the rows: 80k rows without a layer were 10.9 s
 * (issue 37). */
int grid_model_row(db_grid *g, size_t cap_rows, struct db_strmap *rows, const db_compare *c,
                   size_t i);
/* The row of g's layer rows holding layer (which must be there). */
size_t grid_layer_row(const db_grid *g, int layer);

/* The worst rank of one per-rank cell, tallied over the cell's pairs
 * (cell.c's db_grid_worst_ranks and the cache's pass share it). */
typedef struct grid_worst {
	size_t *cell;           /* the grid's cell it will set */
	size_t worst, n, n_done;        /* worst pair so far; pairs seen, done */
} grid_worst;
/* Count pair i of c in w. */
void grid_worst_add(grid_worst *w, const db_compare *c, size_t i);
/* Once every pair of w is computed: its cell becomes the worst one
 * (*changed set when it moved); false while some are not. */
bool grid_worst_settle(const grid_worst *w, bool *changed);

/* The pairs of pair's place (phase, pass, layer, occurrence), in pair
 * order, into *out (malloc'd, the caller's; NULL and 0 on OOM or a pair out
 * of range), from an index built once per pairs generation (pair_index.c). */
size_t grid_place_pairs(const db_compare *c, size_t pair, size_t **out);

/* The trees record their execution order (see db_index.records_order). */
bool grid_records_order(const db_compare *c);
int grid_cmp_int(const void *a, const void *b);

#endif
