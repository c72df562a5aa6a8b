#include "strmap.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Keys come from the dumps (stage names, msprobe calls, quant companions):
 * an unkeyed hash let a file choose names of one hash and make every probe
 * walk them all (issue 37: 40k colliding stage names, 8.1 s against 0.44).
 * SipHash-1-3 (as Rust's HashMap) under a key drawn once per process: the
 * slots a name takes cannot be known without the key. Nothing may depend
 * on slot order (it changes from run to run); nothing does. */
static uint64_t g_k0, g_k1;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static void key_init(void)
{
	uint64_t k[2] = {0, 0};
	size_t got = 0;
	while (got < sizeof k) {
		ssize_t r = getrandom((char *)k + got, sizeof k - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got < sizeof k) {           /* no getrandom: the clock, pid and ASLR */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		k[0] ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32;
		k[1] ^= (uint64_t)(uintptr_t)&ts ^ (uint64_t)(uintptr_t)&key_init ^
		        (uint64_t)ts.tv_sec * 0xd6e8feb86659fd93ull;
	}
	g_k0 = k[0];
	g_k1 = k[1];
}

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                   \
	do {                                                                       \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);          \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                             \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                             \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);          \
	} while (0)

uint64_t db_strmap_hash(const void *p, size_t n)
{
	pthread_once(&g_key_once, key_init);
	const unsigned char *s = p;
	uint64_t v0 = g_k0 ^ 0x736f6d6570736575ull, v1 = g_k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = g_k0 ^ 0x6c7967656e657261ull, v3 = g_k1 ^ 0x7465646279746573ull;
	uint64_t b = (uint64_t)n << 56;
	for (; n >= 8; n -= 8, s += 8) {
		uint64_t m;
		memcpy(&m, s, 8);       /* little-endian hosts; the value is only a slot */
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
	}
	uint64_t t = 0;
	memcpy(&t, s, n);
	b |= t;
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* Also returns the length so keys are copied without another strlen. */
static uint64_t hash_str(const char *s, size_t *len)
{
	*len = strlen(s);
	return db_strmap_hash(s, *len);
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
