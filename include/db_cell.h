/* The pair a heatmap cell stands for: one rule for the screen, the SVG,
 * the report and replay --tui, so the same cell never shows two numbers.
 *
 * A grid built for DB_RANK_ANY holds, per cell, the merged pair where the
 * stage is sharded, else the rank-less pair, else the lowest rank's.
 * db_grid_worst_ranks then puts the worst rank in every cell of the last
 * kind: a rank that alone goes bad shows on the first screen. Merged and
 * rank-less cells stay as built (a merged cell is the whole tensor; its
 * ranks are one click away). */
#ifndef DB_CELL_H
#define DB_CELL_H
#include <stdbool.h>
#include "db_compare.h"
#include "db_grid.h"

/* a is worse than b: a status other than ok beats any band, then the
 * band, then the lower cos (NaN lowest), then the lower rank. */
bool db_pair_worse(const db_pair *a, const db_pair *b);

/* p's metrics are final (computed, acquire). */
bool db_pair_done(const db_pair *p);

/* For a grid built with DB_RANK_ANY: every per-rank cell takes the worst
 * rank of its (layer, stage, occurrence) in the grid's phase and pass,
 * once all of those ranks are computed (until then it keeps what it has).
 * Returns true when a cell changed; *settled (may be NULL) = every such
 * cell is final. Other grids are left alone (settled). Cost: one sort of
 * the cells and one pass over the pairs. */
bool db_grid_worst_ranks(const db_compare *c, db_grid *g, bool *settled);

#endif
