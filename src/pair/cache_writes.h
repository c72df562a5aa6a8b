/* The cache files a first scan leaves to be written behind the first frame
 * (issue 24: at 10^6 files each side's index snapshot and entry cache were
 * ~0.95 s of a 10^6-file first open, written before anything was shown). */
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
/* Take ic over: written and freed later (db_icache_close). Never fails: with
 * no memory to remember it, it is closed now. */
void db_cwrites_icache(db_compare *c, db_icache *ic);
/* Start writing what is remembered, in a thread of the lowest CPU priority
 * (the first frame and the metrics come first); no thread: written now. */
void db_cwrites_start(db_compare *c);
/* Everything remembered written and freed (the thread joined, or written
 * here). Before c's indexes are freed or replaced, and in db_compare_free. */
void db_cwrites_join(db_compare *c);

#endif
