/* Shape/stride helpers for db_tensor views. */
#include "db_tensor.h"

#include <stddef.h>
#include <stdio.h>

#include "db_bus.h"

/* a * b, at most INT64_MAX: readers refuse shapes whose element count
 * overflows (msprobe's dump.json, quantized codes); this keeps a shape
 * that got past one from being undefined behaviour (issue 37). */
static int64_t mul_sat(int64_t a, int64_t b)
{
	int64_t v;
	return __builtin_mul_overflow(a, b, &v) ? INT64_MAX : v;
}

int64_t db_tensor_numel(const db_tensor *t)
{
	int64_t n = 1;
	for (int d = 0; d < t->ndim; d++)
		n = mul_sat(n, t->shape[d]);
	return n;
}

bool db_shape_numel(int ndim, const int64_t *shape, int64_t *n)
{
	*n = 1;
	for (int d = 0; d < ndim; d++)
		if (shape[d] < 0 || __builtin_mul_overflow(*n, shape[d], n))
			return false;
	return true;
}

bool db_tensor_is_contiguous(const db_tensor *t)
{
	if (db_tensor_numel(t) == 0)
		return true;                    /* empty: nothing to address */
	int64_t expect = 1;
	for (int d = t->ndim - 1; d >= 0; d--) {
		if (t->shape[d] != 1 && t->stride[d] != expect)
			return false;           /* size-1 dims may have any stride */
		expect = mul_sat(expect, t->shape[d]);
	}
	return true;
}

int64_t db_tensor_elem_offset(const db_tensor *t, int64_t i)
{
	int64_t off = 0;
	for (int d = t->ndim - 1; d >= 0 && i > 0; d--) {
		int64_t s = t->shape[d];
		if (s <= 0)
			return 0;
		off += (i % s) * t->stride[d];
		i /= s;
	}
	return off * (int64_t)db_dtype_size(t->dtype);
}

char *db_shape_str(const db_tensor *t, char *buf, size_t len)
{
	if (!buf || len == 0)
		return buf;
	size_t n = 0;
	int w = snprintf(buf, len, "[");
	n = w > 0 ? (size_t)w : 0;
	for (int d = 0; d < t->ndim && n < len; d++) {
		w = snprintf(buf + n, len - n, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	if (n < len)
		snprintf(buf + n, len - n, "]");
	return buf;
}

bool db_shape_equal(const db_tensor *a, const db_tensor *b)
{
	if (a->ndim != b->ndim)
		return false;
	for (int d = 0; d < a->ndim; d++)
		if (a->shape[d] != b->shape[d])
			return false;
	return true;
}

void db_tensor_set_contiguous(db_tensor *t)
{
	int64_t s = 1;
	for (int d = t->ndim - 1; d >= 0; d--) {
		t->stride[d] = s;
		s = mul_sat(s, t->shape[d] > 0 ? t->shape[d] : 1);
	}
}

typedef struct f64_job {
	const db_tensor *t;
	double *out;
	int64_t n;
} f64_job;

/* Row by row along the last dim: each row one db_decode_f64 call (the
 * vectorized loops when the row is contiguous), so hints and routing read
 * their tensors at memory speed instead of decoding element by element. */
static int f64_all(void *arg)
{
	f64_job *j = arg;
	const db_tensor *t = j->t;
	size_t es = db_dtype_size(t->dtype);
	if (t->ndim == 0 || db_dtype_is_complex(t->dtype) || !es) {
		/* complex: the real parts, as db_decode1_f64 reads them */
		for (int64_t i = 0; i < j->n; i++)
			j->out[i] = db_decode1_f64(t->dtype, t->data + db_tensor_elem_offset(t, i),
			                           t->swap);
		return 0;
	}
	int64_t w = t->shape[t->ndim - 1];
	if (w <= 0)
		return 0;
	ptrdiff_t step = (ptrdiff_t)(t->stride[t->ndim - 1] * (int64_t)es);
	for (int64_t i = 0; i < j->n; i += w) {
		int64_t len = j->n - i < w ? j->n - i : w;
		db_decode_f64(t->dtype, t->data + db_tensor_elem_offset(t, i), step, (size_t)len,
		              t->swap, j->out + i);
	}
	return 0;
}

int db_tensor_to_f64(const db_tensor *t, double *out, int64_t n, const void **fault)
{
	f64_job j = {t, out, n};
	return db_bus_run(f64_all, &j, fault) == 0 ? 0 : -1;
}
