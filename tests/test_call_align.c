/* pairing: calls (pair/call_align.c) past the table's 2^22 cells (issue 37):
 * a layer of 3,000 calls with one call inserted near its start and one left
 * out near its end differs over 2,980 x 2,980 calls; it was paired by the
 * call counters (every call between shifted by one: false shape
 * mismatches). It is aligned in linear space now, and a layer past the
 * whole alignment's budget is said to be left to the counters. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pair/call_align.h"

static db_item *items(size_t n)
{
	db_item *v = calloc(n, sizeof *v);
	assert_non_null(v);
	return v;
}

/* Call number k of the layer: Tensor.__add__#<occ>, shape [k % 7 + 1, 8]. */
static void set_call(db_item *it, int occ, int64_t rows, char *names, size_t at)
{
	char *s = names + at * 48;
	snprintf(s, 48, "mlp.Tensor.__add__#%d", occ);
	it->f = (db_ifields){.side = "", .phase = "", .pass = "0", .stage = s, .rank = 0,
	                     .layer = 0};
	it->ndim = 2;
	it->shape[0] = rows;
	it->shape[1] = 8;
}

static void t_insert_and_removal_3000(void **st)
{
	(void)st;
	enum { N = 3000 };
	db_item *r = items(N), *t = items(N);
	char *rn = calloc(N, 48), *tn = calloc(N, 48);
	const db_item *rp[N], *tp[N];
	long want[N];
	for (int k = 0; k < N; k++) {
		set_call(&r[k], k, k % 7 + 1, rn, (size_t)k);
		rp[k] = &r[k];
	}
	/* target: calls 0..9, one of its own, calls 10..2989, 2991..2999 */
	size_t m = 0;
	for (int k = 0; k < N; k++) {
		if (k == 10) {
			set_call(&t[m], (int)m, 9, tn, m);
			want[m++] = -1;
		}
		if (k == 2990)
			continue;
		set_call(&t[m], (int)m, k % 7 + 1, tn, m);
		want[m++] = k;
	}
	assert_int_equal(m, N);
	for (size_t i = 0; i < m; i++)
		tp[i] = &t[i];
	long tmatch[N];
	bool aligned[N];
	db_align_fallback fb;
	assert_int_equal(db_align_calls(rp, N, tp, m, tmatch, aligned, NULL, &fb), 0);
	assert_int_equal(fb.groups, 0);
	size_t wrong = 0;
	for (size_t i = 0; i < m; i++) {
		assert_true(aligned[i]);
		wrong += tmatch[i] != want[i];
	}
	assert_int_equal(wrong, 0);
	free(r);
	free(t);
	free(rn);
	free(tn);
}

/* 50,000 x 50,000 calls differing at both ends: ~2 x 2.5e9 cells, past the
 * budget (2^32): left to the counters, and said. */
static void t_past_budget_said(void **st)
{
	(void)st;
	enum { N = 50000 };
	db_item *r = items(N), *t = items(N);
	char *rn = calloc(N, 48), *tn = calloc(N, 48);
	const db_item **rp = calloc(N, sizeof *rp), **tp = calloc(N, sizeof *tp);
	long *tmatch = calloc(N, sizeof *tmatch);
	bool *aligned = calloc(N, sizeof *aligned);
	for (int k = 0; k < N; k++) {
		set_call(&r[k], k, k == 0 ? 3 : 1, rn, (size_t)k);
		set_call(&t[k], k, k == N - 1 ? 3 : 1, tn, (size_t)k);
		rp[k] = &r[k];
		tp[k] = &t[k];
	}
	db_align_fallback fb;
	assert_int_equal(db_align_calls(rp, N, tp, N, tmatch, aligned, NULL, &fb), 0);
	assert_int_equal(fb.groups, 1);
	assert_int_equal(fb.ref_calls, N);
	assert_int_equal(fb.tgt_calls, N);
	for (size_t i = 0; i < N; i++)
		assert_false(aligned[i]);
	free(r);
	free(t);
	free(rn);
	free(tn);
	free(rp);
	free(tp);
	free(tmatch);
	free(aligned);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_insert_and_removal_3000),
		cmocka_unit_test(t_past_budget_said),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
