/* nftw (scratch trees) needs X/Open. */
#define _XOPEN_SOURCE 700
/* Detection on a large listing (src/layout/detect.c, issue 24): above
 * 16,384 files the profiles count an evenly spaced sample, and say so; a
 * sample that does not decide clearly (the layout's files are rare) falls
 * back to counting every file. The first open of a tree leaves its cache
 * files to be written behind the first frame (src/pair/cache_writes.c):
 * none is on disk when db_compare_open returns, all are after the join. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmp_util.h"
#include "db_compare.h"
#include "layout/index_priv.h"
#include "pair/cache_writes.h"
#include "read/walk.h"

static void add(db_walk *w, const char *rel)
{
	if (w->n_files == w->cap_files) {
		w->cap_files = w->cap_files ? 2 * w->cap_files : 1024;
		w->files = realloc(w->files, w->cap_files * sizeof *w->files);
		assert_non_null(w->files);
	}
	db_walk_file *f = &w->files[w->n_files++];
	memset(f, 0, sizeof *f);
	f->rel = strdup(rel);
	assert_non_null(f->rel);
}

static void v1_name(char *buf, size_t len, int i)
{
	snprintf(buf, len, "sglang_dump_1.0/forward_pass_id=%d___rank=0___name=stage%02d"
	         "___dump_index=%d___layer_id=%d.pt", i / 1000, i % 13, i, i % 61);
}

static void t_sample_decides(void **s)
{
	(void)s;
	db_walk w = {0};
	char name[256];
	for (int i = 0; i < 20000; i++) {
		v1_name(name, sizeof name, i);
		add(&w, name);
	}
	db_profile *p = NULL;
	char why[512];
	db_err e = {{0}};
	assert_int_equal(db_profile_detect_walk("big", &w, NULL, &p, why, sizeof why, &e), 0);
	assert_string_equal(p->name, "sglang-v1");
	/* 16,384 of the 20,000 counted, every one parsed */
	assert_non_null(strstr(why, "sglang-v1: 16384 of 16384 sampled files parsed "
	                            "(20000 files in all)"));
	db_profile_free(p);
	db_walk_free(&w);
}

static void t_rare_layout_counted_whole(void **s)
{
	(void)s;
	db_walk w = {0};
	char name[256];
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof name, "logs/line%05d.txt", i);
		add(&w, name);
	}
	for (int i = 0; i < 100; i++) {
		v1_name(name, sizeof name, i);
		add(&w, name);
	}
	db_profile *p = NULL;
	char why[512];
	db_err e = {{0}};
	assert_int_equal(db_profile_detect_walk("mixed", &w, NULL, &p, why, sizeof why, &e), 0);
	assert_string_equal(p->name, "sglang-v1");
	/* ~81 in a sample is no clear winner: every file was counted */
	assert_non_null(strstr(why, "sglang-v1: 100 of 20100 files parsed"));
	assert_null(strstr(why, "sampled"));
	db_profile_free(p);
	db_walk_free(&w);
}

static bool snap_on_disk(const char *cache, const char *root, const db_profile *p)
{
	db_walk w;
	bool is_file;
	char msg[512];
	if (db_walk_root(root, &w, &is_file, msg, sizeof msg) != 0)
		return false;
	db_index *ix = db_isnap_load(cache, root, NULL, db_isnap_key(&w, is_file, p, NULL), &w,
	                             is_file, p);
	db_walk_free(&w);
	bool hit = ix != NULL;
	db_index_free(ix);
	return hit;
}

static void t_writes_behind(void **s)
{
	(void)s;
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	char cache[1100], r[1024], t[1024];
	snprintf(cache, sizeof cache, "%s/cache", dir);
	snprintf(r, sizeof r, "%s/layouts/sglang_v1/ref", FIXTURES);
	snprintf(t, sizeof t, "%s/layouts/sglang_v1/target", FIXTURES);
	db_compare_opts o = {.cache_dir = cache};
	db_compare *c = NULL;
	db_err e = {{0}};
	assert_int_equal(db_compare_open(r, t, &o, &c, &e), 0);
	assert_false(snap_on_disk(cache, r, c->profile));   /* not yet */
	assert_false(snap_on_disk(cache, t, c->profile));
	db_cwrites_start(c);
	db_cwrites_join(c);
	assert_true(snap_on_disk(cache, r, c->profile));
	assert_true(snap_on_disk(cache, t, c->profile));
	/* and a second open is served from them */
	db_compare *again = NULL;
	assert_int_equal(db_compare_open(r, t, &o, &again, &e), 0);
	assert_int_equal(again->n_pairs, c->n_pairs);
	db_compare_free(again);
	db_compare_free(c);
	cu_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_sample_decides),
		cmocka_unit_test(t_rare_layout_counted_whole),
		cmocka_unit_test(t_writes_behind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
