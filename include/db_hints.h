/* Root-cause hints (issue 13 part 4): a diverging pair gets at most one
 * hint from a fixed catalog, naming the shape of the bug its numbers show.
 * Most are read off the pair's metrics (no tensor read); the ones that need
 * values (rows, shifts, permutations, rank sums) read both tensors when
 * each has at most DB_HINT_MAX_NUMEL elements — a cheap second pass.
 *
 * The catalog, checked in this order (the first that holds wins):
 *   inputs_differ  token ids differ (band DB_BAND_INPUTS, or an input-ids
 *                  stage of another shape); {differ: ids that differ}
 *   nan_origin     the first pair in execution order whose target has
 *                  NaN/Inf where the reference has not (later pairs only
 *                  inherit it); {nan, inf: target counts}
 *   zeros          the target is all zeros, the reference is not
 *   partial_sum    per-rank targets sum to the reference (a missing
 *                  all-reduce); {ranks}
 *   sign_flip      target ≈ −ref
 *   scale          target ≈ k·ref, |k − 1| > 2 %; {factor: k = Σxy/Σxx}
 *   transposed     the values match under a permutation of the dims
 *                  (target = ref.permute(perm)); {perm}
 *   shift          rows along dim 0 are off by N: target[i] ≈ ref[i − by]
 *                  over the rows both have; {dim: 0, by}
 *   rows_permuted  the same rows along dim 0 in another order; {dim: 0,
 *                  moved: rows not in place}
 *   not_transformed  the dump's weights are read through a layout transform
 *                  found in the data (aiter shuffle_weight, ...), and this
 *                  one matches the reference only as stored; {transform}
 *   scale_inverted a scale block (or the whole tensor) is its scale squared
 *                  times the reference: 1/s stored for s; {block}
 *   nibbles_swapped packed FP4 read with the other nibble first matches
 *   to_not_view    the codes are the reference's codes converted numerically
 *                  (.to(float8) where .view(float8) was meant)
 *   scale_block    blocks whose scale is off otherwise; {block, blocks_off}
 *   pack_order     int4 words read with another nibble order match (AWQ's
 *                  0 2 4 6 1 3 5 7 against sequential); {order}
 *   zero_off_by_one int4 zero points one off (GPTQ v1's +1 missing or
 *                  applied twice); {by: the zero offset that matches}
 *                  (these seven: measure/quant_hints.c, for dequantized pairs,
 *                  which get no other hint: their stored codes are no values)
 *   batch_slot     the pair is measured on a block of the longer side
 *                  (db_slot.h): {side, dim, start, len, given}; given to
 *                  such a pair whether it diverges or not, so the JSON
 *                  says how it was measured (inputs_differ wins)
 * "≈" is within 1 % (relative L2 per row, or overall), looser than bf16
 * rounding (0.4 %) and far tighter than any of these bugs, so drift gets
 * no hint. No rule names a model's modules. */
#ifndef DB_HINTS_H
#define DB_HINTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "db_compare.h"

#define DB_HINT_MAX_NUMEL (4 * 1024 * 1024)

/* A pair paired as a replica across layouts (db_pair.replica) that
 * diverges, where the side with the ranks sums, rank by rank, to the other
 * side's tensor: the stage is a per-rank partial sum there (a row-parallel
 * output before its all-reduce), so one rank alone is not comparable. Sets
 * status NOT_COMPARABLE with the reason; call before publishing the pair
 * (state DONE). Reads the tensors (each <= DB_HINT_MAX_NUMEL); reads only
 * pairing-time fields of the other pairs, so workers may call it at once. */
void db_replica_settle(const db_compare *c, db_pair *p);

typedef enum db_hint_kind {
	DB_HINT_NONE = 0,
	DB_HINT_INPUTS_DIFFER, DB_HINT_NAN_ORIGIN, DB_HINT_ZEROS, DB_HINT_PARTIAL_SUM,
	DB_HINT_SIGN_FLIP, DB_HINT_SCALE, DB_HINT_TRANSPOSED, DB_HINT_SHIFT,
	DB_HINT_ROWS_PERMUTED, DB_HINT_BATCH_SLOT,
	/* dequantized or transformed weights (measure/quant_hints.c) */
	DB_HINT_NOT_TRANSFORMED, DB_HINT_SCALE_INVERTED, DB_HINT_NIBBLES_SWAPPED,
	DB_HINT_TO_NOT_VIEW, DB_HINT_SCALE_BLOCK, DB_HINT_PACK_ORDER, DB_HINT_ZERO_OFF_BY_ONE
} db_hint_kind;

typedef struct db_hint {
	db_hint_kind kind;
	double factor;          /* scale */
	int64_t by;             /* shift; zero_off_by_one: what the zero points miss */
	int64_t moved;          /* rows_permuted */
	int64_t differ;         /* inputs_differ; -1 unknown (another shape) */
	uint64_t nan, inf;      /* nan_origin */
	int ranks;              /* partial_sum */
	int ndim;               /* transposed: perm[0..ndim); pack_order: the order (8) */
	int perm[DB_MAX_DIMS];
	int slot_side, slot_dim;        /* batch_slot: 1 ref, 2 target */
	int64_t slot_start, slot_len;   /* start -1: not found yet */
	bool slot_given;
	bool slot_tokens;       /* batch_slot from --align tokens: the stepping side's
	                           pass is these rows of the whole pass */
	const char *transform;  /* not_transformed: the dump's transform */
	int block_nd;           /* scale_inverted, scale_block: the worst block */
	int64_t block[DB_MAX_DIMS];
	uint64_t blocks_off;
} db_hint;

/* "scale", "sign_flip", ...; "none" for DB_HINT_NONE. */
const char *db_hint_kind_name(db_hint_kind k);

/* The hint of pair p of c (computed pairs only; a pair not computed, not
 * diverging or matching no entry gets DB_HINT_NONE). Reads tensors as said
 * above; a read error is no hint, never an error. */
void db_pair_hint(const db_compare *c, const db_pair *p, db_hint *out);

/* Finds, in as many threads as c's workers, the value hints of every cell across ranks
 * with a diverging pair, for a writer about to ask every pair's hint
 * (compare's table, JSON and CSV): the answers are kept with the cells, so
 * its asks are lookups. Changes no answer; c's pairs must all be computed
 * (else the cells are left to be asked one by one). */
void db_hints_warm(const db_compare *c);

/* {"kind": "scale", "factor": 2} or null (no newline). */
void db_hint_json(FILE *out, const db_hint *h);
/* One line for people: "scale: target ≈ 2.0000 × ref" ("" for none);
 * ascii true uses "x" and "~". Returns buf. */
char *db_hint_text(const db_hint *h, bool ascii, char *buf, size_t len);

#endif
