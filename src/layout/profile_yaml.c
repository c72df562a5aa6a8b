/* Profile YAML -> db_profile. Strict: unknown keys, wrong types and bad
 * regexes are errors "ORIGIN:LINE:COL: message" (libyaml marks, 1-based),
 * because a typo in a profile must not silently pair the wrong tensors. */
#include "db_profile.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <yaml.h>

#include <stdlib.h>
#include <string.h>

#include "profile_groups.h"
#include "profile_yaml_priv.h"
#include "util/yaml_err.h"
#include "util/yaml_load.h"

/* ---- top level ---- */

static const char *const TOP_KEYS =
	"name, description, files, path, key, value_key, ignore_keys, sides, "
	"phase_order, stage_order, dict_order, pairing, model_after, substages, substage_separator, "
	"shard, pass, thresholds, probe, weight_phases, layer_classes, dump_command, input_ids, routing_ids, "
	"rename, rewrite, token_dim, pass_shift, quant, pass_if, replicated";

typedef struct seen {
	const yaml_node_t *name, *path, *thresholds;
} seen;

/* replicated: a list of stage regexes */
static int get_replicated(ctx *c, const yaml_node_t *vn)
{
	db_profile *p = c->p;
	char **pats = NULL;
	size_t n = 0;
	if (yp_get_str_list(c, vn, "replicated", &pats, &n))
		return -1;
	void **re = calloc(n ? n : 1, sizeof *re);
	if (!re) {
		yp_free_list(pats, n);
		return yp_oom(c, vn);
	}
	for (size_t i = 0; i < n; i++)
		if (yp_compile_re(c, vn, "replicated", pats[i], false, &re[i])) {
			for (size_t k = 0; k < i; k++)
				pcre2_code_free(re[k]);
			free(re);
			yp_free_list(pats, n);
			return -1;
		}
	for (size_t i = 0; i < p->n_replicated; i++)
		pcre2_code_free(p->replicated_re[i]);
	free(p->replicated_re);
	yp_free_list(p->replicated, p->n_replicated);
	p->replicated = pats;
	p->replicated_re = re;
	p->n_replicated = n;
	return 0;
}

static int top_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	seen *sn = arg;
	if (yp_is_null(vn)) {
		if (!strcmp(k, "name") || !strcmp(k, "path"))
			return yp_fail(c, vn, "%s: required, must not be empty", k);
		return 0;               /* explicit null: keep the default */
	}
	if (!strcmp(k, "name")) {
		sn->name = vn;
		if (yp_get_str(c, vn, "name", &p->name))
			return -1;
		if (!*p->name || strpbrk(p->name, "/ \t\n"))
			return yp_fail(c, vn, "name: must be non-empty, without '/' or blanks");
		return 0;
	}
	if (!strcmp(k, "description"))
		return yp_get_str(c, vn, "description", &p->description);
	if (!strcmp(k, "files"))
		return yp_get_re(c, vn, "files", false, &p->files_pat, &p->files_re);
	if (!strcmp(k, "path")) {
		sn->path = vn;
		return yp_get_re(c, vn, "path", true, &p->path_pat, &p->path_re);
	}
	if (!strcmp(k, "key"))
		return yp_get_re(c, vn, "key", true, &p->key_pat, &p->key_re);
	if (!strcmp(k, "value_key"))
		return yp_get_str(c, vn, "value_key", &p->value_key);
	if (!strcmp(k, "ignore_keys"))
		return yp_get_str_list(c, vn, "ignore_keys", &p->ignore_keys, &p->n_ignore_keys);
	if (!strcmp(k, "sides")) {
		if (yp_each_pair(c, vn, "sides", yp_sides_pair, NULL))
			return -1;
		if (!strcmp(p->side_ref, p->side_target))
			return yp_fail(c, vn, "sides: ref and target must differ");
		return 0;
	}
	if (!strcmp(k, "phase_order"))
		return yp_get_str_list(c, vn, "phase_order", &p->phase_order, &p->n_phase_order);
	if (!strcmp(k, "stage_order"))
		return yp_get_str_list(c, vn, "stage_order", &p->stage_order, &p->n_stage_order);
	if (!strcmp(k, "dict_order")) {
		const char *s = yp_scalar(vn);
		if (!s || (strcmp(s, "execution") && strcmp(s, "none")))
			return yp_fail(c, vn, "dict_order: expected execution or none");
		p->dict_order_none = !strcmp(s, "none");
		return 0;
	}
	if (!strcmp(k, "pairing")) {
		const char *s = yp_scalar(vn);
		if (!s || (strcmp(s, "names") && strcmp(s, "calls")))
			return yp_fail(c, vn, "pairing: expected names or calls");
		p->pair_calls = !strcmp(s, "calls");
		return 0;
	}
	if (!strcmp(k, "model_after"))
		return yp_get_str_list(c, vn, "model_after", &p->model_after, &p->n_model_after);
	if (!strcmp(k, "substages"))
		return yp_each_pair(c, vn, "substages", yp_substage_pair, NULL);
	if (!strcmp(k, "substage_separator")) {
		const char *s = yp_scalar(vn);
		if (!s || strlen(s) > 1)
			return yp_fail(c, vn, "substage_separator: expected one character, or \"\" for none");
		p->substage_sep = s[0];
		return 0;
	}
	if (!strcmp(k, "shard"))
		return yp_get_shards(c, vn);
	if (!strcmp(k, "pass")) {
		if (vn->type == YAML_SCALAR_NODE)       /* shorthand: pass: prefill */
			return yp_pass_pair(c, "select", kn, vn, NULL);
		return yp_each_pair(c, vn, "pass", yp_pass_pair, NULL);
	}
	if (!strcmp(k, "thresholds")) {
		sn->thresholds = vn;
		return yp_each_pair(c, vn, "thresholds", yp_thr_pair, NULL);
	}
	if (!strcmp(k, "probe"))
		return yp_get_str_list(c, vn, "probe", &p->probes, &p->n_probes);
	if (!strcmp(k, "weight_phases"))
		return yp_get_str_list(c, vn, "weight_phases", &p->weight_phases, &p->n_weight_phases);
	if (!strcmp(k, "layer_classes"))
		return yp_get_classes(c, vn);
	if (!strcmp(k, "dump_command"))
		return yp_get_str(c, vn, "dump_command", &p->dump_command);
	if (!strcmp(k, "input_ids"))
		return yp_get_re(c, vn, "input_ids", false, &p->input_ids_pat, &p->input_ids_re);
	if (!strcmp(k, "routing_ids"))
		return yp_get_re(c, vn, "routing_ids", false, &p->routing_ids_pat, &p->routing_ids_re);
	if (!strcmp(k, "rename"))
		return yp_each_pair(c, vn, "rename", yp_rename_pair, NULL);
	if (!strcmp(k, "pass_shift"))
		return yp_each_pair(c, vn, "pass_shift", yp_pass_shift_pair, NULL);
	if (!strcmp(k, "token_dim"))
		return yp_each_pair(c, vn, "token_dim", yp_token_dim_pair, NULL);
	if (!strcmp(k, "rewrite"))
		return yp_each_pair(c, vn, "rewrite", yp_rewrite_pair, NULL);
	if (!strcmp(k, "quant"))
		return yp_get_quant(c, vn);
	if (!strcmp(k, "pass_if"))
		return yp_get_str_list(c, vn, "pass_if", &p->pass_if, &p->n_pass_if);
	if (!strcmp(k, "replicated"))
		return get_replicated(c, vn);
	return yp_fail(c, kn, "unknown key '%s' (known: %s)", k, TOP_KEYS);
}

static int set_default_list(char ***a, size_t *n, const char *const *vals)
{
	size_t cnt = 0;
	while (vals[cnt])
		cnt++;
	if (!(*a = calloc(cnt + 1, sizeof **a)))
		return -1;
	for (*n = 0; *n < cnt; (*n)++)
		if (!((*a)[*n] = strdup(vals[*n])))
			return -1;
	return 0;
}

static const char DEFAULT_FILES[] = "\\.(pt|safetensors|npy|npz)$";
static const char DEFAULT_INPUT_IDS[] = "input_ids";

static int set_defaults(db_profile *p)
{
	static const char *const phases[] = {"inference", "fwd_only", "fwd_bwd", NULL};
	static const char *const after[] = {"final*", "*.final*", "*logits*", "lm_head*", NULL};
	db_thresholds_default(&p->thresholds);
	p->substage_sep = '.';
	p->pass_select = DB_PASS_FIRST;
	p->pass_slots = 1;
	if (!(p->description = strdup("")) ||
	    !(p->side_ref = strdup("ref")) || !(p->side_target = strdup("target")))
		return -1;
	if (set_default_list(&p->phase_order, &p->n_phase_order, phases) ||
	    set_default_list(&p->model_after, &p->n_model_after, after))
		return -1;
	return 0;
}

/* Regexes left at their defaults are compiled after the document. */
static int compile_defaults(ctx *c, const yaml_node_t *root)
{
	db_profile *p = c->p;
	if (!p->files_pat) {
		if (!(p->files_pat = strdup(DEFAULT_FILES)))
			return yp_oom(c, root);
		if (yp_compile_re(c, root, "files", p->files_pat, false, &p->files_re))
			return -1;
	}
	if (!p->input_ids_pat) {
		if (!(p->input_ids_pat = strdup(DEFAULT_INPUT_IDS)))
			return yp_oom(c, root);
		if (yp_compile_re(c, root, "input_ids", p->input_ids_pat, false, &p->input_ids_re))
			return -1;
	}
	return 0;
}

static int parse_doc(ctx *c)
{
	yaml_node_t *root = yaml_document_get_root_node(c->doc);
	if (!root)
		return db_err_set(c->err, NULL, NULL, -1, "%s:1:1: empty profile", c->origin);
	seen sn = {0};
	if (root->type != YAML_MAPPING_NODE)
		return yp_fail(c, root, "a profile is a mapping of keys (name, path, ...)");
	if (yp_each_pair(c, root, "profile", top_pair, &sn))
		return -1;
	if (!sn.name)
		return yp_fail(c, root, "missing required key 'name'");
	if (!sn.path)
		return yp_fail(c, root, "missing required key 'path'");
	if (sn.thresholds && yp_check_thresholds(c, sn.thresholds))
		return -1;
	return compile_defaults(c, root);
}

int db_profile_parse(const char *yaml, size_t len, const char *origin,
                     db_profile **out, db_err *err)
{
	*out = NULL;
	if (!origin)
		origin = "profile";
	if (!yaml) {
		yaml = "";
		len = 0;
	}
	db_profile *p = calloc(1, sizeof *p);
	if (!p || set_defaults(p)) {
		db_profile_free(p);
		return db_err_set(err, origin, NULL, -1, "out of memory");
	}
	yaml_parser_t parser;
	yaml_document_t doc;
	if (db_yaml_check_depth(origin, yaml, len, err)) {
		db_profile_free(p);
		return -1;
	}
	if (!yaml_parser_initialize(&parser)) {
		db_profile_free(p);
		return db_err_set(err, origin, NULL, -1, "out of memory");
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	if (!yaml_parser_load(&parser, &doc)) {
		db_yaml_err_at(err, origin, &parser.problem_mark, "YAML: %s%s%s",
		               parser.problem ? parser.problem : "syntax error",
		               parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		db_profile_free(p);
		return -1;
	}
	ctx c = {origin, &doc, err, p};
	int rc = db_yaml_check_expansion(origin, &doc, len, err);
	if (!rc)
		rc = parse_doc(&c);
	yaml_document_delete(&doc);
	if (!rc) {
		/* a stray "---" would silently cut the profile in two */
		yaml_document_t next;
		if (!yaml_parser_load(&parser, &next)) {
			rc = db_yaml_err_at(err, origin, &parser.problem_mark, "YAML: %s",
			                    parser.problem ? parser.problem : "syntax error");
		} else {
			yaml_node_t *r = yaml_document_get_root_node(&next);
			if (r)
				rc = db_yaml_err_at(err, origin, &r->start_mark, "a profile is one YAML "
				                    "document; remove the second one");
			yaml_document_delete(&next);
		}
	}
	yaml_parser_delete(&parser);
	if (rc) {
		db_profile_free(p);
		return -1;
	}
	if (!(p->origin = strdup(origin))) {
		db_profile_free(p);
		return db_err_set(err, origin, NULL, -1, "out of memory");
	}
	p->path_g = db_gnums_new(p->path_re);   /* NULL (no memory): by name */
	p->key_g = db_gnums_new(p->key_re);
	*out = p;
	return 0;
}

void db_profile_free(db_profile *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->description);
	free(p->origin);
	free(p->files_pat);
	pcre2_code_free(p->files_re);
	free(p->path_pat);
	pcre2_code_free(p->path_re);
	free(p->key_pat);
	pcre2_code_free(p->key_re);
	free(p->path_g);
	free(p->key_g);
	free(p->value_key);
	yp_free_list(p->ignore_keys, p->n_ignore_keys);
	free(p->side_ref);
	free(p->side_target);
	yp_free_list(p->phase_order, p->n_phase_order);
	yp_free_list(p->stage_order, p->n_stage_order);
	yp_free_list(p->model_after, p->n_model_after);
	for (size_t i = 0; i < p->n_substages; i++) {
		free(p->substages[i].parent);
		free(p->substages[i].pattern);
		pcre2_code_free(p->substages[i].re);
	}
	free(p->substages);
	for (size_t i = 0; i < p->n_shards; i++) {
		free(p->shards[i].pattern);
		pcre2_code_free(p->shards[i].re);
	}
	free(p->shards);
	free(p->pass_value);
	yp_free_list(p->probes, p->n_probes);
	yp_free_list(p->weight_phases, p->n_weight_phases);
	yp_free_list(p->pass_if, p->n_pass_if);
	for (size_t i = 0; i < p->n_replicated; i++)
		pcre2_code_free(p->replicated_re[i]);
	free(p->replicated_re);
	yp_free_list(p->replicated, p->n_replicated);
	for (size_t i = 0; i < p->n_classes; i++)
		free(p->classes[i].name);
	free(p->classes);
	free(p->dump_command);
	free(p->input_ids_pat);
	pcre2_code_free(p->input_ids_re);
	free(p->routing_ids_pat);
	pcre2_code_free(p->routing_ids_re);
	yp_free_list(p->rename_from, p->n_rename);
	yp_free_list(p->rename_to, p->n_rename);
	yp_free_list(p->pass_shift_pat, p->n_pass_shift);
	for (size_t i = 0; i < p->n_pass_shift; i++)
		pcre2_code_free(p->pass_shift_re[i]);
	free(p->pass_shift_re);
	free(p->pass_shift_by);
	yp_free_list(p->token_dim_glob, p->n_token_dim);
	free(p->token_dim);
	for (size_t i = 0; i < p->n_rewrites; i++) {
		free(p->rewrites[i].pattern);
		pcre2_code_free(p->rewrites[i].re);
		free(p->rewrites[i].to);
	}
	free(p->rewrites);
	yp_free_quant(p);
	free(atomic_load(&p->re_error));
	free(p);
}

/* The users' method (seeds/002): ok / drift / algo / bug, and scramble
 * for cos <= 0.1; a profile's thresholds: override these. */
void db_thresholds_default(db_thresholds *t)
{
	t->ok_cos = 0.9999;
	t->ok_rel = 0.01;
	t->drift_cos = 0.99;
	t->drift_rel = 0.10;
	t->algo_cos = 0.9;
	t->algo_rel = 0.30;
	t->scramble_cos = 0.1;
	/* TP 1 against TP 2 moves msprobe's statistics by ~5e-6 (float32
	 * reduction order); a bug by 1e-2 and far more */
	t->stats_ok_rel = 1e-4;
	t->stats_drift_rel = 1e-3;
	t->stats_algo_rel = 1e-2;
	/* --noise: two correct runs of one layout differ in rel (a max over
	 * the tensor) by a few ulps of its largest value from stage to stage,
	 * a bug by orders of magnitude: 4x the floor is still noise. A floor
	 * of 0 (the noise run bit-identical there) counts as 1e-6, about eight
	 * float32 ulps of the largest value, so float32 last-bit differences
	 * are not called a bug; any bf16 difference (>= 3.9e-3) still is. */
	t->noise_k = 4;
	t->noise_min_rel = 1e-6;
	/* an order of magnitude: rounding noise at another TP size grows by
	 * a few × through a matmul, a bug by far more */
	t->amplify = 10.0;
}
