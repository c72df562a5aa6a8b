/* Batch invariance: a slot of a batch against the prompt alone. A pair
 * whose shapes differ along one dim only, one side longer there, is
 * measured on the contiguous block of the longer side that matches the
 * other side best (lowest rel_l2 over every start), when it matches at all
 * (rel_l2 < DB_SLOT_MAX_REL_L2); else the block the earliest pair of the
 * same geometry matches (src/measure/workers.c); else the pair stays a shape
 * mismatch. The dim is the profile's token_dim for the stage when it names
 * one, else the one dim that differs. --slot sets side, dim and start by
 * hand. */
#ifndef DB_SLOT_H
#define DB_SLOT_H
#include <stdio.h>
#include "db_compare.h"
#include "db_err.h"
#include "db_tensor.h"

#define DB_SLOT_MAX_REL_L2 0.5
/* db_slot.start of a pair where no block matched: it is a shape mismatch */
#define DB_SLOT_NONE (-2)

typedef struct db_slot_spec {
	int side;               /* 0 the larger side, 1 ref, 2 target */
	int dim;
	int64_t start, len;
} db_slot_spec;

/* "[SIDE:]DIM:START:LEN", SIDE ref or target. -1 with err. */
int db_slot_parse(const char *s, db_slot_spec *out, db_err *err);
/* Turn c's shape mismatches that are slots into pairs to compute (status
 * OK, numel of the shorter side); spec NULL: starts are found. */
void db_slots_assign(db_compare *c, const db_slot_spec *spec);
/* The view of big's rows start..start+len-1 along dim (no copy). */
void db_slot_view(const db_tensor *big, int dim, int64_t start, int64_t len, db_tensor *out);
/* The start of the block of big (along dim, small's length) closest to
 * small; -1 with err when none is close (err names the best). */
int64_t db_slot_find(const db_tensor *small, const db_tensor *big, int dim, db_err *err);
/* c compares the prompt run alone against it inside a batch (slots found
 * by themselves) and its first layer came out bit-identical: its pairs
 * are judged bitwise (db_pair_judged_bitwise; false until decided). */
bool db_slot_regime_holds(const db_compare *c);
/* "batch slot: target dim 0 [6:12]" into buf ("" for none); returns buf. */
char *db_slot_str(const db_pair *p, char *buf, size_t len);
/* The bytes= column of p: a batch slot matched on a window of the other
 * side's rows that holds its bits reads "⊂" ("<=" in ASCII), never "≡":
 * equal to a part is not equal (issue 37). Else db_fmt_byte_equal. */
const char *db_fmt_pair_bytes(const db_pair *p, int utf8, char *buf, size_t len);
/* For such a pair whose longer side is the reference (the target lacks
 * rows it has), "compared on a part: 10 of the ref's 12 rows along dim 0;
 * the other 2 are in no pair"; "" for any other (a target longer is a
 * batch: the hint names its slot). */
char *db_slot_part_str(const db_pair *p, char *buf, size_t len);

#endif
