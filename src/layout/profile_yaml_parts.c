/* Profile YAML, the structured keys: sides, substages, token_dim, rename,
 * rewrite, shard, pass, thresholds and layer_classes. */
#include "profile_yaml_priv.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdlib.h>
#include <string.h>

int yp_sides_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	if (!strcmp(k, "ref"))
		return yp_get_str(c, vn, "sides.ref", &p->side_ref);
	if (!strcmp(k, "target"))
		return yp_get_str(c, vn, "sides.target", &p->side_target);
	return yp_fail(c, kn, "sides: unknown key '%s' (known: ref, target)", k);
}

int yp_substage_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	db_substage_rule *a = realloc(p->substages, (p->n_substages + 1) * sizeof *a);
	if (!a)
		return yp_oom(c, kn);
	p->substages = a;
	db_substage_rule *r = &a[p->n_substages];
	memset(r, 0, sizeof *r);
	if (!*k)
		return yp_fail(c, kn, "substages: empty stage name");
	if (!(r->parent = strdup(k)))
		return yp_oom(c, kn);
	p->n_substages++;
	return yp_get_re(c, vn, "substages", false, &r->pattern, &r->re);
}

int yp_token_dim_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn,
                      void *arg)
{
	(void)arg;
	db_profile *p = c->p;
	size_t n = p->n_token_dim;
	char **g = realloc(p->token_dim_glob, (n + 1) * sizeof *g);
	if (!g)
		return yp_oom(c, kn);
	p->token_dim_glob = g;
	int *d = realloc(p->token_dim, (n + 1) * sizeof *d);
	if (!d)
		return yp_oom(c, kn);
	p->token_dim = d;
	const char *s = yp_scalar(vn);
	char *end;
	long v = s ? strtol(s, &end, 10) : -1;
	if (!s || !*s || *end || v < 0 || v >= DB_MAX_DIMS)
		return yp_fail(c, vn, "token_dim: '%s' wants a dim 0..%d", k, DB_MAX_DIMS - 1);
	if (!(g[n] = strdup(k)))
		return yp_oom(c, kn);
	d[n] = (int)v;
	p->n_token_dim++;
	return 0;
}

int yp_pass_shift_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn,
                       void *arg)
{
	(void)arg;
	db_profile *p = c->p;
	size_t n = p->n_pass_shift;
	char **pat = realloc(p->pass_shift_pat, (n + 1) * sizeof *pat);
	if (!pat)
		return yp_oom(c, kn);
	p->pass_shift_pat = pat;
	void **re = realloc(p->pass_shift_re, (n + 1) * sizeof *re);
	if (!re)
		return yp_oom(c, kn);
	p->pass_shift_re = re;
	int *by = realloc(p->pass_shift_by, (n + 1) * sizeof *by);
	if (!by)
		return yp_oom(c, kn);
	p->pass_shift_by = by;
	int v;
	if (yp_get_int(c, vn, "pass_shift", -1000, 1000, &v))
		return -1;
	if (!v)
		return yp_fail(c, vn, "pass_shift: '%s' shifts by 0 (leave it out)", k);
	if (!(pat[n] = strdup(k)))
		return yp_oom(c, kn);
	re[n] = NULL;
	by[n] = v;
	p->n_pass_shift++;
	return yp_compile_re(c, kn, "pass_shift", k, false, &re[n]);
}

int yp_rename_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	size_t n = p->n_rename;
	char **f = realloc(p->rename_from, (n + 1) * sizeof *f);
	if (!f)
		return yp_oom(c, kn);
	p->rename_from = f;
	char **t = realloc(p->rename_to, (n + 1) * sizeof *t);
	if (!t)
		return yp_oom(c, kn);
	p->rename_to = t;
	f[n] = strdup(k);
	t[n] = NULL;
	if (!f[n])
		return yp_oom(c, kn);
	p->n_rename++;
	if (yp_get_str(c, vn, "rename", &t[n]))
		return -1;
	if (!*t[n])
		return yp_fail(c, vn, "rename: '%s' renamed to an empty stage", k);
	return 0;
}

/* The first $n / ${n} / $name / ${name[:...]} of to that re does not have,
 * in a static buffer; NULL when all exist. */
static const char *bad_group_ref(const void *re, const char *to)
{
	static __thread char name[64];
	uint32_t ncap = 0;
	pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &ncap);
	for (const char *s = to; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			continue;
		}
		if (*s != '$' || !s[1])
			continue;
		if (s[1] == '$') {
			s++;
			continue;
		}
		const char *b = s + 1 + (s[1] == '{');
		size_t n = strspn(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (!n || n >= sizeof name)
			continue;
		memcpy(name, b, n);
		name[n] = 0;
		s = b + n - 1;
		bool digits = strspn(name, "0123456789") == n;
		int num = digits ? 0 : pcre2_substring_number_from_name(re, (PCRE2_SPTR)name);
		if (digits ? strtoul(name, NULL, 10) > ncap
		           : num < 0 && num != PCRE2_ERROR_NOUNIQUESUBSTRING)  /* (?J) duplicates exist */
			return name;
	}
	return NULL;
}

/* rewrite: {phase|pass|stage: [[REGEX, REPLACEMENT], ...]} */
int yp_rewrite_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	db_rewrite_field field;
	if (!strcmp(k, "phase"))
		field = DB_RW_PHASE;
	else if (!strcmp(k, "pass"))
		field = DB_RW_PASS;
	else if (!strcmp(k, "stage"))
		field = DB_RW_STAGE;
	else
		return yp_fail(c, kn, "rewrite: unknown field '%s' (known: phase, pass, stage)", k);
	if (vn->type != YAML_SEQUENCE_NODE)
		return yp_fail(c, vn, "rewrite.%s: expected a list of [regex, replacement]", k);
	for (yaml_node_item_t *it = vn->data.sequence.items.start; it < vn->data.sequence.items.top; it++) {
		const yaml_node_t *e = yp_node(c, *it);
		if (!e || e->type != YAML_SEQUENCE_NODE ||
		    e->data.sequence.items.top - e->data.sequence.items.start != 2)
			return yp_fail(c, e ? e : vn, "rewrite.%s: each rule is [regex, replacement]", k);
		db_rewrite_rule *a = realloc(p->rewrites, (p->n_rewrites + 1) * sizeof *a);
		if (!a)
			return yp_oom(c, e);
		p->rewrites = a;
		db_rewrite_rule *r = &a[p->n_rewrites];
		memset(r, 0, sizeof *r);
		r->field = field;
		p->n_rewrites++;
		const yaml_node_t *rn = yp_node(c, e->data.sequence.items.start[0]);
		const yaml_node_t *tn = yp_node(c, e->data.sequence.items.start[1]);
		if (yp_get_re(c, rn, "rewrite", false, &r->pattern, &r->re))
			return -1;
		if (yp_is_null(tn)) {
			if (!(r->to = strdup("")))
				return yp_oom(c, tn);
		} else if (yp_get_str(c, tn, "rewrite", &r->to)) {
			return -1;
		}
		/* a bad replacement ($9 of a 1-group regex) fails here, not per file */
		const char *bad = bad_group_ref(r->re, r->to);
		if (bad)
			return yp_fail(c, tn, "rewrite.%s: bad replacement '%s': no group '%s' in the regex",
			            k, r->to, bad);
		pcre2_match_data *md = pcre2_match_data_create_from_pattern(r->re, NULL);
		if (md)
			r->no_empty = pcre2_match(r->re, (PCRE2_SPTR) "", 0, 0, 0, md, NULL) ==
			              PCRE2_ERROR_NOMATCH;
		pcre2_match_data_free(md);
	}
	return 0;
}

static int shard_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_shard_rule *r = arg;
	if (!strcmp(k, "stage"))
		return yp_get_re(c, vn, "shard.stage", false, &r->pattern, &r->re);
	if (!strcmp(k, "dim"))
		return yp_get_int(c, vn, "shard.dim", -DB_MAX_DIMS, DB_MAX_DIMS - 1, &r->dim);
	if (!strcmp(k, "how")) {
		const char *s = yp_scalar(vn);
		if (s && !strcmp(s, "concat"))
			r->how = DB_UNSHARD_CONCAT;
		else if (s && !strcmp(s, "sum"))
			r->how = DB_UNSHARD_SUM;
		else if (s && !strcmp(s, "fused"))
			r->how = DB_UNSHARD_FUSED;
		else
			return yp_fail(c, vn, "shard.how: expected concat or sum, or fused");
		return 0;
	}
	if (!strcmp(k, "parts")) {
		/* fused: the parts' relative sizes along dim, e.g. q:k:v = [2, 1, 1] */
		if (vn->type != YAML_SEQUENCE_NODE)
			return yp_fail(c, vn, "shard.parts: expected a list of positive integers");
		r->n_parts = 0;
		for (yaml_node_item_t *it = vn->data.sequence.items.start;
		     it < vn->data.sequence.items.top; it++) {
			if (r->n_parts == (int)(sizeof r->parts / sizeof *r->parts))
				return yp_fail(c, vn, "shard.parts: at most %zu parts",
				            sizeof r->parts / sizeof *r->parts);
			if (yp_get_int(c, yp_node(c, *it), "shard.parts", 1, 1 << 20, &r->parts[r->n_parts]))
				return -1;
			r->n_parts++;
		}
		if (r->n_parts < 2)
			return yp_fail(c, vn, "shard.parts: a fused output has at least 2 parts");
		return 0;
	}
	return yp_fail(c, kn, "shard: unknown key '%s' (known: stage, dim, how, parts)", k);
}

int yp_get_shards(ctx *c, const yaml_node_t *n)
{
	db_profile *p = c->p;
	if (n->type != YAML_SEQUENCE_NODE)
		return yp_fail(c, n, "shard: expected a list of {stage, dim, how}");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = yp_node(c, *it);
		db_shard_rule *a = realloc(p->shards, (p->n_shards + 1) * sizeof *a);
		if (!a)
			return yp_oom(c, e);
		p->shards = a;
		db_shard_rule *r = &a[p->n_shards++];
		memset(r, 0, sizeof *r);
		if (yp_each_pair(c, e, "shard", shard_pair, r))
			return -1;
		if (!r->pattern)
			return yp_fail(c, e, "shard: missing required key 'stage'");
		if (r->n_parts && r->how != DB_UNSHARD_FUSED)
			return yp_fail(c, e, "shard: 'parts' is for how: fused only");
	}
	return 0;
}

int yp_pass_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	if (!strcmp(k, "slots"))
		return yp_get_int(c, vn, "pass.slots", 1, 1 << 20, &p->pass_slots);
	if (strcmp(k, "select"))
		return yp_fail(c, kn, "pass: unknown key '%s' (known: select, slots)", k);
	const char *s = yp_scalar(vn);
	if (!s || !*s)
		return yp_fail(c, vn, "pass.select: expected first, last, all, prefill or a pass value");
	free(p->pass_value);
	p->pass_value = NULL;
	if (!strcmp(s, "first"))
		p->pass_select = DB_PASS_FIRST;
	else if (!strcmp(s, "last"))
		p->pass_select = DB_PASS_LAST;
	else if (!strcmp(s, "all"))
		p->pass_select = DB_PASS_ALL;
	else if (!strcmp(s, "prefill"))
		p->pass_select = DB_PASS_PREFILL;
	else {
		p->pass_select = DB_PASS_VALUE;
		return yp_get_str(c, vn, "pass.select", &p->pass_value);
	}
	return 0;
}

int yp_thr_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_thresholds *t = &c->p->thresholds;
	static const char *const names[] = {
		"ok_cos", "ok_rel", "drift_cos", "drift_rel", "algo_cos", "algo_rel", "scramble_cos",
		"noise_k", "noise_min_rel", "amplify"
	};
	double *slots[] = {
		&t->ok_cos, &t->ok_rel, &t->drift_cos, &t->drift_rel, &t->algo_cos, &t->algo_rel,
		&t->scramble_cos, &t->noise_k, &t->noise_min_rel, &t->amplify
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(k, names[i]))
			return yp_get_double(c, vn, names[i], slots[i]);
	return yp_fail(c, kn, "thresholds: unknown key '%s' (known: ok_cos, ok_rel, drift_cos, "
	            "drift_rel, algo_cos, algo_rel, scramble_cos, noise_k, noise_min_rel)", k);
}

int yp_check_thresholds(ctx *c, const yaml_node_t *n)
{
	const db_thresholds *t = &c->p->thresholds;
	if (!(t->amplify > 1))
		return yp_fail(c, n, "thresholds: amplify must be > 1 (got %g)", t->amplify);
	if (!(t->ok_cos >= t->drift_cos && t->drift_cos >= t->algo_cos && t->algo_cos >= t->scramble_cos))
		return yp_fail(c, n, "thresholds: need ok_cos >= drift_cos >= algo_cos >= scramble_cos "
		            "(got %g, %g, %g, %g)", t->ok_cos, t->drift_cos, t->algo_cos, t->scramble_cos);
	if (!(t->ok_rel <= t->drift_rel && t->drift_rel <= t->algo_rel && t->ok_rel >= 0))
		return yp_fail(c, n, "thresholds: need 0 <= ok_rel <= drift_rel <= algo_rel (got %g, %g, %g)",
		            t->ok_rel, t->drift_rel, t->algo_rel);
	if (!(t->noise_k >= 1 && t->noise_min_rel > 0))
		return yp_fail(c, n, "thresholds: need noise_k >= 1 and noise_min_rel > 0 (got %g, %g)",
		            t->noise_k, t->noise_min_rel);
	return 0;
}

/* "5", "0-2", "3-" (open-ended). */
static int parse_layers(ctx *c, const yaml_node_t *n, db_layer_class *lc)
{
	const char *s = yp_scalar(n);
	char *end;
	if (!s || *s < '0' || *s > '9')
		return yp_fail(c, n, "layer_classes.layers: expected \"L\", \"LO-HI\" or \"LO-\"");
	long lo = strtol(s, &end, 10), hi = lo;
	if (*end == '-') {
		const char *h = end + 1;
		if (!*h)
			hi = -1;
		else if (*h < '0' || *h > '9' || (hi = strtol(h, &end, 10), *end))
			return yp_fail(c, n, "layer_classes.layers: bad range '%s'", s);
	} else if (*end) {
		return yp_fail(c, n, "layer_classes.layers: bad range '%s'", s);
	}
	if (lo > 1000000 || hi > 1000000 || (hi != -1 && hi < lo))
		return yp_fail(c, n, "layer_classes.layers: bad range '%s'", s);
	lc->lo = (int)lo;
	lc->hi = (int)hi;
	return 0;
}

static int class_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_layer_class *lc = arg;
	if (!strcmp(k, "name"))
		return yp_get_str(c, vn, "layer_classes.name", &lc->name);
	if (!strcmp(k, "layers")) {
		lc->hi = -2;            /* marks "seen" until parsed */
		return parse_layers(c, vn, lc);
	}
	return yp_fail(c, kn, "layer_classes: unknown key '%s' (known: name, layers)", k);
}

int yp_get_classes(ctx *c, const yaml_node_t *n)
{
	db_profile *p = c->p;
	if (n->type != YAML_SEQUENCE_NODE)
		return yp_fail(c, n, "layer_classes: expected a list of {name, layers}");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = yp_node(c, *it);
		db_layer_class *a = realloc(p->classes, (p->n_classes + 1) * sizeof *a);
		if (!a)
			return yp_oom(c, e);
		p->classes = a;
		db_layer_class *lc = &a[p->n_classes++];
		lc->name = NULL;
		lc->lo = -1;
		lc->hi = -3;            /* -3: layers not given */
		if (yp_each_pair(c, e, "layer_classes", class_pair, lc))
			return -1;
		if (!lc->name || lc->hi == -3)
			return yp_fail(c, e, "layer_classes: each entry needs 'name' and 'layers'");
	}
	return 0;
}
