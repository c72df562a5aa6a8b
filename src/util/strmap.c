#include "strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/* Also returns the length so keys are copied without another strlen. */
static uint64_t hash_str(const char *s, size_t *len)
{
	*len = strlen(s);
	return db_hash64(s, *len, DB_HASH_SEED);
}

void db_strmap_init(db_strmap *m)
{
	memset(m, 0, sizeof *m);
}

void db_strmap_free(db_strmap *m)
{
	for (size_t i = 0; i < m->n_blocks; i++)
		free(m->blocks[i]);
	free(m->blocks);
	free(m->keys);
	free(m->vals);
	free(m->hashes);
	memset(m, 0, sizeof *m);
}

/* Slot of key (hash h), or the empty slot where it would go. */
static size_t slot(const db_strmap *m, const char *key, uint64_t h)
{
	size_t i = (size_t)h & (m->cap - 1);
	while (m->keys[i] && (m->hashes[i] != h || strcmp(m->keys[i], key)))
		i = (i + 1) & (m->cap - 1);
	return i;
}

size_t *db_strmap_get(const db_strmap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	size_t len;
	size_t i = slot(m, key, hash_str(key, &len));
	return m->keys[i] ? &m->vals[i] : NULL;
}

static int grow_to(db_strmap *m, size_t cap)
{
	char **keys = calloc(cap, sizeof *keys);
	size_t *vals = calloc(cap, sizeof *vals);
	uint64_t *hashes = calloc(cap, sizeof *hashes);
	if (!keys || !vals || !hashes) {
		free(keys);
		free(vals);
		free(hashes);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = (size_t)m->hashes[i] & (cap - 1);
		while (keys[j])
			j = (j + 1) & (cap - 1);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
		hashes[j] = m->hashes[i];
	}
	free(m->keys);
	free(m->vals);
	free(m->hashes);
	m->keys = keys;
	m->vals = vals;
	m->hashes = hashes;
	m->cap = cap;
	return 0;
}

static int grow(db_strmap *m)
{
	return grow_to(m, m->cap ? m->cap * 2 : 64);
}

int db_strmap_reserve(db_strmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 64;
	while (cap < 2 * n + 2)
		cap *= 2;
	return cap > m->cap ? grow_to(m, cap) : 0;
}

#define KEY_BLOCK ((size_t)64 << 10)

/* A copy of key[0..len] in m's blocks; a long key gets a block of its own. */
static char *key_copy(db_strmap *m, const char *key, size_t len)
{
	char *p;
	if (len + 1 > KEY_BLOCK / 8 || len + 1 > m->bump_left) {
		size_t bs = len + 1 > KEY_BLOCK / 8 ? len + 1 : KEY_BLOCK;
		if (m->n_blocks == m->cap_blocks) {
			size_t nc = m->cap_blocks ? 2 * m->cap_blocks : 8;
			char **nb = realloc(m->blocks, nc * sizeof *nb);
			if (!nb)
				return NULL;
			m->blocks = nb;
			m->cap_blocks = nc;
		}
		if (!(p = malloc(bs)))
			return NULL;
		m->blocks[m->n_blocks++] = p;
		if (bs == KEY_BLOCK) {
			m->bump = p + len + 1;
			m->bump_left = KEY_BLOCK - len - 1;
		}
	} else {
		p = m->bump;
		m->bump += len + 1;
		m->bump_left -= len + 1;
	}
	memcpy(p, key, len + 1);
	return p;
}

size_t *db_strmap_put(db_strmap *m, const char *key, size_t val, bool *added)
{
	if (added)
		*added = false;
	size_t len;
	uint64_t h = hash_str(key, &len);
	size_t i = 0;
	if (m->cap) {
		i = slot(m, key, h);
		if (m->keys[i])
			return &m->vals[i];
	}
	if ((m->n + 1) * 2 > m->cap) {
		if (grow(m) != 0)
			return NULL;
		i = slot(m, key, h);
	}
	if (!(m->keys[i] = key_copy(m, key, len)))
		return NULL;
	m->hashes[i] = h;
	m->vals[i] = val;
	m->n++;
	if (added)
		*added = true;
	return &m->vals[i];
}
