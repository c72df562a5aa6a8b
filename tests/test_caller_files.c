/* nftw (scratch trees) needs X/Open. */
#define _XOPEN_SOURCE 700
/* A reopened msprobe statistics tree keeps its statistics (the index
 * snapshot could not, so each pair computed one at a time by the caller --
 * bisect, the workbench's probes -- opened and parsed its dump.json again:
 * bisect on ms_stat_tp2 took 10 s for 0.05 s of work), and pairs computed
 * one at a time by the caller share their open files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "cmp_util.h"
#include "db_compare.h"
#include "db_reader.h"

/* Files opened while computing every pair of c, one db_compare_pair each. */
static size_t opens_one_by_one(db_compare *c)
{
	size_t before = db_files_opened();
	for (size_t i = 0; i < c->n_pairs; i++)
		db_compare_pair(c, &c->pairs[i]);
	return db_files_opened() - before;
}

static void t_msprobe_reopen(void **s)
{
	(void)s;
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	char cache[1100];
	snprintf(cache, sizeof cache, "%s/cache", dir);
	const char *r = FIXTURES "/realdump/ms_stat_tp2/ref", *t = FIXTURES "/realdump/ms_stat_tp2/target";
	db_compare_opts o = {.cache_dir = cache};
	for (int round = 0; round < 2; round++) {  /* the second from the caches */
		db_compare *c = NULL;
		db_err e = {{0}};
		assert_int_equal(db_compare_open(r, t, &o, &c, &e), 0);
		assert_true(c->n_pairs > 50);
		assert_true(opens_one_by_one(c) <= 4);
		db_compare_free(c);
	}
	cu_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_msprobe_reopen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
