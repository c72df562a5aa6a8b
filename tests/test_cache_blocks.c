/* nftw (scratch trees) needs X/Open. */
#define _XOPEN_SOURCE 700
/* Cache files larger than one checksum block (issue 24: the snapshots, the
 * entry cache and the metrics cache are written a 1 MiB block at a time,
 * their checksums chained over the blocks). A tree of 20,000 hard links to
 * two demo files makes every one of them larger than a block; a reopen must
 * then be served whole from them: the index from its snapshots, every pair
 * from the metrics cache, and a rescan after one file changed opens that
 * file only (the entry cache). A checksum written and read over different
 * blocks would make each of them a silent miss. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmp_util.h"
#include "db_compare.h"
#include "db_reader.h"

#define PER_SIDE 10000  /* 10,000 items: each cache file over 1 MiB */

static void make_side(const char *dir, const char *sub, const char *src)
{
	char d[1200], name[1400];
	snprintf(d, sizeof d, "%s/%s", dir, sub);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(d, 0755), 0);
	for (int i = 0; i < PER_SIDE; i++) {
		snprintf(name, sizeof name,
		         "%s/forward_pass_id=0___rank=%d___name=stage%02d___dump_index=%d___layer_id=%d.pt",
		         d, i / 1000, i % 10, i % 1000, (i % 1000) / 10);
		assert_int_equal(link(src, name), 0);
	}
}

/* The size of the one file in dir whose name ends with suffix; 0 none. */
static long long cache_size(const char *dir, const char *suffix)
{
	char cmd[1400];
	snprintf(cmd, sizeof cmd, "find '%s' -name '*%s' -printf '%%s\\n' | sort -n | tail -1",
	         dir, suffix);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	long long n = 0;
	if (fscanf(f, "%lld", &n) != 1)
		n = 0;
	pclose(f);
	return n;
}

static void t_blocks(void **s)
{
	(void)s;
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	char r[1100], t[1100], cache[1100];
	snprintf(r, sizeof r, "%s/ref", dir);
	snprintf(t, sizeof t, "%s/target", dir);
	snprintf(cache, sizeof cache, "%s/cache", dir);
	make_side(r, "sglang_dump_1.0", FIXTURES "/demo/ref/sglang_dump_1700000000.0/"
	          "forward_pass_id=0___rank=0___name=hidden_in___dump_index=2___layer_id=0.pt");
	make_side(t, "sglang_dump_2.0", FIXTURES "/demo/target/sglang_dump_1700000100.0/"
	          "forward_pass_id=0___rank=0___name=hidden_in___dump_index=2___layer_id=0.pt");
	/* the file changed later is a copy of its own: touching a hard link
	 * changes every name of its inode */
	char one[1400];
	snprintf(one, sizeof one, "%s/sglang_dump_2.0/forward_pass_id=0___rank=3___name=stage07___"
	         "dump_index=7___layer_id=0.pt", t);
	size_t n_one = 0;
	char *bytes = cu_slurp(one, &n_one);
	assert_non_null(bytes);
	assert_int_equal(unlink(one), 0);
	assert_int_equal(cu_write(one, bytes, n_one), 0);
	free(bytes);

	/* first open: everything computed, every cache written */
	db_compare_opts o = {.cache_dir = cache, .verify_later = true};
	db_compare *c = NULL;
	db_err e = {{0}};
	assert_int_equal(db_compare_open(r, t, &o, &c, &e), 0);
	assert_false(db_compare_from_snapshots(c));
	size_t n_pairs = c->n_pairs;
	assert_int_equal(n_pairs, PER_SIDE);
	db_compare_run(c);
	assert_int_equal(c->n_cached, 0);
	db_compare_free(c);
	assert_true(cache_size(cache, ".snap") > (1 << 20));
	assert_true(cache_size(cache, ".index") > (1 << 20));
	assert_true(cache_size(cache, ".cache") > (1 << 20));

	/* reopen: the index from the snapshots, every pair from the cache */
	assert_int_equal(db_compare_open(r, t, &o, &c, &e), 0);
	assert_true(db_compare_from_snapshots(c));
	assert_int_equal(c->n_pairs, n_pairs);
	db_compare_run(c);
	assert_int_equal(c->n_cached, n_pairs);
	db_compare_free(c);

	/* one file changed: a full listing, the others' entries from the entry
	 * cache (one file opened by the scan) */
	struct timespec ts[2] = {{0, UTIME_OMIT}, {time(NULL) + 5, 0}};
	assert_int_equal(utimensat(AT_FDCWD, one, ts, 0), 0);
	db_compare_opts full = {.cache_dir = cache};
	size_t before = db_files_opened();
	assert_int_equal(db_compare_open(r, t, &full, &c, &e), 0);
	assert_int_equal(db_files_opened() - before, 1);
	assert_int_equal(c->n_pairs, n_pairs);
	db_compare_free(c);
	cu_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
