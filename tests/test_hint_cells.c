/* The value hints' cell sweep (measure/hint_values.c) answers as asking
 * each pair alone would: on the torch-made hint trees and the demo dumps,
 * every pair's hint JSON is the same whether the pairs are asked in order
 * (the first rank of a cell sweeps it), in reverse (the last one does), or
 * one at a time with every other pair shown as not computed yet, as the
 * workbench may ask (no sweep: each rank reads its cell itself). The
 * hints themselves are checked against torch by tests/t_hints.sh. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmp_util.h"
#include "db_hints.h"

enum { FORWARD, REVERSE, ALONE };

/* Every pair's hint as JSON (malloc'd strings), asked in the given way. */
static char **hints_of(db_compare *c, int how)
{
	size_t n = c->n_pairs;
	char **out = calloc(n, sizeof *out);
	int *saved = malloc(n * sizeof *saved);
	assert_non_null(out);
	assert_non_null(saved);
	for (size_t k = 0; k < n; k++) {
		size_t i = how == REVERSE ? n - 1 - k : k;
		if (how == ALONE)
			for (size_t j = 0; j < n; j++) {
				saved[j] = atomic_load(&c->pairs[j].state);
				if (j != i)
					atomic_store(&c->pairs[j].state, DB_PAIR_PENDING);
			}
		db_hint h;
		db_pair_hint(c, &c->pairs[i], &h);
		if (how == ALONE)
			for (size_t j = 0; j < n; j++)
				atomic_store(&c->pairs[j].state, saved[j]);
		size_t len = 0;
		FILE *f = open_memstream(&out[i], &len);
		assert_non_null(f);
		db_hint_json(f, &h);
		fclose(f);
	}
	free(saved);
	return out;
}

static void same_three_ways(const char *tree, const char *must)
{
	char r[1024], t[1024];
	snprintf(r, sizeof r, "%s/%s/ref", FIXTURES, tree);
	snprintf(t, sizeof t, "%s/%s/target", FIXTURES, tree);
	db_compare *c[3];
	char **h[3];
	for (int w = 0; w < 3; w++) {
		c[w] = cu_run(r, t, NULL, NULL, 2);
		h[w] = hints_of(c[w], w);
	}
	assert_int_equal(c[0]->n_pairs, c[1]->n_pairs);
	assert_int_equal(c[0]->n_pairs, c[2]->n_pairs);
	size_t found = 0;
	for (size_t i = 0; i < c[0]->n_pairs; i++) {
		if (strcmp(h[0][i], h[1][i]) || strcmp(h[0][i], h[2][i]))
			fail_msg("%s pair %zu: in order %s, reversed %s, alone %s", tree, i, h[0][i],
			         h[1][i], h[2][i]);
		found += strstr(h[0][i], must) != NULL;
	}
	/* the tree's own hint is there: the comparison above is not of nulls */
	if (!found)
		fail_msg("%s: no %s hint", tree, must);
	for (int w = 0; w < 3; w++) {
		for (size_t i = 0; i < c[w]->n_pairs; i++)
			free(h[w][i]);
		free(h[w]);
		db_compare_free(c[w]);
	}
}

static void test_partial_sum(void **state)
{
	(void)state;
	same_three_ways("hints/partial_sum", "\"partial_sum\"");
}

static void test_value_hints(void **state)
{
	(void)state;
	same_three_ways("hints/shift", "\"shift\"");
	same_three_ways("hints/transposed", "\"transposed\"");
	same_three_ways("hints/rows_permuted", "\"rows_permuted\"");
}

static void test_demo_ranks(void **state)
{
	(void)state;
	same_three_ways("demo", "\"sign_flip\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partial_sum),
		cmocka_unit_test(test_value_hints),
		cmocka_unit_test(test_demo_ranks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
