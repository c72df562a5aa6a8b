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

const char *db_intern_n(const char *s, size_t len)
{
	if (!len)
		return "";
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
