/* Block decoding of (possibly strided) views; see metrics_gather.h. */
#include "metrics_gather.h"

void db_walker_seek(db_walker *w, const db_tensor *t, int64_t i)
{
	w->t = t;
	w->size = (int64_t)db_dtype_size(t->dtype);
	w->off = 0;
	for (int d = t->ndim - 1; d >= 0; d--) {
		int64_t s = t->shape[d];
		w->coord[d] = s > 0 ? i % s : 0;
		i = s > 0 ? i / s : 0;
		w->off += w->coord[d] * t->stride[d] * w->size;
	}
}

/* Advance by k elements along the last dimension (k stays within it), then
 * carry when the last dimension is done. */
void db_walker_advance(db_walker *w, int64_t k)
{
	const db_tensor *t = w->t;
	int last = t->ndim - 1;
	w->coord[last] += k;
	w->off += k * t->stride[last] * w->size;
	for (int d = last; d > 0 && w->coord[d] >= t->shape[d]; d--) {
		w->off -= w->coord[d] * t->stride[d] * w->size;
		w->coord[d] = 0;
		w->coord[d - 1]++;
		w->off += t->stride[d - 1] * w->size;
	}
}

/* Decode nel elements starting at flat index e (the walker's position when
 * the view is strided) into dst as nel * components doubles. */
void db_gather(const db_tensor *t, bool contig, db_walker *w, int64_t e,
               int64_t nel, double *dst)
{
	size_t size = db_dtype_size(t->dtype);
	int c = db_dtype_components(t->dtype);
	ptrdiff_t cs = (ptrdiff_t)size / c;
	if (contig) {
		db_decode_f64(t->dtype, t->data + e * (int64_t)size, cs,
		              (size_t)(nel * c), t->swap, dst);
		return;
	}
	int last = t->ndim - 1;
	while (nel > 0) {
		int64_t run = t->shape[last] - w->coord[last];
		if (run > nel)
			run = nel;
		const uint8_t *p = t->data + w->off;
		if (c == 1) {
			db_decode_f64(t->dtype, p, (ptrdiff_t)(t->stride[last] * (int64_t)size),
			              (size_t)run, t->swap, dst);
		} else {
			for (int64_t k = 0; k < run; k++)
				db_decode_f64(t->dtype, p + k * t->stride[last] * (int64_t)size,
				              cs, 2, t->swap, dst + 2 * k);
		}
		dst += run * c;
		nel -= run;
		db_walker_advance(w, run);
	}
}

