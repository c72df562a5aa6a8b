/* Internals of the index: what it keeps of a file's entries once the file
 * is closed, and the cache of that per file (index_cache.c) so reopening a
 * tree does not parse every file again. Not a public header. */
#ifndef DB_INDEX_PRIV_H
#define DB_INDEX_PRIV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "db_index.h"
#include "db_reader.h"
#include "db_tensor.h"

typedef struct ent_meta {
	char *key;
	db_dtype dtype;
	int ndim;
	int64_t shape[DB_MAX_DIMS];
	char *err;
	db_tstat st;            /* statistics-only entries (msprobe): what the
	                           dump holds instead of data (st.call NULL) */
	bool has_st;
} ent_meta;

/* side + "\x1e" + db_fields_key. */
char *db_side_fields_key(const char *side, const db_ifields *f, char *buf, size_t len);
/* db_fields_key + "\x1f" + occ. */
char *db_fields_key_occ(const db_ifields *f, int occ, char *buf, size_t len);

/* Each item's occurrence: how many items before it (in array order) have
 * its side and fields (phase, pass, rank, layer, stage). 0, -1 on OOM. */
int db_items_occurrences(db_item *items, size_t n);

/* Append a copy of s to (*arr, *n); 0, -1 on OOM. */
int db_push_str(char ***arr, size_t *n, const char *s);

/* Whether items (any order) record their execution order: one carries a
 * dump order, or one file (not .safetensors) holds several modules (tuple
 * members "m.0" count as m) of the same phase, pass, rank and layer while
 * no layer spreads over files, unless p says dict_order: none. */
bool db_index_records_order(const db_item *items, size_t n, const db_profile *p);

typedef struct db_icache db_icache;
struct db_walk;

/* The entry cache of tree root under dir; NULL when dir is NULL/"" or on
 * OOM (then every file is opened). A missing or corrupt file is empty. */
db_icache *db_icache_open(const char *dir, const char *root);
/* root has an entry cache in dir (was indexed before); false for no dir. */
bool db_icache_exists(const char *dir, const char *root);
/* A copy of the entries of rel when its size and mtime still match
 * (caller frees *ents and their keys); false otherwise. Thread-safe. */
/* m from a file's entry (m zeroed; its strings strdup'd, NULL on OOM). */
void db_ent_meta_set(ent_meta *m, const db_entry *en);
bool db_icache_get(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                   ent_meta **ents, size_t *n);
/* Remember rel's entries (files with an error anywhere are not kept, so
 * they are read again). Thread-safe. */
void db_icache_put(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                   const ent_meta *ents, size_t n);
struct db_wbuf;
/* The entry cache's bytes for n entries appended to b, or false when such
 * entries are not kept (an error, a tensor file named): read again. */
bool db_icache_enc(const ent_meta *ents, size_t n, struct db_wbuf *b);
/* db_icache_put of entries db_icache_enc made: b's bytes are taken (b is
 * emptied, freed when c is NULL). Thread-safe. */
void db_icache_put_enc(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                       struct db_wbuf *b, size_t n);
/* Room for n more files (a hint: a first scan puts every file). */
void db_icache_reserve(db_icache *c, size_t n);
/* An empty cache (a tree never indexed) writes its records to its file as
 * they come (db_icache_stream_put), completed by db_icache_close: true
 * when so. One scan streams; another scan of the same cache puts. */
bool db_icache_stream_begin(db_icache *c);
/* rel's entries, to the file (those db_icache_enc refuses are skipped). */
void db_icache_stream_put(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                          const ent_meta *ents, size_t n);
/* db_index_scan reading and filling an entry cache (NULL: none). */
int db_index_scan_ic(const char *root, const db_profile *p, const char *side,
                     db_icache *ic, db_index **out, db_err *err);
/* The index snapshot a scan left to its caller: due, under key. */
typedef struct db_snap_due {
	bool due;
	uint64_t key;
} db_snap_due;
/* db_index_scan_ic over a listing made by db_walk_root2 (w; is_file: root
 * names one file). Files the listing did not stat (size -1) get the stat
 * of the open that reads them, the rest a stat each: w is complete after.
 * later non-NULL: the snapshot is not written but said due there. */
int db_index_scan_walk(const char *root, struct db_walk *w, bool is_file,
                       const db_profile *p, const char *side, db_icache *ic,
                       db_snap_due *later, db_index **out, db_err *err);
/* db_profile_detect over a listing of root (only the paths are read);
 * cache_dir (NULL: none) remembers the answer for an unchanged listing. */
int db_profile_detect_walk(const char *root, const struct db_walk *w, const char *cache_dir,
                           db_profile **out, char *why, size_t whylen, db_err *err);
/* Files of w the profile parses by path (every file counted). */
size_t db_profile_count_parsed(const db_profile *p, const struct db_walk *w);
/* The directory the cache lives in (NULL for none). */
const char *db_icache_dir(const db_icache *c);

/* Snapshots (index_snap.c): a whole index, and a detection result, keyed
 * by everything they depend on (listing, profile rules, side, version).
 * Stored under dir per tree root; a load that misses returns NULL/false. */
uint64_t db_isnap_key(const struct db_walk *w, bool is_file, const db_profile *p,
                      const char *side);
db_index *db_isnap_load(const char *dir, const char *root, const char *side, uint64_t key,
                        const struct db_walk *w, bool is_file, const db_profile *p);
void db_isnap_store(const char *dir, const char *root, const char *side, uint64_t key,
                    const db_index *ix);
uint64_t db_detect_key(const struct db_walk *w, const db_profile *const *profiles, size_t n);
bool db_detect_load(const char *dir, const char *root, uint64_t key, char *name,
                    size_t namelen, char *why, size_t whylen);
void db_detect_store(const char *dir, const char *root, uint64_t key, const char *name,
                     const char *why);

/* The directory stamps of listing w (a real one, nothing skipped) for root,
 * and reading them back: true, with *stub standing in for the listing
 * (db_walk.stub, its dirs the stamped directories: db_walk_free it), when
 * every directory still has its stamp. */
void db_stamp_store(const char *dir, const char *root, const struct db_walk *w);
bool db_stamp_load(const char *dir, const char *root, struct db_walk *stub);

/* Write it back when it changed (temp + fsync + rename), free it. */
void db_icache_close(db_icache *c);

/* Leave out items whose file could not be read and was modified after
 * cutoff_ns (CLOCK_REALTIME): a dump still being written. Returns how many
 * (see index_settle.c). */
size_t db_index_drop_settling(db_index *ix, int64_t cutoff_ns);

#endif
