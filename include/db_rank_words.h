/* The rank part of a pair's name, one wording for compare's headline and
 * per-pass lines, the workbench's headline and whatever else names where a
 * pair diverges: when every rank of its cell diverges, the culprit is not
 * the one rank whose pair was picked, so the words say "every rank". */
#ifndef DB_RANK_WORDS_H
#define DB_RANK_WORDS_H
#include <stdbool.h>
#include <stddef.h>
#include "db_compare.h"

/* Every rank (slot) of pair's cell diverges, and the cell has two or more;
 * *n (may be NULL) gets the cell's number of ranks (0 for a merged or
 * rank-less pair). Reads the ranks' pairs: O(pairs). */
bool db_every_rank_diverges(const db_compare *c, size_t pair, size_t *n);

/* Into buf, returned: "every rank (of 2)" / "every slot (of 3)" when
 * db_every_rank_diverges, else db_rank_words_of's. */
const char *db_rank_words(const db_compare *c, size_t pair, char *buf, size_t len);
/* p's own rank part, into buf, returned: "rank 1", "slot 2", "(merged
 * ranks)", or "" for a pair of no rank. */
const char *db_rank_words_of(const db_pair *p, char *buf, size_t len);

#endif
