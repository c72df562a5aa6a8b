/* Root-cause hints read off the metrics (db_hints.h), on synthetic pairs
 * whose metrics are worked out by hand: a scale, a sign flip, zeros, and
 * the cases that must get none (a 1 % factor, one value, the ok band); the
 * catalog's names; the JSON and text forms. The value-based hints are
 * tested on the torch-made trees by tests/t_hints.sh. */
#include "db_hints.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* A computed, diverging pair with metrics for y = k·x, x ≠ 0: cos = sign(k),
 * rel_l2 = |k − 1|, rel_diff = (k − 1)² / (1 + k²). */
static void scaled(db_pair *p, double k, uint64_t n)
{
	memset(p, 0, sizeof *p);
	p->f.rank = -1;
	p->f.layer = 1;
	p->status = DB_ST_OK;
	p->band = DB_BAND_BUG;
	p->m.n = n;
	p->m.cos = k < 0 ? -1.0 : 1.0;
	p->m.rel_l2 = fabs(k - 1.0);
	p->m.rel_diff = (k - 1.0) * (k - 1.0) / (1.0 + k * k);
	atomic_store(&p->state, DB_PAIR_DONE);
}

static db_hint hint_of(db_pair *p)
{
	db_compare c = {0};
	c.pairs = p;
	c.n_pairs = 1;
	db_hint h;
	db_pair_hint(&c, p, &h);
	return h;
}

static void test_scale(void **state)
{
	(void)state;
	db_pair p;
	scaled(&p, 3.0, 64);
	db_hint h = hint_of(&p);
	assert_int_equal(h.kind, DB_HINT_SCALE);
	assert_true(fabs(h.factor - 3.0) < 1e-12);
	scaled(&p, 0.4, 64);
	h = hint_of(&p);
	assert_int_equal(h.kind, DB_HINT_SCALE);
	assert_true(fabs(h.factor - 0.4) < 1e-12);
}

static void test_sign_flip(void **state)
{
	(void)state;
	db_pair p;
	scaled(&p, -1.0, 64);
	db_hint h = hint_of(&p);
	assert_int_equal(h.kind, DB_HINT_SIGN_FLIP);
	scaled(&p, -3.0, 64);
	assert_int_equal(hint_of(&p).kind, DB_HINT_SCALE);
}

static void test_none(void **state)
{
	(void)state;
	db_pair p;
	scaled(&p, 1.01, 64);           /* drift, not a scale */
	assert_int_equal(hint_of(&p).kind, DB_HINT_NONE);
	scaled(&p, 3.0, 1);             /* one value: always "cos 1" */
	assert_int_equal(hint_of(&p).kind, DB_HINT_NONE);
	scaled(&p, 3.0, 64);
	p.m.cos = 0.999;                /* the factor explains too little */
	assert_int_equal(hint_of(&p).kind, DB_HINT_NONE);
	scaled(&p, 3.0, 64);
	p.band = DB_BAND_OK;            /* not diverging */
	assert_int_equal(hint_of(&p).kind, DB_HINT_NONE);
	scaled(&p, 3.0, 64);
	atomic_store(&p.state, DB_PAIR_PENDING);
	assert_int_equal(hint_of(&p).kind, DB_HINT_NONE);
}

static void test_zeros(void **state)
{
	(void)state;
	db_pair p;
	scaled(&p, 0.0, 64);
	p.m.cos = NAN;                  /* ‖y‖ = 0 */
	assert_true(p.m.rel_l2 == 1.0 && p.m.rel_diff == 1.0);
	assert_int_equal(hint_of(&p).kind, DB_HINT_ZEROS);
}

static void test_nan_origin(void **state)
{
	(void)state;
	db_pair v[2];
	scaled(&v[0], 1.0, 64);
	scaled(&v[1], 1.0, 64);
	v[0].seq = 1;
	v[1].seq = 2;
	for (int i = 0; i < 2; i++) {
		v[i].m.nan_tgt = 3;
		v[i].m.nonfinite_mismatch = 3;
	}
	db_compare c = {0};
	c.pairs = v;
	c.n_pairs = 2;
	db_hint h;
	db_pair_hint(&c, &v[0], &h);
	assert_int_equal(h.kind, DB_HINT_NAN_ORIGIN);
	assert_int_equal(h.nan, 3);
	db_pair_hint(&c, &v[1], &h);    /* inherits it: no hint */
	assert_int_equal(h.kind, DB_HINT_NONE);
	atomic_store(&v[0].state, DB_PAIR_PENDING);
	db_pair_hint(&c, &v[1], &h);    /* the earlier pair unknown: no claim */
	assert_int_equal(h.kind, DB_HINT_NONE);
}

static void test_names_and_forms(void **state)
{
	(void)state;
	const char *want[] = {"none", "inputs_differ", "nan_origin", "zeros", "partial_sum",
	                      "sign_flip", "scale", "transposed", "shift", "rows_permuted",
	                      "batch_slot"};
	for (int k = DB_HINT_NONE; k <= DB_HINT_BATCH_SLOT; k++)
		assert_string_equal(db_hint_kind_name((db_hint_kind)k), want[k]);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	db_hint h = {.kind = DB_HINT_TRANSPOSED, .ndim = 3, .perm = {0, 2, 1}};
	db_hint_json(f, &h);
	fputc('|', f);
	db_hint none = {0};
	db_hint_json(f, &none);
	fputc('|', f);
	db_hint s = {.kind = DB_HINT_SHIFT, .by = -2};
	db_hint_json(f, &s);
	fclose(f);
	assert_string_equal(buf, "{\"kind\": \"transposed\", \"perm\": [0, 2, 1]}|null|"
	                         "{\"kind\": \"shift\", \"dim\": 0, \"by\": -2}");
	free(buf);
	char t[256];
	db_hint sc = {.kind = DB_HINT_SCALE, .factor = 2.0};
	assert_string_equal(db_hint_text(&sc, true, t, sizeof t), "scale: target ~ 2 x ref");
	assert_string_equal(db_hint_text(&sc, false, t, sizeof t), "scale: target ≈ 2 × ref");
	assert_string_equal(db_hint_text(&none, false, t, sizeof t), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_sign_flip),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_zeros),
		cmocka_unit_test(test_nan_origin),
		cmocka_unit_test(test_names_and_forms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
