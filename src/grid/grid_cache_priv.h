/* The index behind db_grid_cache.h, shared by grid_cache.c (index,
 * builds) and grid_cache_worst.c (the worst-rank pass). Not a public
 * header. */
#ifndef DB_GRID_CACHE_PRIV_H
#define DB_GRID_CACHE_PRIV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_grid_cache.h"

/* The pairs of one rank key (merged: -1, else the pair's rank) in by_rank. */
typedef struct rank_span {
	int key;
	size_t start, n;
} rank_span;

struct db_grid_cache {
	const db_compare *c;
	unsigned long gen;              /* c->pairs_gen indexed; 0 = nothing */
	char *phase, *pass;
	size_t *all, n_all;             /* selection pairs (occurrence 0), in order */
	size_t *by_rank;                /* the same by (rank key, order) */
	rank_span *spans;
	size_t n_spans;
	uint32_t *sid;                  /* by pair index (selection pairs only) */
	const char **stages;            /* by stage id, borrowed from the pairs */
	size_t n_stages;
	size_t *stage_rank;             /* by stage id: place in the column order of
	                                 * every rank (order_sel_cols); SIZE_MAX when
	                                 * no layer pair has it */
	bool *model_after;              /* by stage id */
	/* The all-ranks grid as built, and its cells once the worst-rank pass
	 * settled (final: done pairs do not change until a rescan). */
	db_grid any;
	bool have_any;
	size_t *worst_cells;            /* row by row, n_cols (model rows 1) each */
};

/* Index (phase, pass) of c's pairs as they are, unless already done. */
int grid_cache_ensure(db_grid_cache *gc, const db_compare *c, const char *phase,
                      const char *pass);

#endif
