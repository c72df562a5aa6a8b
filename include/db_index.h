/* Scanning a dump tree: every file the profile parses becomes items (one per
 * tensor inside), each with its fields, dtype and shape. Tensor data is not
 * read here; db_compare maps files again when it computes. */
#ifndef DB_INDEX_H
#define DB_INDEX_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "db_err.h"
#include "db_profile.h"
#include "db_tensor.h"

/* An item's path and key belong to its index: one malloc each when the
 * index was scanned, or all in the index's one block (db_index.strs) when
 * it came from a snapshot, where items of one file share their path and
 * every "" key is one byte. Only db_index_free and the index's own
 * pruning free them (db_index_owns_str); a copy of an item borrows them. */
typedef struct db_item {
	char *path;             /* relative to the tree root */
	char *key;              /* key inside the file ("" = the file's tensor) */
	db_ifields f;           /* interned names (db_fields_store) */
	db_dtype dtype;
	int ndim;
	int64_t shape[DB_MAX_DIMS];
	char *err;              /* read error for this item (file, entry, offset) */
	int64_t seq;            /* position in this tree's execution order */
	int occurrence;         /* n-th repeat of the same fields (0 first) */
	bool refused;           /* the reader refused the whole file (err): an
	                           open from the snapshot reads it again */
	off_t size;             /* file size, mtime and ident (inode + ctime,
	                           see walk.h): cache key */
	int64_t mtime_ns;
	uint64_t ident;
	/* Set only on the copies pairing makes of quantized weights grouped
	 * with their companions (db_quant.h); NULL on every index item. */
	const struct db_qgroup *quant;
	/* A statistics-only entry (msprobe's statistics and md5 tasks): the
	 * statistics it holds, read once with the index so that measuring it
	 * opens no file (st.call NULL). has_st false also when the index came
	 * from a cache: then the file is opened as for any tensor. */
	db_tstat st;
	bool has_st;
} db_item;

typedef struct db_index {
	char *root;             /* as given */
	const db_profile *profile;      /* borrowed */
	db_item *items;         /* sorted by seq */
	size_t n_items;
	size_t n_files;         /* files the profile parsed */
	char **unparsed;        /* relative paths of files that matched no pattern */
	size_t n_unparsed;
	char **skipped;         /* special files, symlink loops, unreadable: "path: why" */
	size_t n_skipped;
	size_t n_links_out;     /* of skipped: links to directories outside the root,
	                           not followed (db_walk_follow_links) */
	int root_is_file;       /* root names one file; items' path is its basename */
	size_t n_files_seen;    /* regular files under root, matching profile->files or not */
	size_t n_refused;       /* files the reader refused as a whole */
	/* The dumps record execution order (dump_index, or dict order in
	 * files holding several modules of a layer): seq follows it and the
	 * profile's stage_order is not used. See index.c, struct rec. */
	bool records_order;
	/* The paths and keys of a snapshot's items (NULL for a scanned
	 * index): freed with the index, never one string at a time. */
	char *strs;
	size_t strs_len;
} db_index;

/* Scan root with profile p. side: "ref" or "target" keeps only items whose
 * side field is that (or empty); NULL keeps all. Errors in single files are
 * items with err set; -1 only when root itself is missing, unreadable or not
 * a directory/file. A root that is a single file indexes that file. */
int db_index_scan(const char *root, const db_profile *p, const char *side,
                  db_index **out, db_err *err);
void db_index_free(db_index *ix);
/* s (an item's path or key) lies in ix's block of strings: not free'd on
 * its own. */
bool db_index_owns_str(const db_index *ix, const char *s);
/* Full path of an item's file (malloc'd; NULL on OOM). */
char *db_index_path(const db_index *ix, const db_item *it);
/* Full path of the file NAME that item it's entry names for its tensor
 * (msprobe's data_name: dump_tensor_data/NAME beside the dump), malloc'd;
 * NULL on OOM. */
char *db_index_data_path(const db_index *ix, const db_item *it, const char *name);
/* 0 when path (a db_index_data_path) is inside ix's root once its links
 * are resolved, or links are followed (db_walk_follow_links); else -1
 * with err naming the path and where it leads: the walk never follows a
 * link out of the tree, and a data_name does not either (issue 37). A
 * path that does not resolve is 0: its open says why. */
int db_index_data_inside(const db_index *ix, const char *path, db_err *err);
/* Identity of an item's fields, for pairing and occurrences:
 * "phase\x1fpass\x1frank\x1flayer\x1fstage" into buf; returns buf. */
char *db_fields_key(const db_ifields *f, char *buf, size_t len);

/* Try every profile on root; pick the one that parses the most files.
 * why gets a one-line reason ("sglang-v1: 128 of 128 files parsed; next
 * best generic: 0"). -1 when none parses anything. */
int db_profile_detect(const char *root, db_profile **out, char *why,
                      size_t whylen, db_err *err);

#endif
