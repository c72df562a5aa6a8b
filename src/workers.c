/* Computing pairs: a pthread pool over (pair, chunk) tasks. Each chunk is
 * accumulated alone and the chunks of a pair are merged in chunk order by
 * whichever worker finishes last, so the numbers never depend on the
 * number of threads. Workers first look every pending pair up in the
 * metrics cache (so the caller never waits for that), then compute the
 * misses; they keep a few files open (LRU) so consecutive pairs from one
 * dict file do not re-parse it. A prefetch thread reads ahead of them on a
 * cold page cache. */
#include "compare_priv.h"
#include "db_routing.h"
#include "walk.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct db_pool {
	db_compare *c;
	size_t *task_pair;
	uint32_t *task_chunk;
	size_t n_tasks;
	atomic_size_t next;
	atomic_int cancel;
	/* metrics cache lookups come first, spread over the workers, so the
	 * caller (the TUI's first frame) does not wait for them */
	size_t *lookup;             /* pairs to look up */
	size_t n_lookup;
	atomic_size_t next_lookup, lookups_left;
	size_t *acc_base;           /* per pair: first slot in acc; SIZE_MAX none */
	db_accum *acc;
	atomic_uint *left;          /* per pair: chunks still to finish */
	char **errmsg;              /* per pair: first chunk error */
	pthread_mutex_t mu;
	pthread_t *th;
	int n_th;
	pthread_t pf;               /* the prefetcher */
	bool pf_on;
	size_t cap_files;
};

/* ---- worker context ---------------------------------------------------- */

db_read_path db_read_path_get(void)
{
	const char *e = getenv("DUMPBISECT_READ");
	if (e && !strcmp(e, "mmap"))
		return DB_READ_MMAP;
	if (e && !strcmp(e, "populate"))
		return DB_READ_POPULATE;
	if (e && !strcmp(e, "pread"))
		return DB_READ_PREAD;
	return DB_READ_AUTO;
}

int db_wctx_init(db_wctx *w, size_t cap_files)
{
	memset(w, 0, sizeof *w);
	w->cap_files = cap_files < 4 ? 4 : cap_files;
	w->files = calloc(w->cap_files, sizeof *w->files);
	if (!w->files)
		return -1;
	for (int i = 0; i < 4; i++)
		if (!(w->buf[i] = malloc((size_t)DB_SEG_ELEMS * 2 * sizeof(double)))) {
			db_wctx_free(w);
			return -1;
		}
	w->read = db_read_path_get();
	w->use_pread = w->read == DB_READ_PREAD;
	if (w->read == DB_READ_PREAD || w->read == DB_READ_AUTO)
		for (int i = 0; i < 2; i++)
			if (!(w->rbuf[i] = aligned_alloc(4096, DB_READ_PIECE))) {
				db_wctx_free(w);
				return -1;
			}
	return 0;
}

void db_wctx_free(db_wctx *w)
{
	for (size_t i = 0; i < w->n_files; i++) {
		free(w->files[i].path);
		db_file_close(w->files[i].f);
		if (w->files[i].fd >= 0)
			close(w->files[i].fd);
	}
	free(w->files);
	for (int i = 0; i < 4; i++)
		free(w->buf[i]);
	for (int i = 0; i < 2; i++)
		free(w->rbuf[i]);
	memset(w, 0, sizeof *w);
}

static bool same_shape(const db_item *it, const db_tensor *t)
{
	if (it->ndim != t->ndim || it->dtype != t->dtype)
		return false;
	for (int d = 0; d < t->ndim; d++)
		if (it->shape[d] != t->shape[d])
			return false;
	return true;
}

static db_file *wctx_file(db_wctx *w, const char *path, const db_item *it, int *fd_out,
                          db_err *err)
{
	for (size_t i = 0; i < w->n_files; i++)
		if (!strcmp(w->files[i].path, path)) {
			w->files[i].used = ++w->tick;
			*fd_out = w->files[i].fd;
			return w->files[i].f;
		}
	struct stat st;
	if (stat(path, &st) != 0) {
		db_err_set(err, path, NULL, -1, "cannot open: %s", strerror(errno));
		return NULL;
	}
	int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (!S_ISREG(st.st_mode) || st.st_size != it->size || mt != it->mtime_ns ||
	    db_stat_ident(&st) != it->ident) {
		db_err_set(err, path, NULL, -1, "file changed since the tree was indexed; rescan");
		return NULL;
	}
	db_file *f = NULL;
	if (db_file_open(path, &f, err) != 0)
		return NULL;
	int fd = -1;
	if (w->read == DB_READ_PREAD || w->read == DB_READ_AUTO) {
		/* the bytes of contiguous tensors are read through fd, the same
		 * file as mapped (else the mapping alone serves) */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		struct stat fs;
		if (fd >= 0 && (fstat(fd, &fs) != 0 || db_stat_ident(&fs) != it->ident ||
		                fs.st_size != it->size)) {
			close(fd);
			fd = -1;
		}
	} else if (f->map_is_mmap == DB_MAP_MMAP && f->map_size) {
		(void)madvise((void *)f->map, f->map_size, MADV_SEQUENTIAL);
	}
	char *p = strdup(path);
	if (!p) {
		db_file_close(f);
		if (fd >= 0)
			close(fd);
		db_err_set(err, path, NULL, -1, "out of memory");
		return NULL;
	}
	size_t slot = w->n_files;
	if (w->n_files == w->cap_files) {
		slot = 0;
		for (size_t i = 1; i < w->n_files; i++)
			if (w->files[i].used < w->files[slot].used)
				slot = i;
		free(w->files[slot].path);
		db_file_close(w->files[slot].f);
		if (w->files[slot].fd >= 0)
			close(w->files[slot].fd);
	} else {
		w->n_files++;
	}
	w->files[slot] = (db_wfile){p, f, ++w->tick, fd};
	*fd_out = fd;
	return f;
}

void db_advise(const db_file *f, const db_tensor *t, int64_t b, int64_t e, int advice)
{
	if (!f || f->map_is_mmap != DB_MAP_MMAP || !t || e <= b || !db_tensor_is_contiguous(t))
		return;
	size_t isz = db_dtype_size(t->dtype);
	uintptr_t lo = (uintptr_t)(t->data + b * (int64_t)isz);
	uintptr_t hi = (uintptr_t)(t->data + e * (int64_t)isz);
	uintptr_t mlo = (uintptr_t)f->map, mhi = mlo + f->map_size;
	if (lo < mlo || hi > mhi)
		return;
	static long page;
	if (!page)
		page = sysconf(_SC_PAGESIZE);
	uintptr_t pg = (uintptr_t)page;
	lo &= ~(pg - 1);
	hi = (hi + pg - 1) & ~(pg - 1);
	if (advice == MADV_DONTNEED) {
		/* A fault maps a whole large folio of the page cache (up to a
		 * PMD), so pages past either end of the range are mapped too;
		 * when another worker takes the neighbouring chunk (in its own
		 * mapping), nobody would drop them here. Drop a PMD's worth more
		 * on each side: at worst this worker faults them in again. */
		uintptr_t margin = (uintptr_t)2 << 20;
		uintptr_t vlo = mlo & ~(pg - 1), vhi = (mhi + pg - 1) & ~(pg - 1);
		lo = lo > vlo + margin ? lo - margin : vlo;
		hi = hi + margin < vhi ? hi + margin : vhi;
	}
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, advice);
}

static int wctx_tensor_fd(db_wctx *w, const db_index *ix, const db_item *it,
                          const db_tensor **t, const db_file **file, int *fd, db_err *err)
{
	char *path = db_index_path(ix, it);
	if (!path)
		return db_err_set(err, it->path, NULL, -1, "out of memory");
	db_file *f = wctx_file(w, path, it, fd, err);
	int rc = -1;
	if (f) {
		const db_entry *en = db_file_find(f, it->key);
		if (!en)
			db_err_set(err, path, it->key, -1, "entry vanished since indexing; rescan");
		else if (en->err)
			db_err_set(err, NULL, NULL, -1, "%s", en->err);
		else if (!same_shape(it, &en->t))
			db_err_set(err, path, it->key, -1, "entry changed since indexing; rescan");
		else {
			*t = &en->t;
			if (file)
				*file = f;
			rc = 0;
		}
	}
	free(path);
	return rc;
}

int db_wctx_tensor(db_wctx *w, const db_index *ix, const db_item *it,
                   const db_tensor **t, const db_file **file, db_err *err)
{
	int fd;
	return wctx_tensor_fd(w, ix, it, t, file, &fd, err);
}

/* ---- the pread path ---------------------------------------------------- */

/* t is a contiguous tensor stored as is in f (not inflated), readable
 * through fd at t->file_offset. */
static bool preadable(const db_file *f, const db_tensor *t, int fd)
{
	return fd >= 0 && f && f->map_is_mmap && t->file_offset >= 0 &&
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

/* auto: which way the next chunk goes. A worker times DB_READ_SAMPLE bytes
 * through the mapping, then as many through pread, then keeps the one
 * that cost less CPU per byte, and samples again every DB_READ_RESAMPLE
 * bytes (the page cache may hold later files otherwise). */
static bool auto_pread(const db_wctx *w)
{
	return w->smp_phase == 1 || (w->smp_phase == 2 && w->use_pread);
}

static void auto_sample(db_wctx *w, bool pread, int64_t ns, uint64_t nbytes)
{
	if (ns < 0)
		return;
	if (w->smp_phase == 2) {
		w->smp_bytes += nbytes;
		if (w->smp_bytes >= DB_READ_RESAMPLE) {
			w->smp_phase = 0;
			w->smp_bytes = 0;
			w->smp_ns[0] = w->smp_ns[1] = 0;
			w->smp_b[0] = w->smp_b[1] = 0;
		}
		return;
	}
	w->smp_ns[pread] += (uint64_t)ns;
	w->smp_b[pread] += nbytes;
	if (w->smp_b[w->smp_phase] < DB_READ_SAMPLE)
		return;
	if (++w->smp_phase == 2) {
		/* ns_pread / b_pread < ns_mmap / b_mmap */
		w->use_pread = (double)w->smp_ns[1] * (double)w->smp_b[0] <
		               (double)w->smp_ns[0] * (double)w->smp_b[1];
		w->smp_bytes = 0;
	}
}

/* Start reading elements [b, e) of t through fd (cold cache). */
static void fd_willneed(int fd, const db_tensor *t, int64_t b, int64_t e)
{
	size_t sz = db_dtype_size(t->dtype);
	(void)posix_fadvise(fd, (off_t)(t->file_offset + b * (int64_t)sz),
	                    (off_t)((e - b) * (int64_t)sz), POSIX_FADV_WILLNEED);
}

/* ---- one pair ---------------------------------------------------------- */

/* The block of the longer side that matches the other side best (-1 with
 * err when none is close). Loads the pair's tensors into w. */
static int64_t slot_own(db_compare *c, db_wctx *w, const db_pair *p, db_err *err)
{
	const db_tensor *x = NULL, *y = NULL;
	if (db_wctx_tensor(w, c->ref, p->ref, &x, NULL, err) != 0 ||
	    db_wctx_tensor(w, c->tgt, p->tgt, &y, NULL, err) != 0)
		return -1;
	return p->slot.side == 1 ? db_slot_find(y, x, p->slot.dim, err)
	                         : db_slot_find(x, y, p->slot.dim, err);
}

static int64_t longer(const db_pair *p)
{
	return p->slot.side == 1 ? p->shape_ref[p->slot.dim] : p->shape_tgt[p->slot.dim];
}

/* The start of p's block: its own best match when one is close; else (a bug
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
	db_advise(fx, x, b, e, MADV_DONTNEED);
	db_advise(fy, y, b, e, MADV_DONTNEED);
	/* start reading the next chunk (cold cache: I/O overlaps compute) */
	if (ne > e) {
		db_advise(fx, x, e, ne, MADV_WILLNEED);
		db_advise(fy, y, e, ne, MADV_WILLNEED);
	}
	return 0;
}

int db_pair_accum(db_compare *c, db_wctx *w, const db_pair *p, int64_t b,
                  int64_t e, db_accum *a, db_err *err)
{
	if (p->merged)
		return db_unshard_accum(c, w, p, b, e, a, err);
	/* first: resolving may read other pairs' files into w */
	if (p->slot.side && atomic_load(&((db_pair *)p)->slot.start) < 0 &&
	    slot_resolve(c, w, p, err) < 0)
		return -1;
	const db_tensor *x = NULL, *y = NULL;
	const db_file *fx = NULL, *fy = NULL;
	int fdx = -1, fdy = -1;
	if (wctx_tensor_fd(w, c->ref, p->ref, &x, &fx, &fdx, err) != 0 ||
	    wctx_tensor_fd(w, c->tgt, p->tgt, &y, &fy, &fdy, err) != 0)
		return -1;
	if (p->slot.side) {
		slot_accum(p, x, y, b, e, a);
		return 0;
	}
	bool can_pread = preadable(fx, x, fdx) && preadable(fy, y, fdy);
	if (w->read == DB_READ_AUTO && can_pread) {
		bool pr = auto_pread(w);
		int64_t t0 = thread_ns();
		int rc = contig_chunk(w, p, x, fx, fdx, y, fy, fdy, b, e, pr, a, err);
		int64_t t1 = thread_ns();
		auto_sample(w, pr, t0 < 0 || t1 < t0 ? -1 : t1 - t0,
		            (uint64_t)(e - b) * (db_dtype_size(x->dtype) + db_dtype_size(y->dtype)));
		return rc;
	}
	return contig_chunk(w, p, x, fx, fdx, y, fy, fdy, b, e, w->use_pread && can_pread, a, err);
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
		p->band = db_pair_band(c, p);
		db_cache_store(c, p);
	}
	atomic_store_explicit(&p->state, DB_PAIR_DONE, memory_order_release);
	atomic_fetch_add(&c->n_done, 1);
}

static size_t n_chunks(const db_pair *p)
{
	uint64_t n = p->numel;
	return n ? (size_t)((n + DB_CHUNK_ELEMS - 1) / DB_CHUNK_ELEMS) : 1;
}

static void chunk_range(const db_pair *p, size_t k, int64_t *b, int64_t *e)
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
	size_t nc = n_chunks(p);
	for (size_t k = 0; k < nc; k++) {
		int64_t b, e;
		chunk_range(p, k, &b, &e);
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

static size_t files_needed(const db_compare *c)
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
	db_wctx w;
	if (db_wctx_init(&w, files_needed(c)) != 0) {
		db_pair_publish(c, p, NULL, "out of memory");
		return;
	}
	db_pair_compute_all(c, &w, p);
	db_wctx_free(&w);
}

/* ---- the pool ---------------------------------------------------------- */

/* Cold cache: ask the kernel to start reading a big file we will need
 * soon, so its I/O overlaps the current pair's compute. */
static void prefetch_item(const db_index *ix, const db_item *it)
{
	if (!it || it->err || it->size < ((off_t)1 << 20))
		return;
	char *path = db_index_path(ix, it);
	if (!path)
		return;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
		close(fd);
	}
	free(path);
}

/* How far the prefetcher runs ahead of the workers, in pairs. */
#define PREFETCH_PAIRS 2

static void prefetch_pair(const db_compare *c, const db_pair *p)
{
	if (!p->merged) {
		prefetch_item(c->ref, p->ref);
		prefetch_item(c->tgt, p->tgt);
		return;
	}
	for (size_t i = 0; i < p->n_ref_shards; i++)
		prefetch_item(c->ref, p->ref_shards[i]);
	for (size_t i = 0; i < p->n_tgt_shards; i++)
		prefetch_item(c->tgt, p->tgt_shards[i]);
}

static int cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

static void nap_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* Cold cache: one thread asks for the files of the pairs in line, in
 * order, up to PREFETCH_PAIRS pairs ahead of the task the workers take
 * next, so the disk reads ahead while they compute. Its own thread because
 * asking can block while the device queue is full: a worker would stall. */
static void *prefetcher(void *arg)
{
	db_pool *pl = arg;
	db_compare *c = pl->c;
	while (atomic_load(&pl->lookups_left) > 0 && !atomic_load(&pl->cancel))
		nap_ms(1);      /* pairs served from the metrics cache need no bytes */
	for (size_t t = 0; t < pl->n_tasks && !atomic_load(&pl->cancel);) {
		db_pair *q = &c->pairs[pl->task_pair[t]];
		size_t nc = n_chunks(q);
		if (atomic_load(&q->state) != DB_PAIR_DONE) {
			size_t next;
			while ((next = atomic_load(&pl->next)) < pl->n_tasks &&
			       t > next + PREFETCH_PAIRS * nc && !atomic_load(&pl->cancel))
				nap_ms(2);
			if (next >= pl->n_tasks)
				break;  /* every task handed out: too late to help */
			prefetch_pair(c, q);
		}
		t += nc;
	}
	return NULL;
}

static void prefetch_start(db_pool *pl)
{
	pl->pf_on = pthread_create(&pl->pf, NULL, prefetcher, pl) == 0;
}

static void finish_pair(db_pool *pl, size_t pi)
{
	db_compare *c = pl->c;
	db_pair *p = &c->pairs[pi];
	if (pl->errmsg[pi]) {
		db_pair_publish(c, p, NULL, pl->errmsg[pi]);
		return;
	}
	db_accum total;
	db_accum_init(&total);
	size_t nc = n_chunks(p);
	for (size_t k = 0; k < nc; k++)
		db_accum_merge(&total, &pl->acc[pl->acc_base[pi] + k]);
	db_pair_publish(c, p, &total, NULL);
}

/* Look up pairs in the metrics cache until none is left, then wait until
 * every lookup (other workers' too) is over: no pair is computed while its
 * lookup may still hit. Lookups are cheap and always finish, even when
 * cancelled: whatever the cache holds is published by db_compare_stop. */
static void lookups(db_pool *pl)
{
	db_compare *c = pl->c;
	db_cmp_priv *pr = c->priv;
	for (size_t i; (i = atomic_fetch_add(&pl->next_lookup, 1)) < pl->n_lookup;) {
		size_t pi = pl->lookup[i];
		int expect = DB_OWNER_FREE;
		if (atomic_compare_exchange_strong(&pr->owner[pi], &expect, DB_OWNER_POOL) &&
		    !db_cache_lookup(c, &c->pairs[pi]))
			atomic_store(&pr->owner[pi], DB_OWNER_FREE);   /* a miss: to compute */
		atomic_fetch_sub(&pl->lookups_left, 1);
	}
	while (atomic_load(&pl->lookups_left) > 0)
		sched_yield();
}

static void *pool_worker(void *arg)
{
	db_pool *pl = arg;
	db_compare *c = pl->c;
	db_cmp_priv *pr = c->priv;
	db_wctx w;
	if (db_wctx_init(&w, pl->cap_files) != 0) {
		lookups(pl);    /* never leave the others waiting on ours */
		return NULL;
	}
	lookups(pl);
	while (!atomic_load(&pl->cancel)) {
		size_t t = atomic_fetch_add(&pl->next, 1);
		if (t >= pl->n_tasks)
			break;
		size_t pi = pl->task_pair[t];
		uint32_t k = pl->task_chunk[t];
		db_pair *p = &c->pairs[pi];
		if (atomic_load_explicit(&p->state, memory_order_acquire) == DB_PAIR_DONE)
			continue;       /* a cache hit (or the caller finished it) */
		int expect = DB_OWNER_FREE;
		if (atomic_compare_exchange_strong(&pr->owner[pi], &expect, DB_OWNER_POOL))
			atomic_store(&p->state, DB_PAIR_RUNNING);
		else if (expect != DB_OWNER_POOL)
			continue;       /* the caller computes it */
		int64_t b, e;
		chunk_range(p, k, &b, &e);
		db_accum *a = &pl->acc[pl->acc_base[pi] + k];
		db_accum_init(a);
		db_err err = {{0}};
		if (db_pair_accum(c, &w, p, b, e, a, &err) != 0) {
			pthread_mutex_lock(&pl->mu);
			if (!pl->errmsg[pi])
				pl->errmsg[pi] = strdup(err.msg);
			pthread_mutex_unlock(&pl->mu);
		}
		if (atomic_fetch_sub(&pl->left[pi], 1) == 1)
			finish_pair(pl, pi);
	}
	db_wctx_free(&w);
	return NULL;
}

static void pool_free(db_pool *pl)
{
	if (!pl)
		return;
	if (pl->errmsg)
		for (size_t i = 0; i < pl->c->n_pairs; i++)
			free(pl->errmsg[i]);
	free(pl->errmsg);
	free(pl->task_pair);
	free(pl->task_chunk);
	free(pl->lookup);
	free(pl->acc_base);
	free(pl->acc);
	free(pl->left);
	free(pl->th);
	pthread_mutex_destroy(&pl->mu);
	free(pl);
}

/* Tasks for every pair still pending (cache hits are published here). */
static db_pool *pool_new(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	db_pool *pl = calloc(1, sizeof *pl);
	if (!pl)
		return NULL;
	pl->c = c;
	pthread_mutex_init(&pl->mu, NULL);
	atomic_init(&pl->next, 0);
	atomic_init(&pl->cancel, 0);
	atomic_init(&pl->next_lookup, 0);
	atomic_init(&pl->lookups_left, 0);
	size_t n = c->n_pairs;
	pl->acc_base = malloc((n + 1) * sizeof *pl->acc_base);
	pl->left = calloc(n + 1, sizeof *pl->left);
	pl->errmsg = calloc(n + 1, sizeof *pl->errmsg);
	if (!pl->acc_base || !pl->left || !pl->errmsg) {
		pool_free(pl);
		return NULL;
	}
	size_t total = 0;
	bool cache = pr->cache_dir != NULL;
	if (cache && !(pl->lookup = malloc((n + 1) * sizeof *pl->lookup))) {
		pool_free(pl);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		db_pair *p = &c->pairs[i];
		pl->acc_base[i] = SIZE_MAX;
		if (atomic_load(&p->state) != DB_PAIR_PENDING ||
		    atomic_load(&pr->owner[i]) != DB_OWNER_FREE)
			continue;
		if (cache)
			pl->lookup[pl->n_lookup++] = i;
		pl->acc_base[i] = total;
		size_t nc = n_chunks(p);
		atomic_init(&pl->left[i], (unsigned)nc);
		total += nc;
	}
	pl->task_pair = malloc((total + 1) * sizeof *pl->task_pair);
	pl->task_chunk = malloc((total + 1) * sizeof *pl->task_chunk);
	pl->acc = malloc((total + 1) * sizeof *pl->acc);
	if (!pl->task_pair || !pl->task_chunk || !pl->acc) {
		pool_free(pl);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (pl->acc_base[i] == SIZE_MAX)
			continue;
		size_t nc = n_chunks(&c->pairs[i]);
		for (size_t k = 0; k < nc; k++) {
			pl->task_pair[pl->n_tasks] = i;
			pl->task_chunk[pl->n_tasks] = (uint32_t)k;
			pl->n_tasks++;
		}
	}
	atomic_store(&pl->lookups_left, pl->n_lookup);
	pl->cap_files = files_needed(c);
	int nt = pr->threads > 0 ? pr->threads : cpu_count();
	if ((size_t)nt > pl->n_tasks)
		nt = pl->n_tasks ? (int)pl->n_tasks : 1;
	pl->th = calloc((size_t)nt, sizeof *pl->th);
	if (!pl->th) {
		pool_free(pl);
		return NULL;
	}
	pl->n_th = nt;
	return pl;
}

/* Join the workers; pairs left half-done go back to pending. */
static void pool_join(db_compare *c, db_pool *pl, int started)
{
	db_cmp_priv *pr = c->priv;
	for (int i = 0; i < started; i++)
		pthread_join(pl->th[i], NULL);
	if (pl->pf_on) {
		atomic_store(&pl->cancel, 1);   /* the workers are done */
		pthread_join(pl->pf, NULL);
		pl->pf_on = false;
	}
	for (size_t i = 0; i < c->n_pairs; i++) {
		if (pl->acc_base[i] == SIZE_MAX)
			continue;
		if (atomic_load(&pr->owner[i]) == DB_OWNER_POOL &&
		    atomic_load(&c->pairs[i].state) != DB_PAIR_DONE) {
			atomic_store(&c->pairs[i].state, DB_PAIR_PENDING);
			atomic_store(&pr->owner[i], DB_OWNER_FREE);
		}
	}
	db_cache_flush(c);
}

void db_compare_run(db_compare *c)
{
	db_compare_stop(c);
	db_pool *pl = pool_new(c);
	if (!pl) {
		/* no memory for a pool: compute in this thread */
		for (size_t i = 0; i < c->n_pairs; i++)
			db_compare_pair(c, &c->pairs[i]);
		return;
	}
	int started = 0;
	for (int i = 1; i < pl->n_th; i++)
		if (pthread_create(&pl->th[started], NULL, pool_worker, pl) == 0)
			started++;
	prefetch_start(pl);
	pool_worker(pl);
	pool_join(c, pl, started);
	pool_free(pl);
	/* anything the pool could not take (no memory for a worker context) */
	for (size_t i = 0; i < c->n_pairs; i++)
		db_compare_pair(c, &c->pairs[i]);
}

int db_compare_start(db_compare *c)
{
	db_compare_stop(c);
	db_cmp_priv *pr = c->priv;
	db_pool *pl = pool_new(c);
	if (!pl)
		return -1;
	int started = 0;
	for (int i = 0; i < pl->n_th; i++)
		if (pthread_create(&pl->th[started], NULL, pool_worker, pl) == 0)
			started++;
	if (!started) {
		pool_free(pl);
		return -1;
	}
	pl->n_th = started;
	prefetch_start(pl);
	pr->pool = pl;
	return 0;
}

void db_compare_stop(db_compare *c)
{
	db_cmp_priv *pr = c ? c->priv : NULL;
	if (!pr || !pr->pool)
		return;
	db_pool *pl = pr->pool;
	atomic_store(&pl->cancel, 1);
	pool_join(c, pl, pl->n_th);
	pool_free(pl);
	pr->pool = NULL;
}

bool db_compare_finished(const db_compare *c)
{
	return atomic_load(&((db_compare *)c)->n_done) >= c->n_pairs;
}
