/* The root-cause hints that read tensor values (db_hints.h's catalog):
 * partial_sum's sums over a cell's ranks, transposed, shift and
 * rows_permuted (measure/hint_values.c). Private to measure/. */
#ifndef DB_HINT_VALUES_H
#define DB_HINT_VALUES_H
#include <stdbool.h>
#include <stdint.h>

#include "db_hints.h"

/* "≈": relative L2 within this (bf16 rounding is ~0.4 % per element). */
#define DB_HINT_CLOSE 0.01

/* An item's values as doubles (malloc'd, *n of them), or NULL: missing,
 * unreadable, over DB_HINT_MAX_NUMEL, or not a plain real dtype. */
double *db_hint_load(const db_index *ix, const db_item *it, int64_t *n);
/* ‖a − b‖ ≤ DB_HINT_CLOSE · max(‖a‖, ‖b‖) over n values (both zero: close). */
bool db_hint_close(const double *a, const double *b, int64_t n);

/* The partial-sum answer for p (a ranked, unmerged pair with a reference):
 * the number of ranks whose targets sum to p's reference, 0 none; -1 when
 * the cell's memo cannot serve (not every rank computed yet, no cell): the
 * caller asks the ranks itself. The first ask of a cell sums its targets
 * once and answers (and finds the value hints of) each of its diverging
 * ranks, so a cell costs two reads a rank, not one a rank per rank. */
int db_hint_psum(const db_compare *c, const db_pair *p);

/* The value hints, transposed, shift or rows_permuted, of p into h (left
 * alone when none holds): from the cell's memo when its sweep found it,
 * else from reading both tensors. */
void db_hint_from_values(const db_compare *c, const db_pair *p, db_hint *h);

#endif
