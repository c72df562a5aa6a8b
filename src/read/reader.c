#include "db_reader.h"

#include <setjmp.h>
#include <stdatomic.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_bus.h"
#include "msprobe_json.h"
#include "pt.h"
#include "reader_impl.h"
#include "st_npy.h"
#include "walk.h"
#include "zip.h"

/* Every member ends in ".npy" and none is a torch data.pkl. */
static bool zip_is_npz(const db_zip *z)
{
	for (size_t i = 0; i < z->n_entries; i++) {
		const db_zip_entry *e = &z->entries[i];
		const char *slash = strrchr(e->name, '/');
		const char *base = slash ? slash + 1 : e->name;
		if (!strcmp(base, "data.pkl"))
			return false;
		if (e->name_len < 4 || strcmp(e->name + e->name_len - 4, ".npy"))
			return false;
	}
	return true;
}

db_format db_detect_format(const uint8_t *d, size_t n)
{
	if (n >= 4 && !memcmp(d, "PK\x03\x04", 4))
		return DB_FMT_PT_ZIP; /* or npz: decided from the member names */
	if (n >= 6 && !memcmp(d, "\x93NUMPY", 6))
		return DB_FMT_NPY;
	if (db_pt_is_legacy(d, n))
		return DB_FMT_PT_LEGACY;
	if (db_msprobe_sniff(d, n))
		return DB_FMT_MSPROBE_JSON;
	/* safetensors: u64 header length, then JSON starting with '{'. A header
	 * that does not start with '{' is still handed over when the length is
	 * plausible, so the reader can say what is wrong with it. */
	if (n >= 9 && d[8] == '{')
		return DB_FMT_SAFETENSORS;
	if (n >= 8) {
		uint64_t hl = 0;
		for (int i = 7; i >= 0; i--)
			hl = hl << 8 | d[i];
		if (hl > 0 && hl <= n - 8)
			return DB_FMT_SAFETENSORS;
	}
	return DB_FMT_UNKNOWN;
}

static int parse(db_file *f, db_err *err)
{
	const uint8_t *d = f->map;
	size_t n = f->map_size;
	if (n == 0)
		return db_err_set(err, f->path, NULL, -1, "empty file (0 bytes)");
	switch (db_detect_format(d, n)) {
	case DB_FMT_PT_ZIP: {
		db_zip z;
		if (db_zip_open(d, n, f->path, &z, err))
			return -1;
		int rc;
		if (zip_is_npz(&z)) {
			db_zip_close(&z);
			f->format = DB_FMT_NPZ;
			return db_read_npz(f, d, n, err);
		}
		f->format = DB_FMT_PT_ZIP;
		rc = db_read_pt_zip(f, &z, err);
		db_zip_close(&z);
		return rc;
	}
	case DB_FMT_NPY:
		f->format = DB_FMT_NPY;
		return db_read_npy(f, d, n, err);
	case DB_FMT_PT_LEGACY:
		f->format = DB_FMT_PT_LEGACY;
		return db_read_pt_legacy(f, d, n, err);
	case DB_FMT_SAFETENSORS:
		f->format = DB_FMT_SAFETENSORS;
		return db_read_safetensors(f, d, n, err);
	case DB_FMT_MSPROBE_JSON:
		f->format = DB_FMT_MSPROBE_JSON;
		return db_read_msprobe(f, d, n, err);
	default:
		break;
	}
	char hex[3 * 8 + 1] = "";
	for (size_t i = 0, o = 0; i < n && i < 8; i++)
		o += (size_t)snprintf(hex + o, sizeof hex - o, "%s%02x", i ? " " : "", d[i]);
	return db_err_set(err, f->path, NULL, 0,
	                  "unknown format (starts with %s): not a torch.save zip or legacy file, "
	                  "safetensors, .npy, .npz or msprobe dump.json", hex);
}

static db_file *new_file(const char *name, db_err *err)
{
	db_file *f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup(name))) {
		free(f);
		db_err_set(err, name, NULL, -1, "out of memory");
		return NULL;
	}
	return f;
}

/* Below this many entries db_file_find scans; above, it searches by_key. */
#define FIND_SCAN_MAX 16

/* qsort has no context argument: the entries being sorted, set per sort
 * (the index is built once per file, before any other thread sees it). */
static _Thread_local const db_entry *sort_entries;

static int by_key_cmp(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(sort_entries[i].key, sort_entries[j].key);
	if (c)
		return c;
	return i < j ? -1 : i > j;
}

/* A sorted index rather than a hash: key names come from the file, and a
 * sort's worst case does not depend on them (a million tensors, looked up
 * once each per compare, were quadratic with the scan: issue 26). */
static int build_by_key(db_file *f, db_err *err)
{
	if (f->n_entries <= FIND_SCAN_MAX)
		return 0;
	if (!(f->by_key = malloc(f->n_entries * sizeof *f->by_key)))
		return db_err_set(err, f->path, NULL, -1, "out of memory");
	for (size_t i = 0; i < f->n_entries; i++)
		f->by_key[i] = i;
	sort_entries = f->entries;
	qsort(f->by_key, f->n_entries, sizeof *f->by_key, by_key_cmp);
	sort_entries = NULL;
	return 0;
}

/* ix (the entries sorted by key, first added first) holds key? */
static bool sorted_has(const db_file *f, const size_t *ix, const char *key)
{
	size_t lo = 0, hi = f->n_entries;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(f->entries[ix[mid]].key, key);
		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Keys a file repeats (a dict key beside a nested dict that flattens to
 * it, keys cut at a NUL, a zip or a header naming one member twice): each
 * repeat after the first is renamed "KEY #N", N the first count no other
 * key holds, so that every entry is found by a key of its own (issue 37:
 * db_file_find and the metrics cache's key both took the first entry for
 * both, and a sign-flipped second tensor read "ok"). The first keeps its
 * name; the order of the entries is kept. */
static int unique_keys(db_file *f, db_err *err)
{
	size_t n = f->n_entries;
	if (n < 2)
		return 0;
	size_t *ix = f->by_key, *own = NULL;
	if (!ix) {              /* a few entries: sorted here */
		if (!(ix = own = malloc(n * sizeof *ix)))
			return db_err_set(err, f->path, NULL, -1, "out of memory");
		for (size_t i = 0; i < n; i++)
			ix[i] = i;
		sort_entries = f->entries;
		qsort(ix, n, sizeof *ix, by_key_cmp);
		sort_entries = NULL;
	}
	char **nk = NULL;
	int rc = 0;
	for (size_t a = 0; a < n && rc == 0;) {
		size_t b = a + 1;
		while (b < n && !strcmp(f->entries[ix[a]].key, f->entries[ix[b]].key))
			b++;
		for (size_t r = a + 1, k = 1; r < b && rc == 0; r++, k++) {
			const char *key = f->entries[ix[a]].key;
			size_t len = strlen(key) + 24;
			char *name = malloc(len);
			if (!nk && !(nk = calloc(n, sizeof *nk))) {
				free(name);
				name = NULL;
			}
			if (!name) {
				rc = db_err_set(err, f->path, NULL, -1, "out of memory");
				break;
			}
			do
				snprintf(name, len, "%s #%zu", key, k++);
			while (sorted_has(f, ix, name));
			k--;
			nk[ix[r]] = name;
		}
		a = b;
	}
	for (size_t i = 0; nk && i < n; i++) {
		if (!nk[i])
			continue;
		if (rc == 0) {
			free(f->entries[i].key);
			f->entries[i].key = nk[i];
		} else {
			free(nk[i]);
		}
	}
	if (nk && rc == 0 && f->by_key) {       /* the new names in their place */
		sort_entries = f->entries;
		qsort(f->by_key, n, sizeof *f->by_key, by_key_cmp);
		sort_entries = NULL;
	}
	free(nk);
	free(own);
	return rc;
}

/* A SIGBUS while parsing a mapping: the file shrank since its fstat. */
static int changed_error(const db_file *f, const void *addr, db_err *err)
{
	int64_t off = addr ? (int64_t)((const uint8_t *)addr - f->map) : -1;
	return db_err_set(err, f->path, NULL, off, "file changed while read (it shrank under its "
	                  "mapping: this byte is gone); rescan");
}

/* parse under a guard: a SIGBUS on the mapping is an error for this file
 * (what the readers held is freed: db_bus_hold) and the process goes on. */
static int parse_guarded(db_file *file, db_err *err)
{
	db_file *volatile f = file;     /* read after a jump */
	db_bus_guard g;
	if (sigsetjmp(g.jb, 0) != 0) {
		db_bus_unwind(&g);
		return changed_error(f, g.addr, err);
	}
	db_bus_enter(&g);
	int rc = parse(f, err);
	db_bus_leave(&g);
	return rc;
}

static int finish(db_file *f, db_file **out, db_err *err)
{
	int rc = f->map_is_mmap == DB_MAP_MMAP ? parse_guarded(f, err) : parse(f, err);
	bool busy = rc == -2;
	f->opt = NULL;
	if (rc || build_by_key(f, err) || unique_keys(f, err)) {
		db_file_close(f);
		*out = NULL;
		return busy ? -2 : -1;
	}
	*out = f;
	return 0;
}

int db_file_open_mem(const char *name, const uint8_t *data, size_t size, db_file **out,
                     db_err *err)
{
	*out = NULL;
	db_file *f = new_file(name, err);
	if (!f)
		return -1;
	f->map = data;
	f->map_size = size;
	return finish(f, out, err);
}

int db_file_open(const char *path, db_file **out, db_err *err)
{
	return db_file_open_rb(path, NULL, out, err);
}

int db_file_open_rb(const char *path, db_readbuf *rb, db_file **out, db_err *err)
{
	return db_file_open_opt(path, rb, NULL, out, err);
}

static atomic_size_t g_opened;

size_t db_files_opened(void)
{
	return atomic_load(&g_opened);
}

int db_file_open_opt(const char *path, db_readbuf *rb, db_open_opt *opt, db_file **out,
                     db_err *err)
{
	*out = NULL;
	atomic_fetch_add(&g_opened, 1);
	int fd = opt && opt->at_name   /* a FIFO must not block */
	         ? openat(opt->dirfd, opt->at_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
	         : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return db_err_set(err, path, NULL, -1, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return db_err_set(err, path, NULL, -1, "cannot stat: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return db_err_set(err, path, NULL, -1, "not a regular file");
	}
	db_file *f = new_file(path, err);
	if (!f) {
		close(fd);
		return -1;
	}
	f->opt = opt;
	f->map_size = (size_t)st.st_size;
	f->st_size = (int64_t)st.st_size;
	f->st_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	f->st_ident = db_stat_ident(&st);
	if (f->map_size > 0 && f->map_size <= DB_SMALL_FILE_READ) {
		/* A small file is read, not mapped: mmap + munmap (a TLB
		 * shootdown when other threads run) per file dominated opening
		 * 100k-file trees (issue 12). Same bytes; a file that shrank
		 * since the fstat reads as the shorter file. */
		/* 64-byte aligned like the data in a mapping (SIMD loads);
		 * the caller's buffer when it gave one (no heap churn) */
		size_t want = (f->map_size + 63) & ~(size_t)63;
		uint8_t *buf;
		if (rb && rb->cap < want) {
			free(rb->p);
			rb->p = aligned_alloc(64, want);
			rb->cap = rb->p ? want : 0;
		}
		buf = rb ? rb->p : aligned_alloc(64, want);
		size_t got = 0;
		int e = buf ? 0 : ENOMEM;
		while (!e && got < f->map_size) {
			ssize_t r = pread(fd, buf + got, f->map_size - got, (off_t)got);
			if (r < 0 && errno != EINTR)
				e = errno;
			else if (r == 0)
				break;
			else if (r > 0)
				got += (size_t)r;
		}
		if (e) {
			if (!rb)
				free(buf);
			close(fd);
			db_file_close(f);
			return db_err_set(err, path, NULL, -1, "cannot read: %s", strerror(e));
		}
		f->map = buf;
		f->map_size = got;
		f->map_is_mmap = rb ? 0 : DB_MAP_HEAP;
	} else if (f->map_size > 0) {
		/* Parsing reads both ends of a big file (a zip's central directory
		 * at the end, the pickle and headers at the start; safetensors and
		 * npy their header): ask for both at once. A cold tree otherwise
		 * paid one page fault after the other, each a disk round trip
		 * (64 files: 0.4 s before the first byte of data was compared). */
		size_t ends = (size_t)64 << 10;
		(void)posix_fadvise(fd, 0, (off_t)ends, POSIX_FADV_WILLNEED);
		(void)posix_fadvise(fd, (off_t)(f->map_size - ends), (off_t)ends, POSIX_FADV_WILLNEED);
		void *m = mmap(NULL, f->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			int e = errno;
			close(fd);
			db_file_close(f);
			return db_err_set(err, path, NULL, -1, "cannot mmap: %s", strerror(e));
		}
		f->map = m;
		f->map_is_mmap = DB_MAP_MMAP;
		db_bus_map_add(m, f->map_size);
	}
	close(fd);
	return finish(f, out, err);
}

void db_file_close(db_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_entries; i++) {
		free(f->entries[i].key);
		free(f->entries[i].err);
	}
	free(f->entries);
	free(f->by_key);
	db_file_give_inflate(f, f->inflate_held);
	for (size_t i = 0; i < f->n_owned; i++)
		free(f->owned[i]);
	free(f->owned);
	if (f->map_is_mmap == DB_MAP_MMAP && f->map) {
		db_bus_map_remove(f->map);
		munmap((void *)(uintptr_t)f->map, f->map_size);
	}
	else if (f->map_is_mmap == DB_MAP_HEAP)
		free((void *)(uintptr_t)f->map);
	free(f->path);
	free(f);
}

const char *db_format_name(db_format fmt)
{
	switch (fmt) {
	case DB_FMT_PT_ZIP: return "pt_zip";
	case DB_FMT_PT_LEGACY: return "pt_legacy";
	case DB_FMT_SAFETENSORS: return "safetensors";
	case DB_FMT_NPY: return "npy";
	case DB_FMT_NPZ: return "npz";
	case DB_FMT_MSPROBE_JSON: return "msprobe_json";
	default: return "unknown";
	}
}

const db_entry *db_file_find(const db_file *f, const char *key)
{
	if (!f->by_key) {
		for (size_t i = 0; i < f->n_entries; i++)
			if (!strcmp(f->entries[i].key, key))
				return &f->entries[i];
		return NULL;
	}
	/* lower bound: the first of equal keys is the first added */
	size_t lo = 0, hi = f->n_entries;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(f->entries[f->by_key[mid]].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < f->n_entries && !strcmp(f->entries[f->by_key[lo]].key, key))
		return &f->entries[f->by_key[lo]];
	return NULL;
}
