/* The layer × stage view of a comparison, shared by the heatmap, the bisect
 * and the exports: rows = model-level stages before the layers, the layers,
 * model-level stages after; columns = top-level stages in execution order. */
#ifndef DB_GRID_H
#define DB_GRID_H
#include <stddef.h>
#include "db_compare.h"

#define DB_NO_PAIR ((size_t)-1)
/* rank for db_grid_build: each cell shows the merged pair when there is
 * one, else the rank-less pair, else the lowest rank's. */
#define DB_RANK_ANY (-2)

typedef struct db_grid_row {
	int layer;              /* -1 for a model-level row */
	char *label;            /* "L12" or the model-level stage name */
	size_t *cells;          /* n_cols pair indices or DB_NO_PAIR; model rows use cells[0] */
} db_grid_row;

typedef struct db_grid {
	char *phase, *pass;     /* the selection it was built for */
	int rank;               /* -1 merged/rank-less, DB_RANK_ANY, else one rank */
	char **cols;            /* top-level stage names, in execution order merged
	                         * over the layers (grid.c, order_sel_cols) */
	size_t n_cols;
	db_grid_row *rows;
	size_t n_rows;
	size_t first_layer_row; /* rows before it are model-level "before" rows */
	size_t n_layer_rows;
} db_grid;

/* phase/pass NULL = the first phase / the profile's pass selection. */
int db_grid_build(const db_compare *c, const char *phase, const char *pass,
                  int rank, db_grid *g);
void db_grid_free(db_grid *g);

/* Passes present for a phase (NULL/"" = any), sorted; caller frees each
 * string and the array. And the one the profile selects (borrowed, valid
 * until db_compare_rescan/free; "all" selects the first). */
size_t db_passes(const db_compare *c, const char *phase, char ***out);
const char *db_default_pass(const db_compare *c, const char *phase);
/* The pairs of pass (NULL: every pair) in pair order, into *out (malloc'd,
 * the caller's); the count, SIZE_MAX with *out NULL when out of memory.
 * O(its pairs) from an index built once per pairs generation. */
size_t db_pass_pairs(const db_compare *c, const char *pass, size_t **out);
/* Ranks present (sorted); -1 not included. Caller frees *out. */
size_t db_ranks(const db_compare *c, int **out);

/* Sub-stages of a cell's pair (same phase/pass/rank/layer) in execution
 * order, ending with the top-level stage itself. Across layouts (one side
 * whole, the other sharded) a rank's cell also holds the merged sub-stages
 * it has no pair of, and a merged pair's cell the lowest rank's stages
 * that have no merged pair. Caller frees *out. */
size_t db_substages(const db_compare *c, size_t pair, size_t **out);
/* Per-rank pairs of the same cell (for a merged pair or any rank), by
 * rank. Caller frees *out. */
size_t db_rank_pairs(const db_compare *c, size_t pair, size_t **out);
/* Pair of stage at layer in the grid's selection, or DB_NO_PAIR. */
size_t db_grid_find(const db_compare *c, const db_grid *g, int layer,
                    const char *stage);

#endif
