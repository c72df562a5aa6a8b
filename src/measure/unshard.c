/* Merged pairs: the unsharded tensor of a TP-sharded stage is never built
 * whole. Concat: the logical flat index is walked in runs that are
 * contiguous inside one shard (rank order), read in place. Sum of
 * partials: each run is summed in float64 into a small buffer. */
#include "pair/compare_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* One side of a merged pair: shards in rank order, unsharded by how.
 * Concat and fused are both a list of segments along dim, in logical
 * order, each a range of one shard (fused: part j of every rank, then
 * part j+1, ...). */
typedef struct side {
	const db_tensor **t;
	size_t n;
	bool sum;
	int dim;
	int64_t inner, block;   /* elements per dim step; per outer index */
	size_t nseg;
	size_t *seg_k;          /* shard of each segment */
	int64_t *seg_lo, *seg_len, *seg_soff;   /* logical start, length, start in the shard */
} side;

static int side_init(side *s, const db_tensor **t, size_t n, const db_shard_rule *r)
{
	memset(s, 0, sizeof *s);
	s->t = t;
	s->n = n;
	if (n < 2)
		return 0;
	if (r->how == DB_UNSHARD_SUM) {
		s->sum = true;
		return 0;
	}
	int nd = t[0]->ndim;
	int dim = r->dim < 0 ? r->dim + nd : r->dim;
	s->dim = dim;
	int np = r->how == DB_UNSHARD_FUSED && r->n_parts ? r->n_parts : 1;
	int64_t tot = 0;
	for (int j = 0; j < np; j++)
		tot += np > 1 ? r->parts[j] : 1;
	s->nseg = n * (size_t)np;
	s->seg_k = malloc(s->nseg * sizeof *s->seg_k);
	s->seg_lo = malloc(s->nseg * sizeof *s->seg_lo);
	s->seg_len = malloc(s->nseg * sizeof *s->seg_len);
	s->seg_soff = malloc(s->nseg * sizeof *s->seg_soff);
	if (!s->seg_k || !s->seg_lo || !s->seg_len || !s->seg_soff)
		return -1;
	s->inner = 1;
	for (int d = dim + 1; d < nd; d++)
		s->inner *= t[0]->shape[d];
	int64_t off = 0, before = 0;
	size_t i = 0;
	for (int j = 0; j < np; j++) {
		int64_t part = np > 1 ? r->parts[j] : 1;
		for (size_t k = 0; k < n; k++, i++) {
			int64_t dl = t[k]->shape[dim];
			s->seg_k[i] = k;
			s->seg_lo[i] = off;
			s->seg_len[i] = dl * part / tot;
			s->seg_soff[i] = dl * before / tot;
			off += s->seg_len[i];
		}
		before += part;
	}
	s->block = off * s->inner;
	return 0;
}

static void side_free(side *s)
{
	free(s->seg_k);
	free(s->seg_lo);
	free(s->seg_len);
	free(s->seg_soff);
}

/* Where logical element pos lives: shard, flat index inside it, and how
 * many following elements stay contiguous in that shard's flat order. */
static void locate(const side *s, int64_t pos, size_t *k, int64_t *local, int64_t *run)
{
	if (s->n < 2 || s->sum || s->block == 0) {
		*k = 0;
		*local = s->n < 2 || s->sum ? pos : 0;
		*run = INT64_MAX;
		return;
	}
	int64_t o = pos / s->block, r = pos % s->block, d = r / s->inner, in = r % s->inner;
	size_t i = 0;
	while (i + 1 < s->nseg && d >= s->seg_lo[i] + s->seg_len[i])
		i++;
	size_t sk = s->seg_k[i];
	*k = sk;
	int64_t dl = s->t[sk]->shape[s->dim];
	*local = o * dl * s->inner + (s->seg_soff[i] + d - s->seg_lo[i]) * s->inner + in;
	*run = (s->seg_lo[i] + s->seg_len[i] - d) * s->inner - in;
}

static void view_1d(const db_tensor *t, int64_t off, int64_t len, db_tensor *v)
{
	*v = *t;
	v->ndim = 1;
	v->shape[0] = len;
	v->stride[0] = 1;
	v->data = t->data + off * (int64_t)db_dtype_size(t->dtype);
	if (v->file_offset >= 0)
		v->file_offset += off * (int64_t)db_dtype_size(t->dtype);
}

/* Decode elements [off, off+len) of t to doubles (complex: re, im). */
static void decode_range(const db_tensor *t, int64_t off, int64_t len, double *dst)
{
	size_t isz = db_dtype_size(t->dtype);
	int comp = db_dtype_components(t->dtype);
	ptrdiff_t step = (ptrdiff_t)(isz / (size_t)comp);
	if (db_tensor_is_contiguous(t)) {
		db_decode_f64(t->dtype, t->data + off * (int64_t)isz, step,
		              (size_t)(len * comp), t->swap, dst);
		return;
	}
	for (int64_t i = 0; i < len; i++)
		db_decode_f64(t->dtype, t->data + db_tensor_elem_offset(t, off + i), step,
		              (size_t)comp, t->swap, dst + i * comp);
}

static void f64_view(double *buf, int64_t len, bool complex, db_tensor *v)
{
	memset(v, 0, sizeof *v);
	v->dtype = complex ? DB_DT_C128 : DB_DT_F64;
	v->ndim = 1;
	v->shape[0] = len;
	v->stride[0] = 1;
	v->data = (const uint8_t *)buf;
	v->file_offset = -1;
}

/* A view of logical elements [pos, pos+len) of side s, which must lie in
 * one run. Zero-copy for a contiguous shard, else decoded into buf. */
static void side_view(const side *s, int64_t pos, int64_t len, double *buf,
                      double *scratch, db_tensor *v)
{
	bool cplx = db_dtype_is_complex(s->t[0]->dtype);
	int comp = cplx ? 2 : 1;
	if (s->sum) {
		decode_range(s->t[0], pos, len, buf);
		for (size_t k = 1; k < s->n; k++) {
			decode_range(s->t[k], pos, len, scratch);
			for (int64_t i = 0; i < len * comp; i++)
				buf[i] += scratch[i];
		}
		f64_view(buf, len, cplx, v);
		return;
	}
	size_t k;
	int64_t local, run;
	locate(s, pos, &k, &local, &run);
	if (db_tensor_is_contiguous(s->t[k])) {
		view_1d(s->t[k], local, len, v);
		return;
	}
	decode_range(s->t[k], local, len, buf);
	f64_view(buf, len, cplx, v);
}

static bool needs_buffer(const side *s, int64_t pos)
{
	if (s->sum)
		return true;
	size_t k;
	int64_t local, run;
	locate(s, pos, &k, &local, &run);
	return !db_tensor_is_contiguous(s->t[k]);
}

static int get_tensors(db_wctx *w, const db_index *ix, const db_item *const *items,
                       size_t n, const db_tensor **out, const db_file **files, db_err *err)
{
	for (size_t i = 0; i < n; i++)
		if (db_wctx_tensor(w, ix, items[i], &out[i], &files[i], err) != 0)
			return -1;
		else if (!out[i]->data)
			/* statistics of shards do not add up to the whole's */
			return db_err_set(err, NULL, NULL, -1, "statistics only: shards cannot be merged");
	return 0;
}

/* A token-aligned merged pair (slot given, compare/align_tokens.c): logical
 * element pos of the step side is this element of the whole side, whose
 * token dim is longer; *run: how many after it stay in order there. */
static int64_t slot_pos(const db_pair *p, int64_t pos, int64_t *run)
{
	bool ref_whole = p->slot.side == 1;
	const int64_t *small = ref_whole ? p->shape_tgt : p->shape_ref;
	const int64_t *whole = ref_whole ? p->shape_ref : p->shape_tgt;
	int nd = ref_whole ? p->ndim_tgt : p->ndim_ref;
	int64_t inner = 1;      /* the same on both sides: only size-1 axes differ */
	for (int i = p->slot.sdim + 1; i < nd; i++)
		inner *= small[i];
	int64_t blk = p->slot.len * inner, o = pos / blk, r = pos % blk;
	*run = blk - r;
	return (o * whole[p->slot.dim] + atomic_load(&((db_pair *)p)->slot.start)) * inner + r;
}

int db_unshard_accum(db_compare *c, db_wctx *w, const db_pair *p, int64_t b,
                     int64_t e, db_accum *a, db_err *err)
{
	const db_shard_rule *r = &p->unshard;
	size_t nr = p->n_ref_shards, nt = p->n_tgt_shards;
	const db_tensor **tr = malloc((nr + nt) * sizeof *tr);
	const db_file **fr = malloc((nr + nt) * sizeof *fr);
	if (!tr || !fr) {
		free(tr);
		free(fr);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	const db_tensor **tt = tr + nr;
	side sx, sy;
	int rc = -1;
	memset(&sx, 0, sizeof sx);
	memset(&sy, 0, sizeof sy);
	if (get_tensors(w, c->ref, p->ref_shards, nr, tr, fr, err) != 0 ||
	    get_tensors(w, c->tgt, p->tgt_shards, nt, tt, fr + nr, err) != 0)
		goto out;
	if (side_init(&sx, tr, nr, r) != 0 || side_init(&sy, tt, nt, r) != 0) {
		db_err_set(err, NULL, NULL, -1, "out of memory");
		goto out;
	}
	bool sl = p->slot.side == 1 || p->slot.side == 2;
	for (int64_t pos = b; pos < e;) {
		size_t kx, ky;
		int64_t lx, ly, runx, runy, runs = INT64_MAX, px = pos, py = pos;
		if (sl && p->slot.side == 1)
			px = slot_pos(p, pos, &runs);
		else if (sl)
			py = slot_pos(p, pos, &runs);
		locate(&sx, px, &kx, &lx, &runx);
		locate(&sy, py, &ky, &ly, &runy);
		int64_t len = e - pos;
		if (runx < len)
			len = runx;
		if (runy < len)
			len = runy;
		if (runs < len)
			len = runs;
		if ((needs_buffer(&sx, px) || needs_buffer(&sy, py)) && len > DB_SEG_ELEMS)
			len = DB_SEG_ELEMS;
		db_tensor vx, vy;
		side_view(&sx, px, len, w->buf[0], w->buf[2], &vx);
		side_view(&sy, py, len, w->buf[1], w->buf[3], &vy);
		db_accum part;
		db_accum_init(&part);
		db_accum_range(&part, &vx, &vy, 0, len);
		if (part.argmax >= 0)
			part.argmax += pos;
		db_accum_merge(a, &part);
		pos += len;
	}
	rc = 0;
	/* a chunk touches every shard (concat along the last dim interleaves
	 * them): let all their pages go; other chunks fault back what they need */
	for (size_t i = 0; i < nr + nt; i++)
		db_advise(fr[i], tr[i], 0, db_tensor_numel(tr[i]), MADV_DONTNEED);
out:
	side_free(&sx);
	side_free(&sy);
	free(tr);
	free(fr);
	return rc;
}
