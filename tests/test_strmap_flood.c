/* Hash flooding (issue 37): the string map hashed with a fixed, unkeyed
 * function that is invertible a block at a time, so a dump could name its
 * stages to share one hash and make every insert walk all of them (40k
 * such names: 8.1 s against 0.44). Names made to collide under that
 * function must get different hashes in the map, and the map must still
 * find every one of them. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "util/hash.h"
#include "util/strmap.h"

#define N 2000

/* One block of db_hash64's loop. */
static uint64_t step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x100000001b3ull * 0x2127599bf4325c37ull;
	return h ^ (h >> 29);
}

static bool has_zero_byte(uint64_t w)
{
	for (int i = 0; i < 8; i++)
		if (!((w >> (8 * i)) & 0xff))
			return true;
	return false;
}

/* Name k: two 8-byte blocks whose state after both equals name 0's (the
 * second block undoes the first's difference). 0 when no such name. */
static bool colliding_name(uint64_t k, char out[17])
{
	uint64_t h0 = DB_HASH_SEED ^ (uint64_t)16 * 0xff51afd7ed558ccdull;
	uint64_t a1 = 0x4141414141414141ull, a2 = 0x4242424242424242ull;
	uint64_t w1 = 0x6161616161616161ull + k;        /* no zero byte for k < 2^40 */
	uint64_t w2 = a2 ^ step(h0, a1) ^ step(h0, w1);
	if (has_zero_byte(w1) || has_zero_byte(w2))
		return false;
	memcpy(out, &w1, 8);
	memcpy(out + 8, &w2, 8);
	out[16] = 0;
	return true;
}

static void t_collisions_spread(void **s)
{
	(void)s;
	static char names[N][17];
	size_t n = 0;
	for (uint64_t k = 0; n < N; k++)
		if (colliding_name(k, names[n]))
			n++;
	/* the precondition: one hash for all under the old function */
	uint64_t h = db_hash64(names[0], 16, DB_HASH_SEED);
	for (size_t i = 1; i < N; i++)
		assert_true(db_hash64(names[i], 16, DB_HASH_SEED) == h);
	db_strmap m;
	db_strmap_init(&m);
	for (size_t i = 0; i < N; i++) {
		bool added;
		size_t *v = db_strmap_put(&m, names[i], i, &added);
		assert_non_null(v);
		assert_true(added);
	}
	for (size_t i = 0; i < N; i++) {
		size_t *v = db_strmap_get(&m, names[i]);
		assert_non_null(v);
		assert_int_equal(*v, i);
	}
	/* the map's own hashes of them: as many as names (a keyed hash does
	 * not keep an unkeyed one's collisions; two equal of 2000 64-bit
	 * values by chance: ~1e-13) */
	size_t distinct = 0;
	for (size_t i = 0; i < m.cap; i++) {
		if (!m.keys[i])
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = m.keys[j] && m.hashes[j] == m.hashes[i];
		distinct += !seen;
	}
	assert_int_equal(distinct, N);
	db_strmap_free(&m);
}

/* The key is the process's: the same bytes hash alike within it. */
static void t_hash_stable_in_process(void **s)
{
	(void)s;
	assert_true(db_strmap_hash("layers.0.mlp", 12) == db_strmap_hash("layers.0.mlp", 12));
	assert_true(db_strmap_hash("layers.0.mlp", 12) != db_strmap_hash("layers.1.mlp", 12));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_collisions_spread),
		cmocka_unit_test(t_hash_stable_in_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
