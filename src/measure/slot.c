#include "db_slot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_dtype.h"
#include "db_metrics.h"
#include "pair/compare_priv.h"

int db_slot_parse(const char *s, db_slot_spec *out, db_err *err)
{
	memset(out, 0, sizeof *out);
	const char *p = s;
	if (!strncmp(p, "ref:", 4)) {
		out->side = 1;
		p += 4;
	} else if (!strncmp(p, "target:", 7)) {
		out->side = 2;
		p += 7;
	}
	char *end;
	long d = strtol(p, &end, 10);
	if (end == p || *end != ':' || d < 0 || d >= DB_MAX_DIMS)
		goto bad;
	p = end + 1;
	long long st = strtoll(p, &end, 10);
	if (end == p || *end != ':' || st < 0)
		goto bad;
	p = end + 1;
	long long ln = strtoll(p, &end, 10);
	if (end == p || *end || ln < 1)
		goto bad;
	out->dim = (int)d;
	out->start = st;
	out->len = ln;
	return 0;
bad:
	return db_err_set(err, NULL, NULL, -1,
	                  "--slot '%s': want [ref:|target:]DIM:START:LEN, e.g. target:0:6:6", s);
}

static uint64_t numel(int n, const int64_t *s)
{
	uint64_t k = 1;
	for (int i = 0; i < n; i++)
		k *= (uint64_t)s[i];
	return k;
}

/* The one dim where a and b differ, -1 when none or several. */
static int one_dim(const db_pair *p)
{
	if (p->ndim_ref != p->ndim_tgt)
		return -1;
	int d = -1;
	for (int i = 0; i < p->ndim_ref; i++)
		if (p->shape_ref[i] != p->shape_tgt[i]) {
			if (d >= 0)
				return -1;
			d = i;
		}
	return d;
}

void db_slots_assign(db_compare *c, const db_slot_spec *spec)
{
	for (size_t i = 0; i < c->n_pairs; i++) {
		db_pair *p = &c->pairs[i];
		if (p->status != DB_ST_SHAPE_MISMATCH || p->merged || !p->ref || !p->tgt)
			continue;
		int d = one_dim(p);
		/* A slot is a window of token rows of an activation: its token dim
		 * (the profile's, else dim 0, where tokens or the batch run) and
		 * never a weight. Any dim and weights were tried: a weight missing
		 * two columns read "ok ≡" (issue 37). --slot names its own dim. */
		int want = c->profile ? db_profile_token_dim(c->profile, p->f.stage) : -1;
		if (d < 0 || (spec ? spec->dim != d : d != (want >= 0 ? want : 0)))
			continue;
		if (!spec && c->profile && db_pair_is_weight(c->profile, p))
			continue;
		int side = p->shape_ref[d] > p->shape_tgt[d] ? 1 : 2;
		if (spec && spec->side && spec->side != side)
			continue;
		int64_t big = side == 1 ? p->shape_ref[d] : p->shape_tgt[d];
		int64_t len = side == 1 ? p->shape_tgt[d] : p->shape_ref[d];
		if (spec && (spec->len != len || spec->start + len > big))
			continue;
		if (!db_dtype_comparable(p->dtype_ref) || !db_dtype_comparable(p->dtype_tgt) ||
		    db_dtype_is_complex(p->dtype_ref) != db_dtype_is_complex(p->dtype_tgt))
			continue;
		p->slot.side = side;
		p->slot.dim = d;
		p->slot.len = len;
		p->slot.given = spec != NULL;
		atomic_init(&p->slot.start, spec ? spec->start : -1);
		p->numel = side == 1 ? numel(p->ndim_tgt, p->shape_tgt)
		                     : numel(p->ndim_ref, p->shape_ref);
		p->status = DB_ST_OK;
		/* pairing finished not-ok pairs: this one is to compute now */
		atomic_store(&p->state, DB_PAIR_PENDING);
		atomic_fetch_sub(&c->n_done, 1);
	}
}

void db_slot_view(const db_tensor *big, int dim, int64_t start, int64_t len, db_tensor *out)
{
	*out = *big;
	out->shape[dim] = len;
	int64_t off = start * big->stride[dim] * (int64_t)db_dtype_size(big->dtype);
	out->data = big->data + off;
	if (out->file_offset >= 0)
		out->file_offset += off;
}

int64_t db_slot_find(const db_tensor *small, const db_tensor *big, int dim, db_err *err)
{
	int64_t len = small->shape[dim], best = -1;
	double best_r = INFINITY;
	for (int64_t s = 0; s + len <= big->shape[dim]; s++) {
		db_tensor v;
		db_slot_view(big, dim, s, len, &v);
		db_metrics m;
		db_err e = {{0}};
		if (db_metrics_compute(small, &v, &m, &e) != 0)
			return db_err_set(err, NULL, NULL, -1, "%s", e.msg);
		/* both zero: rel_l2 is 0 or NaN; a NaN never wins */
		if (m.rel_l2 < best_r) {
			best_r = m.rel_l2;
			best = s;
		}
	}
	if (best < 0 || !(best_r < DB_SLOT_MAX_REL_L2))
		return db_err_set(err, NULL, NULL, -1,
		                  "shapes differ along dim %d (%lld vs %lld) and no block of the "
		                  "longer side matches (best start %lld, rel_l2 %.3g)", dim,
		                  (long long)len, (long long)big->shape[dim], (long long)best, best_r);
	return best;
}

char *db_slot_str(const db_pair *p, char *buf, size_t len)
{
	buf[0] = 0;
	if (!p->slot.side)
		return buf;
	int64_t s = atomic_load(&((db_pair *)p)->slot.start);
	if (p->slot.side == DB_SLOT_IN_TREE && p->slot.alone) {
		snprintf(buf, len, "slot %d: dim %d [%lld:%lld] vs the prompt run alone", p->slot.k,
		         p->slot.dim, (long long)s, (long long)(s + p->slot.len));
		return buf;
	}
	if (p->slot.side == DB_SLOT_IN_TREE) {
		snprintf(buf, len, "slot %d: dim %d [%lld:%lld] vs slot 0 [%lld:%lld]", p->slot.k,
		         p->slot.dim, (long long)s, (long long)(s + p->slot.len),
		         (long long)p->slot.ref_start, (long long)(p->slot.ref_start + p->slot.len));
		return buf;
	}
	const char *side = p->slot.side == 1 ? "ref" : "target";
	if (p->slot.tokens) {
		snprintf(buf, len, "aligned by token: %s rows [%lld:%lld] of its one pass (dim %d)", side,
		         (long long)s, (long long)(s + p->slot.len), p->slot.dim);
		return buf;
	}
	if (s >= 0)
		snprintf(buf, len, "batch slot: %s dim %d [%lld:%lld]", side, p->slot.dim,
		         (long long)s, (long long)(s + p->slot.len));
	else
		snprintf(buf, len, "batch slot: %s dim %d, %lld long", side, p->slot.dim,
		         (long long)p->slot.len);
	return buf;
}

const char *db_fmt_pair_bytes(const db_pair *p, int utf8, char *buf, size_t len)
{
	/* aligned by token, the block is the same tokens: its bits equal are
	 * equality (the bit-identical regime), not a part */
	bool window = (p->slot.side == 1 || p->slot.side == 2) && !p->slot.tokens;
	if (window && p->m.byte_equal >= 1.0) {
		/* equal to a part of the other side: a part, never equality */
		snprintf(buf, len, "%s", utf8 ? "⊂" : "<=");
		return buf;
	}
	return db_fmt_byte_equal(p->m.byte_equal, utf8, buf, len);
}

char *db_slot_part_str(const db_pair *p, char *buf, size_t len)
{
	buf[0] = 0;
	/* the target longer is a batch (the hint names the slot); the reference
	 * longer, the target lacks rows the reference has: say how many */
	if (p->slot.side != 1 || p->slot.tokens)
		return buf;     /* aligned by token: the other rows are the other passes' */
	int d = p->slot.dim;
	long long big = p->slot.side == 1 ? p->shape_ref[d] : p->shape_tgt[d];
	snprintf(buf, len, "compared on a part: %lld of the %s's %lld rows along dim %d; the "
	         "other %lld are in no pair", (long long)p->slot.len,
	         p->slot.side == 1 ? "ref" : "target", big, d, big - (long long)p->slot.len);
	return buf;
}
