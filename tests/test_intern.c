/* Interned names (util/intern.c) and what relies on them: an item's and a
 * pair's fields point to one copy per name, and db_rank_pairs answers from
 * an index of the pairs by cell (issue 24) exactly as a pass over every
 * pair did. */
#define _XOPEN_SOURCE 700
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "cmp_util.h"
#include "db_grid.h"
#include "util/intern.h"

static void t_same_pointer(void **s)
{
	(void)s;
	char a[] = "self_attn.o_proj", b[] = "self_attn.o_proj";
	const char *x = db_intern(a), *y = db_intern(b);
	assert_non_null(x);
	assert_ptr_equal(x, y);
	assert_ptr_not_equal(x, a);
	a[0] = 'X';             /* the copy is the intern's own */
	assert_string_equal(x, "self_attn.o_proj");
	assert_ptr_not_equal(db_intern("self_attn.q_proj"), x);
	assert_ptr_equal(db_intern_n("self_attn.o_proj.weight", 16), x);
	assert_string_equal(db_intern(""), "");
	assert_ptr_equal(db_intern(""), db_intern_n("abc", 0));
}

#define N_NAMES 2000
static const char *seen[2][N_NAMES];

static void *intern_many(void *arg)
{
	int t = (int)(intptr_t)arg;
	for (int i = 0; i < N_NAMES; i++) {
		int k = t ? N_NAMES - 1 - i : i;  /* the threads meet in the middle */
		char name[32];
		snprintf(name, sizeof name, "stage%04d", k);
		seen[t][k] = db_intern(name);
	}
	return NULL;
}

/* Two scan threads intern at once: one copy per name all the same. */
static void t_threads(void **s)
{
	(void)s;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, intern_many, (void *)(intptr_t)1), 0);
	intern_many((void *)(intptr_t)0);
	pthread_join(th, NULL);
	for (int k = 0; k < N_NAMES; k++) {
		char name[32];
		snprintf(name, sizeof name, "stage%04d", k);
		assert_non_null(seen[0][k]);
		assert_ptr_equal(seen[0][k], seen[1][k]);
		assert_string_equal(seen[0][k], name);
	}
	size_t n, bytes;
	db_intern_stats(&n, &bytes);
	assert_true(n >= N_NAMES);
}

/* The pass over every pair db_rank_pairs made before its index. */
static size_t rank_pairs_scan(const db_compare *c, size_t pair, size_t *v)
{
	const db_pair *p = &c->pairs[pair];
	size_t n = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *q = &c->pairs[i];
		if (q->merged || q->f.rank < 0 || q->f.layer != p->f.layer ||
		    q->occurrence != p->occurrence || strcmp(q->f.stage, p->f.stage) ||
		    strcmp(q->f.phase, p->f.phase) || strcmp(q->f.pass, p->f.pass))
			continue;
		size_t j = n++;
		while (j > 0 && c->pairs[v[j - 1]].f.rank > q->f.rank) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = i;
	}
	return n;
}

static void same_rank_pairs(const char *ref, const char *tgt, size_t min_ranks)
{
	db_compare *c = cu_run(ref, tgt, NULL, NULL, 0);
	assert_non_null(c);
	size_t *want = malloc((c->n_pairs + 1) * sizeof *want), most = 0;
	assert_non_null(want);
	for (size_t i = 0; i < c->n_pairs; i++) {
		size_t *got = NULL;
		size_t n = db_rank_pairs(c, i, &got);
		size_t m = rank_pairs_scan(c, i, want);
		assert_int_equal(n, m);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(got[k], want[k]);
		free(got);
		most = n > most ? n : most;
	}
	assert_true(most >= min_ranks);        /* the fixture has ranks to find */
	free(want);
	db_compare_free(c);
}

static void t_rank_pairs_index(void **s)
{
	(void)s;
	/* several passes and ranks; then TP shards with merged pairs */
	same_rank_pairs(FIXTURES "/layouts/sglang_v1/ref", FIXTURES "/layouts/sglang_v1/target", 2);
	same_rank_pairs(FIXTURES "/layouts/fwd_hook/ref", FIXTURES "/layouts/fwd_hook/target", 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_same_pointer),
		cmocka_unit_test(t_threads),
		cmocka_unit_test(t_rank_pairs_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
