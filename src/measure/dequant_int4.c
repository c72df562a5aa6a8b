/* int4 codes eight to a 32-bit word (dequant.h): GPTQ's qweight packed
 * along the input dim and stored [in, out], AWQ's packed along the output
 * dim in its nibble order, compressed-tensors' weight_packed [out, in/8]
 * with q + 8 stored. The rule (db_quant.h) says which; here every logical
 * element (o, i) of the [out, in] weight finds its word and nibble, its
 * group (the scale's column, or g_idx[i]) and its zero point, packed or
 * plain. value = (nibble + offset - zero) * scale; its step is one scale. */
#include "dequant.h"

#include <math.h>
#include <string.h>

static uint32_t word_at(const db_tensor *t, int64_t i)
{
	uint32_t w;
	memcpy(&w, t->data + (db_tensor_is_contiguous(t) ? i * 4 : db_tensor_elem_offset(t, i)), 4);
	return t->swap ? __builtin_bswap32(w) : w;
}

static double plain_at(const db_tensor *t, int64_t i)
{
	return db_decode1_f64(t->dtype, t->data + db_tensor_elem_offset(t, i), t->swap);
}

/* Nibble k of the eight along the packed dim, in a word of a stored grid
 * (rows, cols as unpacked) packed along dim pd (0 rows, 1 cols). */
static unsigned nibble(const db_qview *q, const db_tensor *t, int64_t lead, int64_t r,
                       int64_t c, int pd)
{
	int nd = t->ndim;
	int64_t w0 = t->shape[nd - 2], w1 = t->shape[nd - 1];
	int64_t at = lead * w0 * w1 + (pd == 0 ? (r / 8) * w1 + c : r * w1 + c / 8);
	int k = (int)((pd == 0 ? r : c) % 8);
	return (word_at(t, at) >> (4 * q->npos[k])) & 15u;
}

/* Logical element f's place: its leading index (over dims before the last
 * two), output row o, input column i, its group bi (-1 when g_idx points
 * past the scales) and its scale's flat index. */
typedef struct place {
	int64_t lead, o, i, bo, bi, sl, sf;
} place;

static void locate(const db_qview *q, int64_t f, place *p)
{
	const db_qgroup *g = q->g;
	int nd = g->ndim;
	int64_t L0 = g->shape[nd - 2], L1 = g->shape[nd - 1], mat = L0 * L1;
	p->lead = mat ? f / mat : 0;
	int64_t rem = mat ? f % mat : 0;
	p->o = L1 ? rem / L1 : 0;
	p->i = L1 ? rem % L1 : 0;
	/* the leading dims' block index over the scales' leading grid */
	int64_t l = p->lead, sl = 0, mul = 1;
	for (int d = nd - 3; d >= 0; d--) {
		int64_t cd = g->shape[d] ? l % g->shape[d] : 0;
		l = g->shape[d] ? l / g->shape[d] : 0;
		sl += cd / g->block[d] * mul;
		mul *= q->nblk[d];
	}
	p->sl = sl;
	int64_t nbo = q->nblk[nd - 2], nbi = q->nblk[nd - 1];
	p->bo = p->o / g->block[nd - 2];
	p->bi = p->i / g->block[nd - 1];
	if (q->gidx && nbi > 1) {
		double gi = plain_at(q->gidx, p->i);
		p->bi = gi >= 0 && gi < (double)nbi ? (int64_t)gi : -1;
	}
	if (p->bi < 0) {
		p->sf = -1;
		return;
	}
	p->sf = sl * nbo * nbi + (g->rule->transposed ? p->bi * nbo + p->bo : p->bo * nbi + p->bi);
}

static double scale_of(const db_qview *q, int64_t sf)
{
	const db_tensor *st = q->scale;
	const db_quant_rule *r = q->g->rule;
	double s = db_quant_scale_value(r, st->dtype, st->data + db_tensor_elem_offset(st,
	                                db_tensor_numel(st) == 1 ? 0 : sf), st->swap) * q->s2;
	return r->invert ? 1 / s : s;
}

static double zero_of(const db_qview *q, const place *p)
{
	const db_quant_rule *r = q->g->rule;
	const db_tensor *z = q->zero;
	if (!z)
		return 0;
	if (!db_quant_words(z->dtype))
		return plain_at(z, db_tensor_numel(z) == 1 ? 0 : p->sf) + r->zero_offset;
	bool tr = r->transposed;
	unsigned nib = nibble(q, z, p->sl, tr ? p->bi : p->bo, tr ? p->bo : p->bi,
	                      r->zero_pack_dim);
	return (double)nib + r->offset + r->zero_offset;
}

void db_qview_fill_int4(const db_qview *q, int64_t b, int64_t n, double *v, double *tol)
{
	const db_quant_rule *r = q->g->rule;
	int64_t last = -2;
	double s = NAN, z = 0;
	for (int64_t k = 0; k < n; k++) {
		place p;
		locate(q, b + k, &p);
		if (p.sf < 0) {
			v[k] = NAN;
			if (tol)
				tol[k] = 0;
			continue;
		}
		if (p.sf != last) {
			s = scale_of(q, p.sf);
			z = zero_of(q, &p);
			last = p.sf;
		}
		bool tr = r->transposed;
		unsigned c = nibble(q, q->codes, p.lead, tr ? p.i : p.o, tr ? p.o : p.i, r->pack_dim);
		v[k] = (q->lut[c] - z) * s;
		if (tol)
			tol[k] = fabs(s);
	}
}

double db_qview_scale_int4(const db_qview *q, int64_t f)
{
	place p;
	locate(q, f, &p);
	return p.sf < 0 ? NAN : scale_of(q, p.sf);
}
