/* Computing one pair: the worker context (a few files kept open, LRU, so
 * consecutive pairs from one dict file do not re-parse it), the read paths
 * (mapping or pread, chosen by measurement) and chunked accumulation. The
 * pool that runs pairs on threads is pool.c. */
#include "pair/compare_priv.h"
#include "util/budget.h"
#include "db_bus.h"
#include "db_hints.h"
#include "dequant.h"
#include "xform.h"
#include "db_noise.h"
#include "db_routing.h"
#include "read/walk.h"

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* t is a contiguous tensor stored as is in f (not inflated), readable
 * through fd at t->file_offset. */
static bool preadable(const db_file *f, const db_tensor *t, int fd)
{
	return fd >= 0 && f && f->map_is_mmap == DB_MAP_MMAP && t->file_offset >= 0 &&
	       db_tensor_is_contiguous(t) && t->data == f->map + t->file_offset;
}

static int pread_all(int fd, uint8_t *dst, size_t n, int64_t off)
{
	while (n > 0) {
		ssize_t r = pread(fd, dst, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		dst += r;
		n -= (size_t)r;
		off += r;
	}
	return 0;
}

/* t with its data moved so that element i sits at buf: db_accum_range then
 * sees the same flat indices (block bounds, argmax) as on the mapping, so
 * the sums are the same to the bit. Only elements [i, i + piece) are
 * touched. */
static db_tensor at_buffer(const db_tensor *t, uint8_t *buf, int64_t i)
{
	db_tensor v = *t;
	v.data = (const uint8_t *)((uintptr_t)buf - (uintptr_t)(i * (int64_t)db_dtype_size(t->dtype)));
	return v;
}

/* Elements [b, e) of x and y read piece by piece into w's buffers. Pieces
 * start at multiples of 4096 elements past b (b is a chunk start), so the
 * metrics loop cuts the same blocks as over the whole range. */
static int pread_accum(db_wctx *w, const db_tensor *x, int fdx, const db_file *fx,
                       const db_tensor *y, int fdy, const db_file *fy, int64_t b,
                       int64_t e, db_accum *a, db_err *err)
{
	size_t sx = db_dtype_size(x->dtype), sy = db_dtype_size(y->dtype);
	size_t big = sx > sy ? sx : sy;
	int64_t piece = (int64_t)(DB_READ_PIECE / big) & ~(int64_t)4095;
	if (piece <= 0)
		piece = 4096;   /* never: DB_READ_PIECE / 16 */
	for (int64_t i = b; i < e; i += piece) {
		int64_t n = e - i < piece ? e - i : piece;
		const db_file *bad = NULL;
		errno = 0;
		if (pread_all(fdx, w->rbuf[0], (size_t)n * sx, x->file_offset + i * (int64_t)sx))
			bad = fx;
		else if (pread_all(fdy, w->rbuf[1], (size_t)n * sy, y->file_offset + i * (int64_t)sy))
			bad = fy;
		if (bad)
			return db_err_set(err, bad->path, NULL, -1, "cannot read: %s",
			                  errno ? strerror(errno) : "file shrank since indexing");
		db_tensor vx = at_buffer(x, w->rbuf[0], i), vy = at_buffer(y, w->rbuf[1], i);
		db_accum_range(a, &vx, &vy, i, i + n);
	}
	return 0;
}

/* CPU time of this thread, ns; -1 when unknown. */
static int64_t thread_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* auto: which way the next chunk goes. While sampling, the path with fewer
 * samples (mmap first), so the two alternate chunk by chunk; a median of a
 * few chunks each, not one total, because one chunk that shared its core
 * with a build or lost its cache lines can cost twice as much. */
static bool auto_pread(const db_wctx *w)
{
	return w->sampling ? w->smp_n[1] < w->smp_n[0] : w->use_pread;
}

static double median4(double *v)
{
	for (int i = 1; i < DB_READ_NSAMPLE; i++)       /* insertion sort */
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return (v[DB_READ_NSAMPLE / 2 - 1] + v[DB_READ_NSAMPLE / 2]) / 2;
}

static void auto_sample(db_wctx *w, bool pread, int64_t ns, uint64_t nbytes)
{
	if (!w->sampling) {
		w->smp_bytes += nbytes;
		if (w->smp_bytes >= DB_READ_RESAMPLE) {
			w->sampling = true;
			w->smp_n[0] = w->smp_n[1] = 0;
		}
		return;
	}
	if (ns < 0 || nbytes < DB_READ_SAMPLE_MIN || w->smp_n[pread] >= DB_READ_NSAMPLE)
		return;
	w->smp_cost[pread][w->smp_n[pread]++] = (double)ns / (double)nbytes;
	if (w->smp_n[0] < DB_READ_NSAMPLE || w->smp_n[1] < DB_READ_NSAMPLE)
		return;
	double mm = median4(w->smp_cost[0]), pr = median4(w->smp_cost[1]);
	w->use_pread = pr < DB_READ_MARGIN * mm;
	w->sampling = false;
	w->smp_bytes = 0;
	if (getenv("DUMPBISECT_READ_TRACE"))
		fprintf(stderr, "dumpbisect: read path: mmap %.3f, pread %.3f ns/byte: %s\n", mm, pr,
		        w->use_pread ? "pread" : "mmap");
}

/* Start reading elements [b, e) of t through fd (cold cache). */
static void fd_willneed(int fd, const db_tensor *t, int64_t b, int64_t e)
{
	size_t sz = db_dtype_size(t->dtype);
	(void)posix_fadvise(fd, (off_t)(t->file_offset + b * (int64_t)sz),
	                    (off_t)((e - b) * (int64_t)sz), POSIX_FADV_WILLNEED);
}

/* ---- one pair ---------------------------------------------------------- */

/* The block of the longer side for p (db_slot_pick; -1 with err when none
 * is close). Loads the pair's tensors into w. */
static int64_t slot_own(db_compare *c, db_wctx *w, const db_pair *p, db_err *err)
{
	return db_slot_pick(c, w, p, err);
}

static int64_t longer(const db_pair *p)
{
	return p->slot.side == 1 ? p->shape_ref[p->slot.dim] : p->shape_tgt[p->slot.dim];
}

/* The start of p's block: the pass's (db_slot_pick) when one is close; else (a bug
 * downstream leaves no block close) the match of the earliest pair with the
 * same slot geometry (token ids match exactly). The same start whatever
 * order the pairs are computed in; chunks of one pair that resolve it at
 * once store the same value. */
static int slot_resolve(db_compare *c, db_wctx *w, const db_pair *p, db_err *err)
{
	db_pair *mp = (db_pair *)p;
	int64_t s = slot_own(c, w, p, err);
	size_t tried = 0;
	for (size_t i = 0; s < 0 && i < c->n_pairs && tried < 8; i++) {
		const db_pair *q = &c->pairs[i];
		if (q == p || q->slot.side != p->slot.side || q->slot.dim != p->slot.dim ||
		    q->slot.len != p->slot.len || longer(q) != longer(p))
			continue;
		tried++;
		int64_t t = atomic_load(&((db_pair *)q)->slot.start);
		db_err e2 = {{0}};
		if (t < 0)
			t = slot_own(c, w, q, &e2);
		if (t >= 0)
			s = t;
	}
	if (s < 0) {
		/* no block matches: a shape mismatch after all (db_pair_publish) */
		atomic_store(&mp->slot.start, DB_SLOT_NONE);
		return -1;
	}
	atomic_store(&mp->slot.start, s);
	return 0;
}

/* A batch slot: the longer side's block against the other side. */
static void slot_accum(const db_pair *p, const db_tensor *x, const db_tensor *y, int64_t b,
                       int64_t e, db_accum *a)
{
	int64_t s = atomic_load(&((db_pair *)p)->slot.start);
	db_tensor v;
	if (p->slot.side == DB_SLOT_IN_TREE) {  /* one tensor: slot 0's block vs slot k's */
		db_tensor r;
		db_slot_view(x, p->slot.dim, p->slot.ref_start, p->slot.len, &r);
		db_slot_view(y, p->slot.dim, s, p->slot.len, &v);
		db_accum_range(a, &r, &v, b, e);
		return;
	}
	db_slot_view(p->slot.side == 1 ? x : y, p->slot.dim, s, p->slot.len, &v);
	if (p->slot.side == 1)
		db_accum_range(a, &v, y, b, e);
	else
		db_accum_range(a, x, &v, b, e);
}

/* Elements [b, e) of a plain pair, read through fd (pread) or the mapping. */
static int contig_chunk(db_wctx *w, const db_pair *p, const db_tensor *x, const db_file *fx,
                        int fdx, const db_tensor *y, const db_file *fy, int fdy, int64_t b,
                        int64_t e, bool pread, db_accum *a, db_err *err)
{
	int64_t n = (int64_t)p->numel, ne = e + DB_CHUNK_ELEMS < n ? e + DB_CHUNK_ELEMS : n;
	if (pread) {
		/* start reading the next chunk (cold cache: I/O overlaps compute) */
		if (ne > e) {
			fd_willneed(fdx, x, e, ne);
			fd_willneed(fdy, y, e, ne);
		}
		return pread_accum(w, x, fdx, fx, y, fdy, fy, b, e, a, err);
	}
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
	if (w->read == DB_READ_POPULATE) {
		db_advise(fx, x, b, e, MADV_POPULATE_READ);
		db_advise(fy, y, b, e, MADV_POPULATE_READ);
	}
	db_accum_range(a, x, y, b, e);
	uint64_t nx = (uint64_t)(e - b) * db_dtype_size(x->dtype);
	uint64_t ny = (uint64_t)(e - b) * db_dtype_size(y->dtype);
	if (nx < DB_SMALL_CHUNK && ny < DB_SMALL_CHUNK) {
		db_wctx_small_read(w, nx + ny);
	} else {
		db_advise(fx, x, b, e, MADV_DONTNEED);
		db_advise(fy, y, b, e, MADV_DONTNEED);
	}
	/* start reading the next chunk (cold cache: I/O overlaps compute) */
	if (ne > e) {
		db_advise(fx, x, e, ne, MADV_WILLNEED);
		db_advise(fy, y, e, ne, MADV_WILLNEED);
	}
	return 0;
}

/* Statistics-only entries that name the files holding their tensors
 * (msprobe's tensor task): the tensors themselves, compared as any pair.
 * 1 when there are none to read (either side): measure the statistics. */
static int data_accum(db_compare *c, db_wctx *w, const db_pair *p, const char *dr,
                      const char *dt, int64_t b, int64_t e, db_accum *a, db_err *err)
{
	if (!dr || !dt || p->slot.side)
		return 1;
	char *px = db_index_data_path(c->ref, p->ref, dr);
	char *py = db_index_data_path(c->tgt, p->tgt, dt);
	const db_tensor *x = NULL, *y = NULL;
	const db_file *fx = NULL, *fy = NULL;
	int fdx = -1, fdy = -1, rc = 1;
	db_err ign;
	if (px && py && (db_index_data_inside(c->ref, px, err) || db_index_data_inside(c->tgt, py, err)))
		rc = -1;        /* refused, as the walk refuses it: said, not read */
	else if (px && py && db_wctx_tensor_at(w, px, p->ref, &x, &fx, &fdx, &ign) == 0 &&
	    db_wctx_tensor_at(w, py, p->tgt, &y, &fy, &fdy, &ign) == 0 && x->data && y->data)
		rc = contig_chunk(w, p, x, fx, fdx, y, fy, fdy, b, e,
		                  w->use_pread && preadable(fx, x, fdx) && preadable(fy, y, fdy), a, err);
	free(px);
	free(py);
	return rc;
}

static int pair_accum1(db_compare *c, db_wctx *w, const db_pair *p, int64_t b,
                       int64_t e, db_accum *a, db_err *err)
{
	if (p->merged)
		return db_merged_quant(p) ? db_dequant_accum(c, w, p, NULL, b, e, a, err)
		                          : db_unshard_accum(c, w, p, b, e, a, err);
	const db_xform *xf = db_pair_xform(c, p, w);
	if (xf || (p->ref && p->ref->quant) || (p->tgt && p->tgt->quant))
		return db_dequant_accum(c, w, p, xf, b, e, a, err);
	/* first: resolving may read other pairs' files into w */
	if (p->slot.side && atomic_load(&((db_pair *)p)->slot.start) < 0 &&
	    slot_resolve(c, w, p, err) < 0)
		return -1;
	if (p->ref && p->tgt && p->ref->has_st && p->tgt->has_st) {
		int rc = data_accum(c, w, p, p->ref->st.data, p->tgt->st.data, b, e, a, err);
		if (rc != 1)
			return rc;
		/* statistics only, both read with the index: no file to open (each
		 * worker would parse the same dump.json again) */
		db_tensor sx = {.dtype = p->ref->dtype, .ndim = p->ref->ndim, .st = &p->ref->st};
		db_tensor sy = {.dtype = p->tgt->dtype, .ndim = p->tgt->ndim, .st = &p->tgt->st};
		memcpy(sx.shape, p->ref->shape, sizeof sx.shape);
		memcpy(sy.shape, p->tgt->shape, sizeof sy.shape);
		return b == 0 ? db_accum_stats(a, &sx, &sy, err) : 0;
	}
	const db_tensor *x = NULL, *y = NULL;
	const db_file *fx = NULL, *fy = NULL;
	int fdx = -1, fdy = -1;
	if (db_wctx_tensor_fd(w, c->ref, p->ref, &x, &fx, &fdx, err) != 0 ||
	    db_wctx_tensor_fd(w, c->tgt, p->tgt, &y, &fy, &fdy, err) != 0)
		return -1;
	if (!x->data || !y->data) {     /* statistics only: one chunk's work */
		if (x->st && y->st && x->st->data && y->st->data) {
			char dr[512], dt[512];  /* x and y may go with the files data_accum opens */
			snprintf(dr, sizeof dr, "%s", x->st->data);
			snprintf(dt, sizeof dt, "%s", y->st->data);
			int rc = data_accum(c, w, p, dr, dt, b, e, a, err);
			if (rc != 1)
				return rc;
			if (db_wctx_tensor_fd(w, c->ref, p->ref, &x, &fx, &fdx, err) != 0 ||
			    db_wctx_tensor_fd(w, c->tgt, p->tgt, &y, &fy, &fdy, err) != 0)
				return -1;
		}
		return b == 0 ? db_accum_stats(a, x, y, err) : 0;
	}
	if (p->slot.side) {
		slot_accum(p, x, y, b, e, a);
		return 0;
	}
	bool can_pread = preadable(fx, x, fdx) && preadable(fy, y, fdy);
	if (w->read == DB_READ_AUTO && can_pread) {
		bool pr = auto_pread(w);
		uint64_t nbytes = (uint64_t)(e - b) * (db_dtype_size(x->dtype) + db_dtype_size(y->dtype));
		/* a chunk too small to be a sample is not timed (the thread's
		 * CPU clock is a system call, twice per tiny tensor) */
		bool timed = w->sampling && nbytes >= DB_READ_SAMPLE_MIN;
		int64_t t0 = timed ? thread_ns() : 0;
		int rc = contig_chunk(w, p, x, fx, fdx, y, fy, fdy, b, e, pr, a, err);
		int64_t t1 = timed ? thread_ns() : 0;
		auto_sample(w, pr, t0 < 0 || t1 < t0 ? -1 : t1 - t0, nbytes);
		return rc;
	}
	return contig_chunk(w, p, x, fx, fdx, y, fy, fdy, b, e, w->use_pread && can_pread, a, err);
}

/* One try at the pair with its mapped reads guarded. */
static int accum_guarded(db_compare *c, db_wctx *w, const db_pair *p, int64_t b, int64_t e,
                         db_accum *a, db_err *err)
{
	db_bus_guard g;
	if (sigsetjmp(g.jb, 0) != 0) {
		db_bus_unwind(&g);
		return db_wctx_changed(w, g.addr, err);
	}
	db_bus_enter(&g);
	int rc = pair_accum1(c, w, p, b, e, a, err);
	db_bus_leave(&g);
	return rc;
}

/* The inflate budget (db_reader.h) was busy while this worker held some:
 * close everything, wait holding nothing for what the pair's files need
 * (learnt one file per try), and compute it again from that. Nothing was
 * accumulated: the files are all fetched before the first element. */
int db_pair_accum(db_compare *c, db_wctx *w, const db_pair *p, int64_t b,
                  int64_t e, db_accum *a, db_err *err)
{
	w->busy = false;
	w->pin_tick = w->tick + 1;
	int rc = accum_guarded(c, w, p, b, e, a, err);
	for (int tries = 0; rc < 0 && w->busy && tries < 64; tries++) {
		uint64_t need = db_wctx_pinned_inflate(w) + w->busy_need;
		db_wctx_drop_files(w);
		db_budget_give(&db_inflate_budget, w->prepaid);
		w->prepaid = 0;
		w->busy = false;
		if (db_budget_take(&db_inflate_budget, need, true) != 0) {
			char n1[32], n2[32];
			rc = db_err_set(err, NULL, NULL, -1, "this pair's files inflate to %s, more than "
			                "the %s the process may hold (DUMPBISECT_INFLATE_MAX)",
			                db_budget_size(need, n1, sizeof n1),
			                db_budget_size(db_budget_limit(&db_inflate_budget), n2, sizeof n2));
			break;
		}
		w->prepaid = need;
		w->pin_tick = w->tick + 1;
		rc = accum_guarded(c, w, p, b, e, a, err);
	}
	db_budget_give(&db_inflate_budget, w->prepaid);
	w->prepaid = 0;
	return rc;
}

void db_pair_publish(db_compare *c, db_pair *p, const db_accum *a, const char *msg)
{
	if (msg && p->slot.side && atomic_load(&p->slot.start) == DB_SLOT_NONE) {
		p->status = DB_ST_SHAPE_MISMATCH;
		p->slot.side = 0;
		msg = NULL;     /* not an error: the shapes differ, as pairing said */
		p->band = DB_BAND_NONE;
		db_metrics *m = &p->m;
		memset(m, 0, sizeof *m);
		m->cos = m->rel = m->rel_l2 = m->rel_diff = m->max_abs = m->mean_abs = NAN;
		m->byte_equal = NAN;
		m->argmax = -1;
		atomic_store_explicit(&p->state, DB_PAIR_DONE, memory_order_release);
		db_slot_regime_settle(c, p);
		atomic_fetch_add(&c->n_done, 1);
		return;
	}
	if (msg) {
		p->status = DB_ST_ERROR;
		free(p->error);
		p->error = strdup(msg);
		p->band = DB_BAND_NONE;
		db_metrics *m = &p->m;
		memset(m, 0, sizeof *m);
		m->cos = m->rel = m->rel_l2 = m->rel_diff = m->max_abs = m->mean_abs = NAN;
		m->byte_equal = NAN;
		m->argmax = -1;
	} else {
		db_accum_finish(a, &p->m);
		if (p->dtype_differs)
			p->m.byte_equal = NAN;
		db_qblocks_settle(c, p);        /* dequantized pairs: each scale block */
		p->band = db_pair_band(c, p);
		db_cache_store(c, p);
		db_replica_settle(c, p);        /* after the store: the metrics stay cached */
		db_noise_judge(c, p);
	}
	atomic_store_explicit(&p->state, DB_PAIR_DONE, memory_order_release);
	db_slot_regime_settle(c, p);    /* before n_done: views key on it */
	atomic_fetch_add(&c->n_done, 1);
}

/* A side holding statistics and no tensor (msprobe's statistics and md5
 * tasks): the pair is measured on those numbers, once (pair_accum1's
 * b == 0). Its shape is only what dump.json says: a task per 2^21 of
 * its elements was 1.87 GB for a 201-byte file saying [2^44] (issue 37). */
static bool stats_side(const db_item *it)
{
	return it && it->has_st && !it->st.data;
}

size_t db_pair_n_chunks(const db_pair *p)
{
	if (!p->merged && (stats_side(p->ref) || stats_side(p->tgt)))
		return 1;
	uint64_t n = p->numel;
	return n ? (size_t)((n + DB_CHUNK_ELEMS - 1) / DB_CHUNK_ELEMS) : 1;
}

void db_pair_chunk_range(const db_pair *p, size_t k, int64_t *b, int64_t *e)
{
	*b = (int64_t)k * DB_CHUNK_ELEMS;
	*e = *b + DB_CHUNK_ELEMS;
	if ((uint64_t)*e > p->numel)
		*e = (int64_t)p->numel;
}

void db_pair_compute_all(db_compare *c, db_wctx *w, db_pair *p)
{
	db_accum total;
	db_accum_init(&total);
	size_t nc = db_pair_n_chunks(p);
	for (size_t k = 0; k < nc; k++) {
		int64_t b, e;
		db_pair_chunk_range(p, k, &b, &e);
		db_accum part;
		db_accum_init(&part);
		db_err err = {{0}};
		if (db_pair_accum(c, w, p, b, e, &part, &err) != 0) {
			db_pair_publish(c, p, NULL, err.msg);
			return;
		}
		db_accum_merge(&total, &part);
	}
	db_pair_publish(c, p, &total, NULL);
}

size_t db_compare_files_needed(const db_compare *c)
{
	const db_cmp_priv *pr = c->priv;
	return 2 * pr->max_shards + 4 > 8 ? 2 * pr->max_shards + 4 : 8;
}

void db_compare_pair(db_compare *c, db_pair *p)
{
	if (atomic_load_explicit(&p->state, memory_order_acquire) == DB_PAIR_DONE)
		return;
	db_cmp_priv *pr = c->priv;
	size_t i = (size_t)(p - c->pairs);
	int expect = DB_OWNER_FREE;
	if (i >= c->n_pairs ||
	    !atomic_compare_exchange_strong(&pr->owner[i], &expect, DB_OWNER_CALLER))
		return;
	atomic_store(&p->state, DB_PAIR_RUNNING);
	if (db_cache_lookup(c, p))
		return;
	db_wctx own, *w = NULL;
	bool kept = pthread_mutex_trylock(&pr->caller_mu) == 0;
	if (kept) {
		if (!pr->caller_w && (pr->caller_w = malloc(sizeof *pr->caller_w)) &&
		    db_wctx_init(pr->caller_w, db_compare_files_needed(c)) != 0) {
			free(pr->caller_w);
			pr->caller_w = NULL;
		}
		w = pr->caller_w;
	}
	if (!w && db_wctx_init(w = &own, db_compare_files_needed(c)) != 0) {
		if (kept)
			pthread_mutex_unlock(&pr->caller_mu);
		db_pair_publish(c, p, NULL, "out of memory");
		return;
	}
	db_pair_compute_all(c, w, p);
	if (w == &own)
		db_wctx_free(&own);
	else
		db_wctx_drop_inflating(w);
	if (kept)
		pthread_mutex_unlock(&pr->caller_mu);
}
