/* The values of a pair one or both of whose sides are dequantized (or read
 * through a layout transform), a segment at a time, and their
 * accumulation. Merged (unsharded) pairs of quantized shards: each rank's
 * codes are dequantized with that rank's own scales, and the dequantized
 * shards concatenated along the shard dim (a TP split of a block-scaled
 * weight splits its scales with it). Concat only: a sum of quantized
 * partials is no checkpoint's layout. */
#include "dequant.h"
#include "xform.h"

#include <math.h>
#include <string.h>


/* Where logical element pos of the concatenation lives: shard k, its flat
 * index there, and how many elements stay in that shard from there. */
static void locate(const db_item *const *sh, size_t n, int dim, int64_t pos, size_t *k,
                   int64_t *local, int64_t *run)
{
	const db_item *t0 = sh[0];
	int64_t inner = 1, tot = 0;
	for (int d = dim + 1; d < t0->ndim; d++)
		inner *= t0->shape[d];
	for (size_t i = 0; i < n; i++)
		tot += sh[i]->shape[dim];
	int64_t block = tot * inner;
	if (n < 2 || block == 0) {
		*k = 0;
		*local = pos;
		*run = INT64_MAX;
		return;
	}
	int64_t o = pos / block, r = pos % block, d = r / inner, in = r % inner, off = 0;
	size_t i = 0;
	while (i + 1 < n && d >= off + sh[i]->shape[dim])
		off += sh[i++]->shape[dim];
	int64_t dl = sh[i]->shape[dim];
	*k = i;
	*local = o * dl * inner + (d - off) * inner + in;
	*run = (off + dl - d) * inner - in;
}

int64_t db_dequant_values(db_compare *c, db_wctx *w, const db_pair *p, const db_xform *xf,
                          int64_t pos, int64_t n, double *x, double *y, double *tol, db_err *err)
{
	double *ty = w->buf[3];
	if (n > DB_SEG_ELEMS)
		n = DB_SEG_ELEMS;
	if (!p->merged) {
		bool onref = xf && db_pair_xform_on_ref(c, p);
		if (db_side_fill(w, c->ref, p->ref, onref ? xf : NULL, pos, n, x, tol, err) != 0 ||
		    db_side_fill(w, c->tgt, p->tgt, onref ? NULL : xf, pos, n, y, ty, err) != 0)
			return -1;
	} else {
		const db_shard_rule *r = &p->unshard;
		if (r->how != DB_UNSHARD_CONCAT)
			return db_err_set(err, NULL, NULL, -1, "quantized shards are only concatenated, "
			                  "not %s", r->how == DB_UNSHARD_SUM ? "summed" : "un-fused");
		int nd = p->ndim_ref, dim = r->dim < 0 ? r->dim + nd : r->dim;
		if (dim < 0 || dim >= nd)
			return db_err_set(err, NULL, NULL, -1, "shard dim %d outside %d dims", r->dim, nd);
		size_t kx, ky;
		int64_t lx, ly, rx, ry;
		locate(p->ref_shards, p->n_ref_shards, dim, pos, &kx, &lx, &rx);
		locate(p->tgt_shards, p->n_tgt_shards, dim, pos, &ky, &ly, &ry);
		if (rx < n)
			n = rx;
		if (ry < n)
			n = ry;
		if (db_side_fill(w, c->ref, p->ref_shards[kx], NULL, lx, n, x, tol, err) != 0 ||
		    db_side_fill(w, c->tgt, p->tgt_shards[ky], NULL, ly, n, y, ty, err) != 0)
			return -1;
	}
	/* a bf16 rounding of the value on top of both sides' steps */
	for (int64_t k = 0; k < n; k++)
		tol[k] += ty[k] + 0x1p-8 * fmax(fabs(x[k]), fabs(y[k]));
	return n;
}

int db_dequant_accum(db_compare *c, db_wctx *w, const db_pair *p, const db_xform *xf,
                     int64_t b, int64_t e, db_accum *a, db_err *err)
{
	double *x = w->buf[0], *y = w->buf[1], *tol = w->buf[2];
	db_tensor vx = {0};
	vx.dtype = DB_DT_F64;
	vx.ndim = p->ndim_ref;
	memcpy(vx.shape, p->shape_ref, sizeof vx.shape);
	db_tensor_set_contiguous(&vx);
	vx.file_offset = -1;
	db_tensor vy = vx;
	for (int64_t pos = b; pos < e;) {
		int64_t n = db_dequant_values(c, w, p, xf, pos, e - pos, x, y, tol, err);
		if (n < 0)
			return -1;
		/* flat indices as on the whole tensor: blocks and argmax agree */
		vx.data = (const uint8_t *)((uintptr_t)x - (uintptr_t)(pos * 8));
		vy.data = (const uint8_t *)((uintptr_t)y - (uintptr_t)(pos * 8));
		db_accum_range(a, &vx, &vy, pos, pos + n);
		db_accum_floor(a, pos, x, y, tol, n);
		pos += n;
	}
	return 0;
}
