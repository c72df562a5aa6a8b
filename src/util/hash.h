/* A fast 64-bit hash for checksums and cache keys (not for adversarial
 * input): 8 bytes per step, multiply-xorshift mixing. Much faster than
 * byte-wise FNV over the megabytes a cache file holds. */
#ifndef DB_HASH_H
#define DB_HASH_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DB_HASH_SEED 0x9e3779b97f4a7c15ull

static inline uint64_t db_hash_mix(uint64_t h)
{
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h;
}

static inline uint64_t db_hash64(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	h ^= (uint64_t)n * 0xff51afd7ed558ccdull;
	for (; n >= 8; n -= 8, s += 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3ull * 0x2127599bf4325c37ull;
		h ^= h >> 29;
	}
	uint64_t t = 0;
	memcpy(&t, s, n);
	h = (h ^ t) * 0x2127599bf4325c37ull;
	return db_hash_mix(h);
}

#endif
