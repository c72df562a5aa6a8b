#include "db_slot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_dtype.h"
#include "db_metrics.h"
#include "db_noise.h"
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
	db_cmp_priv *pr = c->priv;
	size_t found = 0;
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
		found++;
		p->numel = side == 1 ? numel(p->ndim_tgt, p->shape_tgt)
		                     : numel(p->ndim_ref, p->shape_ref);
		p->status = DB_ST_OK;
		/* pairing finished not-ok pairs: this one is to compute now */
		atomic_store(&p->state, DB_PAIR_PENDING);
		atomic_fetch_sub(&c->n_done, 1);
	}
	if (pr) {       /* a new set of pairs: the regime is decided again */
		pr->n_found_slots = found;
		atomic_store(&pr->slot_regime, -1);
		free(pr->slot_anchors);
		pr->slot_anchors = NULL;
		pr->n_slot_anchors = 0;
	}
}

/* ---- the regime of found slots (issue 33) -------------------------------
 * The prompt run alone against the same prompt inside a batch: when the
 * first layer of the comparison is bit-identical, the two runs share code
 * and kernels there, so batch-invariant kernels owe the slot the same bits
 * everywhere and a bit off is the divergence, whatever its band (the
 * --slots rule). A batch whose kernels round differently from the first
 * layer on (tests/fixtures/batch: rel 7e-8 at L0, no bug) keeps the bands.
 * Decided once per set of pairs, on the pairs in order up to the end of
 * the first layer that has a computed pair. The comparison is then judged
 * bitwise: the slots and every other pair of the same layout and dtype
 * (the logits of the same batch run), not rows aligned by token. */

static bool found_slot(const db_pair *p)
{
	return (p->slot.side == 1 || p->slot.side == 2) && !p->slot.tokens &&
	       p->status == DB_ST_OK && !p->dtype_differs;
}

static bool judged_here(const db_pair *p)
{
	return p->status == DB_ST_OK && !p->dtype_differs && !p->replica && !p->slot.tokens &&
	       p->slot.side != DB_SLOT_IN_TREE && p->m.byte_equal >= 0 &&
	       !(p->merged && p->n_ref_shards != p->n_tgt_shards);
}

/* 1 judged bitwise, 0 not, -1 not known yet */
static int regime_decide(const db_compare *c)
{
	if (db_noise_root(c))
		return 0;       /* the noise run judges instead */
	int l0 = -1;
	bool slot = false;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->f.layer >= 0 && l0 >= 0 && p->f.layer != l0)
			return slot;    /* past the first layer, all of it bit-identical */
		if (atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire) !=
		    DB_PAIR_DONE)
			return -1;
		if (p->status != DB_ST_OK)
			continue;       /* missing or not comparable: says nothing */
		if (p->f.layer >= 0 && l0 < 0)
			l0 = p->f.layer;
		if (!(p->m.byte_equal == 1.0))
			return 0;
		slot |= found_slot(p);
	}
	return 0;               /* one layer or none: no layer after it to judge */
}

bool db_slot_regime_holds(const db_compare *c)
{
	const db_cmp_priv *pr = c->priv;
	return pr && pr->n_found_slots && atomic_load(&((db_cmp_priv *)pr)->slot_regime) == 1;
}

void db_slot_regime_settle(db_compare *c, db_pair *p)
{
	db_cmp_priv *pr = c->priv;
	if (!pr || !pr->n_found_slots)
		return;
	int r = atomic_load(&pr->slot_regime);
	if (r == 0 || (r == 1 && p && !judged_here(p)))
		return;
	if (r == 1 && p) {
		atomic_store(&p->bitwise, true);
		return;
	}
	/* undecided (or a sweep): under the lock, so that a pair published
	 * while the decision is made is marked either by the sweep or by its
	 * own call, which reads the decision after its DONE */
	pthread_mutex_lock(&pr->slot_mu);
	r = atomic_load(&pr->slot_regime);
	if (r < 0)
		r = regime_decide(c);
	if (r == 1 && (!p || atomic_load(&pr->slot_regime) < 0)) {
		for (size_t i = 0; i < c->n_pairs; i++) {
			db_pair *q = &c->pairs[i];
			if (judged_here(q) && atomic_load_explicit(&q->state, memory_order_acquire) ==
			                         DB_PAIR_DONE)
				atomic_store(&q->bitwise, true);
		}
	} else if (r == 1 && judged_here(p)) {
		atomic_store(&p->bitwise, true);
	}
	atomic_store(&pr->slot_regime, r);
	pthread_mutex_unlock(&pr->slot_mu);
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

/* ---- the block of a pass (issue 33) ------------------------------------ */

#define DB_SLOT_MAX_SAME 16     /* blocks of one pass kept as the prompt's */

typedef struct db_slot_anchor {
	const char *phase, *pass;       /* interned */
	int rank, side, dim;
	int64_t len, longer;
	int n;                          /* blocks that hold the first pair's rows */
	int64_t start[DB_SLOT_MAX_SAME];
} db_slot_anchor;

static int64_t longer_of(const db_pair *p)
{
	return p->slot.side == 1 ? p->shape_ref[p->slot.dim] : p->shape_tgt[p->slot.dim];
}

static bool same_geometry(const db_pair *q, const db_pair *p)
{
	return q->f.phase == p->f.phase && q->f.pass == p->f.pass && q->f.rank == p->f.rank &&
	       q->slot.side == p->slot.side && q->slot.dim == p->slot.dim &&
	       q->slot.len == p->slot.len && !q->slot.tokens && longer_of(q) == longer_of(p);
}

static int pair_tensors(db_compare *c, db_wctx *w, const db_pair *p, const db_tensor **small,
                        const db_tensor **big, db_err *err)
{
	const db_tensor *x = NULL, *y = NULL;
	if (db_wctx_tensor(w, c->ref, p->ref, &x, NULL, err) != 0 ||
	    db_wctx_tensor(w, c->tgt, p->tgt, &y, NULL, err) != 0)
		return -1;
	*small = p->slot.side == 1 ? y : x;
	*big = p->slot.side == 1 ? x : y;
	return 0;
}

/* The blocks of big that hold small bit for bit, at most max of them. */
static int equal_starts(const db_tensor *small, const db_tensor *big, int dim, int64_t *out,
                        int max)
{
	int n = 0;
	int64_t len = small->shape[dim];
	for (int64_t s = 0; s + len <= big->shape[dim] && n < max; s++) {
		db_tensor v;
		db_slot_view(big, dim, s, len, &v);
		db_metrics m;
		db_err e = {{0}};
		if (db_metrics_compute(small, &v, &m, &e) == 0 && m.byte_equal == 1.0)
			out[n++] = s;
	}
	return n;
}

/* p's pass anchor: memoized under slot_mu, found and measured outside it
 * (two workers may both measure one; they agree) */
static void anchor_of(db_compare *c, db_wctx *w, const db_pair *p, db_slot_anchor *out)
{
	db_cmp_priv *pr = c->priv;
	pthread_mutex_lock(&pr->slot_mu);
	for (size_t i = 0; i < pr->n_slot_anchors; i++) {
		const db_slot_anchor *a = &pr->slot_anchors[i];
		if (a->phase == p->f.phase && a->pass == p->f.pass && a->rank == p->f.rank &&
		    a->side == p->slot.side && a->dim == p->slot.dim && a->len == p->slot.len &&
		    a->longer == longer_of(p)) {
			*out = *a;
			pthread_mutex_unlock(&pr->slot_mu);
			return;
		}
	}
	pthread_mutex_unlock(&pr->slot_mu);
	*out = (db_slot_anchor){.phase = p->f.phase, .pass = p->f.pass, .rank = p->f.rank,
	                        .side = p->slot.side, .dim = p->slot.dim, .len = p->slot.len,
	                        .longer = longer_of(p)};
	const db_pair *q = p;
	for (size_t i = 0; i < c->n_pairs && &c->pairs[i] < p; i++)
		if (c->pairs[i].status == DB_ST_OK && same_geometry(&c->pairs[i], p)) {
			q = &c->pairs[i];
			break;
		}
	const db_tensor *small, *big;
	db_err e = {{0}};
	if (pair_tensors(c, w, q, &small, &big, &e) == 0)
		out->n = equal_starts(small, big, q->slot.dim, out->start, DB_SLOT_MAX_SAME);
	pthread_mutex_lock(&pr->slot_mu);
	db_slot_anchor *v = realloc(pr->slot_anchors, (pr->n_slot_anchors + 1) * sizeof *v);
	if (v) {
		pr->slot_anchors = v;
		v[pr->n_slot_anchors++] = *out;
	}
	pthread_mutex_unlock(&pr->slot_mu);
}

int64_t db_slot_pick(db_compare *c, db_wctx *w, const db_pair *p, db_err *err)
{
	db_slot_anchor a = {.n = 0};
	if (!p->slot.given && !p->slot.tokens && c->priv)
		anchor_of(c, w, p, &a);
	const db_tensor *small, *big;
	if (pair_tensors(c, w, p, &small, &big, err) != 0)
		return -1;
	if (a.n == 1)
		return a.start[0];
	if (a.n == 0)
		return db_slot_find(small, big, p->slot.dim, err);
	int64_t best = a.start[0];
	double best_rel = -1;
	bool best_off = false;
	for (int k = 0; k < a.n; k++) {
		db_tensor v;
		db_slot_view(big, p->slot.dim, a.start[k], p->slot.len, &v);
		db_metrics m;
		if (db_metrics_compute(small, &v, &m, err) != 0)
			return -1;
		bool off = !(m.byte_equal == 1.0);
		double rel = isnan(m.rel_l2) ? INFINITY : m.rel_l2;
		if ((off && !best_off) || (off == best_off && rel > best_rel)) {
			best = a.start[k];
			best_rel = rel;
			best_off = off;
		}
	}
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
