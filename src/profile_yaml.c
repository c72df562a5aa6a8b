/* Profile YAML -> db_profile. Strict: unknown keys, wrong types and bad
 * regexes are errors "ORIGIN:LINE:COL: message" (libyaml marks, 1-based),
 * because a typo in a profile must not silently pair the wrong tensors. */
#include "db_profile.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <yaml.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yaml_err.h"

typedef struct ctx {
	const char *origin;
	yaml_document_t *doc;
	db_err *err;
	db_profile *p;
} ctx;

/* Named groups a path/key regex may use; others must start with '_'. */
static const char *const FIELD_GROUPS[] = {
	"side", "phase", "phase_sub", "pass", "rank", "layer", "stage", "order", "file_stage", NULL
};

static int fail(ctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	db_yaml_verr(c->err, c->origin, n, fmt, ap);
	va_end(ap);
	return -1;
}

static yaml_node_t *node(ctx *c, int idx)
{
	return yaml_document_get_node(c->doc, idx);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A plain `~`, `null` or empty value: "not set", the default stays. */
static bool is_null(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *s = scalar(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int oom(ctx *c, const yaml_node_t *n)
{
	return fail(c, n, "out of memory");
}

static int get_str(ctx *c, const yaml_node_t *n, const char *what, char **out)
{
	const char *s = scalar(n);
	if (!s)
		return fail(c, n, "%s: expected a string", what);
	if (strlen(s) != n->data.scalar.length)
		return fail(c, n, "%s: NUL byte in string", what);
	char *d = strdup(s);
	if (!d)
		return oom(c, n);
	free(*out);
	*out = d;
	return 0;
}

static int get_int(ctx *c, const yaml_node_t *n, const char *what, long lo, long hi, int *out)
{
	const char *s = scalar(n);
	char *end;
	if (!s || !*s)
		return fail(c, n, "%s: expected an integer", what);
	errno = 0;
	long v = strtol(s, &end, 10);
	if (*end || errno)
		return fail(c, n, "%s: expected an integer, got '%s'", what, s);
	if (v < lo || v > hi)
		return fail(c, n, "%s: %ld is out of range [%ld, %ld]", what, v, lo, hi);
	*out = (int)v;
	return 0;
}

static int get_double(ctx *c, const yaml_node_t *n, const char *what, double *out)
{
	const char *s = scalar(n);
	char *end;
	if (!s || !*s)
		return fail(c, n, "%s: expected a number", what);
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno || !isfinite(v))
		return fail(c, n, "%s: expected a finite number, got '%s'", what, s);
	*out = v;
	return 0;
}

static void free_list(char **a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i]);
	free(a);
}

/* A sequence of strings; a single string counts as a one-item list. */
static int get_str_list(ctx *c, const yaml_node_t *n, const char *what, char ***out, size_t *nout)
{
	size_t cnt;
	yaml_node_item_t *items = NULL;
	if (n->type == YAML_SCALAR_NODE) {
		cnt = 1;
	} else if (n->type == YAML_SEQUENCE_NODE) {
		items = n->data.sequence.items.start;
		cnt = (size_t)(n->data.sequence.items.top - items);
	} else {
		return fail(c, n, "%s: expected a list of strings", what);
	}
	char **a = calloc(cnt ? cnt : 1, sizeof *a);
	if (!a)
		return oom(c, n);
	for (size_t i = 0; i < cnt; i++) {
		const yaml_node_t *it = items ? node(c, items[i]) : n;
		if (get_str(c, it, what, &a[i])) {
			free_list(a, i);
			return -1;
		}
	}
	free_list(*out, *nout);
	*out = a;
	*nout = cnt;
	return 0;
}

static bool known_group(const char *name)
{
	if (name[0] == '_')
		return true;
	for (int i = 0; FIELD_GROUPS[i]; i++)
		if (!strcmp(name, FIELD_GROUPS[i]))
			return true;
	return false;
}

/* Compile pat; fields = true checks the named groups against FIELD_GROUPS. */
static int compile_re(ctx *c, const yaml_node_t *n, const char *what, const char *pat,
                      bool fields, void **out)
{
	int ec;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
	                               PCRE2_DUPNAMES, &ec, &off, NULL);
	if (!re) {
		PCRE2_UCHAR buf[256];
		pcre2_get_error_message(ec, buf, sizeof buf);
		return fail(c, n, "%s: bad regex '%s': %s at offset %zu", what, pat,
		            (const char *)buf, (size_t)off);
	}
	if (fields) {
		uint32_t count = 0, esize = 0;
		PCRE2_SPTR table = NULL;
		pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &count);
		pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &esize);
		pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &table);
		for (uint32_t i = 0; i < count; i++) {
			const char *name = (const char *)(table + i * esize + 2);
			if (!known_group(name)) {
				fail(c, n, "%s: unknown named group '(?<%s>' (fields: side, phase, "
				     "phase_sub, pass, rank, layer, stage, order, file_stage; scratch "
				     "groups start with '_')", what, name);
				pcre2_code_free(re);    /* name points into it */
				return -1;
			}
		}
	}
	(void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);   /* optional speed-up */
	pcre2_code_free(*out);
	*out = re;
	return 0;
}

static int get_re(ctx *c, const yaml_node_t *n, const char *what, bool fields,
                  char **pat, void **re)
{
	char *s = NULL;
	if (get_str(c, n, what, &s))
		return -1;
	if (compile_re(c, n, what, s, fields, re)) {
		free(s);
		return -1;
	}
	free(*pat);
	*pat = s;
	return 0;
}

/* Iterate a mapping: calls fn for each pair with the key's text. */
typedef int (*pair_fn)(ctx *c, const char *key, const yaml_node_t *kn,
                       const yaml_node_t *vn, void *arg);

static int each_pair(ctx *c, const yaml_node_t *n, const char *what, pair_fn fn, void *arg)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail(c, n, "%s: expected a mapping", what);
	yaml_node_pair_t *b = n->data.mapping.pairs.start, *e = n->data.mapping.pairs.top;
	for (yaml_node_pair_t *q = b; q < e; q++) {
		const yaml_node_t *kn = node(c, q->key), *vn = node(c, q->value);
		const char *k = scalar(kn);
		if (!k)
			return fail(c, kn, "%s: keys must be strings", what);
		for (yaml_node_pair_t *r = b; r < q; r++)
			if (scalar(node(c, r->key)) && !strcmp(scalar(node(c, r->key)), k))
				return fail(c, kn, "%s: duplicate key '%s'", what, k);
		if (fn(c, k, kn, vn, arg))
			return -1;
	}
	return 0;
}

/* ---- sub-structures ---- */

static int sides_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	if (!strcmp(k, "ref"))
		return get_str(c, vn, "sides.ref", &p->side_ref);
	if (!strcmp(k, "target"))
		return get_str(c, vn, "sides.target", &p->side_target);
	return fail(c, kn, "sides: unknown key '%s' (known: ref, target)", k);
}

static int substage_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	db_substage_rule *a = realloc(p->substages, (p->n_substages + 1) * sizeof *a);
	if (!a)
		return oom(c, kn);
	p->substages = a;
	db_substage_rule *r = &a[p->n_substages];
	memset(r, 0, sizeof *r);
	if (!*k)
		return fail(c, kn, "substages: empty stage name");
	if (!(r->parent = strdup(k)))
		return oom(c, kn);
	p->n_substages++;
	return get_re(c, vn, "substages", false, &r->pattern, &r->re);
}

static int token_dim_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn,
                          void *arg)
{
	(void)arg;
	db_profile *p = c->p;
	size_t n = p->n_token_dim;
	char **g = realloc(p->token_dim_glob, (n + 1) * sizeof *g);
	if (!g)
		return oom(c, kn);
	p->token_dim_glob = g;
	int *d = realloc(p->token_dim, (n + 1) * sizeof *d);
	if (!d)
		return oom(c, kn);
	p->token_dim = d;
	const char *s = scalar(vn);
	char *end;
	long v = s ? strtol(s, &end, 10) : -1;
	if (!s || !*s || *end || v < 0 || v >= DB_MAX_DIMS)
		return fail(c, vn, "token_dim: '%s' wants a dim 0..%d", k, DB_MAX_DIMS - 1);
	if (!(g[n] = strdup(k)))
		return oom(c, kn);
	d[n] = (int)v;
	p->n_token_dim++;
	return 0;
}

static int rename_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	size_t n = p->n_rename;
	char **f = realloc(p->rename_from, (n + 1) * sizeof *f);
	if (!f)
		return oom(c, kn);
	p->rename_from = f;
	char **t = realloc(p->rename_to, (n + 1) * sizeof *t);
	if (!t)
		return oom(c, kn);
	p->rename_to = t;
	f[n] = strdup(k);
	t[n] = NULL;
	if (!f[n])
		return oom(c, kn);
	p->n_rename++;
	if (get_str(c, vn, "rename", &t[n]))
		return -1;
	if (!*t[n])
		return fail(c, vn, "rename: '%s' renamed to an empty stage", k);
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
static int rewrite_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
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
		return fail(c, kn, "rewrite: unknown field '%s' (known: phase, pass, stage)", k);
	if (vn->type != YAML_SEQUENCE_NODE)
		return fail(c, vn, "rewrite.%s: expected a list of [regex, replacement]", k);
	for (yaml_node_item_t *it = vn->data.sequence.items.start; it < vn->data.sequence.items.top; it++) {
		const yaml_node_t *e = node(c, *it);
		if (!e || e->type != YAML_SEQUENCE_NODE ||
		    e->data.sequence.items.top - e->data.sequence.items.start != 2)
			return fail(c, e ? e : vn, "rewrite.%s: each rule is [regex, replacement]", k);
		db_rewrite_rule *a = realloc(p->rewrites, (p->n_rewrites + 1) * sizeof *a);
		if (!a)
			return oom(c, e);
		p->rewrites = a;
		db_rewrite_rule *r = &a[p->n_rewrites];
		memset(r, 0, sizeof *r);
		r->field = field;
		p->n_rewrites++;
		const yaml_node_t *rn = node(c, e->data.sequence.items.start[0]);
		const yaml_node_t *tn = node(c, e->data.sequence.items.start[1]);
		if (get_re(c, rn, "rewrite", false, &r->pattern, &r->re))
			return -1;
		if (is_null(tn)) {
			if (!(r->to = strdup("")))
				return oom(c, tn);
		} else if (get_str(c, tn, "rewrite", &r->to)) {
			return -1;
		}
		/* a bad replacement ($9 of a 1-group regex) fails here, not per file */
		const char *bad = bad_group_ref(r->re, r->to);
		if (bad)
			return fail(c, tn, "rewrite.%s: bad replacement '%s': no group '%s' in the regex",
			            k, r->to, bad);
	}
	return 0;
}

static int shard_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_shard_rule *r = arg;
	if (!strcmp(k, "stage"))
		return get_re(c, vn, "shard.stage", false, &r->pattern, &r->re);
	if (!strcmp(k, "dim"))
		return get_int(c, vn, "shard.dim", -DB_MAX_DIMS, DB_MAX_DIMS - 1, &r->dim);
	if (!strcmp(k, "how")) {
		const char *s = scalar(vn);
		if (s && !strcmp(s, "concat"))
			r->how = DB_UNSHARD_CONCAT;
		else if (s && !strcmp(s, "sum"))
			r->how = DB_UNSHARD_SUM;
		else if (s && !strcmp(s, "fused"))
			r->how = DB_UNSHARD_FUSED;
		else
			return fail(c, vn, "shard.how: expected concat or sum, or fused");
		return 0;
	}
	if (!strcmp(k, "parts")) {
		/* fused: the parts' relative sizes along dim, e.g. q:k:v = [2, 1, 1] */
		if (vn->type != YAML_SEQUENCE_NODE)
			return fail(c, vn, "shard.parts: expected a list of positive integers");
		r->n_parts = 0;
		for (yaml_node_item_t *it = vn->data.sequence.items.start;
		     it < vn->data.sequence.items.top; it++) {
			if (r->n_parts == (int)(sizeof r->parts / sizeof *r->parts))
				return fail(c, vn, "shard.parts: at most %zu parts",
				            sizeof r->parts / sizeof *r->parts);
			if (get_int(c, node(c, *it), "shard.parts", 1, 1 << 20, &r->parts[r->n_parts]))
				return -1;
			r->n_parts++;
		}
		if (r->n_parts < 2)
			return fail(c, vn, "shard.parts: a fused output has at least 2 parts");
		return 0;
	}
	return fail(c, kn, "shard: unknown key '%s' (known: stage, dim, how, parts)", k);
}

static int get_shards(ctx *c, const yaml_node_t *n)
{
	db_profile *p = c->p;
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, n, "shard: expected a list of {stage, dim, how}");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = node(c, *it);
		db_shard_rule *a = realloc(p->shards, (p->n_shards + 1) * sizeof *a);
		if (!a)
			return oom(c, e);
		p->shards = a;
		db_shard_rule *r = &a[p->n_shards++];
		memset(r, 0, sizeof *r);
		if (each_pair(c, e, "shard", shard_pair, r))
			return -1;
		if (!r->pattern)
			return fail(c, e, "shard: missing required key 'stage'");
		if (r->n_parts && r->how != DB_UNSHARD_FUSED)
			return fail(c, e, "shard: 'parts' is for how: fused only");
	}
	return 0;
}

static int pass_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	if (!strcmp(k, "slots"))
		return get_int(c, vn, "pass.slots", 1, 1 << 20, &p->pass_slots);
	if (strcmp(k, "select"))
		return fail(c, kn, "pass: unknown key '%s' (known: select, slots)", k);
	const char *s = scalar(vn);
	if (!s || !*s)
		return fail(c, vn, "pass.select: expected first, last, all, prefill or a pass value");
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
		return get_str(c, vn, "pass.select", &p->pass_value);
	}
	return 0;
}

static int thr_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_thresholds *t = &c->p->thresholds;
	static const char *const names[] = {
		"ok_cos", "ok_rel", "drift_cos", "drift_rel", "algo_cos", "algo_rel", "scramble_cos"
	};
	double *slots[] = {
		&t->ok_cos, &t->ok_rel, &t->drift_cos, &t->drift_rel, &t->algo_cos, &t->algo_rel,
		&t->scramble_cos
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(k, names[i]))
			return get_double(c, vn, names[i], slots[i]);
	return fail(c, kn, "thresholds: unknown key '%s' (known: ok_cos, ok_rel, drift_cos, "
	            "drift_rel, algo_cos, algo_rel, scramble_cos)", k);
}

static int check_thresholds(ctx *c, const yaml_node_t *n)
{
	const db_thresholds *t = &c->p->thresholds;
	if (!(t->ok_cos >= t->drift_cos && t->drift_cos >= t->algo_cos && t->algo_cos >= t->scramble_cos))
		return fail(c, n, "thresholds: need ok_cos >= drift_cos >= algo_cos >= scramble_cos "
		            "(got %g, %g, %g, %g)", t->ok_cos, t->drift_cos, t->algo_cos, t->scramble_cos);
	if (!(t->ok_rel <= t->drift_rel && t->drift_rel <= t->algo_rel && t->ok_rel >= 0))
		return fail(c, n, "thresholds: need 0 <= ok_rel <= drift_rel <= algo_rel (got %g, %g, %g)",
		            t->ok_rel, t->drift_rel, t->algo_rel);
	return 0;
}

/* "5", "0-2", "3-" (open-ended). */
static int parse_layers(ctx *c, const yaml_node_t *n, db_layer_class *lc)
{
	const char *s = scalar(n);
	char *end;
	if (!s || *s < '0' || *s > '9')
		return fail(c, n, "layer_classes.layers: expected \"L\", \"LO-HI\" or \"LO-\"");
	long lo = strtol(s, &end, 10), hi = lo;
	if (*end == '-') {
		const char *h = end + 1;
		if (!*h)
			hi = -1;
		else if (*h < '0' || *h > '9' || (hi = strtol(h, &end, 10), *end))
			return fail(c, n, "layer_classes.layers: bad range '%s'", s);
	} else if (*end) {
		return fail(c, n, "layer_classes.layers: bad range '%s'", s);
	}
	if (lo > 1000000 || hi > 1000000 || (hi != -1 && hi < lo))
		return fail(c, n, "layer_classes.layers: bad range '%s'", s);
	lc->lo = (int)lo;
	lc->hi = (int)hi;
	return 0;
}

static int class_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_layer_class *lc = arg;
	if (!strcmp(k, "name"))
		return get_str(c, vn, "layer_classes.name", &lc->name);
	if (!strcmp(k, "layers")) {
		lc->hi = -2;            /* marks "seen" until parsed */
		return parse_layers(c, vn, lc);
	}
	return fail(c, kn, "layer_classes: unknown key '%s' (known: name, layers)", k);
}

static int get_classes(ctx *c, const yaml_node_t *n)
{
	db_profile *p = c->p;
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(c, n, "layer_classes: expected a list of {name, layers}");
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = node(c, *it);
		db_layer_class *a = realloc(p->classes, (p->n_classes + 1) * sizeof *a);
		if (!a)
			return oom(c, e);
		p->classes = a;
		db_layer_class *lc = &a[p->n_classes++];
		lc->name = NULL;
		lc->lo = -1;
		lc->hi = -3;            /* -3: layers not given */
		if (each_pair(c, e, "layer_classes", class_pair, lc))
			return -1;
		if (!lc->name || lc->hi == -3)
			return fail(c, e, "layer_classes: each entry needs 'name' and 'layers'");
	}
	return 0;
}

/* ---- top level ---- */

static const char *const TOP_KEYS =
	"name, description, files, path, key, value_key, ignore_keys, sides, "
	"phase_order, stage_order, dict_order, model_after, substages, substage_separator, "
	"shard, pass, thresholds, probe, weight_phases, layer_classes, dump_command, input_ids, routing_ids, "
	"rename, rewrite, token_dim";

typedef struct seen {
	const yaml_node_t *name, *path, *thresholds;
} seen;

static int top_pair(ctx *c, const char *k, const yaml_node_t *kn, const yaml_node_t *vn, void *arg)
{
	db_profile *p = c->p;
	seen *sn = arg;
	if (is_null(vn)) {
		if (!strcmp(k, "name") || !strcmp(k, "path"))
			return fail(c, vn, "%s: required, must not be empty", k);
		return 0;               /* explicit null: keep the default */
	}
	if (!strcmp(k, "name")) {
		sn->name = vn;
		if (get_str(c, vn, "name", &p->name))
			return -1;
		if (!*p->name || strpbrk(p->name, "/ \t\n"))
			return fail(c, vn, "name: must be non-empty, without '/' or blanks");
		return 0;
	}
	if (!strcmp(k, "description"))
		return get_str(c, vn, "description", &p->description);
	if (!strcmp(k, "files"))
		return get_re(c, vn, "files", false, &p->files_pat, &p->files_re);
	if (!strcmp(k, "path")) {
		sn->path = vn;
		return get_re(c, vn, "path", true, &p->path_pat, &p->path_re);
	}
	if (!strcmp(k, "key"))
		return get_re(c, vn, "key", true, &p->key_pat, &p->key_re);
	if (!strcmp(k, "value_key"))
		return get_str(c, vn, "value_key", &p->value_key);
	if (!strcmp(k, "ignore_keys"))
		return get_str_list(c, vn, "ignore_keys", &p->ignore_keys, &p->n_ignore_keys);
	if (!strcmp(k, "sides")) {
		if (each_pair(c, vn, "sides", sides_pair, NULL))
			return -1;
		if (!strcmp(p->side_ref, p->side_target))
			return fail(c, vn, "sides: ref and target must differ");
		return 0;
	}
	if (!strcmp(k, "phase_order"))
		return get_str_list(c, vn, "phase_order", &p->phase_order, &p->n_phase_order);
	if (!strcmp(k, "stage_order"))
		return get_str_list(c, vn, "stage_order", &p->stage_order, &p->n_stage_order);
	if (!strcmp(k, "dict_order")) {
		const char *s = scalar(vn);
		if (!s || (strcmp(s, "execution") && strcmp(s, "none")))
			return fail(c, vn, "dict_order: expected execution or none");
		p->dict_order_none = !strcmp(s, "none");
		return 0;
	}
	if (!strcmp(k, "model_after"))
		return get_str_list(c, vn, "model_after", &p->model_after, &p->n_model_after);
	if (!strcmp(k, "substages"))
		return each_pair(c, vn, "substages", substage_pair, NULL);
	if (!strcmp(k, "substage_separator")) {
		const char *s = scalar(vn);
		if (!s || strlen(s) > 1)
			return fail(c, vn, "substage_separator: expected one character, or \"\" for none");
		p->substage_sep = s[0];
		return 0;
	}
	if (!strcmp(k, "shard"))
		return get_shards(c, vn);
	if (!strcmp(k, "pass")) {
		if (vn->type == YAML_SCALAR_NODE)       /* shorthand: pass: prefill */
			return pass_pair(c, "select", kn, vn, NULL);
		return each_pair(c, vn, "pass", pass_pair, NULL);
	}
	if (!strcmp(k, "thresholds")) {
		sn->thresholds = vn;
		return each_pair(c, vn, "thresholds", thr_pair, NULL);
	}
	if (!strcmp(k, "probe"))
		return get_str_list(c, vn, "probe", &p->probes, &p->n_probes);
	if (!strcmp(k, "weight_phases"))
		return get_str_list(c, vn, "weight_phases", &p->weight_phases, &p->n_weight_phases);
	if (!strcmp(k, "layer_classes"))
		return get_classes(c, vn);
	if (!strcmp(k, "dump_command"))
		return get_str(c, vn, "dump_command", &p->dump_command);
	if (!strcmp(k, "input_ids"))
		return get_re(c, vn, "input_ids", false, &p->input_ids_pat, &p->input_ids_re);
	if (!strcmp(k, "routing_ids"))
		return get_re(c, vn, "routing_ids", false, &p->routing_ids_pat, &p->routing_ids_re);
	if (!strcmp(k, "rename"))
		return each_pair(c, vn, "rename", rename_pair, NULL);
	if (!strcmp(k, "token_dim"))
		return each_pair(c, vn, "token_dim", token_dim_pair, NULL);
	if (!strcmp(k, "rewrite"))
		return each_pair(c, vn, "rewrite", rewrite_pair, NULL);
	return fail(c, kn, "unknown key '%s' (known: %s)", k, TOP_KEYS);
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
			return oom(c, root);
		if (compile_re(c, root, "files", p->files_pat, false, &p->files_re))
			return -1;
	}
	if (!p->input_ids_pat) {
		if (!(p->input_ids_pat = strdup(DEFAULT_INPUT_IDS)))
			return oom(c, root);
		if (compile_re(c, root, "input_ids", p->input_ids_pat, false, &p->input_ids_re))
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
		return fail(c, root, "a profile is a mapping of keys (name, path, ...)");
	if (each_pair(c, root, "profile", top_pair, &sn))
		return -1;
	if (!sn.name)
		return fail(c, root, "missing required key 'name'");
	if (!sn.path)
		return fail(c, root, "missing required key 'path'");
	if (sn.thresholds && check_thresholds(c, sn.thresholds))
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
	int rc = parse_doc(&c);
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
	free(p->value_key);
	free_list(p->ignore_keys, p->n_ignore_keys);
	free(p->side_ref);
	free(p->side_target);
	free_list(p->phase_order, p->n_phase_order);
	free_list(p->stage_order, p->n_stage_order);
	free_list(p->model_after, p->n_model_after);
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
	free_list(p->probes, p->n_probes);
	free_list(p->weight_phases, p->n_weight_phases);
	for (size_t i = 0; i < p->n_classes; i++)
		free(p->classes[i].name);
	free(p->classes);
	free(p->dump_command);
	free(p->input_ids_pat);
	pcre2_code_free(p->input_ids_re);
	free(p->routing_ids_pat);
	pcre2_code_free(p->routing_ids_re);
	free_list(p->rename_from, p->n_rename);
	free_list(p->rename_to, p->n_rename);
	free_list(p->token_dim_glob, p->n_token_dim);
	free(p->token_dim);
	for (size_t i = 0; i < p->n_rewrites; i++) {
		free(p->rewrites[i].pattern);
		pcre2_code_free(p->rewrites[i].re);
		free(p->rewrites[i].to);
	}
	free(p->rewrites);
	free(p);
}
