/* The bisect state machine (pure): every verdict assignment on small layer
 * sets, skips at the bounds, undo/reset, non-monotone data, all good, all
 * bad, contradictory bounds; and the predicate. */
#include "db_bisect.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void step(db_bisect *b, int layer, db_verdict v)
{
	db_bisect_step s = {0};
	db_err err;
	s.layer = layer;
	s.verdict = v;
	s.auto_verdict = v;
	s.cos = s.rel = NAN;
	assert_int_equal(db_bisect_record(b, &s, &err), 0);
}

/* Answer every proposal from truth[] (indexed by candidate) until done;
 * returns the number of steps. */
static size_t drive(db_bisect *b, const db_verdict *truth)
{
	size_t n = 0;
	while (!db_bisect_done(b)) {
		assert_true(b->next >= 0 && (size_t)b->next < b->n_layers);
		/* a proposal is never a layer already judged */
		assert_int_equal(db_bisect_layer_verdict(b, b->layers[b->next]), DB_V_NONE);
		step(b, b->layers[b->next], truth[b->next]);
		n++;
		assert_true(n <= b->n_layers);
	}
	return n;
}

static int ceil_log2(size_t n)
{
	int k = 0;
	while (((size_t)1 << k) < n)
		k++;
	return k;
}

static void init_n(db_bisect *b, size_t n, long good)
{
	int layers[16];
	db_err err;
	for (size_t i = 0; i < n; i++)
		layers[i] = (int)i * 2 + 1;     /* 1, 3, 5, ...: labels are not indices */
	assert_int_equal(db_bisect_init(b, layers, n, good, &err), 0);
}

/* Monotone truth (good then bad) for every boundary: finds it, in at most
 * 1 + ⌈log2 n⌉ probes, never more than the first estimate. */
static void test_monotone_all_boundaries(void **state)
{
	(void)state;
	for (size_t n = 1; n <= 12; n++) {
		for (size_t k = 0; k <= n; k++) {
			db_verdict truth[16];
			for (size_t i = 0; i < n; i++)
				truth[i] = i < k ? DB_V_GOOD : DB_V_BAD;
			db_bisect b;
			init_n(&b, n, DB_GOOD_BEFORE);
			int estimate = b.probes_left;
			size_t steps = drive(&b, truth);
			assert_true(steps <= (size_t)(1 + ceil_log2(n)));
			assert_true(steps <= (size_t)estimate);
			if (k == n) {
				assert_int_equal(b.phase, DB_BP_NO_BAD);
				assert_non_null(strstr(b.msg, "nothing to bisect"));
			} else {
				assert_int_equal(b.phase, DB_BP_FOUND);
				assert_int_equal(b.first_bad, (long)k);
				assert_int_equal(b.probes_left, 0);
			}
			db_bisect_free(&b);
		}
	}
}

/* Every assignment of good/bad/skip to up to 6 layers, monotone or not:
 * the run terminates, never contradicts itself, and the outcome is
 * consistent with the truth it was fed. */
static void test_every_verdict_sequence(void **state)
{
	(void)state;
	for (size_t n = 1; n <= 6; n++) {
		size_t total = 1;
		for (size_t i = 0; i < n; i++)
			total *= 3;
		for (size_t code = 0; code < total; code++) {
			db_verdict truth[8];
			size_t c = code;
			for (size_t i = 0; i < n; i++, c /= 3)
				truth[i] = (db_verdict)(DB_V_GOOD + c % 3);
			db_bisect b;
			init_n(&b, n, DB_GOOD_BEFORE);
			drive(&b, truth);
			switch (b.phase) {
			case DB_BP_FOUND:
				assert_int_equal(truth[b.first_bad], DB_V_BAD);
				/* the candidate before it is good, or it is the first */
				assert_true(b.first_bad == 0 || truth[b.first_bad - 1] == DB_V_GOOD);
				assert_int_equal(b.good, b.first_bad - 1);
				break;
			case DB_BP_ONLY_SKIPPED:
				assert_int_equal(truth[b.bad], DB_V_BAD);
				assert_true(b.n_skipped_inside > 0);
				assert_int_equal(b.n_remaining, 0);
				for (long i = b.good + 1; i < b.bad; i++)
					assert_int_equal(truth[i], DB_V_SKIP);
				assert_true(b.good < 0 || truth[b.good] == DB_V_GOOD);
				assert_non_null(strstr(b.msg, " skipped)"));
				break;
			case DB_BP_NO_BAD:
				/* no bad verdict was ever given: the bound walk met good
				 * (or only skips) from the end */
				for (size_t i = 0; i < b.n_steps; i++)
					assert_int_not_equal(b.steps[i].verdict, DB_V_BAD);
				for (long i = (long)n - 1; i > b.good; i--)
					assert_int_equal(truth[i], DB_V_SKIP);
				break;
			default:
				fail_msg("n=%zu code=%zu: unexpected phase %s", n, code,
				         db_bisect_phase_name(b.phase));
			}
			db_bisect_free(&b);
		}
	}
}

static void test_all_good_all_bad(void **state)
{
	(void)state;
	db_verdict good[8], bad[8];
	for (int i = 0; i < 8; i++) {
		good[i] = DB_V_GOOD;
		bad[i] = DB_V_BAD;
	}
	db_bisect b;
	init_n(&b, 8, DB_GOOD_BEFORE);
	assert_int_equal(drive(&b, good), 1);   /* the bound alone says it */
	assert_int_equal(b.phase, DB_BP_NO_BAD);
	assert_string_equal(b.msg, "the last layer, L15, is good: nothing went wrong, nothing to bisect");
	db_bisect_free(&b);

	init_n(&b, 8, DB_GOOD_BEFORE);
	assert_int_equal(drive(&b, bad), 4);    /* bound + ⌈log2 8⌉ */
	assert_int_equal(b.phase, DB_BP_FOUND);
	assert_int_equal(b.layers[b.first_bad], 1);
	assert_int_equal(b.good, DB_GOOD_BEFORE);
	assert_string_equal(b.msg, "first bad layer: L1");
	db_bisect_free(&b);
}

/* The proposals of a run on 0..7 with the bug at 5: last layer, then the
 * midpoints of (input, 7), (3, 7), (5's neighbours). */
static void test_proposal_order(void **state)
{
	(void)state;
	int layers[8] = {7, 6, 5, 4, 3, 2, 1, 0};   /* sorted by init */
	db_err err;
	db_bisect b;
	assert_int_equal(db_bisect_init(&b, layers, 8, DB_GOOD_BEFORE, &err), 0);
	assert_int_equal(b.phase, DB_BP_BOUND);
	assert_int_equal(b.layers[b.next], 7);
	assert_int_equal(b.probes_left, 4);
	step(&b, 7, DB_V_BAD);
	assert_int_equal(b.phase, DB_BP_SEARCH);
	assert_int_equal(b.layers[b.next], 3);
	assert_int_equal(b.n_remaining, 7);
	assert_int_equal(b.probes_left, 3);
	step(&b, 3, DB_V_GOOD);
	assert_int_equal(b.layers[b.next], 5);
	step(&b, 5, DB_V_BAD);
	assert_int_equal(b.layers[b.next], 4);
	assert_int_equal(b.probes_left, 1);
	step(&b, 4, DB_V_GOOD);
	assert_int_equal(b.phase, DB_BP_FOUND);
	assert_int_equal(b.layers[b.first_bad], 5);
	db_bisect_free(&b);
}

static void test_skip_at_bounds(void **state)
{
	(void)state;
	db_bisect b;
	db_err err;
	int layers[4] = {0, 1, 2, 3};
	/* the last layer cannot be judged: the bound walks down */
	assert_int_equal(db_bisect_init(&b, layers, 4, DB_GOOD_BEFORE, &err), 0);
	step(&b, 3, DB_V_SKIP);
	assert_int_equal(b.phase, DB_BP_BOUND);
	assert_int_equal(b.layers[b.next], 2);
	step(&b, 2, DB_V_BAD);
	assert_int_equal(b.phase, DB_BP_SEARCH);
	assert_int_equal(b.layers[b.bad], 2);
	/* the layer right after the good bound skipped, then its neighbour
	 * good: only the skipped one is left before the bad bound */
	assert_int_equal(b.layers[b.next], 0);
	step(&b, 0, DB_V_SKIP);
	assert_int_equal(b.layers[b.next], 1);
	step(&b, 1, DB_V_BAD);
	assert_int_equal(b.phase, DB_BP_ONLY_SKIPPED);
	assert_string_equal(b.msg, "one of L0..L1 (L0 skipped)");
	assert_int_equal(b.n_skipped_inside, 1);
	/* every layer skipped but the first, which is good: nothing bad */
	db_bisect_reset(&b);
	step(&b, 3, DB_V_SKIP);
	step(&b, 2, DB_V_SKIP);
	step(&b, 1, DB_V_SKIP);
	assert_int_equal(b.layers[b.next], 0);
	step(&b, 0, DB_V_GOOD);
	assert_int_equal(b.phase, DB_BP_NO_BAD);
	assert_string_equal(b.msg, "no bad layer: L0 good, every later layer skipped");
	db_bisect_free(&b);
}

static void test_undo_reset(void **state)
{
	(void)state;
	db_bisect b;
	init_n(&b, 10, DB_GOOD_BEFORE);
	assert_false(db_bisect_undo(&b));
	db_bisect snap[8];
	size_t k = 0;
	db_verdict truth[10];
	for (int i = 0; i < 10; i++)
		truth[i] = i < 6 ? DB_V_GOOD : DB_V_BAD;
	while (!db_bisect_done(&b)) {
		snap[k++] = b;                  /* derived fields by value */
		step(&b, b.layers[b.next], truth[b.next]);
	}
	assert_int_equal(b.phase, DB_BP_FOUND);
	assert_int_equal(b.layers[b.first_bad], 13);
	while (k > 0) {
		assert_true(db_bisect_undo(&b));
		k--;
		assert_int_equal(b.phase, snap[k].phase);
		assert_int_equal(b.next, snap[k].next);
		assert_int_equal(b.good, snap[k].good);
		assert_int_equal(b.bad, snap[k].bad);
		assert_int_equal(b.probes_left, snap[k].probes_left);
		assert_string_equal(b.msg, snap[k].msg);
	}
	assert_int_equal(b.n_steps, 0);
	step(&b, 19, DB_V_BAD);
	step(&b, 9, DB_V_BAD);
	db_bisect_reset(&b);
	assert_int_equal(b.n_steps, 0);
	assert_int_equal(b.phase, DB_BP_BOUND);
	assert_int_equal(b.layers[b.next], 19);
	db_bisect_free(&b);
}

/* Good, bad, good, bad...: the search still ends on a good->bad edge. */
static void test_non_monotone(void **state)
{
	(void)state;
	db_verdict truth[9] = {DB_V_GOOD, DB_V_BAD, DB_V_GOOD, DB_V_GOOD, DB_V_BAD,
	                       DB_V_GOOD, DB_V_BAD, DB_V_GOOD, DB_V_BAD};
	db_bisect b;
	init_n(&b, 9, DB_GOOD_BEFORE);
	drive(&b, truth);
	assert_int_equal(b.phase, DB_BP_FOUND);
	assert_int_equal(truth[b.first_bad], DB_V_BAD);
	assert_int_equal(truth[b.first_bad - 1], DB_V_GOOD);
	db_bisect_free(&b);
	/* the last layer good although earlier ones are bad: said plainly */
	db_verdict t2[4] = {DB_V_BAD, DB_V_BAD, DB_V_BAD, DB_V_GOOD};
	init_n(&b, 4, DB_GOOD_BEFORE);
	drive(&b, t2);
	assert_int_equal(b.phase, DB_BP_NO_BAD);
	assert_int_equal(b.n_steps, 1);
	db_bisect_free(&b);
}

static void test_contradictory(void **state)
{
	(void)state;
	db_bisect b;
	db_err err;
	int layers[6] = {0, 1, 2, 3, 4, 5};
	/* start good bound at L3, then L2 (before it) found bad */
	assert_int_equal(db_bisect_init(&b, layers, 6, 3, &err), 0);
	assert_int_equal(b.layers[b.good], 3);
	step(&b, 2, DB_V_BAD);
	assert_int_equal(b.phase, DB_BP_CONTRADICTORY);
	assert_true(db_bisect_done(&b));
	assert_string_equal(b.msg, "contradictory bounds: L2 is bad but the start good bound is L3");
	db_bisect_reset(&b);
	/* explicit good after an explicit bad */
	step(&b, 1, DB_V_BAD);
	step(&b, 4, DB_V_GOOD);
	assert_int_equal(b.phase, DB_BP_CONTRADICTORY);
	assert_string_equal(b.msg, "contradictory bounds: L4 is good but L1 before it is bad");
	assert_true(db_bisect_undo(&b));
	assert_int_equal(b.phase, DB_BP_CONTRADICTORY);   /* L1 bad, start good L3 */
	db_bisect_free(&b);
	/* a good layer given that is not a candidate: the one below counts */
	int sparse[3] = {0, 4, 8};
	assert_int_equal(db_bisect_init(&b, sparse, 3, 6, &err), 0);
	assert_int_equal(b.layers[b.good], 4);
	assert_int_equal(b.layers[b.next], 8);
	db_bisect_free(&b);
}

static void test_record_errors_and_init(void **state)
{
	(void)state;
	db_bisect b;
	db_err err;
	int layers[7] = {5, 1, 3, 1, DB_LAYER_FINAL, 3, 0};
	assert_int_equal(db_bisect_init(&b, layers, 7, DB_GOOD_BEFORE, &err), 0);
	assert_int_equal(b.n_layers, 5);
	assert_int_equal(b.layers[0], 0);
	assert_int_equal(b.layers[4], DB_LAYER_FINAL);
	assert_int_equal(b.layers[b.next], DB_LAYER_FINAL);
	db_bisect_step s = {0};
	s.layer = 2;
	s.verdict = DB_V_BAD;
	assert_int_equal(db_bisect_record(&b, &s, &err), -1);
	assert_string_equal(err.msg, "L2 is not a bisect candidate");
	s.layer = 3;
	s.verdict = DB_V_NONE;
	assert_int_equal(db_bisect_record(&b, &s, &err), -1);
	assert_int_equal(b.n_steps, 0);
	char buf[32];
	assert_string_equal(db_layer_label(DB_LAYER_FINAL, buf, sizeof buf), "final");
	assert_string_equal(db_layer_label(-1, buf, sizeof buf), "input");
	db_bisect_free(&b);
	assert_int_equal(db_bisect_init(&b, NULL, 0, DB_GOOD_BEFORE, &err), 0);
	assert_int_equal(b.phase, DB_BP_EMPTY);
	assert_true(db_bisect_done(&b));
	db_bisect_free(&b);
}

static void test_predicate(void **state)
{
	(void)state;
	db_predicate p;
	db_err err;
	db_metrics m = {0};
	char buf[128];
	db_predicate_default(&p);
	assert_int_equal(db_predicate_eval(&p, &m, DB_BAND_OK), DB_V_GOOD);
	assert_int_equal(db_predicate_eval(&p, &m, DB_BAND_DRIFT), DB_V_BAD);
	assert_int_equal(db_predicate_eval(&p, &m, DB_BAND_NONE), DB_V_NONE);
	assert_string_equal(db_predicate_str(&p, buf, sizeof buf), "band:ok");
	assert_int_equal(db_predicate_parse("band:drift", &p, &err), 0);
	assert_int_equal(db_predicate_eval(&p, &m, DB_BAND_DRIFT), DB_V_GOOD);
	assert_int_equal(db_predicate_eval(&p, &m, DB_BAND_ALGO), DB_V_BAD);
	assert_int_equal(db_predicate_parse("cos<0.99,rel>0.1", &p, &err), 0);
	m.cos = 0.995;
	m.rel = 0.05;
	assert_int_equal(db_predicate_eval(&p, &m, DB_BAND_DRIFT), DB_V_GOOD);
	m.rel = 0.2;
	assert_int_equal(db_predicate_eval(&p, &m, DB_BAND_DRIFT), DB_V_BAD);
	m.rel = 0.05;
	m.cos = 0.98;
	assert_int_equal(db_predicate_eval(&p, &m, DB_BAND_DRIFT), DB_V_BAD);
	m.cos = NAN;
	assert_int_equal(db_predicate_eval(&p, &m, DB_BAND_BUG), DB_V_BAD);
	/* round trip through the text form */
	db_predicate q;
	assert_int_equal(db_predicate_parse(db_predicate_str(&p, buf, sizeof buf), &q, &err), 0);
	assert_int_equal(q.kind, DB_PRED_THRESH);
	assert_true(q.cos_min == 0.99 && q.rel_max == 0.1);
	assert_int_equal(db_predicate_parse("rel>0.3", &q, &err), 0);
	assert_true(isnan(q.cos_min));
	assert_int_equal(db_predicate_parse("band:awful", &q, &err), -1);
	assert_non_null(strstr(err.msg, "unknown band"));
	assert_int_equal(db_predicate_parse("cos<", &q, &err), -1);
	assert_int_equal(db_predicate_parse("cos<0.9;rel>1", &q, &err), -1);
	assert_int_equal(db_predicate_parse("", &q, &err), -1);
	db_verdict v;
	assert_true(db_verdict_parse("skip", &v));
	assert_int_equal(v, DB_V_SKIP);
	assert_false(db_verdict_parse("none", &v));
	assert_false(db_verdict_parse("maybe", &v));
}

/* The runner over a real comparison (the demo fixture: L7 bad on rank 1):
 * candidates, probes, a user override and the end analysis. */
static void test_run_on_fixture(void **state)
{
	(void)state;
	db_compare *c = NULL;
	db_compare_opts co = {0};
	co.cache_dir = "";
	db_err err;
	if (db_compare_open(FIXTURES "/demo/ref", FIXTURES "/demo/target", &co, &c, &err) < 0)
		fail_msg("%s", err.msg);
	db_bisect_opts o;
	db_bisect_opts_default(&o);
	db_bisect_run *r = NULL;
	if (db_bisect_run_open(c, &o, &r, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(r->stage, "hidden_out");
	assert_int_equal(r->sm.n_layers, 13);           /* L0..L11 + final */
	assert_int_equal(r->sm.layers[12], DB_LAYER_FINAL);
	assert_non_null(r->final_stage);
	db_probe pr;
	db_bisect_probe(r, 6, &pr);
	assert_true(pr.dumped);
	assert_int_equal(pr.auto_verdict, DB_V_GOOD);
	db_bisect_probe(r, 7, &pr);
	assert_int_equal(pr.auto_verdict, DB_V_BAD);
	assert_int_equal(pr.band, DB_BAND_BUG);
	assert_true(fabs(pr.m.cos - 0.85898995) < 1e-7);  /* the worst rank */
	db_bisect_probe(r, 99, &pr);
	assert_false(pr.dumped);
	assert_int_equal(pr.auto_verdict, DB_V_NONE);
	/* the user overrides L7 to good: the bisect goes on past it */
	assert_int_equal(db_bisect_user_step(r, 7, DB_V_GOOD, &err), 0);
	assert_true(r->sm.steps[0].by_user);
	assert_int_equal(r->sm.steps[0].auto_verdict, DB_V_BAD);
	assert_int_equal(db_bisect_user_step(r, DB_LAYER_FINAL, DB_V_BAD, &err), 0);
	assert_true(r->sm.steps[1].by_user);       /* agrees with the data, still typed (issue 34) */
	assert_int_equal(db_bisect_run_auto(r, NULL, NULL, &err), 0);
	assert_int_equal(r->sm.phase, DB_BP_FOUND);
	assert_int_equal(r->sm.layers[r->sm.first_bad], 8);
	/* undo to the start and let the data decide */
	while (db_bisect_undo(&r->sm))
		;
	assert_int_equal(db_bisect_run_auto(r, NULL, NULL, &err), 0);
	assert_int_equal(r->sm.layers[r->sm.first_bad], 7);
	db_bisect_result res;
	assert_int_equal(db_bisect_analyze(r, &res, &err), 0);
	assert_int_equal(res.kind, DB_KIND_SUDDEN);
	assert_true(res.has_first_bad);
	assert_int_equal(res.first_bad_layer, 7);
	assert_string_equal(res.first_bad_stage, "attn_out");
	assert_string_equal(res.first_bad_substage, "attn.o_proj");
	assert_int_equal(res.n_bad_ranks, 1);
	assert_int_equal(res.bad_ranks[0], 1);
	assert_int_equal(res.standout_layer, 7);
	assert_true(res.n_walk >= 5);
	db_bisect_result_free(&res);
	db_bisect_run_free(r);
	/* a stage nobody dumped */
	o.stage = "nosuch";
	assert_int_equal(db_bisect_run_open(c, &o, &r, &err), -1);
	assert_non_null(strstr(err.msg, "probe stage 'nosuch' is not dumped"));
	db_compare_free(c);
	/* sparse dumps: only the dumped layers, or all with fill_gaps */
	if (db_compare_open(FIXTURES "/bisect/sparse/ref", FIXTURES "/bisect/sparse/target", &co, &c,
	                    &err) < 0)
		fail_msg("%s", err.msg);
	o.stage = NULL;
	o.fill_gaps = false;
	assert_int_equal(db_bisect_run_open(c, &o, &r, &err), 0);
	assert_int_equal(r->sm.n_layers, 6);            /* 0 4 8 12 15 final */
	db_bisect_run_free(r);
	db_bisect_opts_default(&o);                     /* fills the gaps */
	assert_int_equal(db_bisect_run_open(c, &o, &r, &err), 0);
	assert_int_equal(r->sm.n_layers, 17);
	/* the bug is after L8 (good) and at or before L12 (bad), the layers
	 * between never dumped: never "found L12" */
	assert_int_equal(db_bisect_run_auto(r, NULL, NULL, &err), 0);
	assert_int_equal(r->sm.phase, DB_BP_ONLY_SKIPPED);
	assert_string_equal(r->sm.msg, "one of L9..L12 (L9–L11 not dumped)");
	db_bisect_result res2;
	assert_int_equal(db_bisect_analyze(r, &res2, &err), 0);
	assert_int_equal(res2.kind, DB_KIND_INCONCLUSIVE);
	assert_false(res2.has_first_bad);
	assert_string_equal(res2.summary, "inconclusive: one of L9..L12 (L9–L11 not dumped)");
	db_bisect_result_free(&res2);
	/* a dumped layer skipped by hand is "skipped", not "not dumped" */
	db_bisect_reset(&r->sm);
	step(&r->sm, DB_LAYER_FINAL, DB_V_BAD);
	step(&r->sm, 8, DB_V_GOOD);
	step(&r->sm, 12, DB_V_BAD);
	db_bisect_step s = {.layer = 10, .verdict = DB_V_SKIP, .auto_verdict = DB_V_NONE};
	assert_int_equal(db_bisect_record(&r->sm, &s, &err), 0);
	s.layer = 9;
	assert_int_equal(db_bisect_record(&r->sm, &s, &err), 0);
	step(&r->sm, 11, DB_V_SKIP);
	assert_int_equal(r->sm.phase, DB_BP_ONLY_SKIPPED);
	assert_string_equal(r->sm.msg, "one of L9..L12 (L9–L10 not dumped; L11 skipped)");
	db_bisect_run_free(r);
	db_compare_free(c);
}

/* A rescan that brings new layers (dumped since the bisect began) makes
 * them candidates; the steps stay. The workbench's <C-r> and --run both
 * rescan through db_bisect_rescan. */
static void test_rescan_adds_layers(void **state)
{
	(void)state;
	char dir[] = "/tmp/db_rescan_XXXXXX", cmd[512];
	assert_non_null(mkdtemp(dir));
	/* the demo with layers 9..11 not dumped yet */
	snprintf(cmd, sizeof cmd, "cp -r '%s/demo/ref' '%s/demo/target' '%s/' && "
	         "find '%s' -name '*layer_id=9.pt' -delete -o -name '*layer_id=1[01].pt' -delete",
	         FIXTURES, FIXTURES, dir, dir);
	assert_int_equal(system(cmd), 0);
	char ref[64], tgt[64];
	snprintf(ref, sizeof ref, "%s/ref", dir);
	snprintf(tgt, sizeof tgt, "%s/target", dir);
	db_compare *c = NULL;
	db_compare_opts co = {0};
	co.cache_dir = "";
	db_err err;
	if (db_compare_open(ref, tgt, &co, &c, &err) < 0)
		fail_msg("%s", err.msg);
	db_bisect_opts o;
	db_bisect_opts_default(&o);
	db_bisect_run *r = NULL;
	if (db_bisect_run_open(c, &o, &r, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(r->sm.n_layers, 10);           /* L0..L8 + final */
	assert_int_equal(db_bisect_user_step(r, DB_LAYER_FINAL, DB_V_BAD, &err), 0);
	assert_int_equal(db_bisect_user_step(r, 6, DB_V_GOOD, &err), 0);
	/* the missing layers get dumped */
	snprintf(cmd, sizeof cmd, "cp -r '%s/demo/ref' '%s/demo/target' '%s/'", FIXTURES,
	         FIXTURES, dir);
	assert_int_equal(system(cmd), 0);
	if (db_bisect_rescan(r, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(r->sm.n_layers, 13);           /* L0..L11 + final */
	assert_int_equal(r->sm.layers[11], 11);
	assert_int_equal(r->sm.n_steps, 2);
	assert_int_equal(r->sm.layers[r->sm.good], 6);
	assert_int_equal(r->sm.layers[r->sm.bad], DB_LAYER_FINAL);
	assert_int_equal(r->sm.n_remaining, 5);         /* L7..L11 */
	assert_int_equal(db_bisect_run_auto(r, NULL, NULL, &err), 0);
	assert_int_equal(r->sm.phase, DB_BP_FOUND);
	assert_int_equal(r->sm.layers[r->sm.first_bad], 7);
	db_bisect_run_free(r);
	db_compare_free(c);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monotone_all_boundaries),
		cmocka_unit_test(test_every_verdict_sequence),
		cmocka_unit_test(test_all_good_all_bad),
		cmocka_unit_test(test_proposal_order),
		cmocka_unit_test(test_skip_at_bounds),
		cmocka_unit_test(test_undo_reset),
		cmocka_unit_test(test_non_monotone),
		cmocka_unit_test(test_contradictory),
		cmocka_unit_test(test_record_errors_and_init),
		cmocka_unit_test(test_predicate),
		cmocka_unit_test(test_run_on_fixture),
		cmocka_unit_test(test_rescan_adds_layers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
