/* Interned names (util/intern.c) and what relies on them: an item's and a
 * pair's fields point to one copy per name, and db_rank_pairs answers from
 * an index of the pairs by cell (issue 24) exactly as a pass over every
 * pair did, and db_substages from an index by place as its two passes did. */
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
#include "db_profile.h"
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

/* The passes over every pair db_substages made before its index. */
static bool scan_place(const db_pair *a, const db_pair *b)
{
	return !strcmp(a->f.phase, b->f.phase) && !strcmp(a->f.pass, b->f.pass) &&
	       a->f.layer == b->f.layer && a->occurrence == b->occurrence;
}

static bool scan_twin(const db_compare *c, const db_pair *p, const char *stage, bool want_merged,
                      int rank)
{
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *r = &c->pairs[i];
		if (r->merged == want_merged && (want_merged || r->f.rank == rank) &&
		    scan_place(r, p) && !strcmp(r->f.stage, stage))
			return true;
	}
	return false;
}

static bool scan_cell(const db_compare *c, const db_pair *q, const db_pair *p, int low)
{
	if (!scan_place(q, p))
		return false;
	if (q->merged == p->merged && q->f.rank == p->f.rank)
		return true;
	if (q->merged && !p->merged && p->f.rank >= 0)
		return !scan_twin(c, p, q->f.stage, false, p->f.rank);
	if (p->merged && !q->merged && q->f.rank >= 0 && q->f.rank == low)
		return !scan_twin(c, p, q->f.stage, true, -1);
	return false;
}

static const char *scan_parent(const db_compare *c, const char *stage, const char **known,
                               size_t nk, char *buf, size_t len)
{
	const char *r = db_profile_parent(c->profile, stage, known, nk, buf, len);
	return r ? r : stage;
}

static size_t substages_scan(const db_compare *c, size_t pair, size_t *v, const char **known)
{
	const db_pair *p = &c->pairs[pair];
	int low = -1;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *q = &c->pairs[i];
		if (!q->merged && q->f.rank >= 0 && scan_place(q, p) && (low < 0 || q->f.rank < low))
			low = q->f.rank;
	}
	size_t nk = 0;
	for (size_t i = 0; i < c->n_pairs; i++)
		if (scan_cell(c, &c->pairs[i], p, low))
			known[nk++] = c->pairs[i].f.stage;
	char buf[256], buf2[256];
	const char *top = scan_parent(c, p->f.stage, known, nk, buf, sizeof buf);
	size_t n = 0, own = DB_NO_PAIR;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *q = &c->pairs[i];
		if (!scan_cell(c, q, p, low))
			continue;
		if (!strcmp(q->f.stage, top)) {
			own = i;
			continue;
		}
		if (!strcmp(scan_parent(c, q->f.stage, known, nk, buf2, sizeof buf2), top))
			v[n++] = i;
	}
	if (own != DB_NO_PAIR)
		v[n++] = own;
	return n;
}

static void same_substages(const char *ref, const char *tgt, size_t min_subs)
{
	db_compare *c = cu_run(ref, tgt, NULL, NULL, 0);
	assert_non_null(c);
	size_t *want = malloc((c->n_pairs + 1) * sizeof *want), most = 0;
	const char **known = malloc((c->n_pairs + 1) * sizeof *known);
	assert_non_null(want);
	assert_non_null(known);
	for (size_t i = 0; i < c->n_pairs; i++) {
		size_t *got = NULL;
		size_t n = db_substages(c, i, &got);
		size_t m = substages_scan(c, i, want, known);
		assert_int_equal(n, m);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(got[k], want[k]);
		free(got);
		most = n > most ? n : most;
	}
	assert_true(most >= min_subs);         /* the fixture has sub-stages to find */
	free(known);
	free(want);
	db_compare_free(c);
}

static void t_substages_index(void **s)
{
	(void)s;
	/* several passes and ranks; TP shards with merged pairs; sub-stages */
	same_substages(FIXTURES "/layouts/sglang_v1/ref", FIXTURES "/layouts/sglang_v1/target", 1);
	same_substages(FIXTURES "/layouts/fwd_hook/ref", FIXTURES "/layouts/fwd_hook/target", 1);
	same_substages(FIXTURES "/layouts/atom_fwd", NULL, 3);
	/* across layouts: reference TP1 (merged), target TP2 (ranks) */
	same_substages(FIXTURES "/realdump/v1_tp1v2/ref", FIXTURES "/realdump/v1_tp1v2/target", 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_same_pointer),
		cmocka_unit_test(t_threads),
		cmocka_unit_test(t_rank_pairs_index),
		cmocka_unit_test(t_substages_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
