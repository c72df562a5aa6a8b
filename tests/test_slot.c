/* Batch slots (src/measure/slot.c) on hand-made tensors: the spec parser, the view
 * of a block, the search for the block that matches (exact, with noise,
 * none), the profile's token_dim; and the watcher (src/layout/watch.c) seeing a
 * file appear, with inotify and with the poll fallback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_profile.h"
#include "db_slot.h"
#include "db_watch.h"

static db_tensor f32(float *data, int ndim, const int64_t *shape)
{
	db_tensor t;
	memset(&t, 0, sizeof t);
	t.dtype = DB_DT_F32;
	t.ndim = ndim;
	memcpy(t.shape, shape, (size_t)ndim * sizeof *shape);
	db_tensor_set_contiguous(&t);
	t.data = (const uint8_t *)data;
	t.file_offset = -1;
	return t;
}

static void test_parse(void **state)
{
	(void)state;
	db_slot_spec s;
	db_err err = {{0}};
	assert_int_equal(db_slot_parse("target:0:5:5", &s, &err), 0);
	assert_int_equal(s.side, 2);
	assert_int_equal(s.dim, 0);
	assert_int_equal(s.start, 5);
	assert_int_equal(s.len, 5);
	assert_int_equal(db_slot_parse("1:0:3", &s, &err), 0);
	assert_int_equal(s.side, 0);
	assert_int_equal(s.dim, 1);
	assert_int_equal(db_slot_parse("ref:2:1:1", &s, &err), 0);
	assert_int_equal(s.side, 1);
	const char *bad[] = {"", "0:5", "x:0:1:1", "0:-1:1", "0:1:0", "0:1:1:", "99:0:1"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(db_slot_parse(bad[i], &s, &err), -1);
	assert_non_null(strstr(err.msg, "DIM:START:LEN"));
}

/* big: 4 rows of 3, row r = r*10 + k; small: rows 2..3 of it. */
static void test_view_and_find(void **state)
{
	(void)state;
	float big[12], small[6];
	for (int r = 0; r < 4; r++)
		for (int k = 0; k < 3; k++)
			big[r * 3 + k] = (float)(r * 10 + k + 1);
	memcpy(small, big + 6, sizeof small);
	int64_t bs[] = {4, 3}, ss[] = {2, 3};
	db_tensor b = f32(big, 2, bs), s = f32(small, 2, ss);
	db_tensor v;
	db_slot_view(&b, 0, 1, 2, &v);
	assert_int_equal(v.shape[0], 2);
	assert_ptr_equal(v.data, (const uint8_t *)(big + 3));
	db_err err = {{0}};
	assert_int_equal(db_slot_find(&s, &b, 0, &err), 2);
	/* a little noise still finds it */
	small[0] += 0.01f;
	assert_int_equal(db_slot_find(&s, &b, 0, &err), 2);
	/* nothing like it: an error naming the best start */
	for (int i = 0; i < 6; i++)
		small[i] = (i % 2 ? -1000.0f : 1000.0f);
	assert_int_equal(db_slot_find(&s, &b, 0, &err), -1);
	assert_non_null(strstr(err.msg, "no block of the longer side matches"));
}

/* Along dim 1 of [2, 4]: columns 1..2. */
static void test_find_inner_dim(void **state)
{
	(void)state;
	float big[8] = {1, 2, 3, 4, 5, 6, 7, 8}, small[4] = {2, 3, 6, 7};
	int64_t bs[] = {2, 4}, ss[] = {2, 2};
	db_tensor b = f32(big, 2, bs), s = f32(small, 2, ss);
	db_err err = {{0}};
	assert_int_equal(db_slot_find(&s, &b, 1, &err), 1);
}

static void test_token_dim(void **state)
{
	(void)state;
	const char *y = "name: t\npath: '(?<stage>[a-z_.]+)\\.npy'\n"
	                "token_dim:\n  \"attn.*\": 1\n  \"*\": 0\n";
	db_profile *p = NULL;
	db_err err = {{0}};
	assert_int_equal(db_profile_parse(y, strlen(y), "t.yaml", &p, &err), 0);
	assert_int_equal(db_profile_token_dim(p, "attn.ctx"), 1);
	assert_int_equal(db_profile_token_dim(p, "hidden_out"), 0);
	db_profile_free(p);
	const char *bad = "name: t\npath: '(?<stage>[a-z]+)\\.npy'\ntoken_dim:\n  \"*\": -1\n";
	assert_int_equal(db_profile_parse(bad, strlen(bad), "t.yaml", &p, &err), -1);
	assert_non_null(strstr(err.msg, "token_dim"));
}

/* A file written under a watched root is seen; nothing else is. */
static void watch_sees(const char *how)
{
	char dir[] = "/tmp/db_watch_XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("DUMPBISECT_WATCH", how, 1);
	const char *roots[] = {dir};
	db_watch *w;
	db_err err = {{0}};
	assert_int_equal(db_watch_open(roots, 1, &w, &err), 0);
	assert_string_equal(db_watch_how(w), how);
	assert_int_equal(db_watch_changed(w, 300), 0);
	char path[64];
	snprintf(path, sizeof path, "%s/a.pt", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("x", f);
	fclose(f);
	/* bounded: the poll fallback lists every 250 ms */
	int seen = 0;
	for (int i = 0; i < 20 && !seen; i++)
		seen = db_watch_changed(w, 250);
	assert_int_equal(seen, 1);
	assert_int_equal(db_watch_changed(w, 300), 0);
	db_watch_free(w);
	unlink(path);
	rmdir(dir);
	unsetenv("DUMPBISECT_WATCH");
}

static void test_watch_inotify(void **state)
{
	(void)state;
	watch_sees("inotify");
}

static void test_watch_poll(void **state)
{
	(void)state;
	watch_sees("poll");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_view_and_find),
		cmocka_unit_test(test_find_inner_dim),
		cmocka_unit_test(test_token_dim),
		cmocka_unit_test(test_watch_inotify),
		cmocka_unit_test(test_watch_poll),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
