/* Parallel layouts from dump metadata and profiles: meta['dims'] strings
 * of SGLang dumper v2 (parsed, and read from real files of
 * fixtures/realdump_mixed, whose strings torch.load shows), fused shard
 * rules in profiles, and the pairs a TP-1-vs-TP-2 comparison builds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_compare.h"
#include "db_profile.h"
#include "layout/meta_dims.h"

static void test_dims_parse(void **st)
{
	(void)st;
	db_dims d;
	db_dims_parse("t attn_h[attn_tp] # tp:replicated", &d);
	assert_int_equal(d.kind, DB_DIMS_SPLIT);
	assert_int_equal(d.dim, 1);
	assert_string_equal(d.group, "attn_tp");
	db_dims_parse("t h[attn_tp:partial] # tp:replicated", &d);
	assert_int_equal(d.kind, DB_DIMS_PARTIAL);
	assert_string_equal(d.group, "attn_tp");
	db_dims_parse("t h[moe_ep:partial]", &d);
	assert_int_equal(d.kind, DB_DIMS_PARTIAL);
	assert_string_equal(d.group, "moe_ep");
	db_dims_parse("b s[sp] h", &d);
	assert_int_equal(d.kind, DB_DIMS_SPLIT);
	assert_int_equal(d.dim, 1);
	db_dims_parse("t h # tp:replicated", &d);
	assert_int_equal(d.kind, DB_DIMS_REPLICATED);
	db_dims_parse("", &d);
	assert_int_equal(d.kind, DB_DIMS_REPLICATED);
	/* the comment's brackets are not dims */
	db_dims_parse("t h # x[tp]", &d);
	assert_int_equal(d.kind, DB_DIMS_REPLICATED);
	/* not followed: two sharded dims, an unknown qualifier, an open bracket */
	db_dims_parse("t[sp] h[tp]", &d);
	assert_int_equal(d.kind, DB_DIMS_UNKNOWN);
	db_dims_parse("t h[tp:interleaved]", &d);
	assert_int_equal(d.kind, DB_DIMS_UNKNOWN);
	db_dims_parse("t h[tp", &d);
	assert_int_equal(d.kind, DB_DIMS_UNKNOWN);
	/* the token dim, for token alignment (issue 35): "t", also sharded */
	assert_int_equal(db_dims_token_dim("t h # tp:replicated"), 0);
	assert_int_equal(db_dims_token_dim("t[sp] 1 h # tp:replicated"), 0);
	assert_int_equal(db_dims_token_dim("1 t (num_heads*head_dim)[tp]"), 1);
	assert_int_equal(db_dims_token_dim("b s[sp] h"), -1);
	assert_int_equal(db_dims_token_dim("h # t"), -1);
	assert_int_equal(db_dims_token_dim("tok h"), -1);
	db_shard_rule r;
	db_dims_parse("t attn_h[attn_tp]", &d);
	assert_true(db_dims_rule(&d, &r));
	assert_int_equal(r.how, DB_UNSHARD_CONCAT);
	assert_int_equal(r.dim, 1);
	db_dims_parse("t h[moe_ep:partial]", &d);
	assert_true(db_dims_rule(&d, &r));
	assert_int_equal(r.how, DB_UNSHARD_SUM);
	db_dims_parse("t h", &d);
	assert_false(db_dims_rule(&d, &r));
}

static char *one_file(const char *pattern)
{
	glob_t g;
	char pat[1024];
	snprintf(pat, sizeof pat, "%s/realdump_mixed/%s", FIXTURES, pattern);
	assert_int_equal(glob(pat, 0, NULL, &g), 0);
	assert_int_equal(g.gl_pathc, 1);
	char *s = strdup(g.gl_pathv[0]);
	globfree(&g);
	return s;
}

static void expect_dims(const char *pattern, int rc, const char *want)
{
	char *f = one_file(pattern);
	char buf[256];
	assert_int_equal(db_meta_dims_read(f, buf, sizeof buf, NULL), rc);
	assert_string_equal(buf, want);
	free(f);
}

static void test_meta_dims_read(void **st)
{
	(void)st;
	/* the strings torch.load(f)["meta"]["dims"] gives for these files */
	expect_dims("v2/target/dump/*name=attn_pre_o_proj___*layer_id=1___*tp_rank=1.pt", 1,
	            "t attn_h[attn_tp] # tp:replicated");
	expect_dims("v2/target/dump/*name=attn_output___*layer_id=1___*tp_rank=1.pt", 1,
	            "t h # tp:replicated");
	expect_dims("hybrid/target/dump/*name=attn_output___*layer_id=3___*tp_rank=1.pt", 1,
	            "t h[attn_tp:partial] # tp:replicated");
	expect_dims("hybrid/target/dump/*name=moe_expert_output___*layer_id=2___*tp_rank=1.pt", 1,
	            "t h[moe_ep:partial] # tp:replicated");
	/* Megatron sequence parallel: meta megatron_parallel_info.sp_size, no dims */
	char *f = one_file("miles/target/fwd_only/rollout_0/step=0___rank=1___*layers.2.mlp.output___*");
	char buf2[64];
	db_meta_par par;
	assert_int_equal(db_meta_dims_read(f, buf2, sizeof buf2, &par), 0);
	assert_int_equal(par.sp_size, 2);
	assert_int_equal(par.group_size, 0);
	free(f);
	f = one_file("miles/ref/fwd_only/rollout_0/step=0___rank=0___*layers.2.mlp.output___*");
	assert_int_equal(db_meta_dims_read(f, buf2, sizeof buf2, &par), 0);
	assert_int_equal(par.sp_size, 1);
	free(f);
	/* the bracketed group's size from sglang_parallel_info (attn_tp_size,
	 * moe_ep_size: 2 in the hybrid target, 1 in the TP-1 reference) */
	f = one_file("hybrid/target/dump/*name=moe_expert_output___*layer_id=2___*tp_rank=0.pt");
	assert_int_equal(db_meta_dims_read(f, buf2, sizeof buf2, &par), 1);
	assert_int_equal(par.group_size, 2);
	free(f);
	f = one_file("hybrid/ref/dump/*name=moe_expert_output___*layer_id=2___*tp_rank=0.pt");
	assert_int_equal(db_meta_dims_read(f, buf2, sizeof buf2, &par), 1);
	assert_int_equal(par.group_size, 1);
	free(f);
	/* a hook dict has no meta */
	expect_dims("hook/target/TP1_PP0_Rank1_pid1000/Pass00001.pt", 0, "");
	char buf[16];
	assert_int_equal(db_meta_dims_read(FIXTURES "/realdump_mixed/nonexistent.pt", buf, sizeof buf, NULL), -1);
	/* not a zip */
	assert_int_equal(db_meta_dims_read(FIXTURES "/realdump_mixed/gen.sh", buf, sizeof buf, NULL), 0);
}

static void test_fused_rule(void **st)
{
	(void)st;
	const char *y = "name: f\npath: '(?<stage>.*)'\nshard:\n"
	                "  - {stage: '^qkv$', dim: -1, how: fused, parts: [2, 1, 1]}\n"
	                "  - {stage: '^gu$', how: fused}\n";
	db_profile *p = NULL;
	db_err err = {{0}};
	assert_int_equal(db_profile_parse(y, strlen(y), "t.yaml", &p, &err), 0);
	const db_shard_rule *r = db_profile_shard(p, "qkv");
	assert_non_null(r);
	assert_int_equal(r->how, DB_UNSHARD_FUSED);
	assert_int_equal(r->dim, -1);
	assert_int_equal(r->n_parts, 3);
	assert_int_equal(r->parts[0], 2);
	assert_int_equal(r->parts[2], 1);
	r = db_profile_shard(p, "gu");
	assert_int_equal(r->how, DB_UNSHARD_FUSED);
	assert_int_equal(r->n_parts, 0);
	db_profile_free(p);
	const char *bad[] = {
		"name: f\npath: x\nshard:\n  - {stage: a, how: concat, parts: [1, 1]}\n",
		"name: f\npath: x\nshard:\n  - {stage: a, how: fused, parts: [1]}\n",
		"name: f\npath: x\nshard:\n  - {stage: a, how: fused, parts: [1, 0]}\n",
		"name: f\npath: x\nshard:\n  - {stage: a, how: fused, parts: 2}\n",
	};
	const char *why[] = {"for how: fused only", "at least 2 parts", "shard.parts", "shard.parts"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		p = NULL;
		memset(&err, 0, sizeof err);
		assert_int_not_equal(db_profile_parse(bad[i], strlen(bad[i]), "t.yaml", &p, &err), 0);
		if (!strstr(err.msg, why[i]))
			fail_msg("'%s' lacks '%s'", err.msg, why[i]);
	}
}

/* The pairs of reference TP 1 against target TP 2, through the library. */
static void test_pairs_tp1_tp2(void **st)
{
	(void)st;
	db_compare *c = NULL;
	db_err err = {{0}};
	db_compare_opts o = {.cache_dir = "", .threads = 2};
	if (db_compare_open(FIXTURES "/realdump_mixed/hybrid/ref",
	                    FIXTURES "/realdump_mixed/hybrid/target", &o, &c, &err))
		fail_msg("open: %s", err.msg);
	db_compare_run(c);
	size_t per_rank = 0, merged_partials = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		assert_int_not_equal(p->status, DB_ST_TARGET_ONLY);
		assert_int_not_equal(p->status, DB_ST_REF_ONLY);
		bool partial = !strcmp(p->f.stage, "attn_output") ||
		               !strcmp(p->f.stage, "moe_expert_output");
		if (partial) {
			/* summed on the target side, never a rank alone */
			assert_true(p->merged);
			assert_int_equal(p->n_ref_shards, 1);
			assert_int_equal(p->n_tgt_shards, 2);
			assert_int_equal(p->unshard.how, DB_UNSHARD_SUM);
			merged_partials++;
		}
		if (!strcmp(p->f.stage, "linear_attn_pre_out_proj")) {
			assert_true(p->merged);
			assert_int_equal(p->unshard.how, DB_UNSHARD_CONCAT);
			assert_int_equal(p->unshard.dim, 1);
		}
		if (!strcmp(p->f.stage, "mlp_output")) {
			/* replicated: each target rank against the one reference */
			assert_false(p->merged);
			assert_int_equal(p->ref->f.rank, 0);
			assert_int_equal(p->tgt->f.rank, p->f.rank);
			per_rank++;
		}
	}
	assert_int_equal(merged_partials, 4);   /* 2 stages x layers 2, 3 */
	assert_int_equal(per_rank, 4);          /* 2 ranks x layers 2, 3 */
	long fd = db_first_divergence(c, NULL, NULL, -2);
	assert_true(fd >= 0);
	assert_int_equal(c->pairs[fd].f.layer, 3);
	assert_string_equal(c->pairs[fd].f.stage, "pre_mlp_residual");
	db_compare_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dims_parse),
		cmocka_unit_test(test_meta_dims_read),
		cmocka_unit_test(test_fused_rule),
		cmocka_unit_test(test_pairs_tp1_tp2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
