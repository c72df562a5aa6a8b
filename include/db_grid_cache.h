/* Grids of one comparison built again and again (the workbench's rank,
 * phase and pass keys) from an index of the pairs, so a rank change costs
 * that rank's pairs, not a pass over all of them (issue 12: 64 ranks,
 * ~50k pairs). The index holds one (phase, pass): its pairs by rank, a
 * stage id per pair and the column order over every rank; and the
 * all-ranks grid once built, with its worst-rank cells once settled (final
 * until the pairs change: a done pair keeps its metrics). It follows the
 * pairs by db_compare.pairs_gen (a rescan or another comparison reindexes
 * on the next call); metrics arriving change nothing it holds (the
 * worst-rank cells are kept only once final).
 *
 * Results are exactly those of db_grid_build and db_grid_worst_ranks
 * (tests/test_grid_cache.c holds them to that, rank by rank). The
 * workbench and export both build through here, so the screen and the
 * exported files come from one builder; db_grid_build is the plain
 * reference (and the workbench's fallback when no cache can be had). */
#ifndef DB_GRID_CACHE_H
#define DB_GRID_CACHE_H
#include <stdbool.h>
#include "db_grid.h"

typedef struct db_grid_cache db_grid_cache;

/* Owned by the caller; holds no pointer that outlives a call except into
 * the pairs of the comparison last used (checked by pairs_gen). */
db_grid_cache *db_grid_cache_new(void);
void db_grid_cache_free(db_grid_cache *gc);

/* db_grid_build through the index. */
int db_grid_cache_build(db_grid_cache *gc, const db_compare *c, const char *phase,
                        const char *pass, int rank, db_grid *g);
/* db_grid_worst_ranks through the index; g built from c's pairs as they
 * are (same pairs_gen). */
bool db_grid_cache_worst_ranks(db_grid_cache *gc, const db_compare *c, db_grid *g,
                               bool *settled);

#endif
