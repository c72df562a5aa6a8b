/* Root-cause hints (db_hints.h). */
#include "db_hints.h"
#include "quant_hints.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "pair/compare_priv.h"
#include "db_json.h"
#include "db_profile.h"
#include "db_reader.h"

/* "≈": relative L2 within this (bf16 rounding is ~0.4 % per element). */
#define CLOSE 0.01
/* a factor within this of 1 is drift, not a scale */
#define SCALE_MIN 0.02
/* fewer values than this have no direction to speak of (a [1, 1] gate is
 * always "cos 1"): no scale or sign flip claimed */
#define SCALE_MIN_N 16
/* shifts tried: 1..SHIFT_MAX rows either way */
#define SHIFT_MAX 64

static const char *const kind_names[] = {
	[DB_HINT_NONE] = "none",
	[DB_HINT_INPUTS_DIFFER] = "inputs_differ",
	[DB_HINT_NAN_ORIGIN] = "nan_origin",
	[DB_HINT_ZEROS] = "zeros",
	[DB_HINT_PARTIAL_SUM] = "partial_sum",
	[DB_HINT_SIGN_FLIP] = "sign_flip",
	[DB_HINT_SCALE] = "scale",
	[DB_HINT_TRANSPOSED] = "transposed",
	[DB_HINT_SHIFT] = "shift",
	[DB_HINT_ROWS_PERMUTED] = "rows_permuted",
	[DB_HINT_BATCH_SLOT] = "batch_slot",
	[DB_HINT_NOT_TRANSFORMED] = "not_transformed",
	[DB_HINT_SCALE_INVERTED] = "scale_inverted",
	[DB_HINT_NIBBLES_SWAPPED] = "nibbles_swapped",
	[DB_HINT_TO_NOT_VIEW] = "to_not_view",
	[DB_HINT_SCALE_BLOCK] = "scale_block",
};

const char *db_hint_kind_name(db_hint_kind k)
{
	return k <= DB_HINT_SCALE_BLOCK ? kind_names[k] : "none";
}

static int64_t item_numel(const db_item *it)
{
	int64_t n = 1;
	for (int d = 0; d < it->ndim; d++)
		n *= it->shape[d];
	return n;
}

/* An item's values as doubles (malloc'd), or NULL: missing, unreadable,
 * too large, or not a plain real dtype. */
static double *load(const db_index *ix, const db_item *it, int64_t *n)
{
	if (!it || it->err || item_numel(it) > DB_HINT_MAX_NUMEL || db_dtype_is_complex(it->dtype))
		return NULL;
	char *path = db_index_path(ix, it);
	db_file *f = NULL;
	db_err err;
	double *v = NULL;
	if (path && db_file_open(path, &f, &err) == 0) {
		const db_entry *en = db_file_find(f, it->key);
		if (en && !en->err && en->t.data && db_tensor_numel(&en->t) == item_numel(it)) {
			*n = db_tensor_numel(&en->t);
			v = malloc((size_t)(*n ? *n : 1) * sizeof *v);
			/* a file that shrinks meanwhile: no values, no hint */
			if (v && db_tensor_to_f64(&en->t, v, *n, NULL) != 0) {
				free(v);
				v = NULL;
			}
		}
		db_file_close(f);
	}
	free(path);
	return v;
}

/* ‖a − b‖ ≤ CLOSE · max(‖a‖, ‖b‖) over n values (both zero: close). */
static bool close_vec(const double *a, const double *b, int64_t n)
{
	double dd = 0, aa = 0, bb = 0;
	for (int64_t i = 0; i < n; i++) {
		double d = a[i] - b[i];
		dd += d * d;
		aa += a[i] * a[i];
		bb += b[i] * b[i];
	}
	if (!isfinite(dd))
		return false;
	return dd <= CLOSE * CLOSE * (aa > bb ? aa : bb);
}

/* ---- from the metrics alone ------------------------------------------- */

static bool nan_origin(const db_compare *c, const db_pair *p, db_hint *h)
{
	if (p->status != DB_ST_OK || !p->m.nonfinite_mismatch || !(p->m.nan_tgt + p->m.inf_tgt))
		return false;
	/* an earlier pair with NaN/Inf (or one not computed yet: we cannot
	 * tell) takes the origin */
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *q = &c->pairs[i];
		if (q == p || q->seq >= p->seq || q->status != DB_ST_OK)
			continue;
		if (atomic_load_explicit(&((db_pair *)q)->state, memory_order_acquire) != DB_PAIR_DONE)
			return false;
		if (q->m.nonfinite_mismatch && q->m.nan_tgt + q->m.inf_tgt)
			return false;
	}
	h->kind = DB_HINT_NAN_ORIGIN;
	h->nan = p->m.nan_tgt;
	h->inf = p->m.inf_tgt;
	return true;
}

/* y ≡ 0 and x ≢ 0: rel_l2 = ‖x‖/‖x‖ = 1 and rel_diff = Σx²/Σx² = 1 with a
 * zero norm (cos NaN), which only y = 0 gives (see db_metrics.h). */
static bool zeros(const db_pair *p, db_hint *h)
{
	const db_metrics *m = &p->m;
	if (p->status != DB_ST_OK || !m->n || m->cos == m->cos || m->rel_l2 != 1.0 ||
	    m->rel_diff != 1.0)
		return false;
	h->kind = DB_HINT_ZEROS;
	return true;
}

/* k = Σxy/Σxx = cos·‖y‖/‖x‖, with ‖y‖²/‖x‖² = rel_l2²/rel_diff − 1 (both
 * are Σ(y−x)² over Σx² and Σ(x²+y²)); y − kx is the part of y no factor
 * explains, ‖y − kx‖/‖y‖ = sin of the angle. */
static bool scale(const db_pair *p, db_hint *h)
{
	const db_metrics *m = &p->m;
	if (p->status != DB_ST_OK || m->n < SCALE_MIN_N || m->nonfinite_mismatch || !isfinite(m->cos) ||
	    !isfinite(m->rel_l2) || !(m->rel_diff > 0))
		return false;
	double r2 = m->rel_l2 * m->rel_l2 / m->rel_diff - 1.0;
	if (!(r2 > 0) || sqrt(fmax(0.0, 1.0 - m->cos * m->cos)) > CLOSE)
		return false;
	double k = m->cos * sqrt(r2);
	if (fabs(k + 1.0) <= SCALE_MIN) {
		h->kind = DB_HINT_SIGN_FLIP;
		h->factor = k;
		return true;
	}
	if (fabs(k - 1.0) <= SCALE_MIN)
		return false;
	h->kind = DB_HINT_SCALE;
	h->factor = k;
	return true;
}

/* ---- from the values --------------------------------------------------- */

/* How many ranks (at least 2) of p's cell, those keep(q, p) accepts, have
 * tensors on one side (tgt_side: the target's) that sum to p's tensor on
 * the other side; 0 when they do not or cannot be read. The partial-sum
 * hint and db_replica_settle share it. */
static int ranks_sum_to(const db_compare *c, const db_pair *p, bool tgt_side,
                        bool (*keep)(const db_pair *q, const db_pair *p))
{
	size_t nm;
	const size_t *m = db_cell_pairs(c, p, &nm);
	const db_index *one = tgt_side ? c->ref : c->tgt, *many = tgt_side ? c->tgt : c->ref;
	int64_t n = 0, nq;
	double *x = NULL, *sum = NULL;
	int ranks = 0;
	for (size_t k = 0; k < nm; k++) {
		const db_pair *q = &c->pairs[m[k]];
		if (!keep(q, p))
			continue;
		double *y = NULL;
		if ((!x && !(x = load(one, tgt_side ? p->ref : p->tgt, &n))) ||
		    !(y = load(many, tgt_side ? q->tgt : q->ref, &nq)) || nq != n) {
			free(y);
			ranks = 0;
			break;
		}
		if (!sum) {
			sum = y;
		} else {
			for (int64_t i = 0; i < n; i++)
				sum[i] += y[i];
			free(y);
		}
		ranks++;
	}
	int r = ranks >= 2 && close_vec(sum, x, n) ? ranks : 0;
	free(x);
	free(sum);
	return r;
}

static bool computed_target(const db_pair *q, const db_pair *p)
{
	(void)p;
	return q->status == DB_ST_OK && q->tgt;
}

/* Whether q would ask partial_sum its question (db_pair_hint's order):
 * the cell's sweep reads the references of these only. */
static bool may_ask(const db_pair *q)
{
	return q->status == DB_ST_OK && q->ref && db_pair_diverges(q) && !q->m.stats_only;
}

/* ranks_sum_to(c, p, true, computed_target) for every rank of p's cell at
 * once, into the cell's memo (db_cell_psum_memo): the targets are read and
 * summed once, then each asking rank's reference is read and held against
 * the sum — 2R reads a cell instead of R + 1 for each of its R ranks. The
 * same sum in the same order as ranks_sum_to, so the same answers. Only
 * once every rank is computed (which targets count is settled then);
 * -1 otherwise, or without a memo. */
static int psum_memo(const db_compare *c, const db_pair *p)
{
	_Atomic int *mr;
	_Atomic signed char *mok;
	if (db_cell_psum_memo(c, p, &mr, &mok) != 0)
		return -1;
	int known = atomic_load(&mok[p - c->pairs]);
	if (known >= 0)
		return known ? atomic_load(mr) : 0;
	size_t nm;
	const size_t *m = db_cell_pairs(c, p, &nm);
	for (size_t k = 0; k < nm; k++)
		if (atomic_load_explicit(&c->pairs[m[k]].state, memory_order_acquire) != DB_PAIR_DONE)
			return -1;
	int64_t n = -1, nq;
	double *sum = NULL;
	int ranks = 0;
	for (size_t k = 0; k < nm; k++) {
		const db_pair *q = &c->pairs[m[k]];
		if (!computed_target(q, p))
			continue;
		double *y = load(c->tgt, q->tgt, &nq);
		if (!y || (n >= 0 && nq != n)) {
			free(y);
			ranks = 0;
			break;
		}
		n = nq;
		if (!sum) {
			sum = y;
		} else {
			for (int64_t i = 0; i < n; i++)
				sum[i] += y[i];
			free(y);
		}
		ranks++;
	}
	if (ranks < 2)
		ranks = 0;
	atomic_store(mr, ranks);        /* before any answer that points to it */
	for (size_t k = 0; k < nm; k++) {
		const db_pair *q = &c->pairs[m[k]];
		_Atomic signed char *qok = &mok[m[k]];
		if (q != p && (!may_ask(q) || atomic_load(qok) >= 0))
			continue;
		bool ok = false;
		double *x = ranks ? load(c->ref, q->ref, &nq) : NULL;
		if (x && nq == n)
			ok = close_vec(sum, x, n);
		free(x);
		atomic_store(qok, ok);
	}
	free(sum);
	return atomic_load(&mok[p - c->pairs]) ? ranks : 0;
}

/* Per-rank targets of p's cell that sum to p's reference. */
static bool partial_sum(const db_compare *c, const db_pair *p, db_hint *h)
{
	if (p->merged || p->f.rank < 0 || p->status != DB_ST_OK || !p->ref)
		return false;
	int ranks = psum_memo(c, p);
	if (ranks < 0)
		ranks = ranks_sum_to(c, p, true, computed_target);
	if (ranks) {
		h->kind = DB_HINT_PARTIAL_SUM;
		h->ranks = ranks;
	}
	return ranks > 0;
}

static bool same_replica(const db_pair *q, const db_pair *p)
{
	return q->replica == p->replica;
}

void db_replica_settle(const db_compare *c, db_pair *p)
{
	/* not published yet: its band says whether it diverges */
	if (!p->replica || p->status != DB_ST_OK || p->band <= DB_BAND_OK)
		return;
	bool many_tgt = p->replica == 2;
	/* one answer per cell: every rank of it asks the same question */
	_Atomic int *memo = db_cell_replica_memo(c, p);
	int ranks = memo ? atomic_load(memo) : -1;
	if (ranks < 0) {
		ranks = ranks_sum_to(c, p, many_tgt, same_replica);
		if (memo)
			atomic_store(memo, ranks);
	}
	if (ranks) {
		char msg[600];
		snprintf(msg, sizeof msg, "the %s's %d ranks sum to the %s: a per-rank partial sum, "
		         "not a replica (a shard rule {stage: '^%s$', how: sum} compares the sum); a "
		         "missing all-reduce only if the next stage diverges",
		         many_tgt ? "target" : "reference", ranks, many_tgt ? "reference" : "target",
		         p->f.stage);
		p->status = DB_ST_NOT_COMPARABLE;
		p->band = DB_BAND_NONE;
		free(p->error);
		p->error = strdup(msg);
	}
}

/* target = ref.permute(perm) for a perm other than the identity. */
static bool transposed(const int64_t *shape, int ndim, const int64_t *tshape, int tndim,
                       const double *x, const double *y, int64_t n, db_hint *h)
{
	if (ndim < 2 || ndim > 4 || tndim != ndim)
		return false;
	int perm[4] = {0, 1, 2, 3};
	/* every permutation of ndim dims, in lexicographic order (Narayana) */
	for (;;) {
		int i = ndim - 2;
		while (i >= 0 && perm[i] > perm[i + 1])
			i--;
		if (i < 0)
			return false;
		int j = ndim - 1;
		while (perm[j] < perm[i])
			j--;
		int t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
		for (int a = i + 1, b = ndim - 1; a < b; a++, b--) {
			t = perm[a];
			perm[a] = perm[b];
			perm[b] = t;
		}
		bool fits = true;
		for (int d = 0; d < ndim; d++)
			fits &= tshape[d] == shape[perm[d]];
		if (!fits)
			continue;
		/* strides of ref in target order */
		int64_t rstride[4], st = 1;
		for (int d = ndim - 1; d >= 0; d--) {
			rstride[d] = st;
			st *= shape[d];
		}
		double dd = 0, xx = 0, yy = 0;
		int64_t idx[4] = {0, 0, 0, 0};
		for (int64_t k = 0; k < n; k++) {
			int64_t r = 0;
			for (int d = 0; d < ndim; d++)
				r += idx[d] * rstride[perm[d]];
			double d0 = y[k] - x[r];
			dd += d0 * d0;
			xx += x[r] * x[r];
			yy += y[k] * y[k];
			for (int d = ndim - 1; d >= 0 && ++idx[d] == shape[perm[d]]; d--)
				idx[d] = 0;
		}
		if (isfinite(dd) && dd <= CLOSE * CLOSE * fmax(xx, yy) && xx > 0) {
			h->kind = DB_HINT_TRANSPOSED;
			h->ndim = ndim;
			for (int d = 0; d < ndim; d++)
				h->perm[d] = perm[d];
			return true;
		}
	}
}

static bool row_close(const double *x, const double *y, int64_t w)
{
	return close_vec(x, y, w);
}

/* target[i] ≈ ref[i − by] over the rows both have, where most of them are
 * not already in place. */
static bool shift(const double *x, const double *y, int64_t rows, int64_t w, db_hint *h)
{
	if (rows < 3 || w < 2)
		return false;
	int64_t max = rows / 2 < SHIFT_MAX ? rows / 2 : SHIFT_MAX;
	for (int64_t a = 1; a <= max; a++) {
		for (int s = 1; s >= -1; s -= 2) {
			int64_t by = a * s, lo = by > 0 ? by : 0, hi = by > 0 ? rows : rows + by;
			if (hi - lo < 2)
				continue;
			int64_t i, in_place = 0;
			for (i = lo; i < hi; i++)
				if (!row_close(x + (i - by) * w, y + i * w, w))
					break;
			if (i < hi)
				continue;
			for (i = lo; i < hi; i++)
				in_place += row_close(x + i * w, y + i * w, w);
			if (in_place * 2 > hi - lo)
				continue;
			h->kind = DB_HINT_SHIFT;
			h->by = by;
			return true;
		}
	}
	return false;
}

typedef struct keyed {
	double key;
	int64_t row;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
	double x = ((const keyed *)a)->key, y = ((const keyed *)b)->key;
	return (x > y) - (x < y);
}

/* Every target row is a distinct reference row, some not in place. Rows
 * are found by a projection key (sorted) and checked in full. */
static bool rows_permuted(const double *x, const double *y, int64_t rows, int64_t w,
                          db_hint *h)
{
	if (rows < 2 || w < 2)
		return false;
	keyed *kx = malloc((size_t)rows * sizeof *kx);
	bool *used = calloc((size_t)rows, sizeof *used);
	bool ok = kx && used;
	for (int64_t r = 0; ok && r < rows; r++) {
		/* fixed weights in [0.5, 1.5): a row's key moves with its values */
		double k = 0;
		for (int64_t d = 0; d < w; d++)
			k += x[r * w + d] * (0.5 + (double)((d * 2654435761u) % 1000) / 1000.0);
		kx[r] = (keyed){k, r};
	}
	if (ok)
		qsort(kx, (size_t)rows, sizeof *kx, cmp_keyed);
	int64_t moved = 0;
	for (int64_t r = 0; ok && r < rows; r++) {
		const double *yr = y + r * w;
		if (row_close(x + r * w, yr, w) && !used[r]) {
			used[r] = true;
			continue;
		}
		double k = 0;
		for (int64_t d = 0; d < w; d++)
			k += yr[d] * (0.5 + (double)((d * 2654435761u) % 1000) / 1000.0);
		int64_t lo = 0, hi = rows;
		while (lo < hi) {
			int64_t mid = (lo + hi) / 2;
			if (kx[mid].key < k)
				lo = mid + 1;
			else
				hi = mid;
		}
		bool found = false;
		for (int64_t o = 0; !found && o < 16; o++)
			for (int s = 0; !found && s < 2; s++) {
				int64_t at = s ? lo + o : lo - 1 - o;
				if (at < 0 || at >= rows)
					continue;
				int64_t j = kx[at].row;
				if (!used[j] && row_close(x + j * w, yr, w)) {
					used[j] = found = true;
					moved += j != r;
				}
			}
		ok = found;
	}
	free(kx);
	free(used);
	if (!ok || moved < 2)
		return false;
	h->kind = DB_HINT_ROWS_PERMUTED;
	h->moved = moved;
	return true;
}

static void from_values(const db_compare *c, const db_pair *p, db_hint *h)
{
	if (p->merged || !p->ref || !p->tgt || p->ref->ndim < 2 ||
	    item_numel(p->ref) != item_numel(p->tgt))
		return;
	int64_t n = 0, nt = 0;
	double *x = load(c->ref, p->ref, &n), *y = x ? load(c->tgt, p->tgt, &nt) : NULL;
	if (x && y && n == nt && n) {
		const int64_t *s = p->ref->shape;
		int nd = p->ref->ndim;
		bool same = p->ref->ndim == p->tgt->ndim &&
		            !memcmp(s, p->tgt->shape, (size_t)nd * sizeof *s);
		/* a square tensor that already matches as it is (a symmetric one
		 * drifting) is not transposed */
		bool as_is = same && p->status == DB_ST_OK && !(p->m.rel_l2 > CLOSE);
		if ((as_is || !transposed(s, nd, p->tgt->shape, p->tgt->ndim, x, y, n, h)) && same &&
		    !shift(x, y, s[0], n / s[0], h))
			rows_permuted(x, y, s[0], n / s[0], h);
	}
	free(x);
	free(y);
}

void db_pair_hint(const db_compare *c, const db_pair *p, db_hint *h)
{
	memset(h, 0, sizeof *h);
	/* --slots: the label names the slot; both sides are one tensor */
	if (p->slot.side == DB_SLOT_IN_TREE)
		return;
	bool slot = p->slot.side && p->status == DB_ST_OK;
	if (!db_pair_diverges(p) && !slot)
		return;
	if (c->profile && db_profile_is_input_ids(c->profile, p->f.stage) &&
	    db_pair_diverges(p) &&
	    (p->status == DB_ST_SHAPE_MISMATCH || (p->status == DB_ST_OK && p->band == DB_BAND_INPUTS))) {
		h->kind = DB_HINT_INPUTS_DIFFER;
		h->differ = p->status == DB_ST_OK && p->m.byte_equal == p->m.byte_equal
		                    ? (int64_t)llround((1.0 - p->m.byte_equal) * (double)p->numel)
		                    : -1;
		return;
	}
	if (slot) {     /* measured on a slot: the other hints read whole tensors */
		h->kind = DB_HINT_BATCH_SLOT;
		h->slot_side = p->slot.side;
		h->slot_dim = p->slot.dim;
		h->slot_start = atomic_load(&((db_pair *)p)->slot.start);
		h->slot_len = p->slot.len;
		h->slot_given = p->slot.given;
		return;
	}
	if ((p->status != DB_ST_OK && p->status != DB_ST_SHAPE_MISMATCH) || p->m.stats_only)
		return;         /* statistics only: every hint below reads the values */
	if (db_quant_hint(c, p, h))     /* weights read dequantized or transformed */
		return;
	if (nan_origin(c, p, h) || zeros(p, h) || partial_sum(c, p, h) || scale(p, h))
		return;
	from_values(c, p, h);
}

void db_hint_json(FILE *out, const db_hint *h)
{
	if (h->kind == DB_HINT_NONE) {
		fputs("null", out);
		return;
	}
	fputs("{\"kind\": ", out);
	db_json_str(out, db_hint_kind_name(h->kind));
	switch (h->kind) {
	case DB_HINT_SCALE:
	case DB_HINT_SIGN_FLIP:
		fputs(", \"factor\": ", out);
		db_json_num(out, h->factor);
		break;
	case DB_HINT_SHIFT:
		fprintf(out, ", \"dim\": 0, \"by\": %lld", (long long)h->by);
		break;
	case DB_HINT_ROWS_PERMUTED:
		fprintf(out, ", \"dim\": 0, \"moved\": %lld", (long long)h->moved);
		break;
	case DB_HINT_TRANSPOSED:
		fputs(", \"perm\": [", out);
		for (int d = 0; d < h->ndim; d++)
			fprintf(out, "%s%d", d ? ", " : "", h->perm[d]);
		fputc(']', out);
		break;
	case DB_HINT_PARTIAL_SUM:
		fprintf(out, ", \"ranks\": %d", h->ranks);
		break;
	case DB_HINT_NAN_ORIGIN:
		fprintf(out, ", \"nan\": %llu, \"inf\": %llu", (unsigned long long)h->nan,
		        (unsigned long long)h->inf);
		break;
	case DB_HINT_INPUTS_DIFFER:
		if (h->differ >= 0)
			fprintf(out, ", \"differ\": %lld", (long long)h->differ);
		else
			fputs(", \"differ\": null", out);
		break;
	case DB_HINT_BATCH_SLOT:
		fprintf(out, ", \"side\": \"%s\", \"dim\": %d, \"start\": ",
		        h->slot_side == 1 ? "ref" : "target", h->slot_dim);
		if (h->slot_start >= 0)
			fprintf(out, "%lld", (long long)h->slot_start);
		else
			fputs("null", out);
		fprintf(out, ", \"len\": %lld, \"given\": %s", (long long)h->slot_len,
		        h->slot_given ? "true" : "false");
		break;
	default:
		db_quant_hint_json(out, h);
		break;
	}
	fputc('}', out);
}

char *db_hint_text(const db_hint *h, bool ascii, char *buf, size_t len)
{
	const char *ap = ascii ? "~" : "≈", *x = ascii ? "x" : "×";
	size_t l = 0;
	switch (h->kind) {
	case DB_HINT_NONE:
		snprintf(buf, len, "%s", "");
		break;
	case DB_HINT_SCALE:
		snprintf(buf, len, "scale: target %s %.4g %s ref", ap, h->factor, x);
		break;
	case DB_HINT_SIGN_FLIP:
		snprintf(buf, len, "sign_flip: target %s -ref", ap);
		break;
	case DB_HINT_SHIFT:
		snprintf(buf, len, "shift: target row i %s ref row i%+lld (dim 0, by %lld)", ap,
		         (long long)-h->by, (long long)h->by);
		break;
	case DB_HINT_ROWS_PERMUTED:
		snprintf(buf, len, "rows_permuted: the same rows along dim 0 in another order "
		         "(%lld moved)", (long long)h->moved);
		break;
	case DB_HINT_TRANSPOSED:
		l = (size_t)snprintf(buf, len, "transposed: target %s ref.permute(", ap);
		for (int d = 0; d < h->ndim && l < len; d++)
			l += (size_t)snprintf(buf + l, len - l, "%s%d", d ? ", " : "", h->perm[d]);
		if (l < len)
			snprintf(buf + l, len - l, ")");
		break;
	case DB_HINT_PARTIAL_SUM:
		snprintf(buf, len, "partial_sum: the %d ranks' targets sum to the ref "
		         "(a missing all-reduce?)", h->ranks);
		break;
	case DB_HINT_ZEROS:
		snprintf(buf, len, "zeros: the target is all zeros");
		break;
	case DB_HINT_NAN_ORIGIN:
		snprintf(buf, len, "nan_origin: NaN/Inf first appear here (%llu NaN, %llu Inf)",
		         (unsigned long long)h->nan, (unsigned long long)h->inf);
		break;
	case DB_HINT_INPUTS_DIFFER:
		if (h->differ >= 0)
			snprintf(buf, len, "inputs_differ: %lld token ids differ", (long long)h->differ);
		else
			snprintf(buf, len, "inputs_differ: the token ids have another shape");
		break;
	case DB_HINT_NOT_TRANSFORMED: case DB_HINT_SCALE_INVERTED: case DB_HINT_NIBBLES_SWAPPED:
	case DB_HINT_TO_NOT_VIEW: case DB_HINT_SCALE_BLOCK:
		db_quant_hint_text(h, ascii, buf, len);
		break;
	case DB_HINT_BATCH_SLOT:
		if (h->slot_start >= 0)
			snprintf(buf, len, "batch slot: %s dim %d [%lld:%lld]",
			         h->slot_side == 1 ? "ref" : "target", h->slot_dim,
			         (long long)h->slot_start, (long long)(h->slot_start + h->slot_len));
		else
			snprintf(buf, len, "batch slot: %s dim %d, %lld long",
			         h->slot_side == 1 ? "ref" : "target", h->slot_dim,
			         (long long)h->slot_len);
		break;
	}
	return buf;
}
