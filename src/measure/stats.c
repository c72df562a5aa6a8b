/* Per-side statistics, top-k differences and the per-row error profile,
 * all streaming over blocks like the metrics (no float64 copies). */
#include "db_metrics.h"

#include "metrics_gather.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SBLK 1024

/* Quantized per-tensor affine tensors with a scale are dequantized, as
 * torch's dequantize() would; packed sub-byte ones (quint4x2/2x4) and those
 * without a scale give their raw integers. */
static bool dequantize(const db_tensor *t)
{
	return t->q_scale != 0 && (t->dtype == DB_DT_QINT8 || t->dtype == DB_DT_QUINT8 ||
	                           t->dtype == DB_DT_QINT32);
}

/* Population std (divide by n), merged per block with Chan's formula so a
 * large mean does not swamp the spread. Empty or all non-finite: sum 0,
 * min/max/mean/std NaN. */
int db_stats_compute(const db_tensor *t, db_stats *s, db_err *err)
{
	memset(s, 0, sizeof *s);
	if (db_dtype_size(t->dtype) == 0)
		return db_err_set(err, NULL, NULL, -1, "unknown dtype");
	if (!t->data) {
		/* statistics only: what the dumper wrote; std from Norm and Mean */
		const db_tstat *st = t->st;
		if (!st)
			return db_err_set(err, NULL, NULL, -1, "no tensor data");
		int64_t n = db_tensor_numel(t);
		s->n = (uint64_t)n;
		s->min = st->has_min ? st->min : NAN;
		s->max = st->has_max ? st->max : NAN;
		s->mean = st->has_mean ? st->mean : NAN;
		s->sum = st->has_mean ? st->mean * (double)n : NAN;
		double var = st->has_norm && st->has_mean && n > 0
			? st->norm * st->norm / (double)n - st->mean * st->mean : NAN;
		s->std = var >= 0 ? sqrt(var) : (var < 0 ? 0 : NAN);
		return 0;
	}
	int c = db_dtype_components(t->dtype);
	int64_t numel = db_tensor_numel(t), per = SBLK / c;
	bool contig = db_tensor_is_contiguous(t), deq = dequantize(t);
	db_walker w;
	if (!contig)
		db_walker_seek(&w, t, 0);
	double buf[SBLK], mean = 0, m2 = 0, mn = INFINITY, mx = -INFINITY;
	uint64_t n = 0;
	for (int64_t e = 0; e < numel; e += per) {
		int64_t nel = numel - e < per ? numel - e : per;
		db_gather(t, contig, &w, e, nel, buf);
		size_t k = 0, m = (size_t)(nel * c);
		double bsum = 0;
		for (size_t i = 0; i < m; i++) {
			double v = buf[i];
			if (deq)
				v = (v - (double)t->q_zero) * t->q_scale;
			if (isnan(v)) {
				s->nan++;
			} else if (isinf(v)) {
				s->inf++;
			} else {
				buf[k++] = v;
				bsum += v;
				mn = v < mn ? v : mn;
				mx = v > mx ? v : mx;
			}
		}
		if (k == 0)
			continue;
		double bmean = bsum / (double)k, bm2 = 0;
		for (size_t i = 0; i < k; i++)
			bm2 += (buf[i] - bmean) * (buf[i] - bmean);
		double tot = (double)(n + k), delta = bmean - mean;
		mean += delta * (double)k / tot;
		m2 += bm2 + delta * delta * (double)n * (double)k / tot;
		s->sum += bsum;
		n += k;
	}
	s->n = n;
	if (n == 0) {
		s->min = s->max = s->mean = s->std = NAN;
		return 0;
	}
	s->min = mn;
	s->max = mx;
	s->mean = mean;
	s->std = sqrt(m2 / (double)n);
	return 0;
}

/* ---- top-k: a min-heap of the k largest (diff, -index) ---------------- */

typedef struct cand {
	double d;
	int64_t i;
} cand;

/* a ranks below b: smaller diff, or equal diff and later index */
static bool cand_less(const cand *a, const cand *b)
{
	return a->d < b->d || (a->d == b->d && a->i > b->i);
}

static void heap_sift_down(cand *h, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && cand_less(&h[l], &h[m]))
			m = l;
		if (r < n && cand_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		cand tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static void heap_push(cand *h, int *n, int k, cand c)
{
	if (*n < k) {
		int i = (*n)++;
		h[i] = c;
		while (i > 0 && cand_less(&h[i], &h[(i - 1) / 2])) {
			cand tmp = h[i];
			h[i] = h[(i - 1) / 2];
			h[(i - 1) / 2] = tmp;
			i = (i - 1) / 2;
		}
	} else if (cand_less(&h[0], &c)) {
		h[0] = c;
		heap_sift_down(h, *n, 0);
	}
}

static int cand_cmp_desc(const void *pa, const void *pb)
{
	const cand *a = pa, *b = pb;
	return cand_less(b, a) ? -1 : (cand_less(a, b) ? 1 : 0);
}

/* Positions where either side is non-finite are skipped (as in max_abs).
 * For complex tensors each component counts; idx is the element index.
 * Returns 0 when the tensors cannot be compared. */
int db_topk_diff(const db_tensor *x, const db_tensor *y, int k,
                 int64_t *idx, double *absdiff)
{
	if (k <= 0 || db_metrics_check(x, y, NULL) < 0)
		return 0;
	cand *h = malloc((size_t)k * sizeof *h);
	if (!h)
		return 0;
	int c = db_dtype_components(x->dtype), n = 0;
	int64_t numel = db_tensor_numel(x), per = SBLK / c;
	bool xc = db_tensor_is_contiguous(x), yc = db_tensor_is_contiguous(y);
	db_walker wx, wy;
	if (!xc)
		db_walker_seek(&wx, x, 0);
	if (!yc)
		db_walker_seek(&wy, y, 0);
	double xb[SBLK], yb[SBLK];
	for (int64_t e = 0; e < numel; e += per) {
		int64_t nel = numel - e < per ? numel - e : per;
		db_gather(x, xc, &wx, e, nel, xb);
		db_gather(y, yc, &wy, e, nel, yb);
		for (int64_t i = 0; i < nel * c; i++) {
			double d = fabs(yb[i] - xb[i]);
			if (isfinite(xb[i]) && isfinite(yb[i]) && (n < k || d >= h[0].d))
				heap_push(h, &n, k, (cand){d, e + i / c});
		}
	}
	qsort(h, (size_t)n, sizeof *h, cand_cmp_desc);
	for (int i = 0; i < n; i++) {
		idx[i] = h[i].i;
		absdiff[i] = h[i].d;
	}
	free(h);
	return n;
}

/* Each row is a contiguous range of flat indices, so the metrics
 * accumulator does the work; edge cases as for rel_l2 (0/0 -> 0, x = 0 and
 * y != 0 -> inf). A 0-d tensor is one row. */
int64_t db_row_rel_l2(const db_tensor *x, const db_tensor *y, double *out,
                      int64_t rows)
{
	if (db_metrics_check(x, y, NULL) < 0 || rows <= 0)
		return 0;
	int64_t numel = db_tensor_numel(x);
	int64_t nrows = x->ndim > 0 ? x->shape[0] : 1;
	if (nrows <= 0)
		return 0;
	int64_t rowlen = numel / nrows;
	if (rows > nrows)
		rows = nrows;
	for (int64_t r = 0; r < rows; r++) {
		db_accum a;
		db_metrics m;
		db_accum_init(&a);
		db_accum_range(&a, x, y, r * rowlen, (r + 1) * rowlen);
		db_accum_finish(&a, &m);
		out[r] = m.rel_l2;
	}
	return rows;
}
