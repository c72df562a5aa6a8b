#include "pairkey.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

static uint64_t key_hash(const db_pkey *k)
{
	/* pointers and ints mixed word by word: 4 multiplies, no loop */
	uint64_t h = ((uint64_t)(uintptr_t)k->phase ^ DB_HASH_SEED) * 0xff51afd7ed558ccdull;
	h = (h ^ (uint64_t)(uintptr_t)k->pass ^ ((uint64_t)(uint32_t)k->rank << 32 |
	          (uint32_t)k->layer)) * 0xc4ceb9fe1a85ec53ull;
	h = (h ^ (h >> 29) ^ (uint64_t)(uintptr_t)k->stage) * 0x2127599bf4325c37ull;
	h = (h ^ (h >> 31) ^ ((uint64_t)(uint32_t)k->occ << 32 | (uint32_t)k->tag)) *
	    0xd6e8feb86659fd93ull;
	return h ^ (h >> 32);
}

static bool key_eq(const db_pkey *a, const db_pkey *b)
{
	return a->phase == b->phase && a->pass == b->pass && a->stage == b->stage &&
	       a->rank == b->rank && a->layer == b->layer && a->occ == b->occ && a->tag == b->tag;
}

void db_pkmap_init(db_pkmap *m)
{
	memset(m, 0, sizeof *m);
}

void db_pkmap_free(db_pkmap *m)
{
	free(m->slots);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

/* The slot holding k (hash h), or the empty slot where it would go. */
static size_t find(const db_pkmap *m, const db_pkey *k, uint64_t h)
{
	uint64_t tag = h >> 32 << 32;
	size_t i = (size_t)h & (m->cap - 1);
	for (;; i = (i + 1) & (m->cap - 1)) {
		uint64_t s = m->slots[i];
		if (!s || ((s & ~0xffffffffull) == tag && key_eq(&m->keys[(s & 0xffffffffu) - 1], k)))
			return i;
	}
}

size_t *db_pkmap_get(const db_pkmap *m, const db_pkey *k)
{
	if (!m->cap)
		return NULL;
	uint64_t s = m->slots[find(m, k, key_hash(k))];
	return s ? &m->vals[(s & 0xffffffffu) - 1] : NULL;
}

size_t *db_pkmap_get_near(const db_pkmap *m, const db_pkey *k, size_t *hint)
{
	if (*hint < m->n && key_eq(&m->keys[*hint], k))
		return &m->vals[(*hint)++];
	if (!m->cap)
		return NULL;
	uint64_t s = m->slots[find(m, k, key_hash(k))];
	if (!s)
		return NULL;
	*hint = (size_t)(s & 0xffffffffu);      /* the entry after it */
	return &m->vals[*hint - 1];
}

static int grow_slots(db_pkmap *m, size_t cap)
{
	uint64_t *slots = calloc(cap, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t e = 0; e < m->n; e++) {
		uint64_t h = key_hash(&m->keys[e]);
		size_t j = (size_t)h & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = (h >> 32 << 32) | (uint64_t)(e + 1);
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

static int grow_keys(db_pkmap *m, size_t n)
{
	if (n <= m->cap_keys)
		return 0;
	db_pkey *k = realloc(m->keys, n * sizeof *k);
	if (!k)
		return -1;
	m->keys = k;
	size_t *v = realloc(m->vals, n * sizeof *v);
	if (!v)
		return -1;
	m->vals = v;
	m->cap_keys = n;
	return 0;
}

int db_pkmap_reserve(db_pkmap *m, size_t n)
{
	if (n >= 0xffffffffu)
		return -1;
	size_t cap = m->cap ? m->cap : 16;
	while (cap < 2 * n)
		cap *= 2;
	if (cap > m->cap && grow_slots(m, cap) != 0)
		return -1;
	return grow_keys(m, n);
}

size_t *db_pkmap_put(db_pkmap *m, const db_pkey *k, size_t val, bool *added)
{
	if (added)
		*added = false;
	/* load at most 1/2: linear probes stay short */
	if (2 * (m->n + 1) > m->cap && grow_slots(m, m->cap ? m->cap * 2 : 16) != 0)
		return NULL;
	uint64_t h = key_hash(k);
	size_t i = find(m, k, h);
	if (m->slots[i])
		return &m->vals[(m->slots[i] & 0xffffffffu) - 1];
	if (m->n + 1 >= 0xffffffffu ||
	    (m->n == m->cap_keys && grow_keys(m, m->cap_keys ? m->cap_keys * 2 : 16) != 0))
		return NULL;
	m->keys[m->n] = *k;
	m->vals[m->n] = val;
	m->slots[i] = (h >> 32 << 32) | (uint64_t)(m->n + 1);
	if (added)
		*added = true;
	return &m->vals[m->n++];
}

size_t *db_pkmap_put_near(db_pkmap *m, const db_pkey *k, size_t val, bool *added, size_t *hint)
{
	/* the entry found last (a run of one key), then the one after it */
	for (size_t h = *hint ? *hint - 1 : 0; h <= *hint && h < m->n; h++) {
		if (key_eq(&m->keys[h], k)) {
			if (added)
				*added = false;
			*hint = h + 1;
			return &m->vals[h];
		}
	}
	size_t *v = db_pkmap_put(m, k, val, added);
	if (v)
		*hint = (size_t)(v - m->vals) + 1;
	return v;
}
