#include "util/intern.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

/* One map for the process: its key copies live in blocks that never move,
 * so a key's pointer is the interned string. The lock is taken once per
 * stored item name (two scan threads), never per element. */
static db_strmap g_map;
static bool g_init;
static size_t g_bytes;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* The last names this thread interned: an index's items mostly repeat
 * the side, phase, pass and stage of the one before, and each call took
 * the process's lock (issue 24: ~6.5 million at 10^6 files, two scans
 * contending). Interned strings are never freed: an entry never dangles. */
#define RECENT 8
static _Thread_local const char *recent[RECENT];
static _Thread_local size_t recent_len[RECENT];
static _Thread_local unsigned recent_next;

static const char *intern_locked(const char *s, size_t len);

const char *db_intern_n(const char *s, size_t len)
{
	if (!len)
		return "";
	for (unsigned i = 0; i < RECENT; i++)
		if (recent_len[i] == len && !memcmp(recent[i], s, len))
			return recent[i];
	const char *out = intern_locked(s, len);
	if (out) {
		unsigned k = recent_next++ % RECENT;
		recent[k] = out;
		recent_len[k] = len;
	}
	return out;
}

static const char *intern_locked(const char *s, size_t len)
{
	char small[256];
	char *key = len < sizeof small ? small : malloc(len + 1);
	if (!key)
		return NULL;
	memcpy(key, s, len);
	key[len] = 0;
	pthread_mutex_lock(&g_lock);
	if (!g_init) {
		db_strmap_init(&g_map);
		g_init = true;
	}
	bool added;
	size_t *v = db_strmap_put(&g_map, key, 0, &added);
	const char *out = v ? g_map.keys[v - g_map.vals] : NULL;
	if (v && added)
		g_bytes += len + 1;
	pthread_mutex_unlock(&g_lock);
	if (key != small)
		free(key);
	return out;
}

const char *db_intern(const char *s)
{
	return s ? db_intern_n(s, strlen(s)) : NULL;
}

void db_intern_stats(size_t *n_strings, size_t *n_bytes)
{
	pthread_mutex_lock(&g_lock);
	*n_strings = g_init ? g_map.n : 0;
	*n_bytes = g_bytes;
	pthread_mutex_unlock(&g_lock);
}
