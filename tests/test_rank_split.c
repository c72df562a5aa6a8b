/* Ranks across layouts (db_rank_split.h) on a real TP1-vs-TP2 tree:
 * steps_hy_hook_tp1v2 (tests/fixtures/realdump, cases_steps.tsv), decode_pos
 * in L7 self_attn.rotary_emb from the last pass, every rank. Each target
 * shard against its slice of the reference: both bad in the last pass; the
 * routed experts' output is a per-rank partial sum: not separable, with
 * why. */
#include "db_rank_split.h"
#include "db_notes.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define TREE FIXTURES "/realdump/steps_hy_hook_tp1v2"

/* The merged pair of stage at layer in the first (last: true) pass. */
static db_pair *merged(db_compare *c, const char *stage, int layer, bool last)
{
	db_pair *best = NULL;
	for (size_t i = 0; i < c->n_pairs; i++) {
		db_pair *p = &c->pairs[i];
		if (p->merged && p->f.layer == layer && !strcmp(p->f.stage, stage) &&
		    (!best || (last ? p->seq > best->seq : p->seq < best->seq)))
			best = p;
	}
	return best;
}

static void t_split(void **state)
{
	(void)state;
	db_compare *c = NULL;
	db_compare_opts co = {0};
	co.cache_dir = "";
	db_err err = {{0}};
	if (db_compare_open(TREE "/ref", TREE "/target", &co, &c, &err) < 0)
		fail_msg("%s", err.msg);
	db_compare_run(c);
	char why[256];
	db_rank_part *parts = NULL;

	/* the bug's pass: both target shards bad against their slices */
	db_pair *p = merged(c, "self_attn.rotary_emb.0", 7, true);
	assert_non_null(p);
	assert_int_equal(p->n_ref_shards <= 1, 1);
	long n = db_pair_rank_split(c, p, &parts, why, sizeof why, &err);
	if (n < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 2);
	assert_int_equal(parts[0].rank, 0);
	assert_int_equal(parts[1].rank, 1);
	/* the slices tile the reference along the concat dim */
	assert_int_equal(parts[0].lo, 0);
	assert_int_equal(parts[1].lo, parts[0].len);
	assert_true(parts[0].band > DB_BAND_DRIFT);
	assert_true(parts[1].band > DB_BAND_DRIFT);
	free(parts);

	/* before the bug (the first pass): each slice agrees within TP noise */
	p = merged(c, "self_attn.rotary_emb.0", 7, false);
	assert_non_null(p);
	n = db_pair_rank_split(c, p, &parts, why, sizeof why, &err);
	assert_int_equal(n, 2);
	assert_true(parts[0].band <= DB_BAND_DRIFT && parts[0].band >= DB_BAND_OK);
	assert_true(parts[1].band <= DB_BAND_DRIFT && parts[1].band >= DB_BAND_OK);
	free(parts);

	/* a partial sum: not separable, and why */
	p = merged(c, "mlp.experts", 7, true);
	assert_non_null(p);
	parts = (db_rank_part *)1;
	assert_int_equal(db_pair_rank_split(c, p, &parts, why, sizeof why, &err), 0);
	assert_null(parts);
	assert_non_null(strstr(why, "partial sums"));

	/* a note's Data from the ranks view (db_md_ranks) says the same */
	char *md = db_md_ranks(c, (size_t)(p - c->pairs));
	assert_non_null(md);
	assert_non_null(strstr(md, "| (ranks not separable: partial sums: "));
	free(md);
	p = merged(c, "self_attn.rotary_emb.0", 7, true);
	md = db_md_ranks(c, (size_t)(p - c->pairs));
	assert_non_null(md);
	assert_non_null(strstr(md, "| `0 (slice [0, 32) of the whole)` | "));
	assert_non_null(strstr(md, "| `1 (slice [32, 64) of the whole)` | "));
	free(md);
	db_compare_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
