/* Session files: libyaml emitter for writing, libyaml document loader for
 * reading (node marks give line/column for errors). */
#include "db_session.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <yaml.h>

#include "db_atomic.h"

#define SESSION_VERSION 1

int (*db_tui_session_hook)(const char *session, const char *ref,
                           const char *target);

const char *db_mark_status_name(db_mark_status s)
{
	switch (s) {
	case DB_MARK_CONFIRMED: return "confirmed";
	case DB_MARK_REFUTED: return "refuted";
	default: return "suspect";
	}
}

bool db_mark_status_parse(const char *s, db_mark_status *out)
{
	static const db_mark_status all[] = {DB_MARK_SUSPECT, DB_MARK_CONFIRMED, DB_MARK_REFUTED};
	for (size_t i = 0; i < 3; i++)
		if (s && !strcmp(s, db_mark_status_name(all[i]))) {
			*out = all[i];
			return true;
		}
	return false;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

db_session *db_session_new(const char *ref, const char *target)
{
	db_session *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->ref = dup_or_null(ref);
	s->target = dup_or_null(target);
	if ((ref && !s->ref) || (target && !s->target)) {
		db_session_free(s);
		return NULL;
	}
	db_predicate_default(&s->pred);
	s->good = DB_GOOD_BEFORE;
	s->created = s->updated = (int64_t)time(NULL);
	return s;
}

static void free_marks(db_mark *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].stage);
		free(m[i].text);
	}
	free(m);
}

void db_session_free(db_session *s)
{
	if (!s)
		return;
	free(s->path);
	free(s->ref);
	free(s->target);
	free(s->profile);
	free(s->phase);
	free(s->pass);
	free(s->probe);
	free(s->layers);
	free(s->steps);
	free_marks(s->marks, s->n_marks);
	for (size_t i = 0; i < s->n_notes; i++)
		free(s->notes[i]);
	free(s->notes);
	for (size_t i = 0; i < s->n_view; i++) {
		free(s->view[i].key);
		free(s->view[i].value);
	}
	free(s->view);
	free(s);
}

/* ----------------------------------------------------------- writing */

typedef struct sbuf {
	char *p;
	size_t len, cap;
	int oom;
} sbuf;

static int sbuf_write(void *data, unsigned char *buf, size_t size)
{
	sbuf *b = data;
	if (b->len + size + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + size + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->oom = 1;
			return 0;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, buf, size);
	b->len += size;
	b->p[b->len] = '\0';
	return 1;
}

typedef struct emit {
	yaml_emitter_t e;
	int ok;
} emit;

static void ev(emit *m, yaml_event_t *event, int init_ok)
{
	if (!m->ok)
		return;
	if (!init_ok || !yaml_emitter_emit(&m->e, event))
		m->ok = 0;
}

static void scalar(emit *m, const char *s)
{
	yaml_event_t e;
	ev(m, &e, yaml_scalar_event_initialize(&e, NULL, NULL, (yaml_char_t *)s,
	                                       (int)strlen(s), 1, 1, YAML_ANY_SCALAR_STYLE));
}

/* Strings that a reader could take for another type get quoted: we read
 * every scalar as a string anyway, but other tools should not be fooled. */
static void str_scalar(emit *m, const char *s)
{
	yaml_event_t e;
	ev(m, &e, yaml_scalar_event_initialize(&e, NULL, NULL, (yaml_char_t *)s,
	                                       (int)strlen(s), 1, 1,
	                                       YAML_DOUBLE_QUOTED_SCALAR_STYLE));
}

static void key_str(emit *m, const char *k, const char *v)
{
	if (!v)
		return;
	scalar(m, k);
	str_scalar(m, v);
}

static void key_fmt(emit *m, const char *k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void key_fmt(emit *m, const char *k, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	scalar(m, k);
	scalar(m, buf);
}

static void key_num(emit *m, const char *k, double v)
{
	if (isnan(v))
		key_fmt(m, k, ".nan");
	else if (isinf(v))
		key_fmt(m, k, "%s", v > 0 ? ".inf" : "-.inf");
	else
		key_fmt(m, k, "%.17g", v);
}

static void key_layer(emit *m, const char *k, long layer)
{
	if (layer == DB_LAYER_FINAL)
		key_fmt(m, k, "final");
	else
		key_fmt(m, k, "%ld", layer);
}

static void map_start(emit *m, int flow)
{
	yaml_event_t e;
	ev(m, &e, yaml_mapping_start_event_initialize(&e, NULL, NULL, 1,
	          flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE));
}

static void map_end(emit *m)
{
	yaml_event_t e;
	ev(m, &e, yaml_mapping_end_event_initialize(&e));
}

static void seq_start(emit *m, int flow)
{
	yaml_event_t e;
	ev(m, &e, yaml_sequence_start_event_initialize(&e, NULL, NULL, 1,
	          flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE));
}

static void seq_end(emit *m)
{
	yaml_event_t e;
	ev(m, &e, yaml_sequence_end_event_initialize(&e));
}

char *db_session_dump(const db_session *s, size_t *len)
{
	sbuf b = {0};
	emit m = {.ok = 1};
	yaml_event_t e;
	char buf[128];
	if (!yaml_emitter_initialize(&m.e))
		return NULL;
	yaml_emitter_set_output(&m.e, sbuf_write, &b);
	yaml_emitter_set_unicode(&m.e, 1);
	yaml_emitter_set_width(&m.e, 100);
	ev(&m, &e, yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING));
	ev(&m, &e, yaml_document_start_event_initialize(&e, NULL, NULL, NULL, 1));
	map_start(&m, 0);
	key_fmt(&m, "dumpbisect_session", "%d", SESSION_VERSION);
	key_str(&m, "ref", s->ref);
	key_str(&m, "target", s->target);
	key_str(&m, "profile", s->profile);
	key_str(&m, "phase", s->phase);
	key_str(&m, "pass", s->pass);
	key_str(&m, "probe", s->probe);
	key_str(&m, "predicate", db_predicate_str(&s->pred, buf, sizeof buf));
	key_layer(&m, "good", s->good);
	key_fmt(&m, "created", "%lld", (long long)s->created);
	key_fmt(&m, "updated", "%lld", (long long)s->updated);
	scalar(&m, "layers");
	seq_start(&m, 1);
	for (size_t i = 0; i < s->n_layers; i++) {
		if (s->layers[i] == DB_LAYER_FINAL)
			scalar(&m, "final");
		else {
			snprintf(buf, sizeof buf, "%d", s->layers[i]);
			scalar(&m, buf);
		}
	}
	seq_end(&m);
	scalar(&m, "steps");
	seq_start(&m, 0);
	for (size_t i = 0; i < s->n_steps; i++) {
		const db_bisect_step *st = &s->steps[i];
		map_start(&m, 1);
		key_layer(&m, "layer", st->layer);
		key_fmt(&m, "verdict", "%s", db_verdict_name(st->verdict));
		key_fmt(&m, "by", "%s", st->by_user ? "user" : "auto");
		key_fmt(&m, "auto", "%s", db_verdict_name(st->auto_verdict));
		key_num(&m, "cos", st->cos);
		key_num(&m, "rel", st->rel);
		key_fmt(&m, "band", "%s", db_band_name(st->band));
		key_fmt(&m, "time", "%lld", (long long)st->time);
		map_end(&m);
	}
	seq_end(&m);
	scalar(&m, "marks");
	seq_start(&m, 0);
	for (size_t i = 0; i < s->n_marks; i++) {
		const db_mark *mk = &s->marks[i];
		map_start(&m, 0);
		key_layer(&m, "layer", mk->layer);
		key_str(&m, "stage", mk->stage);
		key_fmt(&m, "rank", "%d", mk->rank);
		key_fmt(&m, "status", "%s", db_mark_status_name(mk->status));
		key_str(&m, "text", mk->text ? mk->text : "");
		key_fmt(&m, "time", "%lld", (long long)mk->time);
		map_end(&m);
	}
	seq_end(&m);
	scalar(&m, "notes");
	seq_start(&m, 0);
	for (size_t i = 0; i < s->n_notes; i++)
		str_scalar(&m, s->notes[i]);
	seq_end(&m);
	scalar(&m, "view");
	map_start(&m, 0);
	for (size_t i = 0; i < s->n_view; i++)
		key_str(&m, s->view[i].key, s->view[i].value);
	map_end(&m);
	map_end(&m);
	ev(&m, &e, yaml_document_end_event_initialize(&e, 1));
	ev(&m, &e, yaml_stream_end_event_initialize(&e));
	yaml_emitter_delete(&m.e);
	if (!m.ok || b.oom) {
		free(b.p);
		return NULL;
	}
	if (len)
		*len = b.len;
	return b.p;
}

static int write_session(FILE *f, void *ctx, db_err *err)
{
	size_t len;
	char *text = db_session_dump(ctx, &len);
	if (!text)
		return db_err_set(err, NULL, NULL, -1, "cannot render the session (out of memory?)");
	int rc = fwrite(text, 1, len, f) == len ? 0
	         : db_err_set(err, NULL, NULL, -1, "write: %s", strerror(errno));
	free(text);
	return rc;
}

int db_session_save(db_session *s, const char *path, db_err *err)
{
	if (!path)
		path = s->path;
	if (!path)
		return db_err_set(err, NULL, NULL, -1, "session has no file name");
	if (path != s->path) {
		char *np = strdup(path);
		if (!np)
			return db_err_set(err, path, NULL, -1, "out of memory");
		free(s->path);
		s->path = np;
	}
	s->updated = (int64_t)time(NULL);
	return db_atomic_write(s->path, write_session, s, err);
}

/* ----------------------------------------------------------- reading */

typedef struct rd {
	yaml_document_t *doc;
	const char *origin;
	db_err *err;
} rd;

static int fail_at(rd *r, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(rd *r, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return db_err_set(r->err, NULL, NULL, -1, "%s:%zu:%zu: %s", r->origin,
	                  n->start_mark.line + 1, n->start_mark.column + 1, msg);
}

static const char *scalar_of(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int want_str(rd *r, const yaml_node_t *n, const char *key, char **out)
{
	const char *v = scalar_of(n);
	if (!v)
		return fail_at(r, n, "'%s' must be a string", key);
	char *d = strdup(v);
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
	                              DB_BAND_BUG, DB_BAND_SCRAMBLE};
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

static int parse_step(rd *r, yaml_node_t *n, db_bisect_step *st)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(r, n, "a step must be a mapping");
	memset(st, 0, sizeof *st);
	st->cos = st->rel = NAN;
	bool have_layer = false, have_verdict = false;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = node(r, p->key), *vn = node(r, p->value);
		const char *k = scalar_of(kn);
		int64_t x;
		if (!k)
			return fail_at(r, kn, "step keys must be strings");
		if (!strcmp(k, "layer")) {
			if (want_layer(r, vn, k, &x) < 0)
				return -1;
			st->layer = (int)x;
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
		yaml_node_t *kn = node(r, p->key), *vn = node(r, p->value);
		const char *k = scalar_of(kn);
		int64_t x;
		if (!k)
			return fail_at(r, kn, "mark keys must be strings");
		if (!strcmp(k, "layer")) {
			if (want_layer(r, vn, k, &x) < 0)
				return -1;
			mk->layer = (int)x;
			have_layer = true;
		} else if (!strcmp(k, "stage")) {
			if (want_str(r, vn, k, &mk->stage) < 0)
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

static int parse_root(rd *r, yaml_node_t *root, db_session *s)
{
	if (!root || root->type != YAML_MAPPING_NODE) {
		if (!root)
			return db_err_set(r->err, NULL, NULL, -1, "%s:1:1: empty file, not a dumpbisect session",
			                  r->origin);
		return fail_at(r, root, "not a dumpbisect session (top level is not a mapping)");
	}
	bool have_version = false;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = node(r, p->key), *vn = node(r, p->value);
		const char *k = scalar_of(kn);
		int64_t x;
		if (!k)
			return fail_at(r, kn, "keys must be strings");
		if (!strcmp(k, "dumpbisect_session")) {
			if (want_i64(r, vn, k, 1, SESSION_VERSION, &x) < 0)
				return -1;
			have_version = true;
		} else if (!strcmp(k, "ref")) {
			if (want_str(r, vn, k, &s->ref) < 0) return -1;
		} else if (!strcmp(k, "target")) {
			if (want_str(r, vn, k, &s->target) < 0) return -1;
		} else if (!strcmp(k, "profile")) {
			if (want_str(r, vn, k, &s->profile) < 0) return -1;
		} else if (!strcmp(k, "phase")) {
			if (want_str(r, vn, k, &s->phase) < 0) return -1;
		} else if (!strcmp(k, "pass")) {
			if (want_str(r, vn, k, &s->pass) < 0) return -1;
		} else if (!strcmp(k, "probe")) {
			if (want_str(r, vn, k, &s->probe) < 0) return -1;
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
			if (want_seq(r, vn, k) < 0)
				return -1;
			size_t n = seq_len(vn);
			free(s->layers);
			s->layers = calloc(n ? n : 1, sizeof *s->layers);
			s->n_layers = 0;
			if (!s->layers)
				return fail_at(r, vn, "out of memory");
			for (size_t i = 0; i < n; i++) {
				if (want_layer(r, node(r, vn->data.sequence.items.start[i]), "layers", &x) < 0)
					return -1;
				s->layers[s->n_layers++] = (int)x;
			}
		} else if (!strcmp(k, "steps")) {
			if (want_seq(r, vn, k) < 0)
				return -1;
			size_t n = seq_len(vn);
			free(s->steps);
			s->steps = calloc(n ? n : 1, sizeof *s->steps);
			s->n_steps = 0;
			if (!s->steps)
				return fail_at(r, vn, "out of memory");
			for (size_t i = 0; i < n; i++) {
				if (parse_step(r, node(r, vn->data.sequence.items.start[i]), &s->steps[i]) < 0)
					return -1;
				s->n_steps++;
			}
		} else if (!strcmp(k, "marks")) {
			if (want_seq(r, vn, k) < 0)
				return -1;
			size_t n = seq_len(vn);
			free_marks(s->marks, s->n_marks);
			s->n_marks = 0;
			s->marks = calloc(n ? n : 1, sizeof *s->marks);
			if (!s->marks)
				return fail_at(r, vn, "out of memory");
			for (size_t i = 0; i < n; i++) {
				s->n_marks++;   /* counted first so free_marks frees a partial one */
				if (parse_mark(r, node(r, vn->data.sequence.items.start[i]), &s->marks[i]) < 0)
					return -1;
			}
		} else if (!strcmp(k, "notes")) {
			if (want_seq(r, vn, k) < 0)
				return -1;
			for (size_t i = 0; i < seq_len(vn); i++) {
				yaml_node_t *it = node(r, vn->data.sequence.items.start[i]);
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
	if (!have_version)
		return fail_at(r, root, "not a dumpbisect session (no 'dumpbisect_session: 1')");
	for (size_t i = 0; i < s->n_steps; i++) {
		bool found = false;
		for (size_t j = 0; j < s->n_layers && !found; j++)
			found = s->layers[j] == s->steps[i].layer;
		if (!found)
			return db_err_set(r->err, NULL, NULL, -1,
			                  "%s: step %zu is on layer %d, which is not in 'layers'",
			                  r->origin, i + 1, s->steps[i].layer);
	}
	return 0;
}

int db_session_parse(const char *text, size_t len, const char *origin,
                     db_session **out, db_err *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	*out = NULL;
	if (!yaml_parser_initialize(&parser))
		return db_err_set(err, origin, NULL, -1, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		db_err_set(err, NULL, NULL, -1, "%s:%zu:%zu: %s%s%s", origin,
		           parser.problem_mark.line + 1, parser.problem_mark.column + 1,
		           parser.problem ? parser.problem : "YAML error",
		           parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return -1;
	}
	db_session *s = db_session_new(NULL, NULL);
	rd r = {&doc, origin, err};
	int rc = s ? parse_root(&r, yaml_document_get_root_node(&doc), s)
	           : db_err_set(err, origin, NULL, -1, "out of memory");
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc < 0) {
		db_session_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

int db_session_load(const char *path, db_session **out, db_err *err)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return db_err_set(err, path, NULL, -1, "cannot open session: %s", strerror(errno));
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (len < cap)
			break;
		if (cap >= ((size_t)64 << 20)) {
			free(buf);
			fclose(f);
			return db_err_set(err, path, NULL, -1, "session file larger than 64 MiB");
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int rerr = ferror(f);
	fclose(f);
	if (!buf)
		return db_err_set(err, path, NULL, -1, "out of memory");
	if (rerr) {
		free(buf);
		return db_err_set(err, path, NULL, -1, "read error");
	}
	int rc = db_session_parse(buf, len, path, out, err);
	free(buf);
	if (rc == 0) {
		(*out)->path = strdup(path);
		if (!(*out)->path) {
			db_session_free(*out);
			*out = NULL;
			return db_err_set(err, path, NULL, -1, "out of memory");
		}
	}
	return rc;
}

/* ----------------------------------------------------------- editing */

int db_session_sync_bisect(db_session *s, const db_bisect *b, db_err *err)
{
	int *layers = malloc((b->n_layers ? b->n_layers : 1) * sizeof *layers);
	db_bisect_step *steps = malloc((b->n_steps ? b->n_steps : 1) * sizeof *steps);
	if (!layers || !steps) {
		free(layers);
		free(steps);
		return db_err_set(err, s->path, NULL, -1, "out of memory");
	}
	if (b->n_layers)
		memcpy(layers, b->layers, b->n_layers * sizeof *layers);
	if (b->n_steps)
		memcpy(steps, b->steps, b->n_steps * sizeof *steps);
	free(s->layers);
	free(s->steps);
	s->layers = layers;
	s->n_layers = b->n_layers;
	s->steps = steps;
	s->n_steps = b->n_steps;
	s->good = b->start_good < 0 ? DB_GOOD_BEFORE : b->layers[b->start_good];
	return 0;
}

int db_session_to_bisect(const db_session *s, db_bisect *b, db_err *err)
{
	if (db_bisect_init(b, s->layers, s->n_layers, s->good, err) < 0)
		return -1;
	for (size_t i = 0; i < s->n_steps; i++) {
		db_err e2;
		if (db_bisect_record(b, &s->steps[i], &e2) < 0) {
			db_bisect_free(b);
			return db_err_set(err, s->path, NULL, -1, "step %zu: %s", i + 1, e2.msg);
		}
	}
	return 0;
}

long db_session_add_mark(db_session *s, int layer, const char *stage,
                         int rank, db_mark_status st, const char *text)
{
	db_mark *nm = realloc(s->marks, (s->n_marks + 1) * sizeof *nm);
	if (!nm)
		return -1;
	s->marks = nm;
	db_mark *m = &nm[s->n_marks];
	memset(m, 0, sizeof *m);
	m->stage = dup_or_null(stage);
	m->text = strdup(text ? text : "");
	if ((stage && !m->stage) || !m->text) {
		free(m->stage);
		free(m->text);
		return -1;
	}
	m->layer = layer;
	m->rank = rank;
	m->status = st;
	m->time = (int64_t)time(NULL);
	return (long)s->n_marks++;
}

bool db_session_remove_mark(db_session *s, size_t i)
{
	if (i >= s->n_marks)
		return false;
	free(s->marks[i].stage);
	free(s->marks[i].text);
	memmove(&s->marks[i], &s->marks[i + 1], (s->n_marks - i - 1) * sizeof *s->marks);
	s->n_marks--;
	return true;
}

long db_session_find_mark(const db_session *s, int layer, const char *stage)
{
	for (size_t i = 0; i < s->n_marks; i++) {
		const db_mark *m = &s->marks[i];
		if (m->layer != layer)
			continue;
		if (!stage ? !m->stage : (m->stage && !strcmp(m->stage, stage)))
			return (long)i;
	}
	return -1;
}

int db_session_add_note(db_session *s, const char *note_path)
{
	char **nn = realloc(s->notes, (s->n_notes + 1) * sizeof *nn);
	if (!nn)
		return -1;
	s->notes = nn;
	if (!(nn[s->n_notes] = strdup(note_path)))
		return -1;
	s->n_notes++;
	return 0;
}

int db_session_view_set(db_session *s, const char *key, const char *value)
{
	for (size_t i = 0; i < s->n_view; i++) {
		if (strcmp(s->view[i].key, key))
			continue;
		if (!value) {
			free(s->view[i].key);
			free(s->view[i].value);
			memmove(&s->view[i], &s->view[i + 1], (s->n_view - i - 1) * sizeof *s->view);
			s->n_view--;
			return 0;
		}
		char *v = strdup(value);
		if (!v)
			return -1;
		free(s->view[i].value);
		s->view[i].value = v;
		return 0;
	}
	if (!value)
		return 0;
	db_kv *nv = realloc(s->view, (s->n_view + 1) * sizeof *nv);
	if (!nv)
		return -1;
	s->view = nv;
	char *k = strdup(key), *v = strdup(value);
	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	nv[s->n_view].key = k;
	nv[s->n_view].value = v;
	s->n_view++;
	return 0;
}

const char *db_session_view_get(const db_session *s, const char *key)
{
	for (size_t i = 0; i < s->n_view; i++)
		if (!strcmp(s->view[i].key, key))
			return s->view[i].value;
	return NULL;
}

int db_session_check_trees(const db_session *s, db_err *err)
{
	const char *name = s->path ? s->path : "session";
	struct stat st;
	if (!s->ref)
		return db_err_set(err, name, NULL, -1, "the session names no reference tree; give --ref DIR");
	if (stat(s->ref, &st) < 0)
		return db_err_set(err, name, NULL, -1,
		                  "reference tree %s is gone (%s; moved?); give --ref DIR", s->ref,
		                  strerror(errno));
	if (s->target && stat(s->target, &st) < 0)
		return db_err_set(err, name, NULL, -1,
		                  "target tree %s is gone (%s; moved?); give --target DIR", s->target,
		                  strerror(errno));
	return 0;
}
