/* What dequantizing did to a pair (measure/dequant.c), for tables, JSON
 * and the tensor view. */
#ifndef DB_DEQUANT_H_PUBLIC
#define DB_DEQUANT_H_PUBLIC
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "db_compare.h"

/* A side of p is dequantized (its item has a quant group). */
bool db_pair_dequantized(const db_pair *p);
/* The group of p's reference (ref true) or target side, or NULL. */
const db_qgroup *db_pair_qgroup(const db_pair *p, bool ref);
/* Computed and held to its floor: every element within rounding. */
bool db_pair_within_floor(const db_pair *p);
/* "target nvfp4 (weight_scale, weight_scale_2): within its rounding floor"
 * or "...: 2048 of 25600 elements beyond one step (worst 3.2e+07 steps)";
 * "" for a plain pair. Returns buf. */
const char *db_pair_dequant_note(const db_pair *p, char *buf, size_t len);
/* The pair's "dequant" JSON object (p must be dequantized). */
void db_pair_dequant_json(FILE *out, const db_pair *p);

#endif
