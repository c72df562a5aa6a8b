#include "strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;      /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

void db_strmap_init(db_strmap *m)
{
	memset(m, 0, sizeof *m);
}

void db_strmap_free(db_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

size_t *db_strmap_get(const db_strmap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return NULL;
		if (!strcmp(m->keys[i], key))
			return &m->vals[i];
	}
}

static int grow(db_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	char **keys = calloc(cap, sizeof *keys);
	size_t *vals = calloc(cap, sizeof *vals);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = hash_str(m->keys[i]) & (cap - 1);
		while (keys[j])
			j = (j + 1) & (cap - 1);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

size_t *db_strmap_put(db_strmap *m, const char *key, size_t val, bool *added)
{
	if (added)
		*added = false;
	size_t *v = db_strmap_get(m, key);
	if (v)
		return v;
	if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
		return NULL;
	size_t i = hash_str(key) & (m->cap - 1);
	while (m->keys[i])
		i = (i + 1) & (m->cap - 1);
	if (!(m->keys[i] = strdup(key)))
		return NULL;
	m->vals[i] = val;
	m->n++;
	if (added)
		*added = true;
	return &m->vals[i];
}
