/* Layout transforms found by the data (xform.c): a target whose weights
 * equal the reference once un-shuffled (aiter's shuffle_weight and its NK
 * variant, a gate/up interleave) is compared un-shuffled, every weight
 * alike; the ones that only match without it were not transformed.
 * Private to measure/ (the notes are in db_dequant.h). */
#ifndef DB_XFORM_H
#define DB_XFORM_H
#include <stdbool.h>
#include <stdint.h>

#include "db_quant.h"
#include "pair/compare_priv.h"

/* The transform p's target is read through, decided once per set of pairs
 * over every weight (reads a sample of each; w may be NULL). NULL: none. */
const db_xform *db_pair_xform(const db_compare *c, const db_pair *p, db_wctx *w);
/* The transform is read on p's reference side (the reference was
 * pre-shuffled), not its target's. */
bool db_pair_xform_on_ref(const db_compare *c, const db_pair *p);
/* Frees the decision (db_compare_free). */
void db_xform_drop(db_compare *c);

#endif
