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
/* The group whose scale grid p's blocks follow (the target's, else the
 * reference's; merged: the first shard's), or NULL. */
const db_qgroup *db_pair_qgrid(const db_pair *p);
/* Block i of that grid as coordinates (nd of them); false without a grid. */
bool db_pair_qblock_coords(const db_pair *p, int64_t i, int *nd, int64_t *coord);
/* Computed and held to its floor: every element within rounding. */
bool db_pair_within_floor(const db_pair *p);
/* "target nvfp4 (weight_scale, weight_scale_2): within its rounding floor"
 * or "...: 2048 of 25600 elements beyond one step (worst 3.2e+07 steps)";
 * "" for a plain pair. Returns buf. */
const char *db_pair_dequant_note(const db_pair *p, char *buf, size_t len);
/* The pair's "dequant" JSON object (p must be dequantized). */
void db_pair_dequant_json(FILE *out, const db_pair *p);

/* Layout transforms found by the data (measure/xform.c), decided once per
 * set of pairs over every weight (reads a sample of each on the first
 * call). The name of the transform p's target is read through ("aiter
 * shuffle_weight (16, 16)"), or NULL. */
const char *db_pair_xform_name(const db_compare *c, const db_pair *p);
/* p's target is read through the dump's transform but matched the
 * reference only as stored: this weight was not transformed. */
bool db_pair_not_transformed(const db_compare *c, const db_pair *p);
/* "target pre-transformed: aiter shuffle_weight (16, 16) (15 of 16 weights
 * match only so); ..." or "" when none was found. Returns buf. */
const char *db_compare_xform_note(const db_compare *c, char *buf, size_t len);

/* What the tensor view shows of a dequantized (or transformed) pair, all
 * over the dequantized values (measure/qreport.c): each side's statistics,
 * the largest |diff|, the error per row (dim 0), each scale block's slope
 * of target on reference, and the companions that were consumed. */
#define DB_QREPORT_TOP 10
typedef struct db_qreport {
	db_stats sx, sy;
	int ntop;
	int64_t top_idx[DB_QREPORT_TOP];
	double top_abs[DB_QREPORT_TOP], top_x[DB_QREPORT_TOP], top_y[DB_QREPORT_TOP];
	double *rows;                   /* per-row rel_l2; n_rows of them (owned) */
	int64_t n_rows;
	int block_nd;                   /* the scale grid (0: none) */
	int64_t nblk[DB_MAX_DIMS];
	size_t n_blocks, n_off;
	double *slope;                  /* per block (owned); NaN for an empty one */
	int64_t worst;                  /* the block off the most, -1 none */
	double neighbours;              /* the median slope of the blocks */
	char companions[8][160];        /* "target scale weight_scale_inv float32 [2, 2]" */
	int n_companions;
} db_qreport;
/* Fills r (two reads of the pair); -1 with err. */
int db_pair_qreport(db_compare *c, const db_pair *p, db_qreport *r, db_err *err);
void db_qreport_free(db_qreport *r);
/* "block (1, 0) is 3.2e+07x its neighbours: scale inverted?" ("" when no
 * block is off). Returns buf. */
const char *db_qreport_block_note(const db_compare *c, const db_pair *p, const db_qreport *r,
                                  bool ascii, char *buf, size_t len);

#endif
