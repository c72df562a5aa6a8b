/* The index snapshots a scan leaves to be written behind the first frame
 * (issue 24: at 10^6 files writing each side's snapshot and entry cache
 * was ~0.95 s of the first open, before anything was shown; the entry
 * cache is now written as the scan goes, layout/index_cache.c). */
#ifndef DB_CACHE_WRITES_H
#define DB_CACHE_WRITES_H

#include <stdint.h>

#include "db_compare.h"
#include "layout/index_priv.h"

/* Remember ix's snapshot (db_isnap_store under dir, for root and side,
 * keyed key) to write later; ix stays c's and must not change or be freed
 * before db_cwrites_join. 0, or -1 (no memory: the caller writes it now). */
int db_cwrites_snap(db_compare *c, const char *dir, const char *root, const char *side,
                    uint64_t key, const db_index *ix);
/* Start writing what is remembered, in a thread of the lowest CPU priority
 * (the first frame and the metrics come first); no thread: written now. */
void db_cwrites_start(db_compare *c);
/* Everything remembered written and freed (the thread joined, or written
 * here). Before c's indexes are freed or replaced, and in db_compare_free. */
void db_cwrites_join(db_compare *c);

#endif
