/* The layer × stage grid and its queries, on the fixture layouts. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmp_util.h"
#include "db_grid.h"
#include "npz_util.h"

/* ref vs tgt compared to the end (a failure to open fails the test). */
static db_compare *open_run(const char *ref, const char *tgt)
{
	return cu_run(ref, tgt, NULL, NULL, 0);
}

#define LAYOUT(x) FIXTURES "/layouts/" x

static void t_atom_fwd_grid(void **s)
{
	(void)s;
	db_compare *c = open_run(LAYOUT("atom_fwd"), NULL);
	db_grid g;
	assert_int_equal(db_grid_build(c, NULL, NULL, DB_RANK_ANY, &g), 0);
	/* embed.* before the layers, *.final* after (model_after) */
	assert_int_equal(g.first_layer_row, 2);
	assert_int_equal(g.n_layer_rows, 4);
	assert_int_equal(g.n_rows, 8);
	assert_string_equal(g.rows[0].label, "embed.input_ids");
	assert_string_equal(g.rows[1].label, "embed.embed_out");
	assert_string_equal(g.rows[2].label, "L0");
	assert_int_equal(g.rows[5].layer, 3);
	assert_string_equal(g.rows[6].label, "embed.final_h");
	assert_string_equal(g.rows[7].label, "embed.final_logits");
	/* sub-stages (attn.q, attn.o_proj, ...) fold into their parents */
	const char *cols[] = {"hidden_in", "attn_norm_out", "attn_out", "ffn_norm_out",
	                      "ffn_out", "hidden_out"};
	assert_int_equal(g.n_cols, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(g.cols[i], cols[i]);
	/* layer 2's attention diverges, layer 1 is clean */
	size_t l1 = g.rows[3].cells[5], l2 = g.rows[4].cells[2];
	assert_true(l1 != DB_NO_PAIR && l2 != DB_NO_PAIR);
	assert_string_equal(c->pairs[l1].f.stage, "hidden_out");
	assert_int_equal(c->pairs[l1].f.layer, 1);
	assert_int_equal(c->pairs[l1].band, DB_BAND_OK);
	assert_string_equal(c->pairs[l2].f.stage, "attn_out");
	assert_true(c->pairs[l2].band > DB_BAND_OK);
	/* the sub-stages of that cell, in execution order, ending with itself */
	size_t *sub;
	size_t n = db_substages(c, l2, &sub);
	assert_true(n >= 3);
	assert_int_equal(sub[n - 1], l2);
	for (size_t i = 0; i + 1 < n; i++) {
		assert_int_equal(strncmp(c->pairs[sub[i]].f.stage, "attn.", 5), 0);
		assert_int_equal(c->pairs[sub[i]].f.layer, 2);
		if (i)
			assert_true(c->pairs[sub[i - 1]].seq < c->pairs[sub[i]].seq);
	}
	free(sub);
	size_t op = db_grid_find(c, &g, 2, "attn.o_proj");
	assert_true(op != DB_NO_PAIR);
	assert_string_equal(c->pairs[op].f.stage, "attn.o_proj");
	assert_int_equal(c->pairs[op].f.layer, 2);
	assert_int_equal(db_grid_find(c, &g, 2, "attn_out"), l2);
	assert_int_equal(db_grid_find(c, &g, -1, "embed.final_h"), g.rows[6].cells[0]);
	assert_int_equal(db_grid_find(c, &g, 7, "attn_out"), DB_NO_PAIR);
	/* first divergence: o_proj, before the attn_out that contains it */
	long fd = db_first_divergence(c, NULL, NULL, DB_RANK_ANY);
	assert_int_equal(fd, (long)op);
	db_grid_free(&g);
	db_compare_free(c);
}

static void t_passes_and_ranks(void **s)
{
	(void)s;
	db_compare *c = open_run(LAYOUT("sglang_v1/ref"), LAYOUT("sglang_v1/target"));
	char **passes;
	size_t n = db_passes(c, NULL, &passes);
	assert_int_equal(n, 2);
	assert_string_equal(passes[0], "0");
	assert_string_equal(passes[1], "1");
	for (size_t i = 0; i < n; i++)
		free(passes[i]);
	free(passes);
	assert_string_equal(db_default_pass(c, NULL), "0");  /* pass: first */
	int *ranks;
	n = db_ranks(c, &ranks);
	assert_int_equal(n, 2);
	assert_int_equal(ranks[0], 0);
	assert_int_equal(ranks[1], 1);
	free(ranks);
	/* ranks past the bitmap (65536 on) come after it, sorted, distinct:
	 * three pairs moved there, the rest of rank 0 and 1 as they are */
	int keep[3];
	for (int i = 0; i < 3; i++)
		keep[i] = c->pairs[i].f.rank;
	assert_false(c->pairs[0].merged || c->pairs[1].merged || c->pairs[2].merged);
	c->pairs[0].f.rank = 100000;
	c->pairs[1].f.rank = 65536;
	c->pairs[2].f.rank = 100000;
	n = db_ranks(c, &ranks);
	assert_int_equal(n, 4);
	assert_int_equal(ranks[0], 0);
	assert_int_equal(ranks[1], 1);
	assert_int_equal(ranks[2], 65536);
	assert_int_equal(ranks[3], 100000);
	free(ranks);
	for (int i = 0; i < 3; i++)
		c->pairs[i].f.rank = keep[i];

	db_grid g;
	assert_int_equal(db_grid_build(c, NULL, "1", 1, &g), 0);
	assert_string_equal(g.pass, "1");
	size_t p = db_grid_find(c, &g, 2, "attn.o_proj");
	assert_true(p != DB_NO_PAIR);
	assert_int_equal(c->pairs[p].f.rank, 1);
	assert_string_equal(c->pairs[p].f.pass, "1");
	for (size_t r = g.first_layer_row; r < g.first_layer_row + g.n_layer_rows; r++)
		for (size_t k = 0; k < g.n_cols; k++)
			if (g.rows[r].cells[k] != DB_NO_PAIR)
				assert_int_equal(c->pairs[g.rows[r].cells[k]].f.rank, 1);
	size_t *rp;
	n = db_rank_pairs(c, p, &rp);
	assert_int_equal(n, 2);
	assert_int_equal(c->pairs[rp[0]].f.rank, 0);
	assert_int_equal(rp[1], p);
	free(rp);
	db_grid_free(&g);

	long fd = db_first_divergence(c, NULL, "1", 0);
	assert_true(fd >= 0);
	assert_int_equal(c->pairs[fd].f.layer, 2);
	assert_string_equal(c->pairs[fd].f.stage, "attn.o_proj");
	assert_int_equal(c->pairs[fd].f.rank, 0);
	assert_string_equal(c->pairs[fd].f.pass, "1");
	db_compare_free(c);
}

/* ATOM's prefill pick: the warm-up call has 8 tokens (a power of two), the
 * prompt 6, the decode step 1: call 1 is the prefill. */
static void t_prefill_pass(void **s)
{
	(void)s;
	db_compare *c = open_run(LAYOUT("atom_hooks/ref"), LAYOUT("atom_hooks/target"));
	assert_string_equal(db_default_pass(c, NULL), "1");
	db_grid g;
	assert_int_equal(db_grid_build(c, NULL, NULL, DB_RANK_ANY, &g), 0);
	assert_string_equal(g.pass, "1");
	assert_int_equal(g.n_layer_rows, 4);
	assert_int_equal(g.first_layer_row, 0);
	db_grid_free(&g);
	db_compare_free(c);
}

/* TP: the merged pair of a sharded stage is what the merged view shows;
 * its rank pairs are the per-rank shards. */
static void t_merged_cells(void **s)
{
	(void)s;
	db_compare *c = open_run(LAYOUT("fwd_hook/ref"), LAYOUT("fwd_hook/target"));
	db_grid g;
	assert_int_equal(db_grid_build(c, NULL, NULL, -1, &g), 0);
	size_t m = db_grid_find(c, &g, 1, "self_attn.attn");
	assert_true(m != DB_NO_PAIR);
	assert_true(c->pairs[m].merged);
	db_grid_free(&g);
	assert_int_equal(db_grid_build(c, NULL, NULL, DB_RANK_ANY, &g), 0);
	assert_int_equal(db_grid_find(c, &g, 1, "self_attn.attn"), m);
	size_t q = db_grid_find(c, &g, 1, "self_attn.o_proj");    /* replicated: rank 0 */
	assert_true(q != DB_NO_PAIR);
	assert_int_equal(c->pairs[q].f.rank, 0);
	size_t *rp;
	size_t n = db_rank_pairs(c, m, &rp);
	assert_int_equal(n, 2);
	assert_false(c->pairs[rp[0]].merged);
	assert_int_equal(c->pairs[rp[0]].f.rank, 0);
	assert_int_equal(c->pairs[rp[1]].f.rank, 1);
	free(rp);
	db_grid_free(&g);
	db_compare_free(c);
}

/* The built-in profiles' stage_order puts the columns in execution order
 * where file names sort otherwise (Attention, Block, MoE; attn_norm_out
 * before hidden_in). */
static void check_cols(const char *ref, const char *tgt, const char *const *want, size_t n)
{
	db_compare *c = open_run(ref, tgt);
	db_grid g;
	assert_int_equal(db_grid_build(c, NULL, NULL, DB_RANK_ANY, &g), 0);
	if (g.n_cols != n)
		for (size_t i = 0; i < g.n_cols; i++)
			print_error("col %zu: %s\n", i, g.cols[i]);
	assert_int_equal(g.n_cols, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(g.cols[i], want[i]);
	db_grid_free(&g);
	db_compare_free(c);
}

static void t_stage_order(void **s)
{
	(void)s;
	/* one file per module and call: no recorded order, stage_order decides;
	 * the Block hook's input is the layer's hidden_in (upstream ATOM saves it) */
	static const char *const atom[] = {"hidden_in", "Attention", "MoE", "hidden_out"};
	check_cols(LAYOUT("atom_hooks/ref"), LAYOUT("atom_hooks/target"), atom, 4);
	static const char *const refpatch[] = {"hidden_in", "attn_out", "ffn_out", "hidden_out"};
	check_cols(LAYOUT("atom_refpatch"), LAYOUT("atom_refpatch"), refpatch, 4);
	static const char *const seed[] = {"hidden_in", "attn_norm_out", "attn_out",
	                                   "ffn_norm_out", "ffn_out", "hidden_out"};
	check_cols(LAYOUT("generic_st/ref"), LAYOUT("generic_st/target"), seed, 6);
	check_cols(LAYOUT("generic_npy/ref"), LAYOUT("generic_npy/target"), seed, 6);
	check_cols(LAYOUT("generic_npz/ref"), LAYOUT("generic_npz/target"), seed, 6);
	static const char *const hook[] = {
		"input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
		"self_attn.attn", "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj",
		"mlp.up_proj", "mlp.act_fn", "mlp.down_proj", "hidden_out"};
	check_cols(LAYOUT("fwd_hook/ref"), LAYOUT("fwd_hook/target"), hook, 12);
}

/* Trees that record their execution order (dump_index, dict order in files
 * holding several modules of a layer) and trees that do not (one file per
 * module; safetensors, whose writers sort tensors by name). */
static void t_records_order(void **s)
{
	(void)s;
	static const struct { const char *ref, *tgt; bool records; } t[] = {
		{LAYOUT("fwd_hook/ref"), LAYOUT("fwd_hook/target"), true},
		{LAYOUT("generic_npz/ref"), LAYOUT("generic_npz/target"), true},
		{LAYOUT("sglang_v1/ref"), LAYOUT("sglang_v1/target"), true},
		{FIXTURES "/realdump_order/ref", FIXTURES "/realdump_order/target", true},
		{LAYOUT("atom_hooks/ref"), LAYOUT("atom_hooks/target"), false},
		{LAYOUT("generic_st/ref"), LAYOUT("generic_st/target"), false},
		{LAYOUT("generic_npy/ref"), LAYOUT("generic_npy/target"), false},
		/* weights: a dict per layer, but dict_order: none (registration order) */
		{LAYOUT("atom_weights"), LAYOUT("atom_weights"), false},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		db_compare *c = open_run(t[i].ref, t[i].tgt);
		if (c->ref->records_order != t[i].records)
			print_error("%s\n", t[i].ref);
		assert_int_equal(c->ref->records_order, t[i].records);
		assert_int_equal(c->tgt->records_order, t[i].records);
		db_compare_free(c);
	}
	/* so the weights keep the profile's stage_order: the rotary buffer, last
	 * in the dict, sits with the attention */
	static const char *const w[] = {"attn_norm", "attn.wq", "attn.wk", "attn.wv",
	                                "attn.wo", "attn.rotary.inv_freq", "ffn_norm",
	                                "ffn.w1", "ffn.w3", "ffn.w2"};
	db_compare *c = open_run(LAYOUT("atom_weights"), LAYOUT("atom_weights"));
	db_grid g;
	assert_int_equal(db_grid_build(c, NULL, NULL, DB_RANK_ANY, &g), 0);
	assert_int_equal(g.n_cols, sizeof w / sizeof *w);
	for (size_t i = 0; i < g.n_cols; i++)
		assert_string_equal(g.cols[i], w[i]);
	db_grid_free(&g);
	db_compare_free(c);
	/* dict_order takes execution or none */
	static const char bad[] = "name: x\npath: 'a'\ndict_order: sometimes\n";
	db_profile *p = NULL;
	db_err e = {{0}};
	assert_int_not_equal(db_profile_parse(bad, sizeof bad - 1, "t", &p, &e), 0);
	assert_non_null(strstr(e.msg, "dict_order"));
}

/* A real SGLang forward-hook tree of a hybrid model (realdump_order/gen.sh):
 * layers 1-2 linear attention, layer 3 self attention; layer 1 a dense mlp,
 * 2-3 MoE. No profile lists these modules; the columns are the layers' hook
 * orders merged, so layer 3's self_attn sits between the attention and
 * post_attention_layernorm, not after the mlp that ran in an earlier layer. */
static void t_hook_hybrid_cols(void **s)
{
	(void)s;
	static const char *const want[] = {
		"input_layernorm.0", "input_layernorm.1", "linear_attn.in_proj_qkvz",
		"linear_attn.in_proj_ba", "linear_attn.attn", "linear_attn.norm",
		"linear_attn.out_proj", "self_attn.qkv_proj", "self_attn.rotary_emb.0",
		"self_attn.rotary_emb.1", "self_attn.attn", "self_attn.o_proj",
		"post_attention_layernorm.0", "post_attention_layernorm.1", "mlp.gate_up_proj",
		"mlp.act_fn", "mlp.down_proj", "mlp.shared_expert.gate_up_proj",
		"mlp.shared_expert.act_fn", "mlp.shared_expert.down_proj", "mlp.shared_expert_gate",
		"mlp.gate", "mlp.topk.0", "mlp.topk.1", "mlp.topk.2", "mlp.experts"};
	check_cols(FIXTURES "/realdump_order/ref", FIXTURES "/realdump_order/target", want,
	           sizeof want / sizeof *want);
	/* rank 0 alone gives the same columns (the tree is TP 1) */
	db_compare *c = open_run(FIXTURES "/realdump_order/ref", FIXTURES "/realdump_order/target");
	db_grid g;
	assert_int_equal(db_grid_build(c, NULL, NULL, 0, &g), 0);
	assert_int_equal(g.n_cols, sizeof want / sizeof *want);
	/* a cell of layer 3's post_attention_layernorm.0 is the bug's */
	size_t pi = db_grid_find(c, &g, 3, "post_attention_layernorm.0");
	assert_true(pi != DB_NO_PAIR);
	assert_true(c->pairs[pi].band > DB_BAND_OK);
	/* and the first divergence in execution order */
	assert_int_equal(db_first_divergence(c, NULL, NULL, DB_RANK_ANY), (long)pi);
	db_grid_free(&g);
	db_compare_free(c);
}

/* Layers whose recorded orders disagree: one .npz (dict order) holding
 * layer 0 as a, b and layer 1 as c, b, a. Edges a->b, c->b, b->a: c has no
 * predecessor and goes first, then the cycle a<->b is broken at the column
 * that ran first (a). The first seq alone would give a, b, c. */
static void t_cols_cycle(void **s)
{
	(void)s;
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	static const char *const keys[] = {"layers.0.a", "layers.0.b", "layers.1.c",
	                                   "layers.1.b", "layers.1.a"};
	cu_npz(dir, "run.npz", keys, sizeof keys / sizeof *keys, (const float[2]){1, 2});
	db_compare *c = cu_run(dir, dir, "generic", NULL, 0);
	assert_true(c->ref->records_order);
	db_grid g;
	assert_int_equal(db_grid_build(c, NULL, NULL, DB_RANK_ANY, &g), 0);
	assert_int_equal(g.n_cols, 3);
	assert_string_equal(g.cols[0], "c");
	assert_string_equal(g.cols[1], "a");
	assert_string_equal(g.cols[2], "b");
	db_grid_free(&g);
	db_compare_free(c);
	cu_rm_rf(dir);
	free(dir);
}

/* A rank view that lacks stages orders its columns as the full view: rank 1
 * dumped only m in layer 0 and only b in layer 1, which alone says nothing
 * (first seq would give m, b); rank 0 ran b before m in layer 1. */
static void t_cols_rank_view(void **s)
{
	(void)s;
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	static const char *const r0[] = {"layers.0.a", "layers.0.m", "layers.1.b", "layers.1.m"};
	static const char *const r1[] = {"layers.0.m", "layers.1.b"};
	char tree[1024], prof[1024];
	snprintf(tree, sizeof tree, "%s/tree", dir);
	cu_mkdirs(tree);
	cu_npz(tree, "r0.npz", r0, sizeof r0 / sizeof *r0, (const float[2]){1, 2});
	cu_npz(tree, "r1.npz", r1, sizeof r1 / sizeof *r1, (const float[2]){1, 2});
	snprintf(prof, sizeof prof, "%s/ranks.yaml", dir);
	static const char y[] = "name: ranks\n"
	                        "path: '^r(?<rank>\\d+)\\.npz$'\n"
	                        "key: '^layers\\.(?<layer>\\d+)\\.(?<stage>.+)$'\n";
	assert_int_equal(cu_write(prof, y, sizeof y - 1), 0);
	db_compare *c = cu_run(tree, tree, prof, NULL, 0);
	assert_true(c->ref->records_order);
	db_grid g;
	assert_int_equal(db_grid_build(c, NULL, NULL, DB_RANK_ANY, &g), 0);
	assert_int_equal(g.n_cols, 3);
	assert_string_equal(g.cols[0], "a");
	assert_string_equal(g.cols[1], "b");
	assert_string_equal(g.cols[2], "m");
	db_grid_free(&g);
	assert_int_equal(db_grid_build(c, NULL, NULL, 1, &g), 0);
	assert_int_equal(g.n_cols, 2);
	assert_string_equal(g.cols[0], "b");
	assert_string_equal(g.cols[1], "m");
	db_grid_free(&g);
	db_compare_free(c);
	cu_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_atom_fwd_grid),
		cmocka_unit_test(t_passes_and_ranks),
		cmocka_unit_test(t_prefill_pass),
		cmocka_unit_test(t_merged_cells),
		cmocka_unit_test(t_stage_order),
		cmocka_unit_test(t_records_order),
		cmocka_unit_test(t_hook_hybrid_cols),
		cmocka_unit_test(t_cols_cycle),
		cmocka_unit_test(t_cols_rank_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
