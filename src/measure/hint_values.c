/* The value hints (hint_values.h): each reads both tensors whole, as
 * doubles, through the vectorized decoders (db_tensor_to_f64). A cell's
 * ranks are swept together on its first ask: the targets read once and
 * summed (partial_sum), then each diverging rank's reference read once and
 * held against the sum and its own target (transposed, shift,
 * rows_permuted); the answers are kept in the cell index (cells.c), so a
 * 64-rank cell costs two reads a rank instead of 65. */
#include "hint_values.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pair/compare_priv.h"
#include "db_reader.h"
#include "util/par.h"

#define CLOSE DB_HINT_CLOSE
/* shifts tried: 1..SHIFT_MAX rows either way */
#define SHIFT_MAX 64
/* the targets a sweep keeps for the ranks' value hints, in doubles (64
 * MiB); past it, each is read again */
#define KEEP_MAX ((int64_t)8 << 20)

static int64_t item_numel(const db_item *it)
{
	int64_t n = 1;
	for (int d = 0; d < it->ndim; d++)
		n *= it->shape[d];
	return n;
}

double *db_hint_load(const db_index *ix, const db_item *it, int64_t *n)
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

bool db_hint_close(const double *a, const double *b, int64_t n)
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
	return db_hint_close(x, y, w);
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

/* The value hints of pair p from its values x (reference) and y
 * (target), n each (db_hint_from_values's rules). */
static void values_hint(const db_pair *p, const double *x, const double *y, int64_t n,
                        db_hint *h)
{
	const int64_t *s = p->ref->shape;
	int nd = p->ref->ndim;
	bool same = p->ref->ndim == p->tgt->ndim && !memcmp(s, p->tgt->shape, (size_t)nd * sizeof *s);
	/* a square tensor that already matches as it is (a symmetric one
	 * drifting) is not transposed */
	bool as_is = same && p->status == DB_ST_OK && !(p->m.rel_l2 > CLOSE);
	if ((as_is || !transposed(s, nd, p->tgt->shape, p->tgt->ndim, x, y, n, h)) && same &&
	    !shift(x, y, s[0], n / s[0], h))
		rows_permuted(x, y, s[0], n / s[0], h);
}

/* Whether p's values are worth reading for the value hints at all. */
static bool values_apply(const db_pair *p)
{
	return !p->merged && p->ref && p->tgt && p->ref->ndim >= 2 &&
	       item_numel(p->ref) == item_numel(p->tgt);
}

static void vhint_put(db_vhint *v, const db_hint *h)
{
	memset(v, 0, sizeof *v);
	v->kind = (signed char)h->kind;
	if (h->kind == DB_HINT_TRANSPOSED) {
		v->ndim = (signed char)h->ndim;
		for (int d = 0; d < h->ndim && d < 4; d++)
			v->perm[d] = (signed char)h->perm[d];
	}
	v->n = h->kind == DB_HINT_SHIFT ? h->by : h->kind == DB_HINT_ROWS_PERMUTED ? h->moved : 0;
}

static void vhint_get(const db_vhint *v, db_hint *h)
{
	if (v->kind == DB_HINT_NONE)
		return;
	h->kind = (db_hint_kind)v->kind;
	if (v->kind == DB_HINT_TRANSPOSED) {
		h->ndim = v->ndim;
		for (int d = 0; d < v->ndim; d++)
			h->perm[d] = v->perm[d];
	} else if (v->kind == DB_HINT_SHIFT) {
		h->by = v->n;
	} else {
		h->moved = v->n;
	}
}

void db_hint_from_values(const db_compare *c, const db_pair *p, db_hint *h)
{
	if (!values_apply(p))
		return;
	_Atomic int *mr;
	_Atomic signed char *mok;
	_Atomic(db_vhint *) *slot = db_cell_vhints(c, p);
	db_vhint *vh = slot ? atomic_load(slot) : NULL;
	if (vh && db_cell_psum_memo(c, p, &mr, &mok) == 0 && atomic_load(&mok[p - c->pairs]) >= 0) {
		size_t nm;
		const size_t *m = db_cell_pairs(c, p, &nm);
		for (size_t k = 0; k < nm; k++)
			if (m[k] == (size_t)(p - c->pairs)) {
				vhint_get(&vh[k], h);
				return;
			}
	}
	int64_t n = 0, nt = 0;
	double *x = db_hint_load(c->ref, p->ref, &n), *y = x ? db_hint_load(c->tgt, p->tgt, &nt) : NULL;
	if (x && y && n == nt && n)
		values_hint(p, x, y, n, h);
	free(x);
	free(y);
}

/* Whether q would ask partial_sum its question (db_pair_hint's order):
 * the cell's sweep reads the references of these only. */
static bool may_ask(const db_pair *q)
{
	return q->status == DB_ST_OK && q->ref && db_pair_diverges(q) && !q->m.stats_only;
}

static bool computed_target(const db_pair *q)
{
	return q->status == DB_ST_OK && q->tgt;
}

/* hints.c's ranks_sum_to(c, p, true, computed_target) for every rank of
 * p's cell at once, into the cell's memo (db_cell_psum_memo): the targets
 * are read and summed once (the same sum in the same order, so the same
 * answers), then each asking rank's reference is read once and held
 * against the sum and, for the value hints, against its own target (kept
 * from the sum while they fit KEEP_MAX). Only once every rank is computed
 * (which targets count is settled then); -1 otherwise, or without a memo. */
int db_hint_psum(const db_compare *c, const db_pair *p)
{
	_Atomic int *mr;
	_Atomic signed char *mok;
	_Atomic(db_vhint *) *slot = db_cell_vhints(c, p);
	if (!slot || db_cell_psum_memo(c, p, &mr, &mok) != 0)
		return -1;
	int known = atomic_load(&mok[p - c->pairs]);
	if (known >= 0)
		return known ? atomic_load(mr) : 0;
	size_t nm;
	const size_t *m = db_cell_pairs(c, p, &nm);
	for (size_t k = 0; k < nm; k++)
		if (atomic_load_explicit(&c->pairs[m[k]].state, memory_order_acquire) != DB_PAIR_DONE)
			return -1;
	double **ys = calloc(nm, sizeof *ys);
	db_vhint *vh = calloc(nm, sizeof *vh);
	signed char *ok = malloc(nm);
	if (!ys || !vh || !ok) {
		free(ys);
		free(vh);
		free(ok);
		return -1;
	}
	int64_t n = -1, nq, kept = 0;
	double *sum = NULL;
	int ranks = 0;
	for (size_t k = 0; k < nm; k++) {
		const db_pair *q = &c->pairs[m[k]];
		if (!computed_target(q))
			continue;
		double *y = db_hint_load(c->tgt, q->tgt, &nq);
		if (!y || (n >= 0 && nq != n) || (!sum && !(sum = malloc((size_t)(nq ? nq : 1) * sizeof *sum)))) {
			free(y);
			ranks = 0;
			break;
		}
		n = nq;
		for (int64_t i = 0; i < n; i++)
			sum[i] = ranks ? sum[i] + y[i] : y[i];
		if (kept + n <= KEEP_MAX) {
			ys[k] = y;
			kept += n;
		} else {
			free(y);
		}
		ranks++;
	}
	if (ranks < 2)
		ranks = 0;
	for (size_t k = 0; k < nm; k++) {
		const db_pair *q = &c->pairs[m[k]];
		ok[k] = -1;
		if (q != p && !may_ask(q))
			continue;
		/* a pair measured on a slice of one side (a batch slot, a step's
		 * rows of the one pass under --align) whose sides differ in size
		 * can sum to nothing and get no values hint: the whole tensor is
		 * not decoded for it (once per step of the one pass, that was
		 * most of compare on a long generation) */
		if ((q->slot.side == 1 || q->slot.side == 2) && item_numel(q->ref) != n &&
		    !values_apply(q)) {
			ok[k] = 0;
			continue;
		}
		int64_t nx = 0, ny = 0;
		double *x = db_hint_load(c->ref, q->ref, &nx);
		ok[k] = x && ranks && nx == n && db_hint_close(sum, x, n);
		if (!ok[k] && x && values_apply(q)) {
			double *y = ys[k];
			ny = n;
			if (!y)
				ys[k] = y = db_hint_load(c->tgt, q->tgt, &ny);
			db_hint h;
			memset(&h, 0, sizeof h);
			if (y && nx == ny && nx)
				values_hint(q, x, y, nx, &h);
			vhint_put(&vh[k], &h);
		}
		free(x);
	}
	/* publish: the hints, then the count, then each answer (readers look
	 * at the answer first) */
	db_vhint *none = NULL;
	if (!atomic_compare_exchange_strong(slot, &none, vh))
		free(vh);       /* another sweep of this cell won: the same answers */
	atomic_store(mr, ranks);
	for (size_t k = 0; k < nm; k++)
		if (ok[k] >= 0)
			atomic_store(&mok[m[k]], ok[k]);
	for (size_t k = 0; k < nm; k++)
		free(ys[k]);
	free(ys);
	free(ok);
	free(sum);
	return atomic_load(&mok[p - c->pairs]) ? ranks : 0;
}

/* ---- every cell ahead of a writer that asks them all ------------------- */

typedef struct warm_job {
	const db_compare *c;
	const size_t *start, *members;
	size_t n;
	_Atomic size_t next;
} warm_job;

static void *warm_cells(void *arg)
{
	warm_job *j = arg;
	for (size_t g; (g = atomic_fetch_add(&j->next, 1)) < j->n;)
		for (size_t k = j->start[g]; k < j->start[g + 1]; k++) {
			const db_pair *q = &j->c->pairs[j->members[k]];
			if (may_ask(q)) {       /* one ask sweeps the cell */
				db_hint_psum(j->c, q);
				break;
			}
		}
	return NULL;
}

void db_hints_warm(const db_compare *c)
{
	const db_pair *any = NULL;
	for (size_t i = 0; i < c->n_pairs && !any; i++)
		if (!c->pairs[i].merged && c->pairs[i].f.rank >= 0)
			any = &c->pairs[i];
	size_t nm;
	if (!any || !db_cell_pairs(c, any, &nm))
		return;         /* no cells (or no memory for them): asked one by one */
	const db_cells *cl = &((const db_cmp_priv *)c->priv)->cells;
	warm_job j = {.c = c, .start = cl->start, .members = cl->members, .n = cl->n};
	atomic_init(&j.next, 0);
	int threads = ((const db_cmp_priv *)c->priv)->threads;
	if (threads <= 0)
		threads = db_cpus();
	db_par_run(warm_cells, &j, threads > 16 ? 16 : threads);
}
