/* The reference loop: one element at a time, flat index -> byte offset,
 * scalar decode, plain running sums. Slow and obvious on purpose; the fast
 * path in metrics.c is tested against it. Edge-case handling is shared
 * through db_accum_finish. */
#include "db_metrics.h"

#include <math.h>
#include <string.h>

static bool bytes_equal(const uint8_t *p, bool pswap, const uint8_t *q, bool qswap,
                        size_t size, size_t cs)
{
	for (size_t i = 0; i < size; i++) {
		size_t qi = pswap == qswap ? i : i / cs * cs + cs - 1 - i % cs;
		if (p[i] != q[qi])
			return false;
	}
	return true;
}

int db_metrics_reference(const db_tensor *x, const db_tensor *y,
                         db_metrics *m, db_err *err)
{
	if (db_metrics_check(x, y, err) < 0)
		return -1;
	db_accum a;
	db_accum_init(&a);
	a.same_dtype = x->dtype == y->dtype;
	int c = db_dtype_components(x->dtype);
	size_t csx = db_dtype_size(x->dtype) / (size_t)c;
	size_t csy = db_dtype_size(y->dtype) / (size_t)c;
	int64_t numel = db_tensor_numel(x);
	for (int64_t i = 0; i < numel; i++) {
		const uint8_t *px = x->data + db_tensor_elem_offset(x, i);
		const uint8_t *py = y->data + db_tensor_elem_offset(y, i);
		if (a.same_dtype)
			a.byte_eq += bytes_equal(px, x->swap, py, y->swap,
			                         db_dtype_size(x->dtype), csx);
		a.n_elems++;
		for (int k = 0; k < c; k++) {
			double u = db_decode1_f64(x->dtype, px + k * csx, x->swap);
			double v = db_decode1_f64(y->dtype, py + k * csy, y->swap);
			if (!isfinite(u) || !isfinite(v)) {
				a.nan_ref += isnan(u) != 0;
				a.inf_ref += isinf(u) != 0;
				a.nan_tgt += isnan(v) != 0;
				a.inf_tgt += isinf(v) != 0;
				bool same_nonfinite = (isnan(u) && isnan(v)) || (isinf(u) && u == v);
				if (!same_nonfinite)
					a.nonfinite_mismatch++;
				continue;
			}
			double d = v - u;
			a.n++;
			a.sxy += u * v;
			a.sxx += u * u;
			a.syy += v * v;
			a.sdd += d * d;
			a.sabs += fabs(d);
			if (fabs(u) > a.max_absx)
				a.max_absx = fabs(u);
			if (fabs(d) > a.max_abs) {
				a.max_abs = fabs(d);
				a.argmax = i;
			}
		}
	}
	db_accum_finish(&a, m);
	return 0;
}
