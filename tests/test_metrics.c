/* Metrics: the fast path against the reference loop on every dtype, odd
 * lengths, unaligned/strided/transposed views and big-endian data; hand
 * cases for every documented edge case; bands; stats/top-k/row profile;
 * and numbers computed by torch in float64 (tests/fixtures/
 * gen_metrics_cases.py -> metrics_cases.json), matched to 1e-9. */
#include "db_metrics.h"

#include "util/json_parse.h"
#include "measure/metrics_kern.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/test_util.h"

/* ---- helpers ----------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, no libc rand state */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static double rnd_unit(void)
{
	return (double)(rnd() >> 11) * 0x1p-53 * 2.0 - 1.0;
}

/* Fill n elements of dt (little-endian) with finite-ish values of varied
 * magnitude; fp8 codes are random bytes (so a few NaN codes show up). */
static void fill(db_dtype dt, uint8_t *p, int64_t n)
{
	size_t size = db_dtype_size(dt);
	for (int64_t i = 0; i < n; i++) {
		uint8_t *q = p + i * (int64_t)size;
		double v = rnd_unit() * ldexp(1.0, (int)(rnd() % 16) - 8);
		switch (dt) {
		case DB_DT_F64: memcpy(q, &v, 8); break;
		case DB_DT_C128: memcpy(q, &v, 8); v = rnd_unit(); memcpy(q + 8, &v, 8); break;
		case DB_DT_F32: { float f = (float)v; memcpy(q, &f, 4); break; }
		case DB_DT_C64: { float f[2] = {(float)v, (float)rnd_unit()}; memcpy(q, f, 8); break; }
		case DB_DT_BF16: {
			float f = (float)v;
			uint32_t b;
			memcpy(&b, &f, 4);
			uint16_t h = (uint16_t)(b >> 16);
			memcpy(q, &h, 2);
			break;
		}
		case DB_DT_F16: {
			/* exponent 0..29: subnormals through large normals, never Inf/NaN */
			uint16_t h = (uint16_t)((rnd() & 0x8000) | ((rnd() % 30) << 10) | (rnd() & 0x3ff));
			memcpy(q, &h, 2);
			break;
		}
		case DB_DT_BOOL: q[0] = rnd() & 1; break;
		default:
			for (size_t k = 0; k < size; k++)
				q[k] = (uint8_t)rnd();
			break;
		}
	}
}

/* y = x with the low byte of about half the elements changed. */
static void perturb(db_dtype dt, const uint8_t *x, uint8_t *y, int64_t n)
{
	size_t size = db_dtype_size(dt);
	memcpy(y, x, (size_t)n * size);
	for (int64_t i = 0; i < n; i++) {
		if (rnd() & 1)
			continue;
		if (dt == DB_DT_BOOL)
			y[i] ^= 1;
		else
			y[i * (int64_t)size] ^= (uint8_t)(1 + rnd() % 255);
	}
}

static db_tensor vec(db_dtype dt, const uint8_t *data, int64_t n)
{
	db_tensor t = {.dtype = dt, .ndim = 1, .shape = {n}, .data = data};
	db_tensor_set_contiguous(&t);
	return t;
}

static int close_rel(double a, double b, double tol, double floor)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (isinf(a) || isinf(b))
		return a == b;
	double s = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
	return fabs(a - b) <= tol * (s > floor ? s : floor);
}

/* cos is bounded by 1 and can be near 0, where Σxy cancels: compare it
 * with an absolute floor of 1 (i.e. 1e-12 absolute there). */
static void assert_metrics_close(const db_metrics *a, const db_metrics *b, double tol,
                                 const char *what)
{
	if (!close_rel(a->cos, b->cos, tol, 1) || !close_rel(a->rel, b->rel, tol, 0) ||
	    !close_rel(a->rel_l2, b->rel_l2, tol, 0) || !close_rel(a->rel_diff, b->rel_diff, tol, 0) ||
	    !close_rel(a->mean_abs, b->mean_abs, tol, 0) || a->max_abs != b->max_abs ||
	    a->argmax != b->argmax || a->n != b->n || a->nan_ref != b->nan_ref ||
	    a->nan_tgt != b->nan_tgt || a->inf_ref != b->inf_ref || a->inf_tgt != b->inf_tgt ||
	    a->nonfinite_mismatch != b->nonfinite_mismatch ||
	    !(a->byte_equal == b->byte_equal || (isnan(a->byte_equal) && isnan(b->byte_equal))))
		fail_msg("%s: cos %.17g/%.17g rel %.17g/%.17g rel_l2 %.17g/%.17g rel_diff %.17g/%.17g "
		         "mean %.17g/%.17g max %.17g/%.17g argmax %lld/%lld n %llu/%llu "
		         "nonfin %llu/%llu byte_eq %g/%g",
		         what, a->cos, b->cos, a->rel, b->rel, a->rel_l2, b->rel_l2, a->rel_diff,
		         b->rel_diff, a->mean_abs, b->mean_abs, a->max_abs, b->max_abs,
		         (long long)a->argmax, (long long)b->argmax, (unsigned long long)a->n,
		         (unsigned long long)b->n, (unsigned long long)a->nonfinite_mismatch,
		         (unsigned long long)b->nonfinite_mismatch, a->byte_equal, b->byte_equal);
}

static void assert_metrics_same(const db_metrics *a, const db_metrics *b, const char *what)
{
	assert_metrics_close(a, b, 0, what);
}

static void fast_and_ref(const db_tensor *x, const db_tensor *y, db_metrics *fast,
                         const char *what)
{
	db_metrics ref;
	db_err err;
	if (db_metrics_compute(x, y, fast, &err) < 0)
		fail_msg("%s: %s", what, err.msg);
	assert_int_equal(db_metrics_reference(x, y, &ref, &err), 0);
	assert_metrics_close(fast, &ref, 1e-12, what);
}

static void byteswap(uint8_t *p, int64_t n, size_t size, int comps)
{
	size_t cs = size / (size_t)comps;
	for (int64_t i = 0; i < n * comps; i++) {
		uint8_t *q = p + i * (int64_t)cs;
		for (size_t k = 0; k < cs / 2; k++) {
			uint8_t t = q[k];
			q[k] = q[cs - 1 - k];
			q[cs - 1 - k] = t;
		}
	}
}

/* Run fast vs reference for x (dtype dx), y (dtype dy) of n elements as
 * contiguous, unaligned, big-endian and stride-3 views; the fast results
 * of all views must be identical (same values, same block order). */
static void check_pair(db_dtype dx, db_dtype dy, int64_t n)
{
	char what[128];
	size_t sx = db_dtype_size(dx), sy = db_dtype_size(dy);
	int c = db_dtype_components(dx);
	uint8_t *x = malloc((size_t)n * sx + 1), *y = malloc((size_t)n * sy + 1);
	uint8_t *ux = malloc((size_t)n * sx + 2), *uy = malloc((size_t)n * sy + 2);
	uint8_t *gx = calloc((size_t)(3 * n + 2), sx), *gy = calloc((size_t)(3 * n + 2), sy);
	assert_true(x && y && ux && uy && gx && gy);
	fill(dx, x, n);
	if (dx == dy) {
		perturb(dx, x, y, n);
	} else {
		fill(dy, y, n);
	}
	db_metrics base, m;
	db_tensor tx = vec(dx, x, n), ty = vec(dy, y, n);
	snprintf(what, sizeof what, "%s/%s n=%lld contiguous", db_dtype_name(dx),
	         db_dtype_name(dy), (long long)n);
	fast_and_ref(&tx, &ty, &base, what);
	assert_true(base.n <= (uint64_t)(n * c));

	/* unaligned by one byte */
	memcpy(ux + 1, x, (size_t)n * sx);
	memcpy(uy + 1, y, (size_t)n * sy);
	db_tensor vx = vec(dx, ux + 1, n), vy = vec(dy, uy + 1, n);
	snprintf(what, sizeof what, "%s/%s n=%lld unaligned", db_dtype_name(dx),
	         db_dtype_name(dy), (long long)n);
	fast_and_ref(&vx, &vy, &m, what);
	assert_metrics_same(&m, &base, what);

	/* big-endian storage */
	byteswap(ux + 1, n, sx, c);
	byteswap(uy + 1, n, sy, c);
	vx.swap = vy.swap = true;
	snprintf(what, sizeof what, "%s/%s n=%lld big-endian", db_dtype_name(dx),
	         db_dtype_name(dy), (long long)n);
	fast_and_ref(&vx, &vy, &m, what);
	assert_metrics_same(&m, &base, what);
	/* only one side big-endian: values and byte equality unchanged */
	vy = vec(dy, y, n);
	snprintf(what, sizeof what, "%s/%s n=%lld mixed byte order", db_dtype_name(dx),
	         db_dtype_name(dy), (long long)n);
	fast_and_ref(&vx, &vy, &m, what);
	assert_metrics_same(&m, &base, what);

	/* a stride-3 view starting 2 elements in */
	for (int64_t i = 0; i < n; i++) {
		memcpy(gx + (2 + 3 * i) * (int64_t)sx, x + i * (int64_t)sx, sx);
		memcpy(gy + (2 + 3 * i) * (int64_t)sy, y + i * (int64_t)sy, sy);
	}
	db_tensor gtx = vec(dx, gx + 2 * sx, n), gty = vec(dy, gy + 2 * sy, n);
	gtx.stride[0] = gty.stride[0] = 3;
	snprintf(what, sizeof what, "%s/%s n=%lld stride 3", db_dtype_name(dx),
	         db_dtype_name(dy), (long long)n);
	fast_and_ref(&gtx, &gty, &m, what);
	assert_metrics_same(&m, &base, what);
	/* strided against contiguous */
	fast_and_ref(&gtx, &ty, &m, what);
	assert_metrics_same(&m, &base, what);

	free(x);
	free(y);
	free(ux);
	free(uy);
	free(gx);
	free(gy);
}

static const int64_t lengths[] = {0, 1, 2, 3, 5, 17, 255, 1023, 1024, 1025, 2049, 5001};

static void test_fast_vs_reference_all_dtypes(void **state)
{
	(void)state;
	for (int dt = DB_DT_UNKNOWN + 1; dt < DB_DT__COUNT; dt++) {
		if (!db_dtype_comparable((db_dtype)dt))
			continue;
		for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
			check_pair((db_dtype)dt, (db_dtype)dt, lengths[i]);
	}
}

static void test_fast_vs_reference_mixed(void **state)
{
	(void)state;
	static const db_dtype pairs[][2] = {
		{DB_DT_F32, DB_DT_BF16}, {DB_DT_F16, DB_DT_F64}, {DB_DT_I32, DB_DT_F32},
		{DB_DT_U8, DB_DT_I64}, {DB_DT_BF16, DB_DT_F8_E4M3FN}, {DB_DT_C64, DB_DT_C128},
	};
	for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
		for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
			check_pair(pairs[p][0], pairs[p][1], lengths[i]);
}

/* Non-finite values scattered through big blocks: the careful path. */
static void test_fast_vs_reference_nonfinite(void **state)
{
	(void)state;
	int64_t n = 4099;
	float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
	assert_true(x && y);
	for (int64_t i = 0; i < n; i++) {
		x[i] = (float)rnd_unit();
		y[i] = x[i] + (float)(1e-3 * rnd_unit());
	}
	x[5] = y[5] = NAN;                      /* same NaN: fine */
	x[1500] = y[1500] = INFINITY;           /* same Inf: fine */
	x[1600] = -INFINITY; y[1600] = INFINITY; /* mismatch */
	y[3000] = NAN;                          /* mismatch */
	x[4098] = INFINITY; y[4098] = NAN;      /* mismatch */
	db_tensor tx = vec(DB_DT_F32, (uint8_t *)x, n), ty = vec(DB_DT_F32, (uint8_t *)y, n);
	db_metrics m;
	fast_and_ref(&tx, &ty, &m, "f32 nonfinite");
	assert_int_equal(m.n, n - 5);
	assert_int_equal(m.nan_ref, 1);
	assert_int_equal(m.nan_tgt, 3);
	assert_int_equal(m.inf_ref, 3);
	assert_int_equal(m.inf_tgt, 2);
	assert_int_equal(m.nonfinite_mismatch, 3);
	db_thresholds th;
	db_thresholds_default(&th);
	assert_int_equal(db_band_of(&m, &th), DB_BAND_BUG);
	free(x);
	free(y);
}

/* Transposed 2-D and permuted 3-D views decode the right elements: their
 * metrics equal those of contiguous copies made with db_tensor_elem_offset. */
static void test_transposed_views(void **state)
{
	(void)state;
	enum { R = 37, C = 29, A = 3, B = 5, D = 67 };
	uint16_t sx[R * C], sy[R * C];
	fill(DB_DT_BF16, (uint8_t *)sx, R * C);
	perturb(DB_DT_BF16, (uint8_t *)sx, (uint8_t *)sy, R * C);
	/* storage is [C, R]; the view is its transpose [R, C] */
	db_tensor tx = {.dtype = DB_DT_BF16, .ndim = 2, .shape = {R, C}, .stride = {1, R},
	                .data = (uint8_t *)sx};
	db_tensor ty = tx;
	ty.data = (uint8_t *)sy;
	uint16_t cx[R * C], cy[R * C];
	for (int64_t i = 0; i < R * C; i++) {
		memcpy(cx + i, tx.data + db_tensor_elem_offset(&tx, i), 2);
		memcpy(cy + i, ty.data + db_tensor_elem_offset(&ty, i), 2);
	}
	db_tensor kx = vec(DB_DT_BF16, (uint8_t *)cx, R * C), ky = vec(DB_DT_BF16, (uint8_t *)cy, R * C);
	db_metrics mv, mc;
	fast_and_ref(&tx, &ty, &mv, "transposed");
	fast_and_ref(&kx, &ky, &mc, "transposed copy");
	assert_metrics_same(&mv, &mc, "transposed vs copy");

	/* [A, B, D] view of storage [D, A, B] (permute 1, 2, 0), f64 */
	static double px[A * B * D], py[A * B * D], qx[A * B * D], qy[A * B * D];
	fill(DB_DT_F64, (uint8_t *)px, A * B * D);
	perturb(DB_DT_F64, (uint8_t *)px, (uint8_t *)py, A * B * D);
	db_tensor p3 = {.dtype = DB_DT_F64, .ndim = 3, .shape = {A, B, D},
	                .stride = {B, 1, A * B}, .data = (uint8_t *)px};
	db_tensor q3 = p3;
	q3.data = (uint8_t *)py;
	for (int64_t i = 0; i < A * B * D; i++) {
		memcpy(qx + i, p3.data + db_tensor_elem_offset(&p3, i), 8);
		memcpy(qy + i, q3.data + db_tensor_elem_offset(&q3, i), 8);
	}
	db_tensor c3x = vec(DB_DT_F64, (uint8_t *)qx, A * B * D);
	db_tensor c3y = vec(DB_DT_F64, (uint8_t *)qy, A * B * D);
	fast_and_ref(&p3, &q3, &mv, "permuted 3-d");
	fast_and_ref(&c3x, &c3y, &mc, "permuted copy");
	assert_metrics_same(&mv, &mc, "permuted vs copy");

	/* complex64 with stride 2 */
	float cplx[2 * 2 * 301], cplx2[2 * 2 * 301];
	fill(DB_DT_C64, (uint8_t *)cplx, 2 * 301);
	perturb(DB_DT_C64, (uint8_t *)cplx, (uint8_t *)cplx2, 2 * 301);
	db_tensor zx = vec(DB_DT_C64, (uint8_t *)cplx, 301), zy = vec(DB_DT_C64, (uint8_t *)cplx2, 301);
	zx.stride[0] = zy.stride[0] = 2;
	fast_and_ref(&zx, &zy, &mv, "complex stride 2");
	assert_int_equal(mv.n, 2 * 301);
}

/* Splitting into chunks and merging, as the compare worker pool does. */
static void test_chunks_merge(void **state)
{
	(void)state;
	int64_t n = 100003;
	uint16_t *x = malloc((size_t)n * 2), *y = malloc((size_t)n * 2);
	assert_true(x && y);
	fill(DB_DT_BF16, (uint8_t *)x, n);
	perturb(DB_DT_BF16, (uint8_t *)x, (uint8_t *)y, n);
	x[77777] = 0x7fc0;      /* a NaN in one chunk */
	db_tensor tx = vec(DB_DT_BF16, (uint8_t *)x, n), ty = vec(DB_DT_BF16, (uint8_t *)y, n);
	db_metrics whole, parts;
	fast_and_ref(&tx, &ty, &whole, "bf16 100003");
	int64_t cuts[] = {0, 1, 4096, 33333, 65536, 77778, n};
	db_accum total;
	db_accum_init(&total);
	for (size_t i = 0; i + 1 < sizeof cuts / sizeof cuts[0]; i++) {
		db_accum a;
		db_accum_init(&a);
		db_accum_range(&a, &tx, &ty, cuts[i], cuts[i + 1]);
		db_accum_merge(&total, &a);
	}
	db_accum_finish(&total, &parts);
	assert_metrics_close(&parts, &whole, 1e-12, "chunks vs whole");
	assert_int_equal(parts.nonfinite_mismatch, 1);
	/* merging in reverse order keeps the first argmax */
	db_accum a1, a2;
	db_accum_init(&a1);
	db_accum_init(&a2);
	db_accum_range(&a1, &tx, &ty, 0, n / 2);
	db_accum_range(&a2, &tx, &ty, n / 2, n);
	db_accum_merge(&a2, &a1);
	db_accum_finish(&a2, &parts);
	assert_int_equal(parts.argmax, whole.argmax);
	free(x);
	free(y);
}

/* ---- hand cases -------------------------------------------------------- */

static void metrics_f64(const double *x, const double *y, int64_t n, db_metrics *m)
{
	db_tensor tx = vec(DB_DT_F64, (const uint8_t *)x, n), ty = vec(DB_DT_F64, (const uint8_t *)y, n);
	fast_and_ref(&tx, &ty, m, "hand case");
}

static void test_edge_cases(void **state)
{
	(void)state;
	db_metrics m;
	db_thresholds th;
	db_thresholds_default(&th);

	/* worked example: x = (3, 4), y = (4, 3) */
	double x1[] = {3, 4}, y1[] = {4, 3};
	metrics_f64(x1, y1, 2, &m);
	assert_true(close_rel(m.cos, 24.0 / 25.0, 1e-15, 0));
	assert_true(close_rel(m.rel, 1.0 / 4.0, 1e-15, 0));
	assert_true(close_rel(m.rel_l2, sqrt(2.0) / 5.0, 1e-15, 0));
	assert_true(close_rel(m.rel_diff, 1.0 - 48.0 / 50.0, 1e-15, 0));
	assert_true(m.max_abs == 1 && m.mean_abs == 1 && m.argmax == 0);
	assert_true(m.byte_equal == 0);

	/* identical zeros */
	double z[5] = {0};
	metrics_f64(z, z, 5, &m);
	assert_true(m.cos == 1 && m.rel == 0 && m.rel_l2 == 0 && m.rel_diff == 0);
	assert_true(m.max_abs == 0 && m.argmax == 0 && m.byte_equal == 1 && m.n == 5);
	assert_int_equal(db_band_of(&m, &th), DB_BAND_OK);

	/* reference all zeros, target not */
	double y2[5] = {0, 0, 2, 0, -2};
	metrics_f64(z, y2, 5, &m);
	assert_true(isnan(m.cos));
	assert_true(isinf(m.rel_l2) && m.rel_l2 > 0);
	assert_true(m.rel_diff == 1);
	assert_true(m.rel == 2 / 1e-12);
	assert_true(m.argmax == 2);
	assert_int_equal(db_band_of(&m, &th), DB_BAND_BUG);

	/* target all zeros */
	metrics_f64(y2, z, 5, &m);
	assert_true(isnan(m.cos) && m.rel_l2 == 1 && m.rel_diff == 1 && m.rel == 1);
	assert_int_equal(db_band_of(&m, &th), DB_BAND_BUG);

	/* empty */
	db_tensor ex = vec(DB_DT_F32, (const uint8_t *)z, 0), ey = vec(DB_DT_F32, (const uint8_t *)z, 0);
	fast_and_ref(&ex, &ey, &m, "empty");
	assert_true(m.n == 0 && m.cos == 1 && m.rel == 0 && m.rel_l2 == 0 && m.rel_diff == 0);
	assert_true(m.max_abs == 0 && m.mean_abs == 0 && m.argmax == -1 && m.byte_equal == 1);
	assert_int_equal(db_band_of(&m, &th), DB_BAND_OK);
	ey.dtype = DB_DT_BF16;
	fast_and_ref(&ex, &ey, &m, "empty mixed");
	assert_true(isnan(m.byte_equal));

	/* all positions non-finite, identically on both sides */
	double nn[3] = {NAN, INFINITY, -INFINITY};
	metrics_f64(nn, nn, 3, &m);
	assert_true(m.n == 0 && m.cos == 1 && m.nonfinite_mismatch == 0);
	assert_true(m.nan_ref == 1 && m.inf_ref == 2 && m.nan_tgt == 1 && m.inf_tgt == 2);
	assert_int_equal(db_band_of(&m, &th), DB_BAND_OK);

	/* non-finite mismatches: one side only, NaN vs Inf, +Inf vs -Inf */
	double a3[4] = {1, NAN, INFINITY, 2}, b3[4] = {1, INFINITY, -INFINITY, NAN};
	metrics_f64(a3, b3, 4, &m);
	assert_int_equal(m.nonfinite_mismatch, 3);
	assert_int_equal(m.n, 1);
	assert_true(m.cos == 1);
	assert_int_equal(db_band_of(&m, &th), DB_BAND_BUG);

	/* argmax: first of equal maxima; negation gives cos -1 -> scramble */
	double a4[4] = {1, -1, 1, -1}, b4[4] = {-1, 1, -1, 1};
	metrics_f64(a4, b4, 4, &m);
	assert_true(m.argmax == 0 && m.max_abs == 2 && m.cos == -1);
	assert_int_equal(db_band_of(&m, &th), DB_BAND_SCRAMBLE);

	/* byte_equal: NaN across dtypes, fraction of elements otherwise */
	float f[4] = {1, 2, 3, 4}, g[4] = {1, 2, 3, 5};
	db_tensor fx = vec(DB_DT_F32, (uint8_t *)f, 4), fy = vec(DB_DT_F32, (uint8_t *)g, 4);
	fast_and_ref(&fx, &fy, &m, "byte_equal");
	assert_true(m.byte_equal == 0.75);
	double gd[4] = {1, 2, 3, 5};
	db_tensor dy = vec(DB_DT_F64, (uint8_t *)gd, 4);
	fast_and_ref(&fx, &dy, &m, "f32 vs f64");
	assert_true(isnan(m.byte_equal));
	assert_true(m.max_abs == 1 && m.argmax == 3);
	/* -0 and +0: equal values, different bytes */
	double pz[1] = {0.0}, mz[1] = {-0.0};
	metrics_f64(pz, mz, 1, &m);
	assert_true(m.byte_equal == 0 && m.max_abs == 0 && m.cos == 1);

	/* complex: 2*numel components, argmax is the element index */
	float c1[6] = {1, 2, 3, 4, 5, 6}, c2[6] = {1, 2, 3, 4.5f, 5, 6};
	db_tensor cx = vec(DB_DT_C64, (uint8_t *)c1, 3), cy = vec(DB_DT_C64, (uint8_t *)c2, 3);
	fast_and_ref(&cx, &cy, &m, "complex");
	assert_true(m.n == 6 && m.argmax == 1 && m.max_abs == 0.5);
	assert_true(close_rel(m.byte_equal, 2.0 / 3.0, 1e-15, 0));

	/* refusals */
	db_err err;
	db_tensor qx = vec(DB_DT_QINT8, (uint8_t *)f, 4);
	assert_int_equal(db_metrics_compute(&qx, &fy, &m, &err), -1);
	assert_non_null(strstr(err.msg, "not comparable"));
	assert_int_equal(db_metrics_reference(&qx, &fy, &m, &err), -1);
	db_tensor short_y = vec(DB_DT_F32, (uint8_t *)g, 3);
	assert_int_equal(db_metrics_compute(&fx, &short_y, &m, &err), -1);
	assert_non_null(strstr(err.msg, "4 vs 3"));
	assert_int_equal(db_metrics_compute(&cx, &short_y, &m, &err), -1);
	db_tensor unk = vec(DB_DT_UNKNOWN, (uint8_t *)f, 4);
	assert_int_equal(db_metrics_compute(&unk, &fy, &m, &err), -1);

	/* a 0-d tensor against a [1] tensor */
	double s1 = 2.5, s2 = 2.0;
	db_tensor sx = {.dtype = DB_DT_F64, .ndim = 0, .data = (uint8_t *)&s1};
	db_tensor sy = vec(DB_DT_F64, (uint8_t *)&s2, 1);
	fast_and_ref(&sx, &sy, &m, "scalar");
	assert_true(m.n == 1 && m.max_abs == 0.5 && close_rel(m.rel, 0.2, 1e-15, 0));
}

static void test_overflow_block(void **state)
{
	(void)state;
	/* x² overflows: the fast kernel's sums go Inf and the careful loop
	 * takes the block; both agree with the reference. */
	double x[10], y[10];
	for (int i = 0; i < 10; i++)
		x[i] = y[i] = 1e200 * (i + 1);
	y[4] = -1e300;
	db_metrics m;
	metrics_f64(x, y, 10, &m);
	assert_int_equal(m.argmax, 4);
	assert_int_equal(m.n, 10);
}

/* ---- bands --------------------------------------------------------------- */

static db_band band(double cos, double rel)
{
	db_thresholds th;
	db_thresholds_default(&th);
	db_metrics m = {.cos = cos, .rel = rel, .n = 1};
	return db_band_of(&m, &th);
}

static void test_bands(void **state)
{
	(void)state;
	assert_int_equal(band(0.99999, 0.001), DB_BAND_OK);
	assert_int_equal(band(0.9999, 0.001), DB_BAND_DRIFT);  /* cos > 0.9999 strictly */
	assert_int_equal(band(0.99999, 0.01), DB_BAND_DRIFT);  /* rel < 0.01 strictly */
	assert_int_equal(band(0.995, 0.05), DB_BAND_DRIFT);
	assert_int_equal(band(0.95, 0.05), DB_BAND_ALGO);
	assert_int_equal(band(0.99999, 0.2), DB_BAND_ALGO);    /* trust rel */
	assert_int_equal(band(0.5, 0.001), DB_BAND_BUG);
	assert_int_equal(band(0.99999, 0.5), DB_BAND_BUG);
	assert_int_equal(band(0.1, 0.001), DB_BAND_SCRAMBLE);
	assert_int_equal(band(-0.7, 5), DB_BAND_SCRAMBLE);
	assert_int_equal(band(NAN, 0), DB_BAND_BUG);
	assert_int_equal(band(0.99999, NAN), DB_BAND_BUG);
	db_thresholds th;
	db_thresholds_default(&th);
	db_metrics m = {.cos = 1, .rel = 0, .nonfinite_mismatch = 1};
	assert_int_equal(db_band_of(&m, &th), DB_BAND_BUG);
	assert_int_equal(db_band_of(NULL, &th), DB_BAND_NONE);
	th.ok_cos = 0.5;        /* a profile's own thresholds */
	m.nonfinite_mismatch = 0;
	m.cos = 0.6;
	assert_int_equal(db_band_of(&m, &th), DB_BAND_OK);
	assert_string_equal(db_band_name(DB_BAND_OK), "ok");
	assert_string_equal(db_band_name(DB_BAND_DRIFT), "drift");
	assert_string_equal(db_band_name(DB_BAND_ALGO), "algo");
	assert_string_equal(db_band_name(DB_BAND_BUG), "bug");
	assert_string_equal(db_band_name(DB_BAND_SCRAMBLE), "scramble");
	assert_string_equal(db_band_name(DB_BAND_NONE), "-");
	assert_string_equal(db_band_glyph(DB_BAND_OK, 1), "\u2713");
	assert_string_equal(db_band_glyph(DB_BAND_BUG, 1), "\u2717\u2717");
	assert_string_equal(db_band_glyph(DB_BAND_SCRAMBLE, 1), "\u203c");
	assert_string_equal(db_band_glyph(DB_BAND_OK, 0), ".");
	assert_string_equal(db_band_glyph(DB_BAND_DRIFT, 0), "~");
	assert_string_equal(db_band_glyph(DB_BAND_ALGO, 0), "x");
	assert_string_equal(db_band_glyph(DB_BAND_BUG, 0), "X");
	assert_string_equal(db_band_glyph(DB_BAND_SCRAMBLE, 0), "#");
	assert_string_equal(db_band_glyph(DB_BAND_NONE, 1), "-");
}

/* ---- stats, top-k, rows ------------------------------------------------ */

static void test_stats(void **state)
{
	(void)state;
	float v[6] = {1, 2, NAN, 3, INFINITY, 6};
	db_tensor t = vec(DB_DT_F32, (uint8_t *)v, 6);
	db_stats s;
	db_err err;
	assert_int_equal(db_stats_compute(&t, &s, &err), 0);
	assert_true(s.n == 4 && s.nan == 1 && s.inf == 1);
	assert_true(s.sum == 12 && s.min == 1 && s.max == 6 && s.mean == 3);
	assert_true(close_rel(s.std, sqrt(14.0 / 4.0), 1e-15, 0));
	/* strided: every other element of a big-offset sequence (std stable) */
	static double big[4001];
	for (int i = 0; i < 4001; i++)
		big[i] = 1e9 + (i % 2 ? 1000 : i);
	db_tensor st = vec(DB_DT_F64, (uint8_t *)big, 2001);
	st.stride[0] = 2;       /* elements 0, 2, ..., 4000: 1e9 + 0..4000 step 2 */
	assert_int_equal(db_stats_compute(&st, &s, &err), 0);
	assert_true(s.n == 2001 && s.min == 1e9 && s.max == 1e9 + 4000);
	assert_true(close_rel(s.mean, 1e9 + 2000, 1e-15, 0));
	/* population std of 0, 2, ..., 4000: 2*sqrt((2001^2-1)/12) */
	assert_true(close_rel(s.std, 2 * sqrt((2001.0 * 2001.0 - 1) / 12.0), 1e-9, 0));
	/* quantized with a scale: dequantized */
	int8_t q[3] = {-4, 0, 6};
	db_tensor qt = vec(DB_DT_QINT8, (uint8_t *)q, 3);
	qt.q_scale = 0.5;
	qt.q_zero = 2;
	assert_int_equal(db_stats_compute(&qt, &s, &err), 0);
	assert_true(s.min == -3 && s.max == 2 && s.sum == -2);
	/* empty */
	db_tensor e = vec(DB_DT_F32, (uint8_t *)v, 0);
	assert_int_equal(db_stats_compute(&e, &s, &err), 0);
	assert_true(s.n == 0 && s.sum == 0 && isnan(s.mean) && isnan(s.min));
	db_tensor u = vec(DB_DT_UNKNOWN, (uint8_t *)v, 1);
	assert_int_equal(db_stats_compute(&u, &s, &err), -1);
}

/* byte_equal for people: all-identical is its own mark, rounding never
 * claims 100% or 0% */
static void test_fmt_byte_equal(void **state)
{
	(void)state;
	char b[16];
	assert_string_equal(db_fmt_byte_equal(1.0, 1, b, sizeof b), "\u2261");
	assert_string_equal(db_fmt_byte_equal(1.0, 0, b, sizeof b), "==");
	assert_string_equal(db_fmt_byte_equal(0.9999, 1, b, sizeof b), ">99.9%");
	assert_string_equal(db_fmt_byte_equal(0.5, 1, b, sizeof b), "50.0%");
	assert_string_equal(db_fmt_byte_equal(0.0004, 1, b, sizeof b), "<0.1%");
	assert_string_equal(db_fmt_byte_equal(0.0, 1, b, sizeof b), "0.0%");
	assert_string_equal(db_fmt_byte_equal(NAN, 1, b, sizeof b), "-");
}

static void test_topk_rows(void **state)
{
	(void)state;
	enum { N = 3000 };
	static float x[N], y[N];
	for (int i = 0; i < N; i++)
		x[i] = y[i] = (float)i;
	y[10] += 5;
	y[2999] += 7;
	y[1500] -= 5;           /* ties with 10: the lower index first */
	y[20] = NAN;            /* non-finite: skipped */
	y[700] += 1;
	db_tensor tx = vec(DB_DT_F32, (uint8_t *)x, N), ty = vec(DB_DT_F32, (uint8_t *)y, N);
	int64_t idx[8];
	double d[8];
	int k = db_topk_diff(&tx, &ty, 3, idx, d);
	assert_int_equal(k, 3);
	assert_true(idx[0] == 2999 && d[0] == 7);
	assert_true(idx[1] == 10 && d[1] == 5);
	assert_true(idx[2] == 1500 && d[2] == 5);
	k = db_topk_diff(&tx, &ty, 8, idx, d);
	assert_int_equal(k, 8);
	assert_true(idx[3] == 700 && d[3] == 1 && d[4] == 0 && idx[4] == 0);

	/* rows of a [3, 1000] view */
	tx.ndim = ty.ndim = 2;
	tx.shape[0] = ty.shape[0] = 3;
	tx.shape[1] = ty.shape[1] = 1000;
	db_tensor_set_contiguous(&tx);
	db_tensor_set_contiguous(&ty);
	double out[5];
	assert_int_equal(db_row_rel_l2(&tx, &ty, out, 5), 3);
	double n0 = 0;
	for (int i = 0; i < 1000; i++)
		if (i != 20)
			n0 += (double)i * i;
	assert_true(close_rel(out[0], sqrt(26.0) / sqrt(n0), 1e-14, 0));
	assert_true(out[1] > 0);
	double z[4] = {0}, w[4] = {0, 1, 0, 0};
	db_tensor zx = {.dtype = DB_DT_F64, .ndim = 2, .shape = {2, 2}, .data = (uint8_t *)z};
	db_tensor zy = zx;
	zy.data = (uint8_t *)w;
	db_tensor_set_contiguous(&zx);
	db_tensor_set_contiguous(&zy);
	assert_int_equal(db_row_rel_l2(&zx, &zy, out, 2), 2);
	assert_true(isinf(out[0]) && out[1] == 0);
}

/* ---- numbers from torch ------------------------------------------------- */

static double jnum(const db_jp *obj, const char *key)
{
	const db_jp *v = db_jp_get(obj, key);
	assert_non_null(v);
	return v->type == DB_JP_NULL ? NAN : v->num;
}

static void test_torch_cases(void **state)
{
	(void)state;
	db_jp *root = tu_json(FIXTURES "/metrics_cases.json");
	assert_int_equal(root->type, DB_JP_ARR);
	assert_true(root->n >= 8);
	for (size_t i = 0; i < root->n; i++) {
		const db_jp *c = &root->items[i], *e = db_jp_get(c, "expect");
		const char *name = db_jp_get(c, "name")->str;
		char path[512];
		size_t lx, ly;
		snprintf(path, sizeof path, "%s/%s", FIXTURES, db_jp_get(c, "x")->str);
		char *bx = tu_read(path, &lx);
		snprintf(path, sizeof path, "%s/%s", FIXTURES, db_jp_get(c, "y")->str);
		char *by = tu_read(path, &ly);
		const db_jp *shape = db_jp_get(c, "shape");
		db_tensor tx = {.dtype = db_dtype_from_name(db_jp_get(c, "dtype_x")->str),
		                .ndim = (int)shape->n, .data = (uint8_t *)bx};
		db_tensor ty = tx;
		ty.dtype = db_dtype_from_name(db_jp_get(c, "dtype_y")->str);
		ty.data = (uint8_t *)by;
		for (size_t d = 0; d < shape->n; d++)
			tx.shape[d] = ty.shape[d] = (int64_t)shape->items[d].num;
		db_tensor_set_contiguous(&tx);
		db_tensor_set_contiguous(&ty);
		assert_int_equal((int64_t)lx, db_tensor_numel(&tx) * (int64_t)db_dtype_size(tx.dtype));
		assert_int_equal((int64_t)ly, db_tensor_numel(&ty) * (int64_t)db_dtype_size(ty.dtype));
		db_metrics m;
		fast_and_ref(&tx, &ty, &m, name);
		struct { const char *key; double got; } chk[] = {
			{"cos", m.cos}, {"rel", m.rel}, {"rel_l2", m.rel_l2}, {"rel_diff", m.rel_diff},
			{"max_abs", m.max_abs}, {"mean_abs", m.mean_abs}, {"byte_equal", m.byte_equal},
			{"n", (double)m.n}, {"argmax", (double)m.argmax}, {"nan_ref", (double)m.nan_ref},
			{"nan_tgt", (double)m.nan_tgt}, {"inf_ref", (double)m.inf_ref},
			{"inf_tgt", (double)m.inf_tgt},
			{"nonfinite_mismatch", (double)m.nonfinite_mismatch},
		};
		for (size_t k = 0; k < sizeof chk / sizeof chk[0]; k++) {
			double want = jnum(e, chk[k].key);
			if (!close_rel(chk[k].got, want, 1e-9, 0))
				fail_msg("%s: %s = %.17g, torch says %.17g", name, chk[k].key,
				         chk[k].got, want);
		}
		/* torch's naive 1 - 2Σxy/Σ(x²+y²) agrees too, within its cancellation */
		double naive = jnum(e, "rel_diff_naive");
		assert_true(fabs(m.rel_diff - naive) <= 1e-13 + 1e-9 * fabs(naive));
		free(bx);
		free(by);
	}
	db_jp_free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fast_vs_reference_all_dtypes),
		cmocka_unit_test(test_fast_vs_reference_mixed),
		cmocka_unit_test(test_fast_vs_reference_nonfinite),
		cmocka_unit_test(test_transposed_views),
		cmocka_unit_test(test_chunks_merge),
		cmocka_unit_test(test_edge_cases),
		cmocka_unit_test(test_overflow_block),
		cmocka_unit_test(test_bands),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_topk_rows),
		cmocka_unit_test(test_fmt_byte_equal),
		cmocka_unit_test(test_torch_cases),
	};
	/* The kernels differ per CPU level (portable, AVX2, AVX-512) and must
	 * all agree: run the whole suite again with the level capped, each in a
	 * child since the level is fixed at first use. */
	int failed = 0;
	if (!getenv("DB_SIMD")) {
		static const char *caps[] = {"generic", "avx2"};
		for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
			fflush(stdout);
			pid_t pid = fork();
			if (pid == 0) {
				setenv("DB_SIMD", caps[i], 1);
				printf("== DB_SIMD=%s\n", caps[i]);
				_exit(cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0);
			}
			int st = 0;
			if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
				printf("== DB_SIMD=%s: FAILED\n", caps[i]);
				failed = 1;
			}
		}
	}
	printf("== native kernel level %d\n", db_kern_level());
	return cmocka_run_group_tests(tests, NULL, NULL) || failed;
}
