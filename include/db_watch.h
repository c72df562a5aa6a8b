/* Watching dump trees while they are written: inotify on Linux (every
 * directory under the roots, new ones added as they appear), else a
 * portable fallback that lists the trees again every interval and compares
 * their (path, size, mtime) hash. DUMPBISECT_WATCH=poll forces the
 * fallback. The caller rescans (db_compare_rescan) when told. */
#ifndef DB_WATCH_H
#define DB_WATCH_H
#include <stdbool.h>
#include <stddef.h>
#include "db_err.h"

typedef struct db_watch db_watch;

/* Watch roots[0..n-1] (directories or files; duplicates are fine). -1 with
 * err when none can be watched. */
int db_watch_open(const char *const *roots, size_t n, db_watch **out, db_err *err);
/* The same when every directory under the roots is known already
 * (db_compare_dirs): inotify watches dirs[0..n_dirs-1] without reading the
 * trees again (a 100k-file tree took 50 ms to read); n_dirs 0: as above. */
int db_watch_open_dirs(const char *const *roots, size_t n, const char *const *dirs,
                       size_t n_dirs, db_watch **out, db_err *err);
void db_watch_free(db_watch *w);
/* "inotify" or "poll". */
const char *db_watch_how(const db_watch *w);
/* Wait up to timeout_ms (0: just look) for a change under the roots: 1 when
 * something was created, written, moved or deleted since the last call (a
 * burst of events is gathered until 100 ms pass without one), 0 when not.
 * The poll fallback lists the trees at most every poll_ms. */
int db_watch_changed(db_watch *w, int timeout_ms);

#endif
