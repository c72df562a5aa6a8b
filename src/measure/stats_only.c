/* Pairs measured on statistics alone: msprobe's statistics and md5 tasks
 * write Max, Min, Mean and Norm (and a CRC-32) per tensor and no data. A
 * side that does hold the tensor is reduced to the same four numbers, so a
 * tensor-mode tree and a statistics-mode tree still compare. */
#include "db_metrics.h"

#include <math.h>
#include <string.h>

/* The four statistics of a tensor held in memory. */
static int stat_of(const db_tensor *t, db_tstat *s, db_err *err)
{
	memset(s, 0, sizeof *s);
	if (!t->data)
		return db_err_set(err, NULL, NULL, -1, "statistics only, and none were dumped");
	if (!db_dtype_comparable(t->dtype) || db_dtype_is_complex(t->dtype))
		return db_err_set(err, NULL, NULL, -1, "not comparable on statistics: %s",
		                  db_dtype_name(t->dtype));
	int64_t n = db_tensor_numel(t);
	double mx = -INFINITY, mn = INFINITY, sum = 0, ss = 0;
	for (int64_t i = 0; i < n; i++) {
		double v = db_decode1_f64(t->dtype, t->data + db_tensor_elem_offset(t, i), t->swap);
		mx = v > mx ? v : mx;
		mn = v < mn ? v : mn;
		sum += v;
		ss += v * v;
	}
	if (n > 0) {
		s->max = mx;
		s->min = mn;
		s->mean = sum / (double)n;
		s->norm = sqrt(ss);
		s->has_max = s->has_min = s->has_mean = s->has_norm = true;
	}
	return 0;
}

/* How far statistic y is from x. NaN only when neither side has a number
 * (nothing to compare: said so, not ok); NaN or ±inf against another value
 * is as far as it gets (issue 37: a NaN Max in the target read "rel 0"). */
static double reld(double x, double y, double scale)
{
	if (x == y)
		return 0;       /* also both ±inf */
	if (isnan(x) && isnan(y))
		return NAN;
	if (!isfinite(x) || !isfinite(y))
		return INFINITY;
	double r = fabs(y - x) / (scale > 1e-12 ? scale : 1e-12);
	return isnan(r) ? INFINITY : r;   /* a scale of inf or NaN */
}

int db_accum_stats(db_accum *a, const db_tensor *x, const db_tensor *y, db_err *err)
{
	db_tstat sx, sy;
	if (x->st)
		sx = *x->st;
	else if (stat_of(x, &sx, err))
		return -1;
	if (y->st)
		sy = *y->st;
	else if (stat_of(y, &sy, err))
		return -1;
	int64_t n = db_tensor_numel(x);
	double amax = fmax(fabs(sx.has_max ? sx.max : 0), fabs(sx.has_min ? sx.min : 0));
	/* Mean is near 0 in most activations: measured against the RMS, a
	 * drift of the mean reads as what it does to the values */
	double rms = sx.has_norm && n > 0 ? sx.norm / sqrt((double)n) : amax;
	a->stats_only = true;
	a->st_rel[0] = sx.has_max && sy.has_max ? reld(sx.max, sy.max, amax) : NAN;
	a->st_rel[1] = sx.has_min && sy.has_min ? reld(sx.min, sy.min, amax) : NAN;
	a->st_rel[2] = sx.has_mean && sy.has_mean ? reld(sx.mean, sy.mean, rms) : NAN;
	a->st_rel[3] = sx.has_norm && sy.has_norm ? reld(sx.norm, sy.norm, sx.norm) : NAN;
	a->md5_eq = sx.has_crc && sy.has_crc ? sx.crc == sy.crc : -1;
	a->n = a->n_elems = (uint64_t)(n > 0 ? n : 0);
	return 0;
}
