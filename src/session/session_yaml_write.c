/* Writing a session file: the YAML text, by the libyaml emitter (format:
 * include/db_session.h; the save itself: session_file.c). */
#include "db_session.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "session_priv.h"
#include "db_esc.h"

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

/* Emits an event just initialised (init_ok: its initialisation result).
 * After a failure the rest are dropped; the emitter owns only the events
 * it was given, so a dropped one is deleted here. */
static void ev(emit *m, yaml_event_t *event, int init_ok)
{
	if (!m->ok) {
		if (init_ok)
			yaml_event_delete(event);
		return;
	}
	if (!init_ok || !yaml_emitter_emit(&m->e, event))
		m->ok = 0;
}

static void scalar(emit *m, const char *s)
{
	yaml_event_t e;
	ev(m, &e, yaml_scalar_event_initialize(&e, NULL, NULL, (yaml_char_t *)s,
	                                       (int)strlen(s), 1, 1, YAML_ANY_SCALAR_STYLE));
}

/* Text that is not UTF-8 (a tree path's bytes: a file system allows any)
 * cannot be a YAML scalar: it is written tagged DB_YAML_BYTES, '%' and each
 * byte outside ASCII as %XX (session_yaml_read.c decodes it). */
static void bytes_scalar(emit *m, const char *s)
{
	size_t n = strlen(s);
	char *q = malloc(3 * n + 1), *o = q;
	if (!q) {
		m->ok = 0;
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		o += *p == '%' || *p >= 0x80 ? sprintf(o, "%%%02X", *p) : (*o = (char)*p, 1);
	*o = 0;
	yaml_event_t e;
	ev(m, &e, yaml_scalar_event_initialize(&e, NULL, (yaml_char_t *)DB_YAML_BYTES,
	                                       (yaml_char_t *)q, (int)(o - q), 0, 0,
	                                       YAML_DOUBLE_QUOTED_SCALAR_STYLE));
	free(q);
}

/* Strings that a reader could take for another type get quoted: we read
 * every scalar as a string anyway, but other tools should not be fooled. */
static void str_scalar(emit *m, const char *s)
{
	if (!db_utf8_valid(s)) {
		bytes_scalar(m, s);
		return;
	}
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

/* The candidates and the steps of s's bisect. */
static void emit_layers_steps(emit *m, const db_session *s)
{
	char buf[32];
	scalar(m, "layers");
	seq_start(m, 1);
	for (size_t i = 0; i < s->n_layers; i++) {
		if (s->layers[i] == DB_LAYER_FINAL)
			scalar(m, "final");
		else {
			snprintf(buf, sizeof buf, "%d", s->layers[i]);
			scalar(m, buf);
		}
	}
	seq_end(m);
	scalar(m, "steps");
	seq_start(m, 0);
	for (size_t i = 0; i < s->n_steps; i++) {
		const db_bisect_step *st = &s->steps[i];
		map_start(m, 1);
		key_layer(m, "layer", st->layer);
		key_fmt(m, "verdict", "%s", db_verdict_name(st->verdict));
		key_fmt(m, "by", "%s", st->by_user ? "user" : "auto");
		key_fmt(m, "auto", "%s", db_verdict_name(st->auto_verdict));
		key_num(m, "cos", st->cos);
		key_num(m, "rel", st->rel);
		key_fmt(m, "band", "%s", db_band_name(st->band));
		key_fmt(m, "time", "%lld", (long long)st->time);
		map_end(m);
	}
	seq_end(m);
}

/* The bisects of the other passes (db_session_switch_bisect). */
static void emit_earlier(emit *m, const db_session *s)
{
	char buf[2048];        /* a predicate: pass-if rules may be long */
	if (!s->n_earlier)
		return;
	scalar(m, "earlier");
	seq_start(m, 0);
	for (size_t i = 0; i < s->n_earlier; i++) {
		const db_session *e = s->earlier[i];
		map_start(m, 0);
		key_str(m, "phase", e->phase);
		key_str(m, "pass", e->pass);
		key_str(m, "probe", e->probe);
		key_str(m, "predicate", db_predicate_str(&e->pred, buf, sizeof buf));
		key_layer(m, "good", e->good);
		emit_layers_steps(m, e);
		map_end(m);
	}
	seq_end(m);
}

char *db_session_dump(const db_session *s, size_t *len)
{
	sbuf b = {0};
	emit m = {.ok = 1};
	yaml_event_t e;
	char buf[2048];        /* a predicate: pass-if rules may be long */
	if (!yaml_emitter_initialize(&m.e))
		return NULL;
	yaml_emitter_set_output(&m.e, sbuf_write, &b);
	yaml_emitter_set_unicode(&m.e, 1);
	yaml_emitter_set_width(&m.e, 100);
	ev(&m, &e, yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING));
	ev(&m, &e, yaml_document_start_event_initialize(&e, NULL, NULL, NULL, 1));
	map_start(&m, 0);
	key_fmt(&m, "dumpbisect_session", "%d", DB_SESSION_VERSION);
	key_str(&m, "ref", s->ref);
	key_str(&m, "target", s->target);
	key_str(&m, "profile", s->profile);
	key_str(&m, "noise", s->noise);
	key_str(&m, "slots", s->slots);
	key_str(&m, "align", s->align);
	key_str(&m, "phase", s->phase);
	key_str(&m, "pass", s->pass);
	key_str(&m, "probe", s->probe);
	key_str(&m, "predicate", db_predicate_str(&s->pred, buf, sizeof buf));
	key_layer(&m, "good", s->good);
	key_fmt(&m, "created", "%lld", (long long)s->created);
	key_fmt(&m, "updated", "%lld", (long long)s->updated);
	emit_layers_steps(&m, s);
	scalar(&m, "marks");
	seq_start(&m, 0);
	for (size_t i = 0; i < s->n_marks; i++) {
		const db_mark *mk = &s->marks[i];
		map_start(&m, 0);
		key_str(&m, "phase", mk->phase);
		key_str(&m, "pass", mk->pass);
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
	emit_earlier(&m, s);
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
