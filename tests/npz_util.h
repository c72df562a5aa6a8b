/* Test helper: small .npz files for grid tests (header-only, cmocka). */
#ifndef DB_TEST_NPZ_UTIL_H
#define DB_TEST_NPZ_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmp_util.h"
#include "zip_mini.h"

/* dir/name: an .npz holding the 2-float tensor x under each key, in this
 * order. */
static inline void cu_npz(const char *dir, const char *name, const char *const *keys, size_t nk,
                          const float x[2])
{
	zm_member *m = calloc(nk, sizeof *m);
	char (*names)[64] = calloc(nk, sizeof *names);
	char **data = calloc(nk, sizeof *data);
	assert_true(m && names && data);
	const long shape[1] = {2};
	for (size_t i = 0; i < nk; i++) {
		char path[1024];
		assert_int_equal(cu_npy(dir, "member.npy", "<f4", 1, shape, x, 0), 0);
		snprintf(path, sizeof path, "%s/member.npy", dir);
		size_t n;
		data[i] = cu_slurp(path, &n);
		assert_non_null(data[i]);
		unlink(path);
		snprintf(names[i], sizeof names[i], "%s.npy", keys[i]);
		m[i] = (zm_member){names[i], data[i], n, false};
	}
	size_t zn;
	uint8_t *z = zm_build(m, nk, &zn);
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(cu_write(path, z, zn), 0);
	free(z);
	for (size_t i = 0; i < nk; i++)
		free(data[i]);
	free(data);
	free(names);
	free(m);
}

#endif
