/* Long work on the caller's own thread (the workbench's UI thread: the
 * bisect's pass triage) says how far it is, now and then; a hook the thread
 * set may draw that and stop the work (the workbench: progress on the
 * bottom line, `q` and Ctrl-C). Without a hook (the headless commands) a
 * tick costs a compare. Issue 37: nothing the user waits on runs unbounded
 * on the UI thread. */
#ifndef DB_YIELD_H
#define DB_YIELD_H
#include <stdbool.h>
#include <stddef.h>

/* what: the work's name ("pass triage"); done of total steps. True: stop. */
typedef bool (*db_yield_fn)(void *ctx, const char *what, size_t done, size_t total);

/* For the calling thread: fn asked at most every interval_ms (0: at every
 * tick; a scripted test's keys come in order, not in time). fn NULL: none. */
void db_yield_set(db_yield_fn fn, void *ctx, unsigned interval_ms);
/* True when the hook asked to stop: the caller unwinds, its error saying
 * so (and db_yield_stopped() tells it was asked). */
bool db_yield_tick(const char *what, size_t done, size_t total);
/* The last tick on this thread stopped the work; cleared by db_yield_set. */
bool db_yield_stopped(void);

#endif
