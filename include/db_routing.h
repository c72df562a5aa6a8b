/* Router outputs (issue 17): the expert ids each token chose, compared
 * exactly. cos between two id tensors says nothing (ids 3 and 4 are not
 * "close"); what a user asks is how many tokens went to other experts. */
#ifndef DB_ROUTING_H
#define DB_ROUTING_H
#include <stdint.h>
#include "db_compare.h"

typedef struct db_routing {
	int64_t tokens;         /* rows: every dim but the last */
	int64_t rerouted;       /* rows whose set of ids differs */
	int k;                  /* ids per token (the last dim) */
} db_routing;

/* For a pair whose stage the profile lists in routing_ids, with both sides
 * present, integer-typed and of one shape (ndim >= 1): count the tokens
 * whose set of expert ids differs (the order inside a row is the top-k
 * order, which ties may swap, so it is ignored). Reads both tensors (they
 * are small). 1 = computed, 0 = not a routing pair, -1 = error (err). */
int db_routing_compare(const db_compare *c, const db_pair *p, db_routing *out,
                       db_err *err);

/* "3 of 12 tokens chose other experts" for a routing pair db_routing_compare
 * computes, else "" (not one, or an error): into buf, returned. The words
 * compare's table and the workbench print beside the band. */
const char *db_routing_words(const db_compare *c, const db_pair *p, char *buf, size_t len);

/* The band of a measured pair: db_band_for, except that routing ids are
 * ok when every token kept its experts and bug when any went elsewhere. */
db_band db_pair_band(const db_compare *c, const db_pair *p);

#endif
