/* The state machine's incremental index (src/bisect/bisect_index.c, issue
 * 26 item 10) against the plain recompute it replaced (kept here, verbatim
 * but for names; its messages follow bisect.c's wording): random candidates,
 * start bounds, steps, undos, resets, replays and new layers, and after
 * each, every derived field and the message must be the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_bisect.h"

static long ref_index(const db_bisect *b, int layer)
{
	for (size_t i = 0; i < b->n_layers; i++)
		if (b->layers[i] == layer)
			return (long)i;
	return -1;
}

static int ceil_log2(size_t n)
{
	int k = 0;
	while (((size_t)1 << k) < n && k < 62)
		k++;
	return k;
}

/* Latest verdict of each candidate, into v (n_layers entries). */
static void latest_verdicts(const db_bisect *b, db_verdict *v)
{
	for (size_t i = 0; i < b->n_layers; i++)
		v[i] = DB_V_NONE;
	for (size_t i = 0; i < b->n_steps; i++) {
		long ix = ref_index(b, b->steps[i].layer);
		if (ix >= 0)
			v[ix] = b->steps[i].verdict;
	}
}

/* The latest step of layer, NULL when none. */
static const db_bisect_step *latest_step(const db_bisect *b, int layer)
{
	for (size_t i = b->n_steps; i-- > 0;)
		if (b->steps[i].layer == layer)
			return &b->steps[i];
	return NULL;
}

/* Appends the skipped layers strictly inside (good, bad) whose skip was
 * (not_dumped) or was not (a judgement) for want of data, as ranges
 * "L9–L11, L13"; returns how many it listed. */
static size_t skipped_ranges(const db_bisect *b, bool not_dumped, char *buf, size_t len)
{
	size_t n = 0, o = strlen(buf);
	long run = -1;          /* index where the current range started */
	for (long i = b->good + 1; i <= b->bad; i++) {
		const db_bisect_step *s = i < b->bad ? latest_step(b, b->layers[i]) : NULL;
		bool in = s && s->verdict == DB_V_SKIP &&
		          (s->auto_verdict == DB_V_NONE) == not_dumped;
		bool joins = in && run >= 0 && b->layers[i] == b->layers[i - 1] + 1;
		if (run >= 0 && !joins) {
			/* close the range run..i-1 */
			char a[32], c[32];
			db_layer_label(b->layers[run], a, sizeof a);
			db_layer_label(b->layers[i - 1], c, sizeof c);
			if (o < len)
				o += (size_t)snprintf(buf + o, len - o, "%s%s%s%s", n ? ", " : "", a,
				                      run < i - 1 ? "–" : "", run < i - 1 ? c : "");
			n++;
			run = -1;
		}
		if (in && run < 0)
			run = i;
	}
	return n;
}

/* ONLY_SKIPPED: the layers the first bad one may be, and why each inside
 * is unknown: "one of L9..L12 (L9–L11 not dumped)". Only a dumped layer
 * skipped by a judgement is called "skipped". */
static void only_skipped_msg(db_bisect *b)
{
	char l1[32], l2[32], nd[96] = "", sk[96] = "";
	size_t n_nd = skipped_ranges(b, true, nd, sizeof nd);
	size_t n_sk = skipped_ranges(b, false, sk, sizeof sk);
	snprintf(b->msg, sizeof b->msg, "one of %s..%s (%s%s%s%s%s)",
	         db_layer_label(b->layers[b->good + 1], l1, sizeof l1),
	         db_layer_label(b->layers[b->bad], l2, sizeof l2),
	         nd, n_nd ? " not dumped" : "", n_nd && n_sk ? "; " : "", sk,
	         n_sk ? " skipped" : "");
}

static void ref_recompute(db_bisect *b)
{
	char l1[32], l2[32];
	b->next = -1;
	b->first_bad = -1;
	b->bad = -1;
	b->good = b->start_good;
	b->n_remaining = 0;
	b->n_skipped_inside = 0;
	b->probes_left = 0;
	b->msg[0] = '\0';
	if (!b->n_layers) {
		b->phase = DB_BP_EMPTY;
		snprintf(b->msg, sizeof b->msg, "no layers to bisect");
		return;
	}
	db_verdict *v = calloc(b->n_layers, sizeof *v);
	if (!v) {
		b->phase = DB_BP_EMPTY;
		snprintf(b->msg, sizeof b->msg, "out of memory");
		return;
	}
	latest_verdicts(b, v);
	for (size_t i = 0; i < b->n_layers; i++) {
		if (v[i] == DB_V_GOOD && (long)i > b->good)
			b->good = (long)i;
		if (v[i] == DB_V_BAD && b->bad < 0)
			b->bad = (long)i;
	}
	if (b->bad >= 0 && b->good >= b->bad) {
		b->phase = DB_BP_CONTRADICTORY;
		if (b->good == b->start_good && v[b->good] != DB_V_GOOD)
			snprintf(b->msg, sizeof b->msg,
			         "contradictory bounds: %s is bad but the start good bound is %s",
			         db_layer_label(b->layers[b->bad], l1, sizeof l1),
			         db_layer_label(b->layers[b->good], l2, sizeof l2));
		else
			snprintf(b->msg, sizeof b->msg,
			         "contradictory bounds: %s is good but %s before it is bad",
			         db_layer_label(b->layers[b->good], l1, sizeof l1),
			         db_layer_label(b->layers[b->bad], l2, sizeof l2));
		free(v);
		return;
	}
	if (b->bad < 0) {
		/* Bound check: the last layer not yet judged, from the end. */
		long cand = -1;
		for (long i = (long)b->n_layers - 1; i > b->good; i--) {
			if (v[i] == DB_V_SKIP)
				continue;
			cand = i;
			break;
		}
		if (cand < 0) {
			b->phase = DB_BP_NO_BAD;
			if (b->good == (long)b->n_layers - 1)
				snprintf(b->msg, sizeof b->msg,
				         "the last layer, %s, is good: nothing went wrong, nothing to bisect",
				         db_layer_label(b->layers[b->good], l1, sizeof l1));
			else
				snprintf(b->msg, sizeof b->msg,
				         "no bad layer: %s good, every later layer skipped",
				         b->good >= 0 ? db_layer_label(b->layers[b->good], l1, sizeof l1)
				                      : "input");
			free(v);
			return;
		}
		b->phase = DB_BP_BOUND;
		b->next = cand;
		for (long i = b->good + 1; i < (long)b->n_layers; i++)
			b->n_remaining += v[i] != DB_V_SKIP;
		/* one probe for the bound, then the search over the rest */
		b->probes_left = 1 + ceil_log2(b->n_remaining);
		snprintf(b->msg, sizeof b->msg, "checking the last layer, %s, first: the search needs a bad end",
		         db_layer_label(b->layers[cand], l1, sizeof l1));
		free(v);
		return;
	}
	long m = (b->good + b->bad) / 2;
	if (b->good + b->bad < 0)
		m = -1; /* floor for good = -1, bad = 0 */
	long best = -1;
	for (long i = b->good + 1; i < b->bad; i++) {
		if (v[i] == DB_V_SKIP) {
			b->n_skipped_inside++;
			continue;
		}
		b->n_remaining++;
		if (best < 0 || labs(i - m) < labs(best - m))
			best = i;
	}
	b->probes_left = ceil_log2(b->n_remaining + 1);
	if (best >= 0) {
		b->phase = DB_BP_SEARCH;
		b->next = best;
		snprintf(b->msg, sizeof b->msg, "between %s (good) and %s (bad): %zu left, ~%d probes",
		         b->good >= 0 ? db_layer_label(b->layers[b->good], l1, sizeof l1) : "input",
		         db_layer_label(b->layers[b->bad], l2, sizeof l2),
		         b->n_remaining, b->probes_left);
	} else if (b->n_skipped_inside) {
		b->phase = DB_BP_ONLY_SKIPPED;
		only_skipped_msg(b);
	} else {
		b->phase = DB_BP_FOUND;
		b->first_bad = b->bad;
		snprintf(b->msg, sizeof b->msg, "first bad layer: %s",
		         db_layer_label(b->layers[b->bad], l1, sizeof l1));
	}
	free(v);
}


/* b's derived fields against the plain recompute's on a copy */
static void same_as_plain(const db_bisect *b, unsigned seed, int op)
{
	db_bisect r = *b;
	ref_recompute(&r);
	if (r.phase != b->phase || r.good != b->good || r.bad != b->bad || r.next != b->next ||
	    r.first_bad != b->first_bad || r.n_remaining != b->n_remaining ||
	    r.n_skipped_inside != b->n_skipped_inside || r.probes_left != b->probes_left ||
	    strcmp(r.msg, b->msg))
		fail_msg("seed %u op %d: phase %d/%d good %ld/%ld bad %ld/%ld next %ld/%ld "
		         "first %ld/%ld rem %zu/%zu skin %zu/%zu probes %d/%d\n'%s'\n'%s'",
		         seed, op, b->phase, r.phase, b->good, r.good, b->bad, r.bad, b->next, r.next,
		         b->first_bad, r.first_bad, b->n_remaining, r.n_remaining,
		         b->n_skipped_inside, r.n_skipped_inside, b->probes_left, r.probes_left,
		         b->msg, r.msg);
	for (size_t i = 0; i < b->n_layers; i++) {
		db_verdict v = DB_V_NONE;
		for (size_t s = 0; s < b->n_steps; s++)
			if (b->steps[s].layer == b->layers[i])
				v = b->steps[s].verdict;
		assert_int_equal(db_bisect_layer_verdict(b, b->layers[i]), v);
	}
}

static void test_random(void **state)
{
	(void)state;
	static const db_verdict vs[] = {DB_V_GOOD, DB_V_BAD, DB_V_SKIP};
	for (unsigned seed = 1; seed <= 400; seed++) {
		srand(seed);
		int n = rand() % 40, layers[64];
		for (int i = 0; i < n; i++)
			layers[i] = rand() % 3 ? i * 2 : rand() % 90;
		if (n && rand() % 4 == 0)
			layers[n - 1] = DB_LAYER_FINAL;
		long good = rand() % 3 ? DB_GOOD_BEFORE : rand() % 60;
		db_bisect b;
		db_err err;
		assert_int_equal(db_bisect_init(&b, layers, (size_t)n, good, &err), 0);
		same_as_plain(&b, seed, -1);
		for (int op = 0; op < 120 && b.n_layers; op++) {
			int r = rand() % 100;
			if (r < 70) {
				/* mostly the proposal, as a bisect does; else any layer */
				long ix = b.next >= 0 && rand() % 3 ? b.next : rand() % (long)b.n_layers;
				db_bisect_step s = {b.layers[ix], vs[rand() % 3], DB_V_NONE, true, 0, 0,
				                    DB_BAND_NONE, 0};
				if (s.verdict == DB_V_SKIP && rand() % 2)
					s.auto_verdict = DB_V_BAD;
				assert_int_equal(db_bisect_record(&b, &s, &err), 0);
			} else if (r < 82) {
				db_bisect_undo(&b);
			} else if (r < 85) {
				db_bisect_reset(&b);
			} else if (r < 92) {
				/* the same log replayed into a fresh state */
				db_bisect c;
				assert_int_equal(db_bisect_init(&c, b.layers, b.n_layers,
				                                b.start_good >= 0 ? b.layers[b.start_good]
				                                                  : DB_GOOD_BEFORE, &err), 0);
				size_t bad;
				assert_int_equal(db_bisect_replay(&c, b.steps, b.n_steps, &bad, &err), 0);
				same_as_plain(&c, seed, op);
				assert_int_equal(c.phase, b.phase);
				assert_int_equal(c.next, b.next);
				db_bisect_free(&c);
			} else {
				int more[3] = {rand() % 100, rand() % 100, rand() % 100};
				assert_int_equal(db_bisect_add_layers(&b, more, 3, &err), 0);
			}
			same_as_plain(&b, seed, op);
		}
		db_bisect_free(&b);
	}
}

/* A replay stops at the first step on no candidate, naming it. */
static void test_replay_bad_step(void **state)
{
	(void)state;
	int layers[3] = {0, 1, 2};
	db_bisect b;
	db_err err;
	assert_int_equal(db_bisect_init(&b, layers, 3, DB_GOOD_BEFORE, &err), 0);
	db_bisect_step s[3] = {{2, DB_V_BAD, DB_V_BAD, false, 0, 0, DB_BAND_BUG, 0},
	                       {7, DB_V_GOOD, DB_V_GOOD, false, 0, 0, DB_BAND_OK, 0},
	                       {0, DB_V_GOOD, DB_V_GOOD, false, 0, 0, DB_BAND_OK, 0}};
	size_t bad = 99;
	assert_int_equal(db_bisect_replay(&b, s, 3, &bad, &err), -1);
	assert_int_equal(bad, 1);
	assert_non_null(strstr(err.msg, "L7 is not a bisect candidate"));
	assert_int_equal(b.n_steps, 1);
	same_as_plain(&b, 0, 0);
	db_bisect_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_replay_bad_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
