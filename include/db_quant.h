/* Quantized weights as checkpoints hold them: codes (FP8, packed FP4,
 * int8) and the companion tensors that scale them (block scales, global
 * scales, zero points), grouped by the names a profile's `quant:` rules
 * give (man 5 dumpbisect-profile). No name is known to C: the rules are in
 * the built-in profiles. Pairing (pair/companions.c) groups a weight with its
 * companions and pairs the dequantized tensor; the companions are consumed
 * and never paired themselves; measuring (measure/dequant.c) decodes the
 * codes, applies the scales and gives each element its quantization step,
 * which sets the pair's floor (rounding alone is never worse than drift). */
#ifndef DB_QUANT_H
#define DB_QUANT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_tensor.h"

/* What a weight's stored codes are. */
typedef enum db_qvalues {
	DB_QV_FP8 = 1,          /* an fp8 dtype (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) */
	DB_QV_E2M1,             /* FP4, two per byte (u8, i8 or float4_e2m1fn_x2) */
	DB_QV_INT8,             /* int8 (u8 with a zero point) */
	DB_QV_INT4              /* 4-bit integers, eight per 32-bit word (GPTQ, AWQ,
	                         * compressed-tensors pack-quantized) */
} db_qvalues;

/* How a scale's stored bytes read. */
typedef enum db_qscale_type {
	DB_QS_STORED = 0,       /* its dtype says (f32, bf16, e4m3, e8m0, ...) */
	DB_QS_E8M0,             /* u8 holding e8m0 exponents (OCP MX, aiter, gpt-oss) */
	DB_QS_E4M3              /* u8 holding e4m3fn codes */
} db_qscale_type;

/* One `quant:` rule of a profile. Strings owned by the profile. */
typedef struct db_quant_rule {
	char *name;             /* shown with the pair ("fp8-block") */
	char *of;               /* the codes' name ends so ("weight", "_blocks") */
	char *as;               /* the dequantized tensor's name suffix (default of) */
	char *scale;            /* required companion: the name with `of` -> this */
	char *scale2;           /* a second (global) factor, required when named */
	char *zero;             /* zero points: value = (code - zero) * scale */
	char **also; size_t n_also;     /* consumed when present (input_scale) */
	db_qvalues values;
	db_qscale_type scale_type;
	int block[2];           /* rows, cols of the codes one scale covers; 0 = from shapes */
	bool invert;            /* value = code / scale */
	bool high_first;        /* packed FP4: element 2k in the high nibble */
	int split;              /* > 0: the codes' last dim is that many bytes of
	                         * one row split into groups (gpt-oss [.., G, 16]):
	                         * the row is G * split * 2 values */
	/* int4 words: nibble k (bits 4k..4k+3) holds element order[k] of the
	 * eight consecutive elements along the stored dim pack_dim (0 or 1 of
	 * the last two dims); zero points stored as 32-bit words run along
	 * zero_pack_dim. transposed: the codes, scales and zero points are
	 * stored [in, out] for a logical [out, in] weight (GPTQ, AWQ). A nibble
	 * reads as its number plus offset (compressed-tensors stores q + 8:
	 * offset -8), a stored zero point plus zero_offset (GPTQ v1: +1). */
	int pack_dim, zero_pack_dim;
	uint8_t order[8];
	bool transposed;
	int offset, zero_offset;
	char *group_index;      /* optional companion: each input column's group (g_idx) */
} db_quant_rule;

/* A weight grouped with its companions (pair/companions.c). The items are
 * the index's (borrowed); the group lives as long as the pairs. */
struct db_item;
typedef struct db_qgroup {
	const db_quant_rule *rule;      /* borrowed from the profile */
	const struct db_item *codes;    /* the stored weight */
	const struct db_item *scale, *scale2, *zero;    /* NULL when absent */
	const struct db_item *gidx;     /* int4 group index (g_idx), NULL when absent */
	const struct db_item *also[4];  /* consumed activation scales (shown only) */
	int n_also;
	int ndim;                       /* logical (dequantized) shape */
	int64_t shape[DB_MAX_DIMS];
	int64_t block[DB_MAX_DIMS];     /* logical elements per scale element, per dim */
	char *err;                      /* why the group cannot be dequantized (owned) */
} db_qgroup;

/* The logical shape of codes of shape (ndim, shape) under rule r: packed
 * FP4 doubles the last dim; split joins the last two. -1 with msg when the
 * codes cannot be of that rule (dtype, too few dims). */
int db_quant_logical_shape(const db_quant_rule *r, db_dtype codes, int ndim,
                           const int64_t *shape, int *lndim, int64_t *lshape,
                           char *msg, size_t msglen);
/* The codes' dtype fits rule r's values. */
bool db_quant_codes_fit(const db_quant_rule *r, db_dtype codes);
/* Elements per scale element along each logical dim (block), from the
 * rule's block (checked) or the shapes: a scale of fewer dims is padded
 * on the right (per-channel [out] = [out, 1]). -1 with msg when the scale
 * does not tile the tensor. */
int db_quant_blocks(const db_quant_rule *r, int lndim, const int64_t *lshape,
                    int sndim, const int64_t *sshape, int64_t *block,
                    char *msg, size_t msglen);
/* db_quant_blocks for a scale (or unpacked zero points) stored in rule r's
 * orientation: transposed rules tile the stored [in, out] grid and give the
 * blocks of the logical [out, in] one; int4 scales must be per output row. */
int db_quant_scale_blocks(const db_quant_rule *r, int lndim, const int64_t *lshape,
                          int sndim, const int64_t *sshape, int64_t *block,
                          char *msg, size_t msglen);
/* The shape of zero points as one per element (int4 words unpacked along
 * zero_pack_dim); others as stored. */
void db_quant_zero_shape(const db_quant_rule *r, db_dtype zdt, int ndim, const int64_t *shape,
                         int64_t *out);
/* int4: the codes are 32-bit words. */
bool db_quant_words(db_dtype dt);
/* The value of a code: fp8 from its byte, e2m1 from a nibble, int8, int4
 * (the nibble's number; the rule's offset is the caller's). */
double db_quant_code_value(db_dtype dt, db_qvalues v, unsigned code);
/* The distance from a code's value to the next one away from zero (the
 * format's step at that value, before scaling): what rounding can cost. */
double db_quant_code_step(db_dtype dt, db_qvalues v, double value);
/* A scale element's value read as rule r says. */
double db_quant_scale_value(const db_quant_rule *r, db_dtype dt, const uint8_t *p, bool swap);
const char *db_qvalues_name(db_qvalues v);  /* "fp8", "e2m1", "int8", "int4" */
/* The fp8 code of dtype dt nearest to v (clamped to the largest finite;
 * ties to the even code). */
uint8_t db_quant_nearest_fp8(db_dtype dt, double v);

/* A layout transform of stored elements (measure/xform.c finds them in
 * the data). TILE: the last two dims [N, K] stored as [N/a][K/b][b/d][a][d]
 * (aiter: view(-1, N/a, a, K/b, b/d, d).permute(0, 1, 3, 4, 2, 5)).
 * GATE_UP: rows [gate; up] stored interleaved g0, u0, g1, u1, ...
 * TRANSPOSE: the last two dims stored swapped ([in, out] for [out, in]).
 * E8M0: a weight's e8m0 scales [M, N] (M % 32, N % 8 zero) stored as
 * aiter's e8m0_shuffle leaves them: view(M/32, 2, 16, N/8, 2, 4).permute(
 * 0, 3, 5, 2, 4, 1); it acts on the scales, not the codes. */
typedef enum db_xf_kind {
	DB_XF_NONE = 0, DB_XF_TILE, DB_XF_GATE_UP, DB_XF_TRANSPOSE, DB_XF_E8M0
} db_xf_kind;
typedef struct db_xform {
	db_xf_kind kind;
	int a, b, d;
	const char *name;       /* "aiter shuffle_weight (16, 16)" */
} db_xform;
/* The stored flat index of logical flat index i of a tensor whose stored
 * shape is (nd, shape); db_xform_fits says whether x fits that shape. */
int64_t db_xform_index(const db_xform *x, int nd, const int64_t *shape, int64_t i);
bool db_xform_fits(const db_xform *x, int nd, const int64_t *shape);

#endif
