/* Pairing a reference tree with a target tree and measuring every pair.
 * Pairs are joined on (phase, pass, rank, layer, stage, occurrence). For
 * stages the profile marks sharded, a merged pair (rank -1) is added that
 * unshards the per-rank tensors (concat along a dim, sum of partials, or
 * un-fusing fused per-rank outputs). When the two sides have different
 * parallel layouts (TP 1 vs TP 2), a replicated stage pairs every rank with
 * the other side's one tensor, and a sharded one (profile rule, or the
 * dump's meta dims / sequence parallel size) is compared merged only. */
#ifndef DB_COMPARE_H
#define DB_COMPARE_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_index.h"
#include "db_metrics.h"

typedef enum db_status {
	DB_ST_OK = 0, DB_ST_REF_ONLY, DB_ST_TARGET_ONLY, DB_ST_SHAPE_MISMATCH,
	DB_ST_ERROR,
	/* The two sides are laid out differently (TP a vs b) and the layout
	 * cannot be undone (a fused per-rank output without its parts, shapes
	 * that differ with nothing saying how): shown, never a divergence. */
	DB_ST_NOT_COMPARABLE
} db_status;

/* Batch slot: one side's tensor is larger along one dim (the token or
 * batch dim: the same prompt inside a batch, or at another batch size) and
 * the other side matches a contiguous block of it. The pair is measured on
 * that block (see src/measure/slot.c). */
typedef struct db_slot {
	int side;               /* 0 none; 1 the reference is sliced, 2 the target,
	                           DB_SLOT_IN_TREE both (--slots: slot 0 vs slot k) */
	int dim;
	_Atomic int64_t start;  /* -1 until found (at the first compute) */
	int64_t len;
	bool given;             /* --slot: start set by hand */
	/* The slot k this pair stands for (--slots: also its rank field, so
	 * the rank selector, grid and bisect work on slots; a batch slot: the
	 * block's index when the blocks are equal, else -1), and where the
	 * reference's block starts (DB_SLOT_IN_TREE: slot 0's rows). */
	int k;
	/* --slots on a tree of several ranks: the tensor's rank (ranked),
	 * slots being compared within each rank; the rank field is then
	 * rank * n_slots + k, one per rank x slot */
	bool ranked;
	int rank;
	int64_t ref_start;
	/* --slots N with two trees: the reference is the prompt run alone
	 * (its whole tensor, ref_start 0) and k runs over every slot, 0 too */
	bool alone;
	/* --align tokens: the rows of one pass of the stepping side inside the
	 * other side's one pass (compare/align_tokens.c); dim is the whole
	 * side's token dim, sdim the other side's (they differ when size-1 axes
	 * were squeezed: a trainer's [t, 1, h] against an engine's [t, h]) */
	bool tokens;
	int sdim;
} db_slot;

/* db_slot.side of --slots pairs: both sides are blocks of one tensor. */
#define DB_SLOT_IN_TREE 3

/* --slots N: what one (phase, pass) of the tree was taken as. */
typedef struct db_slot_pass {
	char phase[32], pass[32];
	char ref_pass[32];      /* two trees: the alone run's pass it goes with
	                           ("" none); pass "": an alone pass left over */
	bool used;              /* its tensors were split into slots */
	char why[288];          /* "seq_lens [12, 12, 12, 12]: 4 x 12 rows", or why
	                           it was skipped ("seq_lens [16]: 1 sequence") */
	size_t n_pairs;         /* slot pairs built (n_slots - 1 per tensor) */
	size_t n_left;          /* tensors left out (no token rows of the batch) */
} db_slot_pass;

typedef struct db_pair {
	db_ifields f;           /* side empty; rank -1 for merged or rank-less */
	int occurrence;
	bool merged;            /* built by unsharding ranks */
	/* Paired as a replica across layouts (no dims or shard rule): 1 = the
	 * reference has the ranks, 2 = the target has them; 0 otherwise. */
	signed char replica;
	const db_item *ref, *tgt;       /* NULL when missing (merged: first shard) */
	const db_item **ref_shards, **tgt_shards;  /* merged only, by rank */
	size_t n_ref_shards, n_tgt_shards;
	int64_t seq;            /* execution order across both trees */
	db_status status;
	bool dtype_differs;     /* compared after casting both to float64 */
	char *error;            /* status ERROR: the message (owned) */
	/* Logical shapes and dtypes of each side (merged: the unsharded
	 * tensor); ndim -1 when that side is missing. */
	int ndim_ref, ndim_tgt;
	int64_t shape_ref[DB_MAX_DIMS], shape_tgt[DB_MAX_DIMS];
	db_dtype dtype_ref, dtype_tgt;
	uint64_t numel;         /* elements compared (status OK) */
	/* Results: valid once state == DB_PAIR_DONE (release/acquire). */
	db_metrics m;
	db_band band;           /* with a noise floor, the floor's verdict:
	                         * within = ok, beyond = algo at least
	                         * (db_noise_judge; words: db_verdict.h) */
	_Atomic int state;
	/* Merged pairs: how the shards are unsharded (from the profile's shard
	 * rule or the dump's meta dims; pattern/re NULL, nothing owned). */
	db_shard_rule unshard;
	db_slot slot;           /* side 0: none */
	bool tposed;            /* the target is stored with the last two dims
	                         * swapped (a weights tree, plain target): read
	                         * through a transpose (measure/xform.c) */
	/* Against the noise tree (db_noise.h), set with the metrics: floor =
	 * the reference-vs-noise rel of this pair (NaN none), ratio = rel /
	 * max(floor, noise_min_rel). */
	signed char noise;      /* db_noise_verdict */
	double noise_floor, noise_ratio;
	/* Judged bitwise, as --slots pairs: a comparison holding batch slots
	 * found by themselves (the prompt run alone against it inside a
	 * batch) whose first layer came out bit-identical; every pair of the
	 * same layout and dtype is then marked (db_slot_regime_settle,
	 * measure/slot.c), set with or after its results; read it through
	 * db_pair_judged_bitwise */
	_Atomic bool bitwise;
} db_pair;

typedef enum db_noise_verdict {
	DB_NOISE_NONE = 0,      /* no noise tree, or the pair is not measured */
	DB_NOISE_WITHIN,        /* rel <= noise_k x floor */
	DB_NOISE_BEYOND,
	DB_NOISE_NO_FLOOR       /* a noise tree, but nothing of it pairs with this */
} db_noise_verdict;

enum { DB_PAIR_PENDING = 0, DB_PAIR_RUNNING, DB_PAIR_DONE };

typedef struct db_compare_opts {
	const char *profile;    /* name or file; NULL = auto-detect */
	const char *profile_from;       /* where profile came from, for "why"
	                                   ("recorded in the session"); NULL =
	                                   given with --profile */
	const char *filter;     /* PCRE2 regex on stage / key; NULL = all */
	int threads;            /* 0 = number of CPUs */
	/* Metrics cache directory; NULL = $XDG_CACHE_HOME/dumpbisect (or
	 * ~/.cache/dumpbisect), "" = off. One file per (ref, target, profile);
	 * entries keyed by every input file's path, size, mtime, inode + ctime
	 * and inner key plus the metric version, so a changed file is
	 * recomputed (even one rewritten with its mtime put back). */
	const char *cache_dir;
	/* > 0 (watching trees being written): a file the reader refuses that
	 * was modified less than settle_ms ago is left out, not an error; a
	 * rescan retries it (db_compare_settling counts them). */
	int settle_ms;
	/* --slot [SIDE:]DIM:START:LEN (db_slot_parse): pairs whose shapes
	 * differ only along DIM, the other side's length LEN, are measured on
	 * rows START..START+LEN-1 of SIDE (0: the larger side). NULL: found. */
	const char *slot;
	/* The workbench: when every directory of both trees keeps the device,
	 * inode and mtime it had at the last full listing, open from the
	 * snapshots of that listing without listing the files, and leave the
	 * per-file check (size, mtime, inode + ctime of every file: a file
	 * rewritten in place keeps its directory's mtime) to
	 * db_compare_verify_start. The headless commands leave it false: they
	 * check every file before they print. */
	bool verify_later;
	/* --noise DIR: the reference side run again (db_noise.h); the
	 * reference is compared with it first and its errors are the floors. */
	const char *noise;
	/* --slots N: one tree (ref == target) whose batch holds the same
	 * prompt N times; every tensor of a batch pass becomes N-1 pairs, slot
	 * 0's rows against slot k's (src/compare/slots.c), judged bitwise. */
	int slots;
	/* --align (db_align_mode): how passes that batched the same tokens
	 * differently are lined up (compare/align_tokens.c) */
	int align;
} db_compare_opts;

/* --align: auto finds from the data whether one side's passes, concatenated
 * along the token dim, are the other side's one pass (a generation step by
 * step against the whole sequence at once) and lines them up; tokens
 * insists (an error when the counts do not add up); passes pairs pass with
 * pass by name, as before. */
typedef enum db_align_mode { DB_ALIGN_AUTO = 0, DB_ALIGN_TOKENS, DB_ALIGN_PASSES } db_align_mode;
/* "auto", "tokens", "passes"; and back (-1: none of them) */
const char *db_align_mode_name(int m);
int db_align_mode_parse(const char *s);

typedef struct db_compare {
	db_profile *profile;    /* owned */
	char why[512];          /* how the profile was chosen */
	char cache_err[320];    /* why the metrics cache could not be saved, ""
	                           when it was (or is off): the numbers are right,
	                           they are only not kept for next time */
	char *ref_root, *tgt_root;
	db_index *ref, *tgt;    /* owned; may be the same scan split by side */
	db_pair *pairs;         /* in execution order */
	size_t n_pairs;
	/* New (unique in the process) each time the pairs are built, rebuilt
	 * by a rescan or freed: a cache over the pairs keys on it. */
	unsigned long pairs_gen;
	/* Quantized weights' groups the pairs point into (pair/companions.c);
	 * built and freed with the pairs. */
	void *quant;
	char **phases;          /* present phases, causal order */
	size_t n_phases;
	_Atomic size_t n_done;  /* pairs finished (async progress) */
	_Atomic size_t n_cached;        /* of those, served from the metrics cache */
	/* --slots N (0: off): the passes and how each was split or skipped */
	int n_slots;
	/* two trees: the reference ran the prompt alone, the target's batch
	 * holds it N times (each slot against the alone run: slots_alone.c) */
	bool slots_alone;
	bool slots_found;       /* N found from the data, not given (db_slots_alone_find) */
	char slots_align[160];  /* how the passes were aligned, or "" */
	db_slot_pass *slot_passes;
	size_t n_slot_passes;
	/* Token alignment (--align): 0 none; 1 the reference ran the whole
	 * sequence in one pass and the target's passes are its rows, 2 the other
	 * way round. align_note says how it was found ("positions: target passes
	 * 0-5 (12+1+1+1+1+1 tokens) = reference pass 0 (17)"), or why not. The
	 * plan and the items pairing copies from it (pair/align_items.h), built
	 * and freed with the pairs. */
	int align_whole;
	char align_note[384];
	void *align;
	/* pairing: calls: the layers whose calls were too many to align (past
	 * the alignment's budget, pair/call_align.h), paired by their names
	 * and counters instead, and the largest one's ref x target calls:
	 * compare says so, never silently (issue 37) */
	size_t calls_unaligned, calls_unaligned_ref, calls_unaligned_tgt;
	void *priv;             /* worker pool, cache */
} db_compare;

/* Scan both trees and build the pairs (no metrics yet). ref == tgt, or tgt
 * NULL, for layouts where one folder holds both sides (the profile's side
 * group splits them). -1 with err for unusable roots or a bad profile; an
 * empty comparison (no pairs) is an error too, never a silent pass. */
int db_compare_open(const char *ref, const char *tgt,
                    const db_compare_opts *opts, db_compare **out, db_err *err);
void db_compare_free(db_compare *c);

/* Compute one pair (thread-safe; no-op when already done). */
void db_compare_pair(db_compare *c, db_pair *p);
/* Compute all pairs with a worker pool; blocks. */
void db_compare_run(db_compare *c);
/* Background computation for the TUI: returns at once; n_done grows;
 * db_compare_stop cancels and joins (safe to call when not started). */
int db_compare_start(db_compare *c);
void db_compare_stop(db_compare *c);
bool db_compare_finished(const db_compare *c);

/* Rescan the trees (new files appeared), keeping computed results for
 * unchanged pairs. Used by bisect when layers are dumped one at a time. */
int db_compare_rescan(db_compare *c, db_err *err);

/* Opened from snapshots (verify_later): list both trees again in a
 * background thread and compare with the listings the snapshots stand
 * for; a no-op otherwise. */
int db_compare_verify_start(db_compare *c);
typedef enum db_verify_state {
	DB_VERIFY_NONE = 0,     /* nothing to check, or checked: unchanged */
	DB_VERIFY_PENDING,      /* opened from snapshots, not checked yet */
	DB_VERIFY_CHANGED       /* a file changed: db_compare_rescan (clears it) */
} db_verify_state;
/* Where the check is (joins the thread once it is done). */
db_verify_state db_compare_verify_state(db_compare *c);
/* Opened from snapshots, whether checked yet or not. */
bool db_compare_from_snapshots(const db_compare *c);
/* Every directory of both trees as the last listing (or the trusted stamps)
 * found them, full paths: what a watcher watches without listing the trees
 * again. Borrowed until the next rescan or db_compare_free; *n 0 when the
 * trees are single files. */
const char *const *db_compare_dirs(const db_compare *c, size_t *n);

/* Set settle_ms after the open (see db_compare_opts): later rescans. */
void db_compare_set_settle(db_compare *c, int settle_ms);
/* Files left out by the last scan as still being written (settle_ms). */
size_t db_compare_settling(const db_compare *c);

/* --slots: c, one tree on both sides, into its slot pairs (db_compare_open
 * and rescans call it; see db_compare_opts.slots). -1 with err when the
 * tree has several ranks or no batch pass. */
int db_slots_split(db_compare *c, int n, db_err *err);
/* --slots with two trees: c's reference ran the prompt alone, its target
 * holds it n times in a batch. The passes are aligned from the data (the
 * target's warmup skipped: ref pass p goes with the target's first batch
 * pass + p), and every tensor of a batch pass becomes n pairs, the alone
 * run's tensor against slot k's rows (k = 0..n-1, in the rank field),
 * judged bitwise. -1 with err when a side has several ranks or no pass
 * aligns. */
int db_slots_alone(db_compare *c, int n, db_err *err);
/* n when the two trees are the prompt alone (every reference pass one
 * sequence, one rank) against n copies of it in a batch whose passes do
 * not line up by name (a warmup first): what --slots n would do is what is
 * meant. 0 otherwise -- passes that line up are judged by the slot found
 * pair by pair (measure/slot.c). */
int db_slots_alone_find(db_compare *c);

/* The path given for side 0 (ref) or 1 (target): the root, or the file
 * or folder below it when the open rooted it at an ancestor so that its
 * enclosing folders name it (compare/lift.c). Borrowed. */
const char *db_compare_given(const db_compare *c, int side);
/* --align (db_align_mode): find the token alignment of c's trees from the
 * data before pairing (compare/align_tokens.c); sets c->align, align_whole
 * and align_note. -1 with err on OOM, or with DB_ALIGN_TOKENS when nothing
 * lines up. */
int db_align_prepare(db_compare *c, int mode, db_err *err);

const char *db_status_name(db_status s);    /* "ok", "ref_only", ... */
/* "path" or "path:key" of an item (malloc'd); NULL for a missing side. */
char *db_item_name(const db_item *it);
/* The pair leaves the ok band or is not ok (computed pairs only). */
bool db_pair_diverges(const db_pair *p);
/* p is judged bitwise, any bit off diverging: a slot of one batch
 * (--slots), or a pair of a comparison of the prompt alone against a batch
 * whose first layer is bit-identical (db_pair.bitwise). Every surface words it so
 * (db_pair_verdict: "bit-identical" / "bits differ"). */
bool db_pair_judged_bitwise(const db_pair *p);
/* Index of the first pair in execution order that leaves the ok band (or is
 * not ok), restricted to phase/pass ("" or NULL = any) and rank (-2 = any,
 * -1 merged/rank-less); -1 when none. */
/* db_first_divergence for each rank of ranks[0..n) (each >= 0, sorted) in
 * one pass over the pairs, into out[0..n): the workbench's rank keys
 * (issue 24: a pass per key was half of a rank key at 10^6 files). */
void db_first_divergence_ranks(const db_compare *c, const char *phase, const char *pass,
                               const int *ranks, size_t n, long *out);
long db_first_divergence(const db_compare *c, const char *phase,
                         const char *pass, int rank);
/* The same, for the first pair worse than drift (band algo or worse, or a
 * pair that is not ok): when the first divergence is drift — bf16 at
 * another TP size drifts from layer 0 — this is where a bug shows. */
long db_first_beyond_drift(const db_compare *c);
/* The one rule for where a bug shows when the first divergence fd is only
 * drift (compare/beyond_drift.c): with no noise tree to judge it, the first
 * pair beyond drift in fd's phase and pass (bf16 engine against trainer,
 * another TP size); -1 when fd is not drift, a noise tree judged it, or
 * nothing in that pass is beyond. compare's headline, bisect's stage and
 * the workbench's headline and f ask it. */
long db_first_beyond_drift_of(const db_compare *c, long fd);
/* The bit-identical regime (no noise tree): the first computed pair that
 * is not bit-identical when every comparable pair before it (causal order)
 * is: same code and kernels, so it is the first divergence whatever its
 * band; the regime needs a bit-identical stage inside a layer before it
 * (equal inputs say nothing about kernels). -1 when there is none, or a
 * pair before it is not bit-identical (dtypes differ, not measured yet). */
long db_first_not_identical(const db_compare *c);

#endif
