/* A string -> size_t hash map (open addressing) for pairing and counting.
 * Keys are copied; values are caller-defined. Keyed per process: names a
 * file chooses cannot collide on purpose (db_strmap_hash). */
#ifndef DB_STRMAP_H
#define DB_STRMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct db_strmap {
	char **keys;            /* into the map's own blocks; NULL = empty slot */
	size_t *vals;
	uint64_t *hashes;       /* of each key: probes and growth skip strcmp/rehash */
	size_t cap, n;
	/* key copies live in blocks freed together (no malloc per key: 100k
	 * of them were a tenth of pairing a 100k-file tree) */
	char *bump;
	size_t bump_left;
	char **blocks;
	size_t n_blocks, cap_blocks;
} db_strmap;

void db_strmap_init(db_strmap *m);
/* The map's hash of n bytes: SipHash-1-3 under a key drawn once per process
 * (getrandom), for any table keyed by names from a dump. Values differ from
 * run to run: never store them or order output by them. */
uint64_t db_strmap_hash(const void *p, size_t n);
/* Room for n keys without regrowing (a hint; 0 on success, -1 on OOM). */
int db_strmap_reserve(db_strmap *m, size_t n);
void db_strmap_free(db_strmap *m);
/* Pointer to the value of key, or NULL. */
size_t *db_strmap_get(const db_strmap *m, const char *key);
/* Insert key with val when absent; returns the value slot (existing or
 * new), NULL on OOM. *added tells which. */
size_t *db_strmap_put(db_strmap *m, const char *key, size_t val, bool *added);

#endif
