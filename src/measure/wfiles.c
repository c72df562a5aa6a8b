/* A worker's open files (LRU, so consecutive pairs from one dict file do
 * not re-parse it) and the read path it asks for: shared by the chunked
 * accumulation (workers.c) and merged pairs (unshard.c), below both. */
#include "pair/compare_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_bus.h"
#include "read/walk.h"
#include "util/budget.h"

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
	w->sampling = w->read == DB_READ_AUTO;
	if (w->read == DB_READ_PREAD || w->read == DB_READ_AUTO)
		for (int i = 0; i < 2; i++)
			if (!(w->rbuf[i] = aligned_alloc(4096, DB_READ_PIECE))) {
				db_wctx_free(w);
				return -1;
			}
	return 0;
}

static void wfile_close(db_wfile *wf)
{
	free(wf->path);
	db_file_close(wf->f);
	if (wf->fd >= 0)
		close(wf->fd);
}

void db_wctx_drop_files(db_wctx *w)
{
	for (size_t i = 0; i < w->n_files; i++)
		wfile_close(&w->files[i]);
	w->n_files = 0;
}

void db_wctx_drop_inflating(db_wctx *w)
{
	size_t k = 0;
	for (size_t i = 0; i < w->n_files; i++) {
		if (w->files[i].f->inflate_held == 0)
			w->files[k++] = w->files[i];
		else
			wfile_close(&w->files[i]);
	}
	w->n_files = k;
}

uint64_t db_wctx_pinned_inflate(const db_wctx *w)
{
	uint64_t n = 0;
	for (size_t i = 0; i < w->n_files; i++)
		if (w->files[i].used >= w->pin_tick)
			n += w->files[i].f->inflate_held;
	return n;
}

static uint64_t held_inflate(const db_wctx *w)
{
	uint64_t n = 0;
	for (size_t i = 0; i < w->n_files; i++)
		n += w->files[i].f->inflate_held;
	return n;
}

/* Close the files the current pair does not use (they hold inflate budget
 * another open needs). */
static void drop_unpinned(db_wctx *w)
{
	size_t k = 0;
	for (size_t i = 0; i < w->n_files; i++) {
		if (w->files[i].used >= w->pin_tick)
			w->files[k++] = w->files[i];
		else
			wfile_close(&w->files[i]);
	}
	w->n_files = k;
}

/* Open path for w: never waits for inflate budget while w holds some (two
 * workers could wait for each other); closes its unused files and tries
 * again, then gives up with w->busy set (db_pair_accum retries the pair
 * holding nothing). */
static int wctx_open(db_wctx *w, const char *path, db_file **f, db_err *err)
{
	db_open_opt o = {.nowait = held_inflate(w) > 0, .prepaid = &w->prepaid};
	int rc = db_file_open_opt(path, NULL, &o, f, err);
	if (rc == -2) {
		drop_unpinned(w);
		o.nowait = held_inflate(w) > 0;
		rc = db_file_open_opt(path, NULL, &o, f, err);
	}
	if (rc == -2) {
		w->busy = true;
		w->busy_need = o.need;
	}
	return rc ? -1 : 0;
}

int db_wctx_changed(db_wctx *w, const void *addr, db_err *err)
{
	const char *path = NULL;
	int64_t off = -1;
	for (size_t i = 0; i < w->n_files && !path; i++) {
		const db_file *f = w->files[i].f;
		if (f->map_is_mmap == DB_MAP_MMAP && (const uint8_t *)addr >= f->map &&
		    (const uint8_t *)addr < f->map + f->map_size) {
			path = w->files[i].path;
			off = (int64_t)((const uint8_t *)addr - f->map);
		}
	}
	db_err_set(err, path, NULL, off, "file changed while read (it shrank under its mapping: "
	           "this byte is gone); rescan");
	db_wctx_drop_files(w);
	return -1;
}

int db_wctx_run(db_wctx *w, int (*fn)(void *arg), void *arg, db_err *err)
{
	const void *at = NULL;
	int rc = db_bus_run(fn, arg, &at);
	return rc == DB_BUS_FAULT ? db_wctx_changed(w, at, err) : rc;
}

void db_wctx_free(db_wctx *w)
{
	db_wctx_drop_files(w);
	db_budget_give(&db_inflate_budget, w->prepaid);
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

/* f was opened for another version of it's file than the index saw */
static bool stale(const db_file *f, const db_item *it)
{
	return it && (f->st_size != it->size || f->st_mtime_ns != it->mtime_ns ||
	              f->st_ident != it->ident);
}

static db_file *wctx_file(db_wctx *w, const char *path, const db_item *it, int *fd_out,
                          db_err *err)
{
	for (size_t i = 0; i < w->n_files; i++)
		if (!strcmp(w->files[i].path, path)) {
			if (stale(w->files[i].f, it)) {
				/* opened for an older index (a context kept across a
				 * rescan): open again and check the file as new */
				wfile_close(&w->files[i]);
				w->files[i] = w->files[--w->n_files];
				break;
			}
			w->files[i].used = ++w->tick;
			*fd_out = w->files[i].fd;
			return w->files[i].f;
		}
	/* one open: the file's fstat (taken by db_file_open) is checked
	 * against the index, no stat by path first */
	db_file *f = NULL;
	if (wctx_open(w, path, &f, err) != 0)
		return NULL;
	if (stale(f, it)) {
		db_file_close(f);
		db_err_set(err, path, NULL, -1, "file changed since the tree was indexed; rescan");
		return NULL;
	}
	int fd = -1;
	if (f->map_is_mmap == DB_MAP_MMAP &&
	    (w->read == DB_READ_PREAD || w->read == DB_READ_AUTO)) {
		/* the bytes of contiguous tensors are read through fd, the same
		 * file as mapped; a small file read whole needs none */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		struct stat fs;
		if (fd >= 0 && (fstat(fd, &fs) != 0 || db_stat_ident(&fs) != f->st_ident ||
		                fs.st_size != f->st_size)) {
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
		wfile_close(&w->files[slot]);
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

void db_wctx_small_read(db_wctx *w, uint64_t nbytes)
{
	if ((w->small_bytes += nbytes) < DB_SMALL_DROP)
		return;
	w->small_bytes = 0;
	for (size_t i = 0; i < w->n_files; i++) {
		const db_file *f = w->files[i].f;
		if (f && f->map_is_mmap == DB_MAP_MMAP && f->map_size)
			(void)madvise((void *)f->map, f->map_size, MADV_DONTNEED);
	}
}

int db_wctx_tensor_fd(db_wctx *w, const db_index *ix, const db_item *it,
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

int db_wctx_tensor_at(db_wctx *w, const char *path, const db_item *like, const db_tensor **t,
                      const db_file **file, int *fd, db_err *err)
{
	db_file *f = wctx_file(w, path, NULL, fd, err);
	if (!f)
		return -1;
	const db_entry *en = f->n_entries == 1 ? &f->entries[0] : NULL;
	if (!en || en->err || !same_shape(like, &en->t))
		return db_err_set(err, path, NULL, -1, "not the one tensor of %s's shape and dtype",
		                  like->key);
	*t = &en->t;
	*file = f;
	return 0;
}

int db_wctx_tensor(db_wctx *w, const db_index *ix, const db_item *it,
                   const db_tensor **t, const db_file **file, db_err *err)
{
	int fd;
	return db_wctx_tensor_fd(w, ix, it, t, file, &fd, err);
}

/* ---- the pread path ---------------------------------------------------- */
