/* Comparison metrics, accumulated in float64 straight from the stored bytes
 * (streaming: memory does not grow with tensor size). x = reference,
 * y = target. Definitions (documented in man/dumpbisect.1):
 *   cos      = Σxy / (‖x‖‖y‖)
 *   rel      = max|y−x| / max(max|x|, 1e-12)      (ATOM's cos_max "rel")
 *   rel_l2   = ‖y−x‖ / ‖x‖
 *   rel_diff = 1 − 2Σxy / Σ(x²+y²)                (SGLang / DeepGEMM)
 *   max_abs, mean_abs of |y−x|, argmax = flat index of the max
 * Elements where either side is NaN/Inf are left out of the sums and
 * counted; a position that is non-finite on one side only (or a different
 * non-finite value) counts in nonfinite_mismatch and makes the pair "bug".
 *
 * Any two comparable dtypes may be compared (both cast to float64); complex
 * tensors compare their interleaved (re, im) components, so n = 2*numel.
 * Edge cases:
 *   - n == 0 (empty tensors, or every position non-finite on both sides):
 *     cos = 1, rel = rel_l2 = rel_diff = max_abs = mean_abs = 0,
 *     argmax = -1; the band is ok unless nonfinite_mismatch > 0.
 *   - both norms zero (identical zeros): cos = 1, rel_l2 = rel_diff = 0.
 *   - one norm zero: cos = NaN (band bug); rel_l2 = inf when ‖x‖ = 0 and
 *     y ≠ 0, 1 when ‖y‖ = 0; rel_diff = 1; rel = max|y| / 1e-12 when x ≡ 0.
 *   - cos is clamped to [−1, 1] against rounding.
 *   - rel_diff is evaluated as Σ(y−x)² / Σ(x²+y²) (algebraically the same,
 *     no cancellation when x ≈ y).
 *   - argmax: the first index holding the maximum; non-finite positions
 *     never count as the maximum.
 *   - byte_equal: fraction of elements (not components) whose stored bytes
 *     are equal (byte order normalised); 1 when empty; NaN when dtypes differ.
 *   - NaN/Inf counts are per component. */
#ifndef DB_METRICS_H
#define DB_METRICS_H
#include <stdint.h>
#include "db_err.h"
#include "db_tensor.h"

typedef struct db_metrics {
	uint64_t n;                     /* real components compared */
	double cos, rel, rel_l2, rel_diff, max_abs, mean_abs;
	int64_t argmax;                 /* flat element index; -1 when n == 0 */
	double byte_equal;              /* fraction of bytewise-equal elements; NaN when dtypes differ */
	uint64_t nan_ref, nan_tgt, inf_ref, inf_tgt, nonfinite_mismatch;
	/* Dequantized pairs (db_quant.h): elements held to their quantization
	 * step (the floor rounding sets), those beyond it, the worst
	 * |y−x| / step and its flat index. q_n 0: a plain pair. */
	uint64_t q_n, q_beyond;
	double q_worst;
	int64_t q_worst_at;
	/* Per scale block (measure/qblocks.c): blocks, those whose slope
	 * Σxy/Σxx leaves 1 by more than rounding explains (a wrong scale that
	 * stays within one step per element), the worst one and its slope. */
	uint64_t q_blocks, q_blocks_off;
	int64_t q_block_at;
	double q_block_slope;
	/* Statistics only (a side holds no tensor, as msprobe's statistics
	 * and md5 tasks): measured on Max, Min, Mean and Norm alone. st_rel:
	 * |ΔMax| and |ΔMin| over the reference's max|x|, |ΔMean| over its RMS
	 * (Norm/√n), |ΔNorm| over its Norm; NaN where a side lacks it. rel is
	 * their max; cos, rel_l2, rel_diff, max_abs, mean_abs are NaN (not
	 * known). md5_eq: 1 both CRC-32s equal, 0 they differ, -1 not dumped. */
	bool stats_only;
	double st_rel[4];               /* max, min, mean, norm */
	signed char md5_eq;
	/* diff_downcast (SGLang's name): where the two sides hold float dtypes
	 * of different precision (float32 vs bfloat16, float64 vs float32, ...;
	 * not float16 vs bfloat16, which neither holds), the same metrics after
	 * both are rounded to the narrower one, dc_dtype (nearest even, as
	 * torch's .to()); byte_equal there counts equal values. dc_dtype
	 * DB_DT_UNKNOWN: no downcast (one dtype, or no order). */
	db_dtype dc_dtype;
	struct {
		double cos, rel, rel_l2, rel_diff, max_abs, mean_abs, byte_equal;
	} dc;
} db_metrics;

/* Partial sums over a range of elements, mergeable across threads. */
typedef struct db_accum {
	/* n: components summed; n_elems: elements visited; byte_eq: elements
	 * whose bytes are equal. Fields are private to metrics.c: use the
	 * functions below. */
	uint64_t n, n_elems, byte_eq;
	double sxy, sxx, syy, sdd, sabs, max_abs, max_absx;
	int64_t argmax;
	uint64_t nan_ref, nan_tgt, inf_ref, inf_tgt, nonfinite_mismatch;
	int same_dtype;
	uint64_t q_n, q_beyond;
	double q_worst;
	int64_t q_worst_at;
	/* statistics only: set by db_accum_stats, carried by merge */
	bool stats_only;
	double st_rel[4];
	signed char md5_eq;
	/* downcast sums (db_metrics.dc): dc_dtype set by the first range whose
	 * dtypes differ in precision */
	int dc_dtype;
	uint64_t dc_n, dc_elems, dc_eq;
	double dc_sxy, dc_sxx, dc_syy, dc_sdd, dc_sabs, dc_max_abs, dc_max_absx;
} db_accum;

void db_accum_init(db_accum *a);
/* Accumulate elements [begin, end) (flat C-order indices) of x and y, which
 * must pass db_metrics_check. Thread-safe for distinct accumulators.
 * Chunks cut at multiples of 1024 elements and merged in order give the
 * whole-range result up to rounding of the merge (well within 1e-12). */
void db_accum_range(db_accum *a, const db_tensor *x, const db_tensor *y,
                    int64_t begin, int64_t end);
void db_accum_merge(db_accum *into, const db_accum *from);
/* Hold n decoded elements from flat index first to their quantization
 * floor: |y−x| > tol counts as beyond (non-finite ones are left out). */
void db_accum_floor(db_accum *a, int64_t first, const double *x, const double *y,
                    const double *tol, int64_t n);
void db_accum_finish(const db_accum *a, db_metrics *m);
/* Statistics-only comparison (measure/stats_only.c): each side's db_tstat,
 * or, for a side that holds the tensor, its statistics computed here. n =
 * the reference's element count. -1 (err) when a side has neither. */
int db_accum_stats(db_accum *a, const db_tensor *x, const db_tensor *y, db_err *err);

/* Whole comparison. Returns -1 (err set) when numel differs or a dtype is
 * not comparable (quantized, unknown). Same shape is the caller's check. */
int db_metrics_compute(const db_tensor *x, const db_tensor *y, db_metrics *m,
                       db_err *err);
/* The checks db_metrics_compute makes before accumulating (comparable
 * dtypes, same component count, same numel); callers that drive
 * db_accum_range themselves call it first. 0 or -1 with err set. */
int db_metrics_check(const db_tensor *x, const db_tensor *y, db_err *err);
/* The simple one-element-at-a-time loop the fast path is tested against. */
int db_metrics_reference(const db_tensor *x, const db_tensor *y,
                         db_metrics *m, db_err *err);

/* Severity bands, worst last. INPUTS: token ids (the profile's input_ids
 * stages) differ at all — not a drift of the model but another input, so
 * it outranks every band (db_band_for). */
typedef enum db_band {
	DB_BAND_NONE = 0,       /* not computed / not comparable */
	DB_BAND_OK, DB_BAND_DRIFT, DB_BAND_ALGO, DB_BAND_BUG, DB_BAND_SCRAMBLE,
	DB_BAND_INPUTS
} db_band;

typedef struct db_thresholds {
	double ok_cos, ok_rel;          /* ok:    cos > 0.9999 and rel < 0.01 */
	double drift_cos, drift_rel;    /* drift: cos > 0.99   and rel < 0.10 */
	double algo_cos, algo_rel;      /* algo:  cos > 0.9    and rel < 0.30 */
	double scramble_cos;            /* scramble: cos <= 0.1 (also negative) */
	/* statistics-only pairs (db_metrics.stats_only): the largest st_rel
	 * <= stats_ok_rel ok (1e-4), <= stats_drift_rel drift (1e-3), <=
	 * stats_algo_rel algo (1e-2), else bug. Statistics move less than
	 * elements do, so these are tighter than ok_rel etc. */
	double stats_ok_rel, stats_drift_rel, stats_algo_rel;
	/* --noise (db_noise.h): within noise when rel <= noise_k x
	 * max(floor, noise_min_rel) */
	double noise_k, noise_min_rel;
	double amplify;                 /* a stage amplifies when it leaves >= this
	                                 * × the error it receives (default 10) */
} db_thresholds;

void db_thresholds_default(db_thresholds *t);
/* Band of m; cos and rel each give a band and the worse wins ("trust rel").
 * NaN cos (zero norm on one side) or nonfinite_mismatch > 0 -> BUG. */
db_band db_band_of(const db_metrics *m, const db_thresholds *t);
const char *db_band_name(db_band b);     /* "ok", "drift", "algo", "bug", "scramble", "-" */
/* Glyph for tables: utf8 "✓" "~" "✗" "✗✗" "‼" / ascii "." "~" "x" "X" "#"; none "-" */
const char *db_band_glyph(db_band b, int utf8);
/* byte_equal for people, into buf: "≡" ("==" without UTF-8) when every
 * element is bit-identical (cos 1.0000 may still hide rounding), else the
 * percentage ("99.5%"; never 100% nor 0% when it is not), "-" for NaN
 * (dtypes differ). Returns buf. */
const char *db_fmt_byte_equal(double byte_equal, int utf8, char *buf, size_t len);

/* Per-side statistics (ls --stats, tensor view). Non-finite left out of
 * sum/min/max/mean/std and counted; n = finite values. std is the
 * population one (divide by n). Complex: over the (re, im) components.
 * Quantized qint8/quint8/qint32 with q_scale != 0 are dequantized
 * ((q - q_zero) * q_scale); other quantized ones give their raw integers.
 * Empty or all non-finite: sum 0, min/max/mean/std NaN. -1 only for an
 * unknown dtype. */
typedef struct db_stats {
	uint64_t n, nan, inf;
	double sum, min, max, mean, std;
} db_stats;
int db_stats_compute(const db_tensor *t, db_stats *s, db_err *err);

/* The k largest |y−x| with their flat indices, largest first (ties: lower
 * index first); positions non-finite on either side are skipped. Returns
 * the number found (<= k); 0 when the pair is not comparable. */
int db_topk_diff(const db_tensor *x, const db_tensor *y, int k,
                 int64_t *idx, double *absdiff);
/* Error profile along dimension 0 ("per token"): out[r] = ‖y_r−x_r‖/‖x_r‖
 * for each of the first min(rows, shape[0]) rows (a 0-d tensor is one
 * row; edge cases as rel_l2). Returns rows written. */
int64_t db_row_rel_l2(const db_tensor *x, const db_tensor *y, double *out,
                      int64_t rows);

#endif
