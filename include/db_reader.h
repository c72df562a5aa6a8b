/* Opening dump files: torch.save (.pt zip and legacy), safetensors, .npy,
 * .npz. Files are mmap'ed read-only; tensors point into the mapping (or
 * into buffers the db_file owns, for deflated .npz members). Nothing in a
 * file is ever executed: the pickle reader is a restricted VM. */
#ifndef DB_READER_H
#define DB_READER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_err.h"
#include "db_tensor.h"

typedef enum db_format {
	DB_FMT_UNKNOWN = 0, DB_FMT_PT_ZIP, DB_FMT_PT_LEGACY, DB_FMT_SAFETENSORS,
	DB_FMT_NPY, DB_FMT_NPZ, DB_FMT_MSPROBE_JSON
} db_format;

typedef struct db_entry {
	/* Flattened key: "" for a file holding one plain tensor; nested dict keys
	 * joined with '.', list/tuple items by index ("layers.0.w", "out.1"). */
	char *key;
	db_tensor t;                    /* valid when err == NULL */
	/* Set when this entry could not be read: a full message naming file,
	 * entry and byte offset. The other entries of the file are still good. */
	char *err;
} db_entry;

enum { DB_MAP_MMAP = 1, DB_MAP_HEAP = 2 };
/* Files up to this size are read whole instead of mapped (db_file_open). */
#define DB_SMALL_FILE_READ ((size_t)64 << 10)

typedef struct db_file {
	char *path;
	db_format format;
	db_entry *entries;              /* in file order (dict insertion order) */
	size_t n_entries;
	/* private to the readers */
	const uint8_t *map;
	size_t map_size;
	void **owned;
	size_t n_owned, cap_owned;
	size_t cap_entries;
	/* entry indices sorted by key, first-added first among equal keys
	 * (db_file_find's binary search); NULL when a scan is as cheap */
	size_t *by_key;
	/* the file as db_file_open's fstat saw it (0 for db_file_open_mem):
	 * callers check it against their index without a second stat */
	int64_t st_size, st_mtime_ns;
	uint64_t st_ident;              /* device and inode (walk.h) */
	int map_is_mmap;                /* DB_MAP_MMAP: map came from mmap (munmap
	                                 * on close); DB_MAP_HEAP: read into a
	                                 * malloc'd buffer (free on close); 0:
	                                 * borrowed (db_file_open_mem) */
	/* inflated bytes (npz members, deflated .pt records) this file holds
	 * of the process's inflate budget; given back by db_file_close */
	uint64_t inflate_held;
	struct db_open_opt *opt;        /* while parsing: the caller's options */
} db_file;

/* Inflated data is bounded per process (DUMPBISECT_INFLATE_MAX): a file
 * takes what its deflated members declare, all at once, before inflating,
 * and holds it until closed. Opening waits while other files hold the rest,
 * unless the caller holds some itself (two such callers could wait for
 * each other): nowait then makes the open fail with -2 at once. */
typedef struct db_open_opt {
	bool nowait;            /* -2 instead of waiting for inflate budget */
	uint64_t *prepaid;      /* budget the caller took beforehand: drawn from
	                         * first (may be NULL) */
	uint64_t need;          /* out: what the file asked for (set on -2) */
	/* at_name non-NULL: the file is opened as at_name below the open
	 * directory dirfd (one path component looked up, not every one of
	 * path: issue 24); path still names it in errors */
	int dirfd;
	const char *at_name;
} db_open_opt;

/* Open and parse path. On success *out owns everything (free with
 * db_file_close) and returns 0. A file refused as a whole (unknown format,
 * malicious pickle, truncated header) returns -1 with err set; the caller
 * keeps going with the rest of the tree. */
int db_file_open(const char *path, db_file **out, db_err *err);

/* A buffer db_file_open_rb reads small files into (reused from file to
 * file; free rb.p when done). The db_file borrows it: close the file
 * before the buffer is used again or freed. */
typedef struct db_readbuf { uint8_t *p; size_t cap; } db_readbuf;
int db_file_open_rb(const char *path, db_readbuf *rb, db_file **out, db_err *err);
/* Same with options (NULL: none); -2 when opt->nowait and the inflate
 * budget is busy (err says so, opt->need what it wanted). */
int db_file_open_opt(const char *path, db_readbuf *rb, db_open_opt *opt, db_file **out,
                     db_err *err);
/* Files the process has opened so far (db_file_open*; for DUMPBISECT_TIMING
 * and tests: what a reopen reads). */
size_t db_files_opened(void);
/* Same on bytes already in memory (fuzzers, tests). data must outlive f. */
int db_file_open_mem(const char *name, const uint8_t *data, size_t size,
                     db_file **out, db_err *err);
void db_file_close(db_file *f);
const char *db_format_name(db_format fmt);
/* Entry with exactly this key, or NULL. Keys are unique in a file: a key
 * the file repeats is renamed "KEY #N" at open (reader.c). O(log n): a file
 * may hold a million tensors. */
const db_entry *db_file_find(const db_file *f, const char *key);

#endif
