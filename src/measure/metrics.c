/* The metrics fast path: stream both tensors in blocks of 1024 components.
 * Same-dtype contiguous bf16/f16/f32/f64 pairs go through a fused kernel
 * that converts and accumulates straight from the mapped bytes (AVX2);
 * everything else (views, byte-swapped data, mixed dtypes, other dtypes,
 * CPUs without AVX2) is decoded into two small stack buffers of doubles and
 * summed by a portable vectorized kernel. No allocation; memory use is
 * constant.
 *
 * Accuracy/determinism: inside a block, component i goes to lane i % 8;
 * the lanes are reduced in one fixed order and block sums are added to the
 * accumulator in block order, so every path gives bit-identical results for
 * the same values, and they stay within 1e-12 of db_metrics_reference
 * (tests/test_metrics.c). Blocks start at multiples of the block length in
 * absolute element index, so chunks cut at those multiples see the same
 * blocks. The kernels assume finite data; when a block's sums come out
 * non-finite (a NaN/Inf element, or overflow) the block is redone by the
 * careful per-element loop, which counts and skips non-finite positions. */
#include "db_metrics.h"

#include "metrics_gather.h"
#include "metrics_kern.h"
#include "util/simd.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BLK 1024                /* components per block: 2 x 8 KiB, L1-resident */

void db_accum_init(db_accum *a)
{
	memset(a, 0, sizeof *a);
	a->max_abs = -1.0;      /* so the first compared element sets argmax */
	a->argmax = -1;
	a->same_dtype = -1;     /* unknown until a range is accumulated */
	a->q_worst_at = -1;
}

void db_accum_floor(db_accum *a, int64_t first, const double *x, const double *y,
                    const double *tol, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		double d = fabs(y[i] - x[i]);
		if (!isfinite(d))
			continue;
		a->q_n++;
		double r = tol[i] > 0 ? d / tol[i] : d > 0 ? INFINITY : 0;
		a->q_beyond += d > tol[i];
		if (r > a->q_worst) {
			a->q_worst = r;
			a->q_worst_at = first + i;
		}
	}
}

/* ---- byte equality ---------------------------------------------------- */

DB_CLONES
static uint64_t eq_count2(const uint8_t *p, const uint8_t *q, size_t n)
{
	uint64_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint16_t a, b;
		memcpy(&a, p + 2 * i, 2);
		memcpy(&b, q + 2 * i, 2);
		k += a == b;
	}
	return k;
}

DB_CLONES
static uint64_t eq_count4(const uint8_t *p, const uint8_t *q, size_t n)
{
	uint64_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t a, b;
		memcpy(&a, p + 4 * i, 4);
		memcpy(&b, q + 4 * i, 4);
		k += a == b;
	}
	return k;
}

static uint64_t eq_count(const uint8_t *p, const uint8_t *q, size_t n, size_t size)
{
	switch (size) {
	case 2: return eq_count2(p, q, n);
	case 4: return eq_count4(p, q, n);
	default: break;
	}
	uint64_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += memcmp(p + i * size, q + i * size, size) == 0;
	return k;
}

/* Stored bytes of one element equal, taking a differing byte order of the
 * two sides into account (per component). */
static bool elem_bytes_equal(const uint8_t *p, bool pswap, const uint8_t *q,
                             bool qswap, size_t size, int comps)
{
	if (pswap == qswap)
		return memcmp(p, q, size) == 0;
	size_t cs = size / (size_t)comps;
	for (size_t i = 0; i < size; i++) {
		size_t base = i / cs * cs, k = i % cs;
		if (p[i] != q[base + cs - 1 - k])
			return false;
	}
	return true;
}

/* ---- accumulation ------------------------------------------------------ */

static bool part_finite(const db_part *p)
{
	return isfinite(p->sxx) && isfinite(p->syy) && isfinite(p->sdd) &&
	       isfinite(p->sxy) && isfinite(p->sabs);
}

/* Per-component loop for blocks holding non-finite values (or overflowing):
 * non-finite positions are counted and left out. e0 = flat element index of
 * x[0]; c = components per element. */
static void block_careful(db_accum *a, const double *x, const double *y,
                          size_t n, int64_t e0, int c)
{
	db_part p = {0};
	uint64_t cnt = 0;
	for (size_t i = 0; i < n; i++) {
		double u = x[i], v = y[i];
		bool fu = isfinite(u), fv = isfinite(v);
		if (!fu || !fv) {
			a->nan_ref += isnan(u) != 0;
			a->inf_ref += isinf(u) != 0;
			a->nan_tgt += isnan(v) != 0;
			a->inf_tgt += isinf(v) != 0;
			if (fu || fv || (!(isnan(u) && isnan(v)) && u != v))
				a->nonfinite_mismatch++;
			continue;
		}
		double d = v - u, ad = fabs(d), au = fabs(u);
		p.sxy += u * v;
		p.sxx += u * u;
		p.syy += v * v;
		p.sdd += d * d;
		p.sabs += ad;
		if (au > a->max_absx)
			a->max_absx = au;
		if (ad > a->max_abs) {
			a->max_abs = ad;
			a->argmax = e0 + (int64_t)i / c;
		}
		cnt++;
	}
	a->n += cnt;
	a->sxy += p.sxy;
	a->sxx += p.sxx;
	a->syy += p.syy;
	a->sdd += p.sdd;
	a->sabs += p.sabs;
}

/* Fold a block's kernel sums into a; x, y are its decoded components
 * (decoded lazily by the caller when NULL and needed for argmax). */
static void apply_part(db_accum *a, const db_part *p, size_t n)
{
	a->n += n;
	a->sxy += p->sxy;
	a->sxx += p->sxx;
	a->syy += p->syy;
	a->sdd += p->sdd;
	a->sabs += p->sabs;
	if (p->maxx > a->max_absx)
		a->max_absx = p->maxx;
}

/* First component of the block holding the block maximum p->maxd. */
static int64_t first_max(const double *x, const double *y, size_t n, double maxd)
{
	size_t j = 0;
	while (j + 1 < n && fabs(y[j] - x[j]) != maxd)
		j++;
	return (int64_t)j;
}

static void block_accum(db_accum *a, const double *x, const double *y,
                        size_t n, int64_t e0, int c)
{
	db_part p;
	db_kern_f64(x, y, n, &p);
	if (!part_finite(&p)) {
		block_careful(a, x, y, n, e0, c);
		return;
	}
	apply_part(a, &p, n);
	if (p.maxd > a->max_abs) {
		a->max_abs = p.maxd;
		a->argmax = e0 + first_max(x, y, n, p.maxd) / c;
	}
}

/* Same dtype, both contiguous little-endian: the fused kernel reads the
 * bytes once. Returns false when it declined or the block needs the
 * careful loop (then nothing was accumulated). */
static bool block_fused(db_accum *a, const db_tensor *x, const db_tensor *y,
                        int64_t e, int64_t nel, double *xb, double *yb)
{
	size_t size = db_dtype_size(x->dtype);
	const uint8_t *px = x->data + e * (int64_t)size, *py = y->data + e * (int64_t)size;
	db_part p;
	uint64_t eq = 0;
	if (!db_kern_raw(x->dtype, px, py, (size_t)nel, &p, &eq) || !part_finite(&p))
		return false;
	apply_part(a, &p, (size_t)nel);
	a->byte_eq += eq;
	if (p.maxd > a->max_abs) {
		db_decode_f64(x->dtype, px, (ptrdiff_t)size, (size_t)nel, false, xb);
		db_decode_f64(y->dtype, py, (ptrdiff_t)size, (size_t)nel, false, yb);
		a->max_abs = p.maxd;
		a->argmax = e + first_max(xb, yb, (size_t)nel, p.maxd);
	}
	return true;
}

/* ---- diff_downcast ------------------------------------------------------ */

/* Precision rank of a float dtype (0: not one the downcast knows). */
static int dc_rank(int dt)
{
	switch (dt) {
	case DB_DT_F64: return 4;
	case DB_DT_F32: return 3;
	case DB_DT_F16: case DB_DT_BF16: return 2;
	default: return 0;
	}
}

/* The narrower of two float dtypes of different precision, else 0. */
static int dc_pick(int x, int y)
{
	int rx = dc_rank(x), ry = dc_rank(y);
	if (!rx || !ry || rx == ry)
		return DB_DT_UNKNOWN;
	return rx < ry ? x : y;
}

/* v rounded to nearest even with p significant bits, 2^emin the smallest
 * normal, infinity from `over` (half an ulp above the largest finite)
 * on: torch's .to() of a float. */
static double round_to(double v, int p, int emin, double over)
{
	if (!isfinite(v) || v == 0)
		return v;
	double a = fabs(v);
	if (a >= over)
		return copysign(INFINITY, v);
	int e;
	frexp(a, &e);
	int lead = e - 1 < emin ? emin : e - 1;
	double q = ldexp(1.0, lead - (p - 1));
	return nearbyint(v / q) * q;
}

static double dc_round(int dt, double v)
{
	switch (dt) {
	case DB_DT_F32: return round_to(v, 24, -126, ldexp(2 - 0x1p-24, 127));
	case DB_DT_F16: return round_to(v, 11, -14, 65520.0);
	case DB_DT_BF16: return round_to(v, 8, -126, ldexp(2 - 0x1p-8, 127));
	default: return v;
	}
}

/* One block's components after the cast (real dtypes only: c == 1). */
static void dc_block(db_accum *a, const double *x, const double *y, size_t n)
{
	int dt = a->dc_dtype;
	for (size_t i = 0; i < n; i++) {
		double u = dc_round(dt, x[i]), v = dc_round(dt, y[i]);
		a->dc_elems++;
		if (!isfinite(u) || !isfinite(v)) {
			a->dc_eq += u == v;
			continue;
		}
		double d = v - u, ad = fabs(d), au = fabs(u);
		a->dc_eq += d == 0;
		a->dc_sxy += u * v;
		a->dc_sxx += u * u;
		a->dc_syy += v * v;
		a->dc_sdd += d * d;
		a->dc_sabs += ad;
		if (ad > a->dc_max_abs)
			a->dc_max_abs = ad;
		if (au > a->dc_max_absx)
			a->dc_max_absx = au;
		a->dc_n++;
	}
}

static void dc_merge(db_accum *into, const db_accum *from)
{
	if (!from->dc_dtype)
		return;
	into->dc_dtype = from->dc_dtype;
	into->dc_n += from->dc_n;
	into->dc_elems += from->dc_elems;
	into->dc_eq += from->dc_eq;
	into->dc_sxy += from->dc_sxy;
	into->dc_sxx += from->dc_sxx;
	into->dc_syy += from->dc_syy;
	into->dc_sdd += from->dc_sdd;
	into->dc_sabs += from->dc_sabs;
	if (from->dc_max_abs > into->dc_max_abs)
		into->dc_max_abs = from->dc_max_abs;
	if (from->dc_max_absx > into->dc_max_absx)
		into->dc_max_absx = from->dc_max_absx;
}

/* The same edge cases as the plain metrics (db_accum_finish). */
static void dc_finish(const db_accum *a, db_metrics *m)
{
	if (!a->dc_dtype || a->stats_only)
		return;
	m->dc_dtype = (db_dtype)a->dc_dtype;
	m->dc.cos = 1.0;
	m->dc.byte_equal = a->dc_elems ? (double)a->dc_eq / (double)a->dc_elems : 1.0;
	if (a->dc_n == 0)
		return;
	m->dc.max_abs = a->dc_max_abs;
	m->dc.mean_abs = a->dc_sabs / (double)a->dc_n;
	m->dc.rel = a->dc_max_abs / (a->dc_max_absx > 1e-12 ? a->dc_max_absx : 1e-12);
	if (a->dc_sxx == 0 && a->dc_syy == 0)
		return;
	double nx = sqrt(a->dc_sxx), ny = sqrt(a->dc_syy);
	if (a->dc_sxx == 0 || a->dc_syy == 0) {
		m->dc.cos = NAN;
	} else {
		double c = a->dc_sxy / (nx * ny);
		m->dc.cos = c > 1 ? 1 : (c < -1 ? -1 : c);
	}
	m->dc.rel_l2 = a->dc_sxx == 0 ? INFINITY : sqrt(a->dc_sdd) / nx;
	m->dc.rel_diff = a->dc_sdd / (a->dc_sxx + a->dc_syy);
}

/* ---- ranges ------------------------------------------------------------ */

void db_accum_range(db_accum *a, const db_tensor *x, const db_tensor *y,
                    int64_t begin, int64_t end)
{
	bool same = x->dtype == y->dtype;
	a->same_dtype = a->same_dtype < 0 ? same : (a->same_dtype && same);
	if (!same && !a->dc_dtype)
		a->dc_dtype = dc_pick(x->dtype, y->dtype);
	if (end <= begin)
		return;
	int c = db_dtype_components(x->dtype);
	int64_t per = BLK / c;
	bool xc = db_tensor_is_contiguous(x), yc = db_tensor_is_contiguous(y);
	size_t size = db_dtype_size(x->dtype);
	db_walker wx, wy, ex, ey;
	if (!xc)
		db_walker_seek(&wx, x, begin);
	if (!yc)
		db_walker_seek(&wy, y, begin);
	bool eq_fast = same && xc && yc && x->swap == y->swap;
	if (same && !eq_fast) {
		db_walker_seek(&ex, x, begin);
		db_walker_seek(&ey, y, begin);
	}
	bool fused = eq_fast && !x->swap && c == 1;
	double xb[BLK], yb[BLK];
	for (int64_t e = begin; e < end;) {
		int64_t stop = (e / per + 1) * per;     /* absolute block boundary */
		int64_t nel = (stop < end ? stop : end) - e;
		if (fused && block_fused(a, x, y, e, nel, xb, yb)) {
			a->n_elems += (uint64_t)nel;
			e += nel;
			continue;
		}
		db_gather(x, xc, &wx, e, nel, xb);
		db_gather(y, yc, &wy, e, nel, yb);
		block_accum(a, xb, yb, (size_t)(nel * c), e, c);
		if (a->dc_dtype && !same)
			dc_block(a, xb, yb, (size_t)nel);
		if (eq_fast) {
			a->byte_eq += eq_count(x->data + e * (int64_t)size,
			                       y->data + e * (int64_t)size, (size_t)nel, size);
		} else if (same) {
			for (int64_t k = 0; k < nel; k++) {
				a->byte_eq += elem_bytes_equal(x->data + ex.off, x->swap,
				                               y->data + ey.off, y->swap, size, c);
				/* past the end only bumps coord[0]; never dereferenced */
				if (x->ndim > 0)
					db_walker_advance(&ex, 1);
				if (y->ndim > 0)
					db_walker_advance(&ey, 1);
			}
		}
		a->n_elems += (uint64_t)nel;
		e += nel;
	}
}

void db_accum_merge(db_accum *into, const db_accum *from)
{
	into->n += from->n;
	into->n_elems += from->n_elems;
	into->byte_eq += from->byte_eq;
	into->sxy += from->sxy;
	into->sxx += from->sxx;
	into->syy += from->syy;
	into->sdd += from->sdd;
	into->sabs += from->sabs;
	if (from->argmax >= 0 &&
	    (from->max_abs > into->max_abs ||
	     (from->max_abs == into->max_abs && (into->argmax < 0 || from->argmax < into->argmax)))) {
		into->max_abs = from->max_abs;
		into->argmax = from->argmax;
	}
	if (from->max_absx > into->max_absx)
		into->max_absx = from->max_absx;
	into->nan_ref += from->nan_ref;
	into->nan_tgt += from->nan_tgt;
	into->inf_ref += from->inf_ref;
	into->inf_tgt += from->inf_tgt;
	into->nonfinite_mismatch += from->nonfinite_mismatch;
	if (from->stats_only) {
		into->stats_only = true;
		memcpy(into->st_rel, from->st_rel, sizeof into->st_rel);
		into->md5_eq = from->md5_eq;
	}
	if (from->same_dtype >= 0)
		into->same_dtype = into->same_dtype < 0 ? from->same_dtype
		                                        : (into->same_dtype && from->same_dtype);
	dc_merge(into, from);
	into->q_n += from->q_n;
	into->q_beyond += from->q_beyond;
	if (from->q_worst > into->q_worst ||
	    (from->q_worst == into->q_worst && from->q_worst_at >= 0 &&
	     (into->q_worst_at < 0 || from->q_worst_at < into->q_worst_at))) {
		into->q_worst = from->q_worst;
		into->q_worst_at = from->q_worst_at;
	}
}

/* Edge cases (see db_metrics.h): n == 0 (empty, or every position
 * non-finite) reads as identical; both norms zero as identical zeros; one
 * norm zero gives cos NaN. rel_diff is computed as Σ(y−x)² / Σ(x²+y²),
 * algebraically equal to 1 − 2Σxy/Σ(x²+y²) but free of its cancellation
 * when the tensors are close. */
void db_accum_finish(const db_accum *a, db_metrics *m)
{
	memset(m, 0, sizeof *m);
	m->n = a->n;
	m->nan_ref = a->nan_ref;
	m->nan_tgt = a->nan_tgt;
	m->inf_ref = a->inf_ref;
	m->inf_tgt = a->inf_tgt;
	m->nonfinite_mismatch = a->nonfinite_mismatch;
	if (a->same_dtype == 0)
		m->byte_equal = NAN;
	else
		m->byte_equal = a->n_elems ? (double)a->byte_eq / (double)a->n_elems : 1.0;
	m->argmax = -1;
	m->cos = 1.0;
	m->q_n = a->q_n;
	m->q_beyond = a->q_beyond;
	m->q_worst = a->q_worst;
	m->q_worst_at = a->q_worst_at;
	m->md5_eq = -1;
	if (a->stats_only) {
		/* what statistics cannot tell stays NaN, never a made-up 1 */
		m->stats_only = true;
		m->md5_eq = a->md5_eq;
		memcpy(m->st_rel, a->st_rel, sizeof m->st_rel);
		m->cos = m->rel_l2 = m->rel_diff = m->max_abs = m->mean_abs = NAN;
		m->byte_equal = NAN;
		m->rel = NAN;
		for (int i = 0; i < 4; i++)
			if (!isnan(a->st_rel[i]) && !(m->rel >= a->st_rel[i]))
				m->rel = a->st_rel[i];
		return;
	}
	dc_finish(a, m);
	if (a->n == 0)
		return;
	m->max_abs = a->max_abs;
	m->argmax = a->argmax;
	m->mean_abs = a->sabs / (double)a->n;
	m->rel = a->max_abs / (a->max_absx > 1e-12 ? a->max_absx : 1e-12);
	if (a->sxx == 0 && a->syy == 0)
		return;                 /* identical zeros: cos 1, the rest 0 */
	double nx = sqrt(a->sxx), ny = sqrt(a->syy);
	if (a->sxx == 0 || a->syy == 0) {
		m->cos = NAN;
	} else {
		double c = a->sxy / (nx * ny);
		m->cos = c > 1 ? 1 : (c < -1 ? -1 : c);
	}
	m->rel_l2 = a->sxx == 0 ? INFINITY : sqrt(a->sdd) / nx;
	m->rel_diff = a->sdd / (a->sxx + a->syy);
}

int db_metrics_check(const db_tensor *x, const db_tensor *y, db_err *err)
{
	if (!x->data || !y->data)
		return db_err_set(err, NULL, NULL, -1, "statistics only: no tensor data was dumped");
	if (!db_dtype_comparable(x->dtype) || !db_dtype_comparable(y->dtype))
		return db_err_set(err, NULL, NULL, -1, "not comparable: %s vs %s",
		                  db_dtype_name(x->dtype), db_dtype_name(y->dtype));
	if (db_dtype_components(x->dtype) != db_dtype_components(y->dtype))
		return db_err_set(err, NULL, NULL, -1, "not comparable: complex vs real (%s vs %s)",
		                  db_dtype_name(x->dtype), db_dtype_name(y->dtype));
	int64_t nx = db_tensor_numel(x), ny = db_tensor_numel(y);
	if (nx != ny)
		return db_err_set(err, NULL, NULL, -1, "element counts differ: %lld vs %lld",
		                  (long long)nx, (long long)ny);
	return 0;
}

int db_metrics_compute(const db_tensor *x, const db_tensor *y, db_metrics *m,
                       db_err *err)
{
	if (db_metrics_check(x, y, err) < 0)
		return -1;
	db_accum a;
	db_accum_init(&a);
	db_accum_range(&a, x, y, 0, db_tensor_numel(x));
	db_accum_finish(&a, m);
	return 0;
}

const char *db_fmt_byte_equal(double be, int utf8, char *buf, size_t len)
{
	double pc = be * 100.0;
	if (be != be)
		snprintf(buf, len, "-");
	else if (be >= 1.0)
		snprintf(buf, len, "%s", utf8 ? "≡" : "==");
	else if (pc > 99.9)     /* rounding must not claim all or none */
		snprintf(buf, len, ">99.9%%");
	else if (pc > 0 && pc < 0.1)
		snprintf(buf, len, "<0.1%%");
	else
		snprintf(buf, len, "%.1f%%", pc);
	return buf;
}
