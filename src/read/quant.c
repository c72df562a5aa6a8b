/* The arithmetic of quantized formats (db_quant.h): code values, the step
 * rounding can cost at a value, scale bytes, and how a scale tensor tiles
 * the weight it scales. Names of tensors are not known here. */
#include "db_quant.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *db_qvalues_name(db_qvalues v)
{
	switch (v) {
	case DB_QV_FP8: return "fp8";
	case DB_QV_E2M1: return "e2m1";
	case DB_QV_INT8: return "int8";
	case DB_QV_INT4: return "int4";
	}
	return "?";
}

bool db_quant_codes_fit(const db_quant_rule *r, db_dtype dt)
{
	switch (r->values) {
	case DB_QV_FP8:
		return db_dtype_is_fp8(dt) && dt != DB_DT_F8_E8M0FNU;
	case DB_QV_E2M1:
		return dt == DB_DT_U8 || dt == DB_DT_I8 || dt == DB_DT_F4_E2M1FN_X2;
	case DB_QV_INT8:
		return dt == DB_DT_I8 || dt == DB_DT_U8;
	case DB_QV_INT4:
		return db_quant_words(dt);
	}
	return false;
}

bool db_quant_words(db_dtype dt)
{
	return dt == DB_DT_I32 || dt == DB_DT_U32;
}

/* The last two dims swapped (a transposed rule's stored grid). */
static void swap_last2(int nd, int64_t *s)
{
	if (nd < 2)
		return;
	int64_t t = s[nd - 2];
	s[nd - 2] = s[nd - 1];
	s[nd - 1] = t;
}

/* *d times k, checked: a file may declare codes [0, 2^61] (no bytes, so
 * no size check stops it) and times 8 was signed overflow (issue 37). */
static int grow(int64_t *d, int64_t k, const db_quant_rule *r, char *msg, size_t msglen)
{
	int64_t v;
	if (*d < 0 || k < 0 || __builtin_mul_overflow(*d, k, &v)) {
		snprintf(msg, msglen, "codes' dim of %lld times %lld (rule %s) overflows 64 bits",
		         (long long)*d, (long long)k, r->name);
		return -1;
	}
	*d = v;
	return 0;
}

/* The logical shape's element count fits 63 bits (numel and offsets are
 * int64 everywhere after this). */
static int whole(int nd, const int64_t *s, const db_quant_rule *r, char *msg, size_t msglen)
{
	int64_t n = 1;
	for (int d = 0; d < nd; d++)
		if (__builtin_mul_overflow(n, s[d], &n)) {
			snprintf(msg, msglen, "the weight rule %s reads from these codes has more "
			         "than 2^63 elements", r->name);
			return -1;
		}
	return 0;
}

int db_quant_logical_shape(const db_quant_rule *r, db_dtype dt, int ndim,
                           const int64_t *shape, int *lndim, int64_t *lshape,
                           char *msg, size_t msglen)
{
	if (!db_quant_codes_fit(r, dt)) {
		snprintf(msg, msglen, "%s codes cannot be %s", db_dtype_name(dt),
		         db_qvalues_name(r->values));
		return -1;
	}
	bool packed = r->values == DB_QV_E2M1;
	if (r->values == DB_QV_INT4) {
		if (ndim < 2) {
			snprintf(msg, msglen, "%d-d codes: %s needs at least 2 dims", ndim, r->name);
			return -1;
		}
		memcpy(lshape, shape, (size_t)ndim * sizeof *lshape);
		*lndim = ndim;
		int pd = ndim - 2 + (r->pack_dim ? 1 : 0);
		if (grow(&lshape[pd], 8, r, msg, msglen) || whole(*lndim, lshape, r, msg, msglen))
			return -1;
		if (r->transposed)
			swap_last2(ndim, lshape);
		return 0;
	}
	int need = r->split > 0 ? 2 : packed ? 1 : 0;
	if (ndim < need) {
		snprintf(msg, msglen, "%d-d codes: %s needs at least %d dims",
		         ndim, r->name, need);
		return -1;
	}
	memcpy(lshape, shape, (size_t)ndim * sizeof *lshape);
	*lndim = ndim;
	if (r->split > 0) {
		if (shape[ndim - 1] != r->split) {
			snprintf(msg, msglen, "codes' last dim is %lld, rule %s splits rows in %d bytes",
			         (long long)shape[ndim - 1], r->name, r->split);
			return -1;
		}
		lshape[ndim - 2] = shape[ndim - 2];
		*lndim = ndim - 1;
		if (grow(&lshape[ndim - 2], shape[ndim - 1], r, msg, msglen))
			return -1;
	}
	if (packed && grow(&lshape[*lndim - 1], 2, r, msg, msglen))
		return -1;
	return whole(*lndim, lshape, r, msg, msglen);
}

int db_quant_blocks(const db_quant_rule *r, int lndim, const int64_t *lshape,
                    int sndim, const int64_t *sshape, int64_t *block,
                    char *msg, size_t msglen)
{
	int64_t s[DB_MAX_DIMS];
	int64_t snumel = 1;
	for (int d = 0; d < sndim; d++)
		snumel *= sshape[d];
	if (sndim > lndim && snumel != 1) {
		snprintf(msg, msglen, "scale has %d dims, the weight %d", sndim, lndim);
		return -1;
	}
	/* a scalar (or [1]) scales the whole tensor; fewer dims pad on the right */
	for (int d = 0; d < lndim; d++)
		s[d] = snumel == 1 ? 1 : d < sndim ? sshape[d] : 1;
	for (int d = 0; d < lndim; d++) {
		int64_t L = lshape[d], want = 0;
		int rb = d == lndim - 1 ? r->block[1] : d == lndim - 2 ? r->block[0] : 0;
		if (rb > 0 && s[d] != 1) {
			block[d] = rb;
			want = (L + rb - 1) / rb;
		} else if (s[d] == 1) {
			block[d] = L > 0 ? L : 1;
			want = 1;
		} else if (s[d] > 0 && L % s[d] == 0) {
			block[d] = L / s[d];
			want = s[d];
		} else {
			want = -1;
		}
		if (want != s[d]) {
			char ls[160], ss[160];
			int n = 0;
			for (int k = 0; k < lndim && n < (int)sizeof ls - 24; k++)
				n += snprintf(ls + n, sizeof ls - (size_t)n, "%s%lld", k ? ", " : "",
				              (long long)lshape[k]);
			n = 0;
			ss[0] = 0;
			for (int k = 0; k < sndim && n < (int)sizeof ss - 24; k++)
				n += snprintf(ss + n, sizeof ss - (size_t)n, "%s%lld", k ? ", " : "",
				              (long long)sshape[k]);
			if (rb > 0)
				snprintf(msg, msglen, "scale [%s] does not tile weight [%s] in blocks of "
				         "%d along dim %d (%lld blocks)", ss, ls, rb, d, (long long)want);
			else
				snprintf(msg, msglen, "scale [%s] does not tile weight [%s] along dim %d",
				         ss, ls, d);
			return -1;
		}
	}
	return 0;
}

int db_quant_scale_blocks(const db_quant_rule *r, int lndim, const int64_t *lshape,
                          int sndim, const int64_t *sshape, int64_t *block,
                          char *msg, size_t msglen)
{
	int64_t st[DB_MAX_DIMS];
	memcpy(st, lshape, (size_t)lndim * sizeof *st);
	if (r->transposed)
		swap_last2(lndim, st);
	if (db_quant_blocks(r, lndim, st, sndim, sshape, block, msg, msglen))
		return -1;
	if (r->transposed)
		swap_last2(lndim, block);
	/* a group of int4 codes shares one output row: a scale spanning rows
	 * would be another layout's scales (AWQ's read as GPTQ's) */
	if (r->values == DB_QV_INT4 && lndim >= 2 && block[lndim - 2] != 1) {
		snprintf(msg, msglen, "int4 scales cover %lld output rows each, not one",
		         (long long)block[lndim - 2]);
		return -1;
	}
	return 0;
}

void db_quant_zero_shape(const db_quant_rule *r, db_dtype zdt, int ndim, const int64_t *shape,
                         int64_t *out)
{
	memcpy(out, shape, (size_t)ndim * sizeof *out);
	if (r->values == DB_QV_INT4 && db_quant_words(zdt) && ndim >= 2)
		out[ndim - 2 + (r->zero_pack_dim ? 1 : 0)] *= 8;
}

double db_quant_code_value(db_dtype dt, db_qvalues v, unsigned code)
{
	uint8_t b = (uint8_t)code;
	switch (v) {
	case DB_QV_FP8: return db_decode1_f64(dt, &b, false);
	case DB_QV_E2M1: return db_e2m1_f64(code & 15);
	case DB_QV_INT8: return dt == DB_DT_I8 ? (double)(int8_t)b : (double)b;
	case DB_QV_INT4: return (double)(code & 15);
	}
	return NAN;
}

/* mantissa bits and exponent bias of the fp8 flavours */
static void fp8_params(db_dtype dt, int *mbits, int *bias)
{
	switch (dt) {
	case DB_DT_F8_E5M2: *mbits = 2; *bias = 15; return;
	case DB_DT_F8_E5M2FNUZ: *mbits = 2; *bias = 16; return;
	case DB_DT_F8_E4M3FNUZ: *mbits = 3; *bias = 8; return;
	default: *mbits = 3; *bias = 7; return;
	}
}

double db_quant_code_step(db_dtype dt, db_qvalues v, double value)
{
	double a = fabs(value);
	switch (v) {
	case DB_QV_FP8: {
		int m, bias;
		fp8_params(dt, &m, &bias);
		int e;
		frexp(a, &e);   /* a = f * 2^e, f in [0.5, 1): floor(log2 a) = e - 1 */
		int emin = 1 - bias;
		if (a == 0 || !isfinite(a) || e - 1 < emin)
			return ldexp(1.0, emin - m);     /* subnormal spacing */
		return ldexp(1.0, e - 1 - m);
	}
	case DB_QV_E2M1:
		return a < 2 ? 0.5 : a < 4 ? 1.0 : 2.0;
	case DB_QV_INT8:
	case DB_QV_INT4:
		return 1.0;
	}
	return NAN;
}

double db_quant_scale_value(const db_quant_rule *r, db_dtype dt, const uint8_t *p, bool swap)
{
	if (dt == DB_DT_U8 && r->scale_type == DB_QS_E8M0)
		return *p == 0xff ? NAN : ldexp(1.0, (int)*p - 127);
	if (dt == DB_DT_U8 && r->scale_type == DB_QS_E4M3)
		return db_decode1_f64(DB_DT_F8_E4M3FN, p, false);
	return db_decode1_f64(dt, p, swap);
}

bool db_xform_fits(const db_xform *x, int nd, const int64_t *shape)
{
	if (!x || x->kind == DB_XF_NONE)
		return true;
	if (nd < 2)
		return false;
	int64_t n = shape[nd - 2], k = shape[nd - 1];
	if (x->kind == DB_XF_GATE_UP)
		return n >= 2 && n % 2 == 0;
	if (x->kind == DB_XF_TRANSPOSE)
		return n > 0 && k > 0;
	if (x->kind == DB_XF_E8M0)
		return n > 0 && k > 0 && n % 32 == 0 && k % 8 == 0;
	return x->a > 0 && x->b > 0 && x->d > 0 && x->b % x->d == 0 && n % x->a == 0 &&
	       k % x->b == 0 && n > 0 && k > 0;
}

int64_t db_xform_index(const db_xform *x, int nd, const int64_t *shape, int64_t i)
{
	if (!x || x->kind == DB_XF_NONE)
		return i;
	if (x->kind == DB_XF_TRANSPOSE) {
		/* stored [K, N]: logical (n, k) of [N, K] sits at k * N + n */
		int64_t Ks = shape[nd - 2], Ns = shape[nd - 1], m = Ks * Ns;
		int64_t b0 = i / m * m, rr = i % m;
		return b0 + rr % Ks * Ns + rr / Ks;
	}
	if (x->kind == DB_XF_E8M0) {
		/* logical (r, c) = (a*32 + b*16 + h, d*8 + e*4 + f) sits at
		 * (a, d, f, h, e, b) of sizes (M/32, N/8, 4, 16, 2, 2) */
		int64_t M = shape[nd - 2], Nn = shape[nd - 1], m = M * Nn;
		int64_t b0 = i / m * m, rr = i % m, r = rr / Nn, cc = rr % Nn;
		int64_t a = r / 32, b = r / 16 % 2, h = r % 16, d = cc / 8, e = cc / 4 % 2, f = cc % 4;
		return b0 + ((((a * (Nn / 8) + d) * 4 + f) * 16 + h) * 2 + e) * 2 + b;
	}
	int64_t N = shape[nd - 2], K = shape[nd - 1];
	int64_t mat = N * K, base = i / mat * mat, r = i % mat;
	int64_t n = r / K, k = r % K;
	if (x->kind == DB_XF_GATE_UP) {
		int64_t half = N / 2;
		int64_t sn = n < half ? 2 * n : 2 * (n - half) + 1;
		return base + sn * K + k;
	}
	int64_t n1 = n / x->a, n0 = n % x->a, k1 = k / x->b, kr = k % x->b;
	int64_t c = kr / x->d, dd = kr % x->d;
	return base + ((((n1 * (K / x->b) + k1) * (x->b / x->d) + c) * x->a + n0) * x->d + dd);
}

uint8_t db_quant_nearest_fp8(db_dtype dt, double v)
{
	/* every finite code; ties to the even code, as hardware rounds */
	uint8_t best = 0;
	double bd = INFINITY;
	for (unsigned c = 0; c < 256; c++) {
		uint8_t b = (uint8_t)c;
		double x = db_decode1_f64(dt, &b, false);
		if (!isfinite(x))
			continue;
		double d = fabs(x - v);
		if (d < bd || (d == bd && !(c & 1) && (best & 1))) {
			bd = d;
			best = b;
		}
	}
	return best;
}
