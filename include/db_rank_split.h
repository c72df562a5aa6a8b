/* Ranks across layouts: a merged pair whose one side is whole (TP 1) and
 * whose other side is in shards concatenated along a dim (TP 2) is judged
 * rank by rank, each shard against its slice of the whole, so a bisect
 * can name the bad ranks instead of "not separable". Partial sums, fused
 * parts and two sharded sides stay not separable, with why. */
#ifndef DB_RANK_SPLIT_H
#define DB_RANK_SPLIT_H
#include <stddef.h>
#include "db_compare.h"
#include "db_err.h"

typedef struct db_rank_part {
	int rank;               /* the shard's rank */
	int64_t lo, len;        /* its slice of the whole along the dim */
	db_metrics m;
	db_band band;
} db_rank_part;

/* Parts of merged pair p in rank order into *out (malloc'd; caller frees)
 * and their count; 0 with why (and *out NULL) when the ranks cannot be
 * separated; -1 with err when a tensor cannot be read. */
long db_pair_rank_split(db_compare *c, const db_pair *p, db_rank_part **out,
                        char *why, size_t whylen, db_err *err);

#endif
