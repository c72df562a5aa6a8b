/* Internals shared by compare_open.c (open, rescan), compare.c (pairing),
 * unshard.c (merged pairs), workers.c (the pool) and cache.c (metrics
 * cache). Not a public header. */
#ifndef DB_COMPARE_PRIV_H
#define DB_COMPARE_PRIV_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "db_compare.h"
#include "db_slot.h"
#include "db_reader.h"

/* A big pair is split into chunks of this many elements; chunk bounds
 * depend only on numel, and chunk results merge in chunk order, so results
 * do not depend on the number of threads. */
#define DB_CHUNK_ELEMS ((int64_t)1 << 21)
/* Merged pairs are decoded through buffers of this many elements. */
#define DB_SEG_ELEMS ((int64_t)1 << 14)

/* One worker's open files (LRU) and decode buffers. */
typedef struct db_wfile {
	char *path;
	db_file *f;
	uint64_t used;
	int fd;                 /* for the pread path; -1 when not open */
} db_wfile;

/* How contiguous stored tensors reach the metrics loop (DUMPBISECT_READ):
 * auto (the default) measures: each worker times DB_READ_NSAMPLE chunks
 * read where the file is mapped (zero-copy; costs a page fault per
 * page-cache folio, many when the files came off disk in readahead-sized
 * folios) and as many read with pread (costs a copy), the two interleaved
 * so both see the same load, keeps the one whose median CPU per byte is
 * lower (pread only when clearly, DB_READ_MARGIN, lower: the copy also
 * costs memory bandwidth the other workers share), and measures again
 * every DB_READ_RESAMPLE bytes; pread copies
 * each chunk, a cache-sized piece at a time, into the worker's buffers;
 * mmap always reads the mapping; populate also asks MADV_POPULATE_READ for
 * each chunk first. Results are bit-identical on every path. Views, slots,
 * merged shards and inflated .npz members always use the mapping. */
typedef enum db_read_path {
	DB_READ_AUTO = 0, DB_READ_PREAD, DB_READ_MMAP, DB_READ_POPULATE
} db_read_path;
#define DB_READ_NSAMPLE 4
#define DB_READ_SAMPLE_MIN ((uint64_t)1 << 20)   /* smaller chunks are not timed */
#define DB_READ_MARGIN 0.9
#define DB_READ_RESAMPLE ((uint64_t)1 << 30)
#define DB_READ_PIECE ((size_t)256 << 10)

typedef struct db_wctx {
	db_wfile *files;
	size_t n_files, cap_files;
	uint64_t tick;
	double *buf[4];         /* x, y, and scratch for sums (DB_SEG_ELEMS*2 each) */
	db_read_path read;
	bool use_pread;         /* pread now (DB_READ_PREAD, or auto decided) */
	bool sampling;          /* auto: timing both paths (else decided) */
	int smp_n[2];           /* samples taken: [0] mmap, [1] pread */
	double smp_cost[2][DB_READ_NSAMPLE];  /* CPU ns per byte of each sample */
	uint64_t smp_bytes;     /* bytes since the decision */
	uint8_t *rbuf[2];       /* pread path: DB_READ_PIECE bytes each (x, y) */
	uint64_t small_bytes;   /* mapped bytes of small chunks not yet dropped */
	/* the process's inflate budget (db_reader.h): files used since pin_tick
	 * serve the pair being computed and stay open; the others may be
	 * closed to make room. busy: an open found the budget busy while this
	 * worker held some (busy_need: what it wanted); prepaid: budget taken
	 * for a retry of the pair, drawn by its opens */
	uint64_t pin_tick;
	bool busy;
	uint64_t busy_need, prepaid;
} db_wctx;

/* The read path DUMPBISECT_READ asks for (auto unless pread, mmap or populate). */
db_read_path db_read_path_get(void);
int db_wctx_init(db_wctx *w, size_t cap_files);
void db_wctx_free(db_wctx *w);
/* The tensor of item it (an item of index ix), opened through w's cache.
 * Checks the file did not change since indexing. Borrowed until the next
 * call that may evict (keep at most cap_files distinct files per use). */
int db_wctx_tensor(db_wctx *w, const db_index *ix, const db_item *it,
                   const db_tensor **t, const db_file **file, db_err *err);
/* The same, with *fd the file's descriptor for the pread path (-1 none). */
/* The one tensor of the file at path (no item of the index: a file a
 * dump's entry names, msprobe's dump_tensor_data/<name>.pt), checked to
 * have like's shape and dtype; as db_wctx_tensor_fd otherwise. */
int db_wctx_tensor_at(db_wctx *w, const char *path, const db_item *like, const db_tensor **t,
                      const db_file **file, int *fd, db_err *err);
int db_wctx_tensor_fd(db_wctx *w, const db_index *ix, const db_item *it,
                      const db_tensor **t, const db_file **file, int *fd, db_err *err);
/* Page advice for elements [b, e) of t inside f's mapping (contiguous
 * tensors in mmap'ed files only; a no-op otherwise): MADV_DONTNEED drops
 * pages fully inside the range from this process (they stay in the page
 * cache), so peak RSS does not grow with tensor or file size;
 * MADV_WILLNEED starts read-ahead. */
void db_advise(const db_file *f, const db_tensor *t, int64_t b, int64_t e, int advice);
/* Chunks under DB_SMALL_CHUNK bytes a side are not dropped one by one (a
 * madvise per tiny tensor, each zapping its 2 MiB margins, was most of a
 * million-tensor compare): w counts their bytes and drops the mappings of
 * all its files once DB_SMALL_DROP have been read. */
#define DB_SMALL_CHUNK ((uint64_t)256 << 10)
#define DB_SMALL_DROP ((uint64_t)64 << 20)
void db_wctx_small_read(db_wctx *w, uint64_t nbytes);
/* Close every file of w (their inflate budget given back). */
void db_wctx_drop_files(db_wctx *w);
/* Closes the files holding inflate budget (a context kept idle must not
 * hold what a worker waits for). */
void db_wctx_drop_inflating(db_wctx *w);
/* Inflate budget held by the files the current pair uses. */
uint64_t db_wctx_pinned_inflate(const db_wctx *w);
/* A file of w shrank under its mapping while read (SIGBUS at addr,
 * db_bus.h): err says which and where, w closes every file (the mapping is
 * no good, and the caller holds the others); -1. */
int db_wctx_changed(db_wctx *w, const void *addr, db_err *err);
/* fn(arg) with its reads of w's mappings guarded: fn's result, or
 * db_wctx_changed's -1. For code that opens files in a wctx of its own. */
int db_wctx_run(db_wctx *w, int (*fn)(void *arg), void *arg, db_err *err);

/* Accumulate elements [b, e) of pair p into a (initialised by the caller). */
int db_pair_accum(db_compare *c, db_wctx *w, const db_pair *p, int64_t b,
                  int64_t e, db_accum *a, db_err *err);
/* Merged pairs (unshard.c). */
int db_unshard_accum(db_compare *c, db_wctx *w, const db_pair *p, int64_t b,
                     int64_t e, db_accum *a, db_err *err);
/* Logical shape of shards unsharded by rule r (NULL: a single tensor).
 * -1 with msg when the shards disagree. */
int db_unshard_shape(const db_item *const *shards, size_t n,
                     const db_shard_rule *r, int *ndim, int64_t *shape,
                     char *msg, size_t msglen);

/* Store the results of a finished pair and publish it (state DONE). msg
 * non-NULL turns the pair into an error pair. */
void db_pair_publish(db_compare *c, db_pair *p, const db_accum *a,
                     const char *msg);
/* Compute the whole pair in the calling thread (chunk by chunk). */
void db_pair_compute_all(db_compare *c, db_wctx *w, db_pair *p);
/* The regime of batch slots found by itself (measure/slot.c): called for
 * p once it is DONE, before n_done counts it (NULL: after a rescan, for
 * every pair). Decides, once the first computed layer's pairs are all
 * done, whether found slots are judged bitwise (every comparable pair up
 * to the end of that layer bit-identical, one of them a found slot, no
 * noise run), and then marks each such pair (db_slot.bitwise). */
void db_slot_regime_settle(db_compare *c, db_pair *p);
/* The start of found batch slot p's block (measure/slot.c): chosen for
 * p's pass, not for p alone. The first pair of the pass with p's slot
 * geometry (in execution order: the token ids or embeddings) names the
 * blocks that hold its rows bit for bit; one: that block, for every pair
 * of the pass; several (the same prompt N times): each is the prompt's
 * run, and p is measured on the one farthest from the other side (a bit
 * off first, then the largest rel_l2; the first on ties), so a bug in any
 * slot shows; none: p's own best match (db_slot_find). Loads tensors
 * into w; -1 with err when no block is close. */
int64_t db_slot_pick(db_compare *c, db_wctx *w, const db_pair *p, db_err *err);
/* Metrics cache (cache.c): on a hit, fill p and publish it (state DONE,
 * n_done counted) and return true. */
bool db_cache_lookup(db_compare *c, db_pair *p);
void db_cache_store(db_compare *c, const db_pair *p);
void db_cache_flush(db_compare *c);
void db_cache_close(db_compare *c);

/* Pairing (compare.c): c->ref, c->tgt, profile and priv set. */
int db_build_pairs(db_compare *c, db_err *err);
/* p pairs weights of a checkpoint: profile pr says its dict order is none
 * (weights dumps), a side is dequantized, or both sides are safetensors
 * files (the checkpoint format) with no phase or pass (compare.c). Only
 * such pairs are read through layout transforms (measure/xform.c). */
bool db_pair_is_weight(const db_profile *pr, const db_pair *p);
/* A fresh db_compare.pairs_gen (never 0). */
unsigned long db_next_pairs_gen(void);
int db_build_phases(db_compare *c);
void db_free_pairs(db_compare *c);      /* pairs and phases */
/* The ranked, unmerged pairs of p's cell (phase, pass, layer, stage,
 * occurrence across ranks), p among them, as indices in pair order; *n of
 * them (NULL, 0 for a merged or rank-less p, or out of memory). Built once
 * per set of pairs, under a lock; valid until the pairs change. */
const size_t *db_cell_pairs(const db_compare *c, const db_pair *p, size_t *n);
/* p's cell's slot for db_replica_settle's answer (the ranks that sum to
 * the other side, 0 none; -1 until one worker has found it), so the cell's
 * other pairs do not read every rank again. NULL when p has no cell. */
_Atomic int *db_cell_replica_memo(const db_compare *c, const db_pair *p);
/* The partial-sum hint's memo (hints.c): *ranks is p's cell's count of
 * targets summed (-1 until found); (*ok)[i] pair i's own answer (-1 until
 * found, 0 no, 1 its reference is that sum), so one sum per cell serves
 * its ranks. -1 (both NULL) when p has no cell. */
int db_cell_psum_memo(const db_compare *c, const db_pair *p, _Atomic int **ranks,
                      _Atomic signed char **ok);
/* A value hint a cell's sweep found for one of its ranks (hint_values.c):
 * kind DB_HINT_NONE, _TRANSPOSED (perm), _SHIFT (n: by), _ROWS_PERMUTED
 * (n: moved). */
typedef struct db_vhint {
	signed char kind, ndim, perm[4];
	int64_t n;
} db_vhint;
/* p's cell's slot for its sweep's value hints, one per member in
 * db_cell_pairs order (NULL until a sweep published them; the array is
 * owned by the cell index). NULL when p has no cell. */
_Atomic(db_vhint *) *db_cell_vhints(const db_compare *c, const db_pair *p);
/* The nan_origin hint's memo (hints.c): the least seq of a computed pair
 * whose target has NaN/Inf where its reference has not, once every pair
 * is computed (INT64_MAX none; INT64_MIN until found). NULL without an
 * index (out of memory, or no comparison state). */
_Atomic int64_t *db_cells_nan_memo(const db_compare *c);
/* Frees the cell index (db_compare_free). */
void db_cells_drop(db_compare *c);
/* Identity of a pair's cell: fields key + occurrence into buf. */
void db_pair_fields_key(const db_ifields *f, int occ, char *buf, size_t len);

typedef struct db_pool db_pool;
/* Chunks of a pair (DB_CHUNK_ELEMS each; 1 for an empty pair) and the
 * element range [*b, *e) of chunk k; files a worker keeps open. */
size_t db_pair_n_chunks(const db_pair *p);
void db_pair_chunk_range(const db_pair *p, size_t k, int64_t *b, int64_t *e);
size_t db_compare_files_needed(const db_compare *c);

/* Cells across ranks (cells.c), for the pairs of generation gen. */
typedef struct db_cells {
	unsigned long gen;
	size_t *of;             /* per pair: its cell, SIZE_MAX merged or rank-less */
	size_t *start, *members;        /* cell g: members[start[g] .. start[g + 1]) */
	_Atomic int *replica_ranks;     /* db_replica_settle's answer per cell; -1 none yet */
	_Atomic int *psum_ranks;        /* db_cell_psum_memo per cell; -1 none yet */
	_Atomic signed char *psum_ok;   /* db_cell_psum_memo per pair; -1 none yet */
	_Atomic(db_vhint *) *vhints;    /* db_cell_vhints per cell */
	_Atomic int64_t nan_seq;        /* db_cells_nan_memo; INT64_MIN none yet */
	size_t n;
} db_cells;

typedef struct db_cmp_priv {
	char *filter;           /* as given */
	void *filter_re;        /* pcre2_code */
	int threads;
	bool one_folder;        /* both sides in one folder, split by the side group */
	bool twice;             /* REF and TARGET name the same folder */
	size_t max_shards;      /* most shards a merged pair needs on one side */
	_Atomic int *owner;     /* per pair: 0 free, 1 pool, 2 caller */
	db_pool *pool;
	char *cache_dir;        /* NULL: cache off */
	/* A file or folder cut out of a tree, rooted at an ancestor so its
	 * enclosing folders name it (compare/lift.c): per side (ref, target)
	 * the path as given and the folders between the root and it; NULL
	 * when the root is the path given. Owned. */
	char *lift_path[2], *lift_sub[2];
	int64_t settle_ns;      /* db_compare_opts.settle_ms; 0 off */
	size_t n_settling;      /* files the last scan left out as unfinished */
	db_slot_spec slot;      /* --slot, when has_slot */
	bool has_slot;
	int n_slots;            /* --slots N, 0 off (db_slots_split) */
	bool slots_alone;       /* two trees: db_slots_alone */
	int align_mode;         /* --align (db_align_mode) */
	void *cache;            /* cache.c state, created on first use */
	pthread_mutex_t cache_mu;       /* guards creating it */
	/* Opened from snapshots on trusted directory stamps (compare_reopen.c):
	 * the listing hashes the snapshots stand for, checked by a thread. */
	bool from_snapshots;    /* until a rescan */
	bool unverified;        /* not checked yet (or changed, not rescanned) */
	uint64_t trusted[2];    /* ref, target (db_walk_hash, full) */
	pthread_t verify_th;
	bool verify_on;         /* verify_th runs or ran and is not joined */
	_Atomic int verify_state;       /* db_verify_state */
	_Atomic int verify_cancel;      /* set: the check's listing stops (db_verify_join) */
	char **dirs;            /* db_compare_dirs (owned) */
	size_t n_dirs;
	pthread_mutex_t cells_mu;       /* guards building cells */
	db_cells cells;
	void *xform;            /* measure/xform.c's decision for pairs_gen */
	struct db_noise *noise; /* --noise: the floors (db_noise.h), or NULL */
	struct db_cwrites *writes;      /* cache files still to write (cache_writes.h) */
	/* db_compare_pair's files between calls (bisect asks pair after pair
	 * of one dict file: a fresh context re-parsed it each time; a
	 * statistics tree's dump.json took 10 s for 200 pairs). Created on
	 * first use, guarded by caller_mu (a second caller thread uses a
	 * context of its own); keeps no inflate budget between calls. */
	struct db_wctx *caller_w;
	pthread_mutex_t caller_mu;
	/* Batch slots found by itself (db_slots_assign counts them): whether
	 * they are judged bitwise, -1 until the first layer is computed
	 * (db_slot_regime_settle); the lock orders deciding against pairs
	 * published meanwhile */
	size_t n_found_slots;
	_Atomic int slot_regime;
	pthread_mutex_t slot_mu;
	/* each pass's blocks holding the prompt bit for bit (db_slot_pick),
	 * under slot_mu; dropped with the pairs */
	struct db_slot_anchor *slot_anchors;
	size_t n_slot_anchors;
} db_cmp_priv;

enum { DB_OWNER_FREE = 0, DB_OWNER_POOL, DB_OWNER_CALLER };

struct db_walk;
/* compare_setup.c: the profile (opts->profile, else detection over listing w of the
 * reference; list_rc/list_msg: how listing it went); -1 with err. */
int db_choose_profile(db_compare *c, const db_compare_opts *opts, const struct db_walk *w,
                      int list_rc, const char *list_msg, db_err *err);
/* one_folder and twice from the profile and how the trees were given. */
void db_set_folders(db_compare *c, bool tgt_given, bool same);
/* The directories of w (a listing or stamps of root) for db_compare_dirs:
 * replace the kept ones (append false) or add to them. */
void db_keep_dirs(db_compare *c, const char *root, const struct db_walk *w, bool append);
/* Frees the kept directories (db_compare_free, a full relisting). */
void db_drop_dirs(db_cmp_priv *pr);
/* compare_reopen.c: profile, ref and tgt from snapshots when every
 * directory of both trees still has its stamp (true); false leaves c as it
 * was for the full open. */
bool db_reopen_trees(db_compare *c, const db_compare_opts *opts, bool tgt_given, bool same);
/* Wait for the check thread, if any, and forget what it found. */
void db_verify_join(db_compare *c);

#endif
