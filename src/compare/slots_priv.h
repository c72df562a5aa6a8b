/* Inside compare/: what slots.c (one tree) and slots_alone.c (the prompt
 * alone against its batch) share. Not a public header. */
#ifndef DB_SLOTS_PRIV_H
#define DB_SLOTS_PRIV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db_compare.h"

bool db_slots_is_int(db_dtype d);
/* stage is the batch field (seq_lens, positions), alone or as a suffix. */
bool db_slots_named(const char *stage, const char *field);
/* The 1-D integer tensor of it into *v (malloc'd); its length, or -1. */
int64_t db_slots_load_ints(const db_index *ix, const db_item *it, int64_t **v);
/* "[12, 12, 12, 12]" (long lists cut) into buf. */
void db_slots_list_ints(char *buf, size_t cap, const int64_t *v, int64_t n);
/* The token dim of p's stage (the profile's token_dim, else 0). */
int db_slots_token_dim(const db_compare *c, const db_pair *p);
/* idx[0..n) in pass order (db_profile_pass_cmp, then index), pass(ctx, i)
 * naming index i's pass: O(n log n) (an insertion sort was quadratic on
 * 20k passes). */
void db_sort_passes(size_t *idx, size_t n, const char *(*pass)(const void *ctx, size_t i),
                    const void *ctx);

#endif
