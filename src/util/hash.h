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

/* The same mixing in four lanes of 32 bytes a step: the lanes' multiplies
 * overlap instead of each waiting for the last (a snapshot's checksum
 * over 83 MB at 10^6 files). Another function than db_hash64: values
 * differ. */
static inline uint64_t db_hash64x4(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	uint64_t l[4] = {h, h ^ 0xff51afd7ed558ccdull, h ^ 0xc4ceb9fe1a85ec53ull,
	                 h ^ 0xd6e8feb86659fd93ull};
	size_t total = n;
	for (; n >= 32; n -= 32, s += 32) {
		for (int k = 0; k < 4; k++) {
			uint64_t w;
			memcpy(&w, s + 8 * k, 8);
			l[k] = (l[k] ^ w) * 0x100000001b3ull * 0x2127599bf4325c37ull;
			l[k] ^= l[k] >> 29;
		}
	}
	uint64_t r = l[0];
	for (int k = 1; k < 4; k++)
		r = db_hash_mix(r ^ l[k]) * 0x2127599bf4325c37ull;
	return db_hash64(s, n, r ^ total);
}

#endif
