/* Reading a session file: the libyaml document loader, whose node marks
 * give every error its line and column (format: include/db_session.h). */
#include "db_session.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "session_priv.h"
#include "util/yaml_err.h"
#include "util/yaml_load.h"

typedef struct rd {
	yaml_document_t *doc;
	const char *origin;
	db_err *err;
} rd;

static int fail_at(rd *r, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(rd *r, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	db_yaml_verr(r->err, r->origin, n, fmt, ap);
	va_end(ap);
	return -1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static const char *scalar_of(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A DB_YAML_BYTES scalar's bytes (%XX decoded); NULL with *bad on a
 * malformed escape or a NUL. */
static char *bytes_of(const char *v, bool *bad)
{
	char *d = malloc(strlen(v) + 1), *o = d;
	*bad = false;
	for (const char *p = v; d && *p; p++) {
		if (*p != '%') {
			*o++ = *p;
			continue;
		}
		int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
		if (lo < 0 || (hi | lo) == 0) {
			*bad = true;
			free(d);
			return NULL;
		}
		*o++ = (char)(hi << 4 | lo);
		p += 2;
	}
	if (d)
		*o = 0;
	return d;
}

static int want_str(rd *r, const yaml_node_t *n, const char *key, char **out)
{
	const char *v = scalar_of(n);
	if (!v)
		return fail_at(r, n, "'%s' must be a string", key);
	bool bad = false;
	char *d = n->tag && !strcmp((const char *)n->tag, DB_YAML_BYTES) ? bytes_of(v, &bad)
	                                                                 : strdup(v);
	if (bad)
		return fail_at(r, n, "'%s': a %%XX escape that is not two hex digits (or is %%00)", key);
	if (!d)
		return fail_at(r, n, "out of memory");
	free(*out);
	*out = d;
	return 0;
}

static int want_i64(rd *r, const yaml_node_t *n, const char *key, int64_t lo,
                    int64_t hi, int64_t *out)
{
	const char *v = scalar_of(n);
	if (!v || !*v)
		return fail_at(r, n, "'%s' must be an integer", key);
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (*end || errno || x < lo || x > hi)
		return fail_at(r, n, "'%s': '%s' is not an integer in [%lld, %lld]", key, v,
		               (long long)lo, (long long)hi);
	*out = x;
	return 0;
}

static int want_layer(rd *r, const yaml_node_t *n, const char *key, int64_t *out)
{
	const char *v = scalar_of(n);
	if (v && !strcmp(v, "final")) {
		*out = DB_LAYER_FINAL;
		return 0;
	}
	return want_i64(r, n, key, -1, INT_MAX, out);
}

static int want_num(rd *r, const yaml_node_t *n, const char *key, double *out)
{
	const char *v = scalar_of(n);
	if (!v)
		return fail_at(r, n, "'%s' must be a number", key);
	if (!strcmp(v, ".nan") || !strcmp(v, ".NaN") || !strcmp(v, "null") || !strcmp(v, "~")) {
		*out = NAN;
		return 0;
	}
	if (!strcmp(v, ".inf") || !strcmp(v, "+.inf")) {
		*out = INFINITY;
		return 0;
	}
	if (!strcmp(v, "-.inf")) {
		*out = -INFINITY;
		return 0;
	}
	char *end;
	*out = strtod(v, &end);
	if (!*v || *end)
		return fail_at(r, n, "'%s': '%s' is not a number", key, v);
	return 0;
}

static int want_band(rd *r, const yaml_node_t *n, db_band *out)
{
	static const db_band all[] = {DB_BAND_NONE, DB_BAND_OK, DB_BAND_DRIFT, DB_BAND_ALGO,
	                              DB_BAND_BUG, DB_BAND_SCRAMBLE, DB_BAND_INPUTS};
	const char *v = scalar_of(n);
	for (size_t i = 0; v && i < sizeof all / sizeof all[0]; i++)
		if (!strcmp(v, db_band_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	return fail_at(r, n, "'band': expected ok, drift, algo, bug, scramble or -");
}

static yaml_node_t *node(rd *r, int i)
{
	return yaml_document_get_node(r->doc, i);
}

/* The key of mapping pair p, its value node in *vn; NULL with the error
 * set when the key is not a string ("<what> must be strings"). */
static const char *pair_key(rd *r, const yaml_node_pair_t *p, const char *what, yaml_node_t **vn)
{
	yaml_node_t *kn = node(r, p->key);
	*vn = node(r, p->value);
	if (!scalar_of(kn))
		fail_at(r, kn, "%s must be strings", what);
	return scalar_of(kn);
}

static int want_layer_int(rd *r, const yaml_node_t *n, const char *key, int *out)
{
	int64_t x;
	if (want_layer(r, n, key, &x) < 0)
		return -1;
	*out = (int)x;
	return 0;
}

static int parse_step(rd *r, yaml_node_t *n, db_bisect_step *st)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(r, n, "a step must be a mapping");
	memset(st, 0, sizeof *st);
	st->cos = st->rel = NAN;
	bool have_layer = false, have_verdict = false;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *vn;
		const char *k = pair_key(r, p, "step keys", &vn);
		if (!k)
			return -1;
		if (!strcmp(k, "layer")) {
			if (want_layer_int(r, vn, k, &st->layer) < 0)
				return -1;
			have_layer = true;
		} else if (!strcmp(k, "verdict") || !strcmp(k, "auto")) {
			db_verdict v;
			const char *s = scalar_of(vn);
			db_verdict_parse(s, &v);
			if (!s || (v == DB_V_NONE && strcmp(s, "none")))
				return fail_at(r, vn, "'%s': expected good, bad, skip or none", k);
			if (!strcmp(k, "auto"))
				st->auto_verdict = v;
			else {
				if (v == DB_V_NONE)
					return fail_at(r, vn, "'verdict': expected good, bad or skip");
				st->verdict = v;
				have_verdict = true;
			}
		} else if (!strcmp(k, "by")) {
			const char *s = scalar_of(vn);
			if (!s || (strcmp(s, "user") && strcmp(s, "auto")))
				return fail_at(r, vn, "'by': expected auto or user");
			st->by_user = !strcmp(s, "user");
		} else if (!strcmp(k, "cos")) {
			if (want_num(r, vn, k, &st->cos) < 0)
				return -1;
		} else if (!strcmp(k, "rel")) {
			if (want_num(r, vn, k, &st->rel) < 0)
				return -1;
		} else if (!strcmp(k, "band")) {
			if (want_band(r, vn, &st->band) < 0)
				return -1;
		} else if (!strcmp(k, "time")) {
			if (want_i64(r, vn, k, INT64_MIN, INT64_MAX, &st->time) < 0)
				return -1;
		}
		/* unknown keys: written by a newer version; ignored */
	}
	if (!have_layer || !have_verdict)
		return fail_at(r, n, "a step needs 'layer' and 'verdict'");
	return 0;
}

static int parse_mark(rd *r, yaml_node_t *n, db_mark *mk)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(r, n, "a mark must be a mapping");
	memset(mk, 0, sizeof *mk);
	mk->layer = -1;
	mk->rank = -1;
	bool have_layer = false;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *vn;
		const char *k = pair_key(r, p, "mark keys", &vn);
		int64_t x;
		if (!k)
			return -1;
		if (!strcmp(k, "layer")) {
			if (want_layer_int(r, vn, k, &mk->layer) < 0)
				return -1;
			have_layer = true;
		} else if (!strcmp(k, "stage")) {
			if (want_str(r, vn, k, &mk->stage) < 0)
				return -1;
		} else if (!strcmp(k, "phase")) {
			if (want_str(r, vn, k, &mk->phase) < 0)
				return -1;
		} else if (!strcmp(k, "pass")) {
			if (want_str(r, vn, k, &mk->pass) < 0)
				return -1;
		} else if (!strcmp(k, "text")) {
			if (want_str(r, vn, k, &mk->text) < 0)
				return -1;
		} else if (!strcmp(k, "rank")) {
			if (want_i64(r, vn, k, -1, INT_MAX, &x) < 0)
				return -1;
			mk->rank = (int)x;
		} else if (!strcmp(k, "status")) {
			if (!db_mark_status_parse(scalar_of(vn), &mk->status))
				return fail_at(r, vn, "'status': expected suspect, confirmed or refuted");
		} else if (!strcmp(k, "time")) {
			if (want_i64(r, vn, k, INT64_MIN, INT64_MAX, &mk->time) < 0)
				return -1;
		}
	}
	if (!have_layer)
		return fail_at(r, n, "a mark needs 'layer'");
	return 0;
}

static int want_seq(rd *r, yaml_node_t *n, const char *key)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return fail_at(r, n, "'%s' must be a list", key);
	return 0;
}

static size_t seq_len(const yaml_node_t *n)
{
	return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static yaml_node_t *seq_item(rd *r, const yaml_node_t *n, size_t i)
{
	return node(r, n->data.sequence.items.start[i]);
}

/* A zeroed array for the items of the list n under key (never NULL when
 * the list is empty). NULL with the error set. */
static void *new_items(rd *r, yaml_node_t *n, const char *key, size_t size, size_t *count)
{
	if (want_seq(r, n, key) < 0)
		return NULL;
	*count = seq_len(n);
	void *p = calloc(*count ? *count : 1, size);
	if (!p)
		fail_at(r, n, "out of memory");
	return p;
}

/* The session's string field under key k; NULL if k names none. */
static char **str_field(db_session *s, const char *k)
{
	static const char *const keys[] = {"ref", "target", "profile", "noise", "slots", "phase",
	                                   "pass", "probe", "align"};
	char **fields[] = {&s->ref, &s->target, &s->profile, &s->noise, &s->slots, &s->phase,
	                   &s->pass, &s->probe, &s->align};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!strcmp(k, keys[i]))
			return fields[i];
	return NULL;
}

static int parse_root(rd *r, yaml_node_t *root, db_session *s, bool top);

/* 'earlier': the bisects of the other passes, each a mapping of the
 * bisect's keys. */
static int parse_earlier(rd *r, yaml_node_t *vn, db_session *s)
{
	if (want_seq(r, vn, "earlier") < 0)
		return -1;
	size_t n = seq_len(vn);
	db_session **v = calloc(n ? n : 1, sizeof *v);
	if (!v)
		return fail_at(r, vn, "out of memory");
	for (size_t i = 0; i < s->n_earlier; i++)
		db_session_free(s->earlier[i]);
	free(s->earlier);
	s->earlier = v;
	s->n_earlier = 0;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = seq_item(r, vn, i);
		db_session *e = db_session_new(NULL, NULL);
		if (!e)
			return fail_at(r, it, "out of memory");
		s->earlier[s->n_earlier++] = e;
		if (parse_root(r, it, e, false) < 0)
			return -1;
	}
	return 0;
}

static int parse_root(rd *r, yaml_node_t *root, db_session *s, bool top)
{
	int64_t version = DB_SESSION_VERSION;
	if (!root || root->type != YAML_MAPPING_NODE) {
		if (!root)
			return db_err_set(r->err, NULL, NULL, -1, "%s:1:1: empty file, not a dumpbisect session",
			                  r->origin);
		return fail_at(r, root, "not a dumpbisect session (top level is not a mapping)");
	}
	bool have_version = false;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *vn;
		const char *k = pair_key(r, p, "keys", &vn);
		char **str;
		int64_t x;
		if (!k)
			return -1;
		if (!strcmp(k, "earlier") && top) {
			if (parse_earlier(r, vn, s) < 0)
				return -1;
		} else if (!strcmp(k, "dumpbisect_session")) {
			if (want_i64(r, vn, k, 1, DB_SESSION_VERSION, &x) < 0)
				return -1;
			have_version = true;
			version = x;
		} else if ((str = str_field(s, k))) {
			if (want_str(r, vn, k, str) < 0)
				return -1;
		} else if (!strcmp(k, "predicate")) {
			db_err e2;
			const char *v = scalar_of(vn);
			if (!v || db_predicate_parse(v, &s->pred, &e2) < 0)
				return fail_at(r, vn, "%s", v ? e2.msg : "'predicate' must be a string");
		} else if (!strcmp(k, "good")) {
			if (want_layer(r, vn, k, &x) < 0)
				return -1;
			s->good = x < 0 ? DB_GOOD_BEFORE : (long)x;
		} else if (!strcmp(k, "created")) {
			if (want_i64(r, vn, k, INT64_MIN, INT64_MAX, &s->created) < 0) return -1;
		} else if (!strcmp(k, "updated")) {
			if (want_i64(r, vn, k, INT64_MIN, INT64_MAX, &s->updated) < 0) return -1;
		} else if (!strcmp(k, "layers")) {
			size_t n;
			int *layers = new_items(r, vn, k, sizeof *layers, &n);
			if (!layers)
				return -1;
			free(s->layers);
			s->layers = layers;
			s->n_layers = 0;
			for (size_t i = 0; i < n; i++) {
				if (want_layer_int(r, seq_item(r, vn, i), "layers", &s->layers[i]) < 0)
					return -1;
				s->n_layers++;
			}
		} else if (!strcmp(k, "steps")) {
			size_t n;
			db_bisect_step *steps = new_items(r, vn, k, sizeof *steps, &n);
			if (!steps)
				return -1;
			free(s->steps);
			s->steps = steps;
			s->n_steps = 0;
			for (size_t i = 0; i < n; i++) {
				if (parse_step(r, seq_item(r, vn, i), &s->steps[i]) < 0)
					return -1;
				s->n_steps++;
			}
		} else if (!strcmp(k, "marks")) {
			size_t n;
			db_mark *marks = new_items(r, vn, k, sizeof *marks, &n);
			if (!marks)
				return -1;
			db_session_free_marks(s->marks, s->n_marks);
			s->marks = marks;
			s->n_marks = 0;
			for (size_t i = 0; i < n; i++) {
				s->n_marks++;   /* counted first so a partial mark is freed too */
				if (parse_mark(r, seq_item(r, vn, i), &s->marks[i]) < 0)
					return -1;
			}
		} else if (!strcmp(k, "notes")) {
			if (want_seq(r, vn, k) < 0)
				return -1;
			for (size_t i = 0; i < seq_len(vn); i++) {
				yaml_node_t *it = seq_item(r, vn, i);
				if (!scalar_of(it))
					return fail_at(r, it, "'notes' entries must be file names");
				if (db_session_add_note(s, scalar_of(it)) < 0)
					return fail_at(r, it, "out of memory");
			}
		} else if (!strcmp(k, "view")) {
			if (vn->type != YAML_MAPPING_NODE)
				return fail_at(r, vn, "'view' must be a mapping");
			for (yaml_node_pair_t *q = vn->data.mapping.pairs.start; q < vn->data.mapping.pairs.top; q++) {
				yaml_node_t *vk = node(r, q->key), *vv = node(r, q->value);
				if (!scalar_of(vk) || !scalar_of(vv))
					return fail_at(r, scalar_of(vk) ? vv : vk,
					               "'view' holds string keys and values only");
				if (db_session_view_set(s, scalar_of(vk), scalar_of(vv)) < 0)
					return fail_at(r, vv, "out of memory");
			}
		}
	}
	if (!have_version && top)
		return fail_at(r, root, "not a dumpbisect session (no 'dumpbisect_session: 2')");
	/* every step on a candidate: against the sorted candidates, so a
	 * session of many steps and layers reads in n log n */
	int *sorted = malloc((s->n_layers ? s->n_layers : 1) * sizeof *sorted);
	if (!sorted)
		return fail_at(r, root, "out of memory");
	if (s->n_layers)
		memcpy(sorted, s->layers, s->n_layers * sizeof *sorted);
	qsort(sorted, s->n_layers, sizeof *sorted, cmp_int);
	for (size_t i = 0; i < s->n_steps; i++)
		if (!bsearch(&s->steps[i].layer, sorted, s->n_layers, sizeof *sorted, cmp_int)) {
			free(sorted);
			return db_err_set(r->err, NULL, NULL, -1,
			                  "%s: step %zu is on layer %d, which is not in 'layers'",
			                  r->origin, i + 1, s->steps[i].layer);
		}
	free(sorted);
	if (top && version < 2 && db_session_migrate_v1(s) < 0)
		return fail_at(r, root, "out of memory");
	return 0;
}

int db_session_parse(const char *text, size_t len, const char *origin,
                     db_session **out, db_err *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	*out = NULL;
	if (db_yaml_check_depth(origin, text, len, err))
		return -1;
	if (!yaml_parser_initialize(&parser))
		return db_err_set(err, origin, NULL, -1, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		db_yaml_err_at(err, origin, &parser.problem_mark, "%s%s%s",
		               parser.problem ? parser.problem : "YAML error",
		               parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return -1;
	}
	db_session *s = NULL;
	rd r = {&doc, origin, err};
	int rc = db_yaml_check_expansion(origin, &doc, len, err);
	if (!rc && !(s = db_session_new(NULL, NULL)))
		rc = db_err_set(err, origin, NULL, -1, "out of memory");
	if (!rc)
		rc = parse_root(&r, yaml_document_get_root_node(&doc), s, true);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc < 0) {
		db_session_free(s);
		return -1;
	}
	*out = s;
	return 0;
}
