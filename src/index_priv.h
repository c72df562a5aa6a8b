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
#include "db_tensor.h"

typedef struct ent_meta {
	char *key;
	db_dtype dtype;
	int ndim;
	int64_t shape[DB_MAX_DIMS];
	char *err;
} ent_meta;

typedef struct db_icache db_icache;

/* The entry cache of tree root under dir; NULL when dir is NULL/"" or on
 * OOM (then every file is opened). A missing or corrupt file is empty. */
db_icache *db_icache_open(const char *dir, const char *root);
/* A copy of the entries of rel when its size and mtime still match
 * (caller frees *ents and their keys); false otherwise. Thread-safe. */
bool db_icache_get(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                   ent_meta **ents, size_t *n);
/* Remember rel's entries (files with an error anywhere are not kept, so
 * they are read again). Thread-safe. */
void db_icache_put(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                   const ent_meta *ents, size_t n);
/* db_index_scan reading and filling an entry cache (NULL: none). */
int db_index_scan_ic(const char *root, const db_profile *p, const char *side,
                     db_icache *ic, db_index **out, db_err *err);
/* Write it back when it changed (temp + fsync + rename), free it. */
void db_icache_close(db_icache *c);

#endif
