/* Profiles: YAML loading and its errors, path/key matching for every
 * built-in layout on synthetic names, per-stage rules. The real fixture
 * trees and the man page's examples: test_profile_files.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_profile.h"
#include "db_reader.h"
#include "util/json_parse.h"
#include "lib/profile_util.h"
#include "lib/test_util.h"

/* ---- helpers ---- */

static db_profile *parse_ok(const char *yaml)
{
	db_profile *p = NULL;
	db_err err = {{0}};
	if (db_profile_parse(yaml, strlen(yaml), "t.yaml", &p, &err))
		fail_msg("parse: %s\n---\n%s", err.msg, yaml);
	return p;
}

/* Parse must fail with a message containing each of the NULL-terminated
 * substrings. */
static void parse_fails(const char *yaml, ...)
{
	db_profile *p = NULL;
	db_err err = {{0}};
	int rc = db_profile_parse(yaml, strlen(yaml), "t.yaml", &p, &err);
	if (rc == 0) {
		db_profile_free(p);
		fail_msg("parsed but should not:\n%s", yaml);
	}
	assert_null(p);
	va_list ap;
	va_start(ap, yaml);
	for (const char *s; (s = va_arg(ap, const char *));)
		if (!strstr(err.msg, s))
			fail_msg("error '%s' lacks '%s'", err.msg, s);
	va_end(ap);
}

/* path then key, both must match */
static void match2(const db_profile *p, const char *path, const char *key, db_fields *f)
{
	if (db_profile_match_path(p, path, f, NULL) != 1)
		fail_msg("%s: path '%s' does not match", p->name, path);
	if (db_profile_match_key(p, key, f, NULL) != 1)
		fail_msg("%s: key '%s' of '%s' does not match", p->name, key, path);
}

/* A file path and key, and the fields a profile must give them. */
typedef struct match_case {
	const char *path, *key;
	const char *side, *phase, *pass;
	int rank, layer;
	const char *stage;
	int64_t order;
} match_case;

/* Every case matches p (path, then key) with exactly its fields. */
static void check_matches(const db_profile *p, const match_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++, c++) {
		db_fields f;
		match2(p, c->path, c->key, &f);
		if (strcmp(f.side, c->side) || strcmp(f.phase, c->phase) || strcmp(f.pass, c->pass) ||
		    f.rank != c->rank || f.layer != c->layer || strcmp(f.stage, c->stage) ||
		    f.order != c->order)
			fail_msg("%s: '%s' key '%s': got side '%s' phase '%s' pass '%s' rank %d "
			         "layer %d stage '%s' order %lld; expected '%s' '%s' '%s' %d %d '%s' %lld",
			         p->name, c->path, c->key, f.side, f.phase, f.pass, f.rank, f.layer,
			         f.stage, (long long)f.order, c->side, c->phase, c->pass, c->rank,
			         c->layer, c->stage, (long long)c->order);
	}
}

#define CHECK_MATCHES(p, cases) check_matches(p, cases, sizeof cases / sizeof cases[0])

/* ---- built-ins ---- */

static void test_builtins_parse(void **state)
{
	char **names = NULL;
	size_t n = db_profile_names(&names);
	assert_true(n >= 6);
	for (int i = 0; BUILTINS[i]; i++) {
		bool found = false;
		for (size_t j = 0; j < n; j++)
			found |= !strcmp(names[j], BUILTINS[i]);
		if (!found)
			fail_msg("built-in %s not listed", BUILTINS[i]);
		assert_non_null(db_profile_builtin_yaml(BUILTINS[i]));
	}
	for (size_t j = 0; j < n; j++) {
		const char *y = db_profile_builtin_yaml(names[j]);
		if (y) {        /* every built-in loads, and calls itself by its file name */
			db_profile *p = load(names[j]);
			assert_string_equal(p->name, names[j]);
			assert_string_equal(p->origin, "built-in");
			assert_non_null(p->path_re);
			assert_non_null(p->files_re);
			assert_true(strlen(p->description) > 10);
			db_profile_free(p);
		}
		free(names[j]);
	}
	assert_null(names[n]);
	free(names);
	assert_null(db_profile_builtin_yaml("no-such"));
}

static void test_defaults(void **state)
{
	db_profile *p = parse_ok("name: x\npath: '(?<stage>[^/]+)\\.pt$'\n");
	db_thresholds t;
	db_thresholds_default(&t);
	assert_memory_equal(&p->thresholds, &t, sizeof t);
	assert_int_equal(p->n_probes, 0);   /* no default stage name */
	assert_int_equal(p->substage_sep, '.');
	assert_int_equal(p->pass_select, DB_PASS_FIRST);
	assert_int_equal(p->pass_slots, 1);
	assert_int_equal(p->n_phase_order, 3);
	assert_string_equal(p->phase_order[0], "inference");
	assert_string_equal(p->phase_order[2], "fwd_bwd");
	assert_null(p->key_re);
	assert_null(p->value_key);
	assert_null(p->dump_command);
	assert_string_equal(p->description, "");
	assert_true(db_profile_is_input_ids(p, "embed.input_ids"));
	assert_false(db_profile_is_input_ids(p, "hidden_out"));
	assert_true(db_profile_is_model_after(p, "final_logits"));
	assert_true(db_profile_is_model_after(p, "embed.final_h"));
	assert_true(db_profile_is_model_after(p, "lm_head"));
	assert_false(db_profile_is_model_after(p, "embed_out"));
	db_fields f;
	/* default files: .pt .safetensors .npy .npz only */
	assert_int_equal(db_profile_match_path(p, "a/b.pt", &f, NULL), 1);
	assert_int_equal(db_profile_match_path(p, "a/b.txt", &f, NULL), 0);
	assert_int_equal(db_profile_match_path(p, "a/b.json", &f, NULL), 0);
	db_profile_free(p);
}

static void test_full_profile(void **state)
{
	const char *y =
		"name: full\n"
		"description: every key\n"
		"files: '\\.pt$'\n"
		"path: '^(?<side>[ab])/p(?<pass>\\d+)/r(?<rank>\\d+)\\.pt$'\n"
		"key: '^l(?<layer>\\d+)/(?<stage>.+)$'\n"
		"value_key: v\n"
		"ignore_keys: [meta, 'x_*']\n"
		"sides: {ref: a, target: b}\n"
		"phase_order: [one, two]\n"
		"stage_order: [in, 'attn*', out]\n"
		"model_after: [logits]\n"
		"substages:\n  attn_out: '^attn\\.'\n  ffn_out: '^ffn_'\n"
		"substage_separator: ':'\n"
		"shard:\n  - {stage: '^attn\\.q$', dim: -1, how: concat}\n  - stage: '^out$'\n    how: sum\n"
		"pass: {select: prefill, slots: 4}\n"
		"thresholds: {ok_cos: 0.999, ok_rel: 0.02, drift_cos: 0.98, drift_rel: 0.2,"
		" algo_cos: 0.8, algo_rel: 0.4, scramble_cos: 0.05}\n"
		"probe: out\n"
		"layer_classes:\n  - {name: dense, layers: 0-2}\n  - {name: moe, layers: '3-'}\n"
		"  - {name: one, layers: 7}\n"
		"dump_command: run --layers {layer} --out d{layer}\n"
		"input_ids: '^tok$'\n"
		"rename: {'': hidden_out, blk: hidden_out}\n";
	db_profile *p = parse_ok(y);
	assert_string_equal(p->name, "full");
	assert_string_equal(p->origin, "t.yaml");
	assert_string_equal(p->side_ref, "a");
	assert_string_equal(p->side_target, "b");
	assert_int_equal(p->n_ignore_keys, 2);
	assert_int_equal(p->substage_sep, ':');
	assert_int_equal(p->pass_select, DB_PASS_PREFILL);
	assert_int_equal(p->pass_slots, 4);
	assert_true(p->thresholds.ok_cos == 0.999);
	assert_true(p->thresholds.scramble_cos == 0.05);
	assert_true(p->thresholds.algo_rel == 0.4);
	assert_int_equal(p->n_probes, 1);
	assert_string_equal(p->probes[0], "out");

	db_fields f;
	static const match_case cases[] = {
		{"a/p007/r3.pt", "v", "ref", "", "7", 3, -1, "hidden_out", -1}, /* value_key -> key "" -> rename */
		{"b/p1/r0.pt", "l5/attn.q", "target", "", "1", 0, 5, "attn.q", -1},
	};
	CHECK_MATCHES(p, cases);
	assert_int_equal(db_profile_match_path(p, "b/p1/r0.pt", &f, NULL), 1);
	assert_int_equal(db_profile_match_key(p, "meta", &f, NULL), 0);
	assert_int_equal(db_profile_match_key(p, "meta.dims", &f, NULL), 0);
	assert_int_equal(db_profile_match_key(p, "x_1", &f, NULL), 0);
	assert_int_equal(db_profile_match_key(p, "nolayer", &f, NULL), 0);   /* key pattern fails */
	assert_int_equal(db_profile_match_path(p, "c/p1/r0.pt", &f, NULL), 0);  /* unknown side */
	assert_int_equal(db_profile_match_path(p, "a/p1/r0.npy", &f, NULL), 0); /* files */

	assert_int_equal(db_profile_stage_pos(p, "in"), 0);
	assert_int_equal(db_profile_stage_pos(p, "attn.q"), 1);
	assert_int_equal(db_profile_stage_pos(p, "zzz"), -1);
	assert_int_equal(db_profile_phase_pos(p, "two"), 1);
	assert_int_equal(db_profile_phase_pos(p, "inference"), -1);
	assert_true(db_profile_is_model_after(p, "logits"));
	assert_false(db_profile_is_model_after(p, "final_logits"));
	assert_true(db_profile_is_input_ids(p, "tok"));
	assert_false(db_profile_is_input_ids(p, "input_ids"));

	char buf[64];
	assert_string_equal(db_profile_parent(p, "attn.q", NULL, 0, buf, sizeof buf), "attn_out");
	assert_string_equal(db_profile_parent(p, "ffn_up", NULL, 0, buf, sizeof buf), "ffn_out");
	assert_string_equal(db_profile_parent(p, "attn_out", NULL, 0, buf, sizeof buf), "attn_out");
	const char *known[] = {"mlp", "mlp:up"};
	assert_string_equal(db_profile_parent(p, "mlp:up:x", known, 2, buf, sizeof buf), "mlp");
	assert_string_equal(db_profile_parent(p, "other:y", known, 2, buf, sizeof buf), "other:y");
	assert_string_equal(db_profile_parent(p, "other:y", NULL, 0, buf, sizeof buf), "other");

	const db_shard_rule *r = db_profile_shard(p, "attn.q");
	assert_non_null(r);
	assert_int_equal(r->dim, -1);
	assert_int_equal(r->how, DB_UNSHARD_CONCAT);
	r = db_profile_shard(p, "out");
	assert_non_null(r);
	assert_int_equal(r->how, DB_UNSHARD_SUM);
	assert_int_equal(r->dim, 0);
	assert_null(db_profile_shard(p, "attn.k"));

	assert_string_equal(db_profile_layer_class(p, 0), "dense");
	assert_string_equal(db_profile_layer_class(p, 2), "dense");
	assert_string_equal(db_profile_layer_class(p, 3), "moe");
	assert_string_equal(db_profile_layer_class(p, 99), "moe");
	assert_null(db_profile_layer_class(p, -1));
	char *cmd = db_profile_dump_command(p, 12);
	assert_string_equal(cmd, "run --layers 12 --out d12");
	free(cmd);
	db_profile_free(p);
}

/* Real names, from trees the upstream dumpers wrote (/work/shared/realdump:
 * sglang_v2, sglang_v2_all, sglang_v2 --arch hybrid_moe, miles bf16/fp32). */
#define V2(step, rank, idx, name, tail) \
	"dump_20261125_033746_178900/step=" #step "___rank=" #rank "___dump_index=" #idx \
	"___name=" name "___recompute_status=disabled" tail ".pt"
#define LID(l) "___layer_id=" #l
#define PP_TP "___pp_rank=0___tp_rank=0"
#define MILES(dir, step, rank, idx, name, tail) \
	dir "/step=" #step "___rank=" #rank "___dump_index=" #idx "___name=" name tail ".pt"
#define RS "___recompute_status=disabled"

static void test_match_sglang_v2_real(void **state)
{
	db_profile *p = load("sglang-v2");
	static const match_case cases[] = {
		/* explicit dumps keep their names */
		{V2(0, 0, 19, "linear_attn_pre_out_proj", LID(2) PP_TP), "value", "", "", "0", 0, 2, "linear_attn_pre_out_proj", 19},
		{V2(0, 0, 22, "moe_router_logits", LID(2) PP_TP), "value", "", "", "0", 0, 2, "moe_router_logits", 22},
		/* non-intrusive: layer from the name, stage = the module */
		{V2(1, 0, 498, "non_intrusive__model.layers.5.self_attn.o_proj.output", LID(5)), "value", "", "", "1", 0, 5, "self_attn.o_proj", 498},
		{V2(1, 0, 497, "non_intrusive__model.layers.5.self_attn.o_proj.inputs.0", LID(5)), "value", "", "", "1", 0, 5, "self_attn.o_proj.inputs.0", 497},
		{V2(1, 0, 485, "non_intrusive__model.layers.5.input_layernorm.output.1", LID(5)), "value", "", "", "1", 0, 5, "input_layernorm.1", 485},
		/* the decoder layer's own output: no layer_id field */
		{V2(1, 0, 512, "non_intrusive__model.layers.5.output.0", ""), "value", "", "", "1", 0, 5, "output", 512},
		{V2(1, 0, 513, "non_intrusive__model.layers.5.output.1", ""), "value", "", "", "1", 0, 5, "output.1", 513},
		/* a tuple's first item is the module's stage in every layer (layer 0's
		 * input_layernorm returns one tensor, the others a tuple) */
		{V2(0, 0, 30, "non_intrusive__model.layers.0.input_layernorm.output", LID(0)), "value", "", "", "0", 0, 0, "input_layernorm", 30},
		{V2(1, 0, 484, "non_intrusive__model.layers.5.input_layernorm.output.0", LID(5)), "value", "", "", "1", 0, 5, "input_layernorm", 484},
		{V2(1, 0, 499, "non_intrusive__model.layers.5.self_attn.rotary_emb.output.1", LID(5)), "value", "", "", "1", 0, 5, "self_attn.rotary_emb.1", 499},
		/* model level */
		{V2(1, 0, 297, "non_intrusive__inputs.0", ""), "value", "", "", "1", 0, -1, "inputs.0", 297},
		{V2(1, 0, 306, "non_intrusive__model.embed_tokens.output", ""), "value", "", "", "1", 0, -1, "embed_tokens", 306},
		{V2(1, 0, 586, "non_intrusive__model.norm.output.0", ""), "value", "", "", "1", 0, -1, "norm", 586},
		{V2(1, 0, 588, "non_intrusive__model.output", ""), "value", "", "", "1", 0, -1, "model", 588},
		{V2(1, 0, 590, "non_intrusive__logits_processor.output.next_token_logits", ""), "value", "", "", "1", 0, -1, "logits_processor.next_token_logits", 590},
		{V2(1, 0, 591, "non_intrusive__output.next_token_logits", ""), "value", "", "", "1", 0, -1, "next_token_logits", 591},
	};
	CHECK_MATCHES(p, cases);
	char buf[128];
	/* explicit dump points nest under the attention / MLP output */
	assert_string_equal(db_profile_parent(p, "attn_pre_o_proj", NULL, 0, buf, sizeof buf), "attn_output");
	assert_string_equal(db_profile_parent(p, "linear_attn_pre_out_proj", NULL, 0, buf, sizeof buf), "attn_output");
	assert_string_equal(db_profile_parent(p, "moe_expert_output", NULL, 0, buf, sizeof buf), "mlp_output");
	assert_string_equal(db_profile_parent(p, "pre_mlp_residual", NULL, 0, buf, sizeof buf), "pre_mlp_residual");
	assert_string_equal(db_profile_parent(p, "layer_input", NULL, 0, buf, sizeof buf), "layer_input");
	/* module stages nest under their parent module when it was dumped */
	const char *known[] = {"self_attn", "self_attn.o_proj", "input_layernorm", "input_layernorm.1",
	                       "output", "output.1", "inputs.1"};
	assert_string_equal(db_profile_parent(p, "self_attn.o_proj", known, 7, buf, sizeof buf), "self_attn");
	assert_string_equal(db_profile_parent(p, "self_attn.o_proj.inputs.0", known, 7, buf, sizeof buf), "self_attn");
	assert_string_equal(db_profile_parent(p, "input_layernorm.1", known, 7, buf, sizeof buf), "input_layernorm");
	assert_string_equal(db_profile_parent(p, "output.1", known, 7, buf, sizeof buf), "output");
	assert_string_equal(db_profile_parent(p, "inputs.1", known, 7, buf, sizeof buf), "inputs.1");
	const char *after[] = {"model", "norm", "norm.1", "final_layernorm", "output_layer", "decoder",
	                       "logits_processor.next_token_logits", "next_token_logits"};
	for (size_t i = 0; i < sizeof after / sizeof *after; i++)
		assert_true(db_profile_is_model_after(p, after[i]));
	const char *before[] = {"embed_tokens", "embedding.word_embeddings", "inputs.0", "model.inputs.0",
	                        "input_ids"};
	for (size_t i = 0; i < sizeof before / sizeof *before; i++)
		assert_false(db_profile_is_model_after(p, before[i]));
	db_profile_free(p);
}

/* Miles: engines/engine_<i> is inference, fwd_only/<model>_rollout_<id>,
 * fwd_bwd/rollout_<id> with grad__ / param__ files in phases of their own;
 * Megatron names read like SGLang's. */
static void test_match_sglang_v2_miles(void **state)
{
	db_profile *p = load("sglang-v2");
	static const match_case cases[] = {
		{MILES("m/engines/engine_0", 0, 0, 11, "non_intrusive__model.layers.0.output.0", RS), "value", "", "inference", "0", 0, 0, "output", 11},
		{MILES("m/engines/engine_3", 2, 1, 11, "non_intrusive__model.layers.0.output.0", RS), "value", "", "inference.engine3", "2", 1, 0, "output", 11},
		{MILES("m/fwd_only/rollout_0", 1, 1, 304, "non_intrusive__module.module.decoder.layers.3.self_attention.linear_qkv.output", RS LID(3)), "value", "", "fwd_only", "1", 1, 3, "self_attention.linear_qkv", 304},
		{MILES("m/fwd_only/ref_rollout_0", 1, 1, 304, "non_intrusive__module.module.decoder.layers.3.self_attention.linear_qkv.output", RS LID(3)), "value", "", "fwd_only.ref", "1", 1, 3, "self_attention.linear_qkv", 304},
		{MILES("m/fwd_only/teacher_rollout_0", 0, 0, 5, "input_ids", RS), "value", "", "fwd_only.teacher", "0", 0, -1, "input_ids", 5},
		{MILES("m/fwd_only/ref_rollout_7", 0, 0, 5, "input_ids", RS), "value", "", "fwd_only.ref.rollout7", "0", 0, -1, "input_ids", 5},
		{MILES("m/fwd_bwd/rollout_2", 0, 0, 5, "input_ids", RS), "value", "", "fwd_bwd.rollout2", "0", 0, -1, "input_ids", 5},
		/* fp32: no Float16Module, one module. less */
		{MILES("m/fwd_bwd/rollout_0", 0, 0, 91, "non_intrusive__module.decoder.layers.3.self_attention.linear_qkv.output", RS LID(3)), "value", "", "fwd_bwd", "0", 0, 3, "self_attention.linear_qkv", 91},
		/* the layer's own output, the model's */
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 122, "non_intrusive__module.module.decoder.layers.3.output", RS), "value", "", "fwd_bwd", "0", 1, 3, "output", 122},
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 18, "non_intrusive__module.module.embedding.word_embeddings.output", RS), "value", "", "fwd_bwd", "0", 1, -1, "embedding.word_embeddings", 18},
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 124, "non_intrusive__module.module.decoder.final_layernorm.output", RS), "value", "", "fwd_bwd", "0", 1, -1, "final_layernorm", 124},
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 127, "non_intrusive__module.module.output_layer.output", RS), "value", "", "fwd_bwd", "0", 1, -1, "output_layer", 127},
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 128, "non_intrusive__module.module.output", RS), "value", "", "fwd_bwd", "0", 1, -1, "model", 128},
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 130, "non_intrusive__output", RS), "value", "", "fwd_bwd", "0", 1, -1, "model", 130},
		/* gradients: no recompute_status, no layer_id */
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 167, "grad__non_intrusive__module.module.decoder.layers.3.self_attention.linear_qkv.output", ""), "value", "", "fwd_bwd.grad", "0", 1, 3, "self_attention.linear_qkv", 167},
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 138, "grad__non_intrusive__module.module.decoder.layers.3.output", ""), "value", "", "fwd_bwd.grad", "0", 1, 3, "output", 138},
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 209, "grad__non_intrusive__module.module.embedding.word_embeddings.output", ""), "value", "", "fwd_bwd.grad", "0", 1, -1, "embedding.word_embeddings", 209},
		/* weights */
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 22, "param__module.module.decoder.layers.3.self_attention.linear_qkv.weight", RS), "value", "", "fwd_bwd.param", "0", 1, 3, "self_attention.linear_qkv.weight", 22},
		{MILES("m/fwd_bwd/rollout_0", 0, 1, 27, "param__module.module.output_layer.weight", RS), "value", "", "fwd_bwd.param", "0", 1, -1, "output_layer.weight", 27},
	};
	CHECK_MATCHES(p, cases);
	/* causal order of the phases */
	const char *order[] = {"inference", "fwd_only.teacher", "fwd_only.ref", "fwd_only", "fwd_bwd",
	                       "fwd_bwd.grad", "fwd_bwd.param"};
	for (int i = 0; i < 7; i++)
		assert_int_equal(db_profile_phase_pos(p, order[i]), i);
	db_profile_free(p);
}

static void test_rewrite(void **state)
{
	db_profile *p = NULL;
	db_err err = {{0}};
	/* rules apply in order, each to the previous result; unset groups are
	 * empty; phase_sub joins with '.' */
	static const char y[] =
		"name: rw\n"
		"path: '^(?<phase>[a-z]+)/(?:(?<phase_sub>g)_)?(?<stage>[^/]+)\\.pt$'\n"
		"rewrite:\n"
		"  phase:\n"
		"    - ['^a(\\.g)?$', 'first$1']\n"
		"  stage:\n"
		"    - ['^x_', '']\n"
		"    - ['^(\\w+)\\.out(?:put)?(\\.\\d+)?$', '$1$2']\n"
		"    - ['^y$', ~]\n"
		"rename:\n"
		"  '': empty\n";
	assert_int_equal(db_profile_parse(y, sizeof y - 1, "t.yaml", &p, &err), 0);
	static const match_case cases[] = {
		{"a/x_mod.output.1.pt", "", "", "first", "", -1, -1, "mod.1", -1},
		{"a/g_x_mod.out.pt", "", "", "first.g", "", -1, -1, "mod", -1},
		{"b/g_mod.pt", "", "", "b.g", "", -1, -1, "mod", -1},
		{"b/y.pt", "", "", "b", "", -1, -1, "empty", -1},
	};
	CHECK_MATCHES(p, cases);
	db_profile_free(p);
	parse_fails("name: x\npath: a\nrewrite:\n  layer: [['a', b]]\n", "t.yaml:4:3:",
	            "unknown field 'layer'", NULL);
	parse_fails("name: x\npath: a\nrewrite:\n  stage: ['a', b]\n", "t.yaml:4:",
	            "[regex, replacement]", NULL);
	parse_fails("name: x\npath: a\nrewrite:\n  stage: [['(a', b]]\n", "rewrite: bad regex", NULL);
	parse_fails("name: x\npath: a\nrewrite:\n  stage: [['(a)', '$2']]\n", "bad replacement", NULL);
	parse_fails("name: x\npath: a\nrewrite: {stage: x}\n", "expected a list", NULL);
	parse_fails("name: x\npath: a\npass_shift: {'^m$': 0}\n", "t.yaml:3:", "shifts by 0", NULL);
	parse_fails("name: x\npath: a\npass_shift: {'^m$': x}\n", "pass_shift: expected an integer", NULL);
	parse_fails("name: x\npath: a\npass_shift: {'(m': -1}\n", "pass_shift: bad regex", NULL);
}

static void test_errors(void **state)
{
	/* unknown top-level key, with line:col of the key */
	parse_fails("name: x\npath: 'a'\npathh: 'b'\n", "t.yaml:3:1:", "unknown key 'pathh'", NULL);
	parse_fails("name: x\npath: a\nthresholds:\n  ok_coss: 0.9\n", "t.yaml:4:3:",
	            "unknown key 'ok_coss'", NULL);
	parse_fails("name: x\npath: a\npass: {select: first, slot: 2}\n", "t.yaml:3:",
	            "unknown key 'slot'", NULL);
	parse_fails("name: x\npath: a\nshard:\n  - {stage: a, dims: 1}\n", "t.yaml:4:",
	            "unknown key 'dims'", NULL);
	parse_fails("name: x\npath: a\nsides: {ref: a, tgt: b}\n", "unknown key 'tgt'", NULL);
	/* bad regex: PCRE2 message and offset, line:col of the value */
	parse_fails("name: x\npath: '^(?<layer>\\d+'\n", "t.yaml:2:7:", "bad regex",
	            "missing closing parenthesis", "offset 13", NULL);
	parse_fails("name: x\npath: a\nkey: '[z-a]'\n", "t.yaml:3:6:", "key: bad regex", "range", NULL);
	parse_fails("name: x\npath: a\nsubstages:\n  attn_out: '(('\n", "t.yaml:4:13:",
	            "substages: bad regex", NULL);
	/* unknown named group (a typo of a field) */
	parse_fails("name: x\npath: '(?<layr>\\d+)'\n", "t.yaml:2:7:", "unknown named group", "layr", NULL);
	/* YAML syntax error with its mark */
	parse_fails("name: x\npath: [a\nkey: b\n", "t.yaml:", "YAML", NULL);
	parse_fails("name: x\n  path: a\n", "t.yaml:2:", NULL);
	parse_fails("name: x\npath: a\n---\nprobe: b\n", "t.yaml:4:1:", "one YAML document", NULL);
	parse_fails("name: x\npath: a\n---\n[\n", "t.yaml:", "YAML", NULL);
	/* required keys, types */
	parse_fails("path: a\n", "t.yaml:1:1:", "missing required key 'name'", NULL);
	parse_fails("name: x\n", "missing required key 'path'", NULL);
	parse_fails("name: x\npath: ~\n", "t.yaml:2:7:", "path: required", NULL);
	parse_fails("name:\npath: a\n", "name: required", NULL);
	parse_fails("- a\n- b\n", "t.yaml:1:1:", "mapping", NULL);
	parse_fails("", "empty profile", NULL);
	parse_fails("name: [a]\npath: a\n", "t.yaml:1:7:", "name: expected a string", NULL);
	parse_fails("name: 'a b'\npath: a\n", "name:", NULL);
	parse_fails("name: x\npath: a\nname: y\n", "t.yaml:3:1:", "duplicate key 'name'", NULL);
	parse_fails("name: x\npath: a\nshard:\n  - {stage: a, how: mean}\n", "concat or sum", NULL);
	parse_fails("name: x\npath: a\nshard:\n  - {dim: 1}\n", "missing required key 'stage'", NULL);
	parse_fails("name: x\npath: a\nshard:\n  - {stage: a, dim: x}\n", "shard.dim: expected an integer", NULL);
	parse_fails("name: x\npath: a\npass: {slots: 0}\n", "out of range", NULL);
	parse_fails("name: x\npath: a\nthresholds: {ok_cos: abc}\n", "t.yaml:3:22:", "finite number", NULL);
	parse_fails("name: x\npath: a\nthresholds: {ok_cos: 0.5}\n", "ok_cos >= drift_cos", NULL);
	parse_fails("name: x\npath: a\nthresholds: {drift_rel: 0.001}\n", "ok_rel <= drift_rel", NULL);
	parse_fails("name: x\npath: a\nlayer_classes:\n  - {name: a, layers: 5-2}\n", "bad range", NULL);
	parse_fails("name: x\npath: a\nlayer_classes:\n  - {name: a}\n", "needs 'name' and 'layers'", NULL);
	parse_fails("name: x\npath: a\nsubstage_separator: '::'\n", "one character", NULL);
	parse_fails("name: x\npath: a\nsides: {ref: a, target: a}\n", "must differ", NULL);
	parse_fails("name: x\npath: a\nignore_keys: {a: b}\n", "list of strings", NULL);
	parse_fails("name: x\npath: a\nrename: {a: ''}\n", "empty stage", NULL);

	/* load: missing file, unknown name */
	db_profile *p = NULL;
	db_err err = {{0}};
	assert_int_equal(db_profile_load("/nonexistent/x.yaml", &p, &err), -1);
	assert_non_null(strstr(err.msg, "/nonexistent/x.yaml"));
	assert_int_equal(db_profile_load("no-such-profile", &p, &err), -1);
	assert_non_null(strstr(err.msg, "unknown profile 'no-such-profile'"));
	assert_non_null(strstr(err.msg, "sglang-v1"));
	assert_null(p);
}

static void test_null_keeps_default(void **state)
{
	db_profile *p = parse_ok("name: x\npath: a\nprobe: ~\ndescription:\nvalue_key: null\n");
	assert_int_equal(p->n_probes, 0);   /* no default stage name */
	assert_null(p->value_key);
	db_profile_free(p);
	p = parse_ok("name: x\npath: a\npass: last\nsubstage_separator: ''\nmodel_after: []\n");
	assert_int_equal(p->pass_select, DB_PASS_LAST);
	assert_int_equal(p->substage_sep, 0);
	assert_int_equal(p->n_model_after, 0);
	assert_false(db_profile_is_model_after(p, "final_logits"));
	char buf[32];
	assert_string_equal(db_profile_parent(p, "a.b", NULL, 0, buf, sizeof buf), "a.b");
	db_profile_free(p);
	p = parse_ok("name: x\npath: a\npass: {select: '0003'}\n");
	assert_int_equal(p->pass_select, DB_PASS_VALUE);
	assert_string_equal(p->pass_value, "0003");
	const char *passes[] = {"1", "3", "5"};
	assert_int_equal(db_profile_select_pass(p, passes, NULL, 3), 1);
	db_profile_free(p);
}

/* ---- matching, synthetic names from layouts.md ---- */

static void test_match_sglang_v1(void **state)
{
	db_profile *p = load("sglang-v1");
	db_fields f;
	static const match_case cases[] = {
		{"sglang_dump_1700000000.0/forward_pass_id=2___rank=1___name=attn.q_rope___dump_index=17___layer_id=3.pt", "", "", "", "2", 1, 3, "attn.q_rope", 17},
		{"forward_pass_id=0___rank=0___name=input_ids___dump_index=0.pt", "", "", "", "0", 0, -1, "input_ids", 0},
		/* extras before layer_id; names with underscores and dots */
		{"x/forward_pass_id=1___rank=0___name=layer_start__hidden_states___dump_index=5___foo=bar___layer_id=12.pt", "", "", "", "1", 0, 12, "layer_start__hidden_states", 5},
		/* Miles phase folder anywhere above */
		{"tag/fwd_bwd/engine_0/sglang_dump_1.5/forward_pass_id=3___rank=2___name=hidden_out___dump_index=9___layer_id=0.pt", "", "", "fwd_bwd", "3", 2, 0, "hidden_out", 9},
		/* first revisions: rank in the folder name, no rank= and no dump_index */
		{"tmp/sglang_dump_1712345678.123_3/forward_pass_id=5___name=hidden_states.pt", "", "", "", "5", 3, -1, "hidden_states", -1},
		{"sglang_dump_1712345678.123_1/forward_pass_id=5___name=x___rank=1___layer_id=2.pt", "", "", "", "5", 1, 2, "x", -1},
		{"sglang_dump_1700000000.0/forward_pass_id=1___name=y.pt", "", "", "", "1", -1, -1, "y", -1},
		/* Miles' real folders (engines/engine_<i>, <model>_rollout_<id>) */
		{"m/engines/engine_0/sglang_dump_1.5/forward_pass_id=1___rank=0___name=attn_pre_o_proj___dump_index=4___layer_id=2.pt", "", "", "inference", "1", 0, 2, "attn_pre_o_proj", 4},
		{"m/engines/engine_1/forward_pass_id=1___rank=0___name=mlp_output___dump_index=4___layer_id=2.pt", "", "", "inference.engine1", "1", 0, 2, "mlp_output", 4},
		{"m/fwd_only/ref_rollout_0/forward_pass_id=0___rank=1___name=layer_input___dump_index=2___layer_id=0.pt", "", "", "fwd_only.ref", "0", 1, 0, "layer_input", 2},
		{"m/fwd_bwd/rollout_0/forward_pass_id=0___rank=1___name=layer_input___dump_index=2___layer_id=0.pt", "", "", "fwd_bwd", "0", 1, 0, "layer_input", 2},
	};
	CHECK_MATCHES(p, cases);
	assert_int_equal(db_profile_match_path(p, "step=0___rank=0___dump_index=1___name=x.pt", &f, NULL), 0);
	assert_int_equal(db_profile_match_path(p, "forward_pass_id=0___rank=0___name=x___dump_index=1.npy", &f, NULL), 0);
	assert_int_equal(db_profile_match_path(p, "inference_x/foo.pt", &f, NULL), 0);
	char buf[64];
	assert_string_equal(db_profile_parent(p, "attn.q_rope", NULL, 0, buf, sizeof buf), "attn_out");
	assert_string_equal(db_profile_parent(p, "moe.topk", NULL, 0, buf, sizeof buf), "ffn_out");
	assert_string_equal(db_profile_parent(p, "ffn.up", NULL, 0, buf, sizeof buf), "ffn_out");
	assert_int_equal(p->n_probes, 4);      /* the seed protocol, then SGLang's */
	assert_string_equal(p->probes[1], "mlp_output");
	/* SGLang's real explicit dump points */
	assert_string_equal(db_profile_parent(p, "attn_pre_o_proj", NULL, 0, buf, sizeof buf), "attn_output");
	assert_string_equal(db_profile_parent(p, "moe_router_logits", NULL, 0, buf, sizeof buf), "mlp_output");
	assert_string_equal(db_profile_parent(p, "layer_start__hidden_states", NULL, 0, buf, sizeof buf), "layer_start__hidden_states");
	assert_true(db_profile_phase_pos(p, "fwd_only.ref") < db_profile_phase_pos(p, "fwd_only"));
	assert_true(db_profile_is_model_after(p, "final_logits"));
	db_profile_free(p);
}

static void test_match_sglang_v2(void **state)
{
	db_profile *p = load("sglang-v2");
	db_fields f;
	const char *a = "dump_20250101_000000_1/step=4___rank=5___dump_index=12___name=attn_out___recompute_status=disabled___layer_id=7___tp_rank=1___pp_rank=0.pt";
	const match_case tp[] = {
		{a, "value", "", "", "4", 1, 7, "attn_out", 12}, /* tp_rank wins over rank */
	};
	CHECK_MATCHES(p, tp);
	assert_int_equal(db_profile_match_path(p, a, &f, NULL), 1);
	assert_int_equal(db_profile_match_key(p, "meta.dims", &f, NULL), 0);
	assert_int_equal(db_profile_match_key(p, "meta", &f, NULL), 0);
	static const match_case cases[] = {
		{"step=0___rank=3___dump_index=1___name=hidden_out___layer_id=2.pt", "value", "", "", "0", 3, 2, "hidden_out", 1}, /* no tp_rank: world rank */
		{"inference/step=0___rank=0___dump_index=0___name=input_ids.pt", "value", "", "inference", "0", 0, -1, "input_ids", 0},
	};
	CHECK_MATCHES(p, cases);
	assert_int_equal(db_profile_match_path(p, "forward_pass_id=0___rank=0___name=x___dump_index=1.pt", &f, NULL), 0);
	db_profile_free(p);
}

static void test_match_sglang_hook(void **state)
{
	db_profile *p = load("sglang-hook");
	db_fields f;
	const char *path = "TP1_PP0_Rank1_pid1234/Pass00003.pt";
	const match_case cases[] = {
		{path, "model.layers.12.self_attn.o_proj", "", "", "3", 1, 12, "self_attn.o_proj", -1},
		{path, "model.embed_tokens", "", "", "3", 1, -1, "embed_tokens", -1},
		{path, "model.layers.0.input_layernorm.1", "", "", "3", 1, 0, "input_layernorm.1", -1},
		{path, "model.layers.4", "", "", "3", 1, 4, "hidden_out", -1}, /* a layer's own output */
	};
	CHECK_MATCHES(p, cases);
	match2(p, path, "model", &f);
	assert_string_equal(f.stage, "model");
	/* the hook writes the top module's and the logits processor's outputs
	 * of pass N into Pass<N+1>.pt (seen in the realdump trees) */
	assert_string_equal(f.pass, "2");
	match2(p, path, "logits_processor", &f);
	assert_string_equal(f.pass, "2");
	match2(p, path, "model.norm.0", &f);
	assert_string_equal(f.pass, "3");
	match2(p, "TP1_PP0_Rank1_pid1234/Pass00000.pt", "model", &f);
	assert_string_equal(f.pass, "0");        /* never below 0 */
	assert_true(db_profile_is_model_after(p, "model"));
	assert_true(db_profile_is_model_after(p, "norm"));
	assert_false(db_profile_is_model_after(p, "embed_tokens"));
	match2(p, path, "model.forward_batch_info.input_ids", &f);
	assert_true(db_profile_is_input_ids(p, f.stage));
	assert_non_null(db_profile_shard(p, "self_attn.attn"));
	assert_null(db_profile_shard(p, "self_attn.o_proj"));
	assert_int_equal(db_profile_match_path(p, "TP1_PP0_Rank1_pid1234/Pass3.npy", &f, NULL), 0);
	assert_int_equal(db_profile_match_path(p, "Pass00003.pt", &f, NULL), 0);
	db_profile_free(p);
}

static void test_match_atom(void **state)
{
	db_profile *p = load("atom");
	db_fields f;
	static const match_case cases[] = {
		/* no prefix: the target (sides.target is ''), ref_: the reference */
		{"layer03_Block_rank1_call007.pt", "hidden", "target", "", "7", 1, 3, "hidden_out", -1},
		{"d/layer00_MoE_rank0.pt", "hidden", "target", "", "", 0, 0, "MoE", -1},
		{"layer10_DeepseekV4Attention_rank2_call000.pt", "hidden", "target", "", "0", 2, 10, "DeepseekV4Attention", -1},
	};
	CHECK_MATCHES(p, cases);
	assert_int_equal(db_profile_match_path(p, "layer00_MoE_rank0.pt", &f, NULL), 1);
	assert_int_equal(db_profile_match_key(p, "shape", &f, NULL), 0);
	assert_int_equal(db_profile_match_key(p, "input_fields.0", &f, NULL), 0);
	assert_int_equal(db_profile_match_key(p, "output_fields.input_ids", &f, NULL), 0);
	static const match_case prefixed[] = {
		{"ref_layer02_Block__attn.q_rope_rank0.pt", "hidden", "ref", "", "", 0, 2, "attn.q_rope", -1},
		/* real ATOM, one folder (realdump atom_onedir): the hook's block
		 * input pairs with the patched reference's hidden_in */
		{"layer01_Block_rank0.pt", "input", "target", "", "", 0, 1, "hidden_in", -1},
		{"layer01_Block_rank0.pt", "hidden", "target", "", "", 0, 1, "hidden_out", -1},
		{"ref_layer01_Block__hidden_in_rank0.pt", "hidden", "ref", "", "", 0, 1, "hidden_in", -1},
		{"ref_layer01_Block__hidden_out_rank0.pt", "hidden", "ref", "", "", 0, 1, "hidden_out", -1},
		/* other hooks' inputs stay their own stages, under the module */
		{"layer01_Attention_rank0_call001.pt", "input", "target", "", "1", 0, 1, "Attention.input", -1},
	};
	CHECK_MATCHES(p, prefixed);
	assert_int_equal(p->pass_select, DB_PASS_PREFILL);
	db_profile_free(p);
}

static void test_match_atom_weights(void **state)
{
	db_profile *p = load("atom-weights");
	static const match_case cases[] = {
		/* ATOM_WEIGHT_DUMP_DIR: one run per folder, no side */
		{"w/weight_rank3_layer12.pt", "layers.12.attn.wq_b.weight", "", "", "", 3, 12, "attn.wq_b", -1},
		{"weight_rank0_layer0.pt", "layers.0.attn.wq_b.bias", "", "", "", 0, 0, "attn.wq_b.bias", -1},
		{"weight_rank0_layer0.pt", "buffer:layers.0.attn.rotary.inv_freq", "", "", "", 0, 0, "attn.rotary.inv_freq", -1},
		/* the seed's weights/ folder: both runs, told apart by the prefix */
		{"weights/atom_rank1_layer2.pt", "model.layers.2.ffn.experts.w13_weight", "target", "", "", 1, 2, "ffn.experts.w13_weight", -1},
		{"weights/ref_rank1_layer2.pt", "layers.2.attn_norm.weight", "ref", "", "", 1, 2, "attn_norm", -1},
	};
	CHECK_MATCHES(p, cases);
	db_fields f;
	assert_int_equal(db_profile_match_path(p, "weight_rank0_layer0.pt", &f, NULL), 1);
	assert_int_equal(db_profile_match_key(p, "_tp_rank", &f, NULL), 0);
	assert_int_equal(db_profile_match_path(p, "atom_rank0_fwd.pt", &f, NULL), 0);
	db_profile_free(p);
}

static void test_match_atom_fwd(void **state)
{
	db_profile *p = load("atom-fwd");
	db_fields f;
	static const match_case cases[] = {
		{"dump/ref_rank0_fwd.pt", "layer3.attn_out", "ref", "", "", 0, 3, "attn_out", -1},
		{"dump/atom_rank1_fwd.pt", "embed.input_ids", "target", "", "", 1, -1, "embed.input_ids", -1},
	};
	CHECK_MATCHES(p, cases);
	assert_true(db_profile_is_input_ids(p, "embed.input_ids"));
	match2(p, "atom_rank0_fwd.pt", "embed.final_logits", &f);
	assert_true(db_profile_is_model_after(p, f.stage));
	assert_int_equal(db_profile_match_path(p, "other_rank0_fwd.pt", &f, NULL), 0);
	db_profile_free(p);
}

static void test_match_generic(void **state)
{
	db_profile *p = load("generic");
	static const match_case cases[] = {
		{"layer3.attn_out.npy", "", "", "", "", -1, 3, "attn_out", -1},
		{"d/model.layers.12.mlp.down_proj.pt", "", "", "", "", -1, 12, "mlp.down_proj", -1},
		{"layers.0.attn.q.safetensors", "", "", "", "", -1, 0, "attn.q", -1},
		/* a plain tensor named by its file */
		{"final_logits.pt", "", "", "", "", -1, -1, "final_logits", -1},
		/* dict payloads: the file name does not prefix the stage */
		{"ref/dump.safetensors", "model.layers.3.self_attn.o_proj", "", "", "", -1, 3, "self_attn.o_proj", -1},
		{"all.npz", "layer7.ffn_out", "", "", "", -1, 7, "ffn_out", -1},
		{"all.pt", "layers.2", "", "", "", -1, 2, "hidden_out", -1},
		{"all.pt", "model.embed_tokens", "", "", "", -1, -1, "embed_tokens", -1},
		/* a dict in a file named by layer joins the stage */
		{"layer1.attn.pt", "q", "", "", "", -1, 1, "attn.q", -1},
	};
	CHECK_MATCHES(p, cases);
	db_profile_free(p);
}

static void test_select_pass(void **state)
{
	db_profile *p = parse_ok("name: x\npath: a\npass: {select: prefill, slots: 4}\n");
	const char *passes[] = {"0", "1", "2", "3", "4"};
	/* warm-up 4 (== slots), 16 (pow2), 24 (real), 8 (pow2), 36 */
	int64_t ntok[] = {4, 16, 24, 8, 36};
	assert_int_equal(db_profile_select_pass(p, passes, ntok, 5), 2);
	int64_t pw[] = {4, 16, 8, 6, 2};       /* only pow2 candidates: lowest of them */
	assert_int_equal(db_profile_select_pass(p, passes, pw, 5), 1);
	int64_t none[] = {1, 2, 3, -1, 4};     /* no candidate: the first pass */
	assert_int_equal(db_profile_select_pass(p, passes, none, 5), 0);
	db_profile_free(p);
	p = parse_ok("name: x\npath: a\npass: {select: prefill}\n");
	int64_t one[] = {1, 8, 7, 7};          /* slots 1: 7 > 1, not pow2 */
	assert_int_equal(db_profile_select_pass(p, passes, one, 4), 2);
	db_profile_free(p);
	/* the built-in atom profile on the atom_hooks fixture's calls: warm-up
	 * of 8 dummy tokens, the 6-token prompt, one decode token */
	p = load("atom");
	int64_t atom_calls[] = {8, 6, 1};
	assert_int_equal(db_profile_select_pass(p, passes, atom_calls, 3), 1);
	db_profile_free(p);
	p = parse_ok("name: x\npath: a\npass: last\n");
	assert_int_equal(db_profile_select_pass(p, passes, NULL, 5), 4);
	assert_int_equal(db_profile_select_pass(p, passes, NULL, 0), -1);
	db_profile_free(p);
	p = parse_ok("name: x\npath: a\npass: all\n");
	assert_int_equal(db_profile_select_pass(p, passes, NULL, 5), -1);
	db_profile_free(p);
	assert_true(db_profile_pass_cmp("9", "10") < 0);
	assert_true(db_profile_pass_cmp("00010", "9") > 0);
	assert_int_equal(db_profile_pass_cmp("003", "3"), 0);
	assert_true(db_profile_pass_cmp("a", "b") < 0);
}

/* ---- user profiles ---- */

static void test_user_profiles(void **state)
{
	char dir[400];
	assert_int_equal(tu_mkdtemp(dir, sizeof dir, "profile"), 0);
	char d1[512], d2[512], d3[700], f1[600], f2[600], f3[600];
	snprintf(d1, sizeof d1, "%s/dumpbisect", dir);
	snprintf(d2, sizeof d2, "%s/dumpbisect/profiles", dir);
	assert_int_equal(mkdir(d1, 0700), 0);
	assert_int_equal(mkdir(d2, 0700), 0);
	snprintf(f1, sizeof f1, "%s/mine.yaml", d2);
	snprintf(f2, sizeof f2, "%s/generic.yaml", d2);  /* shadows the built-in */
	tu_put(f1, "name: mine\npath: '(?<stage>\\w+)\\.pt$'\n");
	tu_put(f2, "name: generic-user\npath: 'x'\n");
	char *old = getenv("XDG_CONFIG_HOME") ? strdup(getenv("XDG_CONFIG_HOME")) : NULL;
	setenv("XDG_CONFIG_HOME", dir, 1);

	db_profile *p = load("mine");
	assert_string_equal(p->name, "mine");
	assert_string_equal(p->origin, f1);
	db_profile_free(p);
	p = load("generic");
	assert_string_equal(p->name, "generic-user");
	db_profile_free(p);
	/* by path: contains '/' or ends in .yaml */
	p = load(f1);
	assert_string_equal(p->name, "mine");
	db_profile_free(p);

	char **names = NULL;
	size_t n = db_profile_names(&names);
	size_t at_mine = n, at_atom = n, generic_count = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(names[i], "mine"))
			at_mine = i;
		if (!strcmp(names[i], "atom"))
			at_atom = i;
		generic_count += !strcmp(names[i], "generic");
	}
	assert_true(at_atom < at_mine && at_mine < n);  /* built-ins first */
	assert_int_equal(generic_count, 1);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);

	/* a broken user profile names its file and line */
	snprintf(f3, sizeof f3, "%s/broken.yaml", d2);
	tu_put(f3, "name: broken\npath: x\nfoo: 1\n");
	db_err err = {{0}};
	assert_int_equal(db_profile_load("broken", &p, &err), -1);
	snprintf(d3, sizeof d3, "%s:3:1: unknown key 'foo'", f3);
	if (!strstr(err.msg, d3))
		fail_msg("'%s' lacks '%s'", err.msg, d3);

	assert_int_equal(tu_rm_rf(dir), 0);
	if (old) {
		setenv("XDG_CONFIG_HOME", old, 1);
		free(old);
	} else {
		unsetenv("XDG_CONFIG_HOME");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtins_parse),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_match_sglang_v2_real),
		cmocka_unit_test(test_match_sglang_v2_miles),
		cmocka_unit_test(test_rewrite),
		cmocka_unit_test(test_full_profile),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_null_keeps_default),
		cmocka_unit_test(test_match_sglang_v1),
		cmocka_unit_test(test_match_sglang_v2),
		cmocka_unit_test(test_match_sglang_hook),
		cmocka_unit_test(test_match_atom),
		cmocka_unit_test(test_match_atom_fwd),
		cmocka_unit_test(test_match_atom_weights),
		cmocka_unit_test(test_match_generic),
		cmocka_unit_test(test_select_pass),
		cmocka_unit_test(test_user_profiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
