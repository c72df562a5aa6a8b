/* Progress and stopping for long work on the caller's thread: db_yield.h. */
#include "db_yield.h"

#include <time.h>

static _Thread_local db_yield_fn g_fn;
static _Thread_local void *g_ctx;
static _Thread_local unsigned g_interval_ms;
static _Thread_local struct timespec g_last;
static _Thread_local bool g_stopped;

void db_yield_set(db_yield_fn fn, void *ctx, unsigned interval_ms)
{
	g_fn = fn;
	g_ctx = ctx;
	g_interval_ms = interval_ms;
	g_stopped = false;
	clock_gettime(CLOCK_MONOTONIC, &g_last);
}

bool db_yield_tick(const char *what, size_t done, size_t total)
{
	if (!g_fn)
		return false;
	if (g_interval_ms) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long ms = (long)(now.tv_sec - g_last.tv_sec) * 1000 +
		          (now.tv_nsec - g_last.tv_nsec) / 1000000;
		if (ms < (long)g_interval_ms)
			return false;
		g_last = now;
	}
	g_stopped = g_fn(g_ctx, what, done, total);
	return g_stopped;
}

bool db_yield_stopped(void)
{
	return g_stopped;
}
