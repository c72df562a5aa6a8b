/* Private to the metrics/stats code: walk a strided view in C order and
 * decode blocks of it into doubles. */
#ifndef DB_METRICS_GATHER_H
#define DB_METRICS_GATHER_H
#include <stdbool.h>
#include <stdint.h>
#include "db_tensor.h"

typedef struct db_walker {
	const db_tensor *t;
	int64_t size;                   /* bytes per element */
	int64_t coord[DB_MAX_DIMS];
	int64_t off;                    /* byte offset of the current element */
} db_walker;

/* Position w on flat element i of t (t must outlive w). */
void db_walker_seek(db_walker *w, const db_tensor *t, int64_t i);
/* Advance k elements along the last dimension (k must stay within it, or
 * reach its end), carrying into the outer dimensions. Needs ndim >= 1.
 * Going past the last element only grows coord[0]. */
void db_walker_advance(db_walker *w, int64_t k);
/* Decode nel elements from flat index e into dst (nel * components
 * doubles). contig: t is C-contiguous and w is unused; else w must sit on
 * element e and is advanced past the block. */
void db_gather(const db_tensor *t, bool contig, db_walker *w, int64_t e,
               int64_t nel, double *dst);

#endif
