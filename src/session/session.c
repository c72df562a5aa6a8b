/* A bisect session in memory: creating and freeing it, its marks, notes
 * and view state, and moving candidates and steps to and from a bisect.
 * On disk: session_yaml_read.c, session_yaml_write.c. */
#include "db_session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "session_priv.h"

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

static void free_mark(db_mark *m)
{
	free(m->phase);
	free(m->pass);
	free(m->stage);
	free(m->text);
}

void db_session_free_marks(db_mark *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free_mark(&m[i]);
	free(m);
}

static void free_kv(db_kv *kv)
{
	free(kv->key);
	free(kv->value);
}

void db_session_free(db_session *s)
{
	if (!s)
		return;
	free(s->path);
	free(s->ref);
	free(s->target);
	free(s->profile);
	free(s->noise);
	free(s->slots);
	free(s->align);
	free(s->phase);
	free(s->pass);
	free(s->probe);
	free(s->layers);
	free(s->steps);
	db_session_free_marks(s->marks, s->n_marks);
	for (size_t i = 0; i < s->n_notes; i++)
		free(s->notes[i]);
	free(s->notes);
	for (size_t i = 0; i < s->n_view; i++)
		free_kv(&s->view[i]);
	free(s->view);
	for (size_t i = 0; i < s->n_earlier; i++)
		db_session_free(s->earlier[i]);
	free(s->earlier);
	free(s->base);
	if (s->locked)
		close(s->lock_fd);      /* releases the session lock */
	free(s);
}

int db_session_archive_bisect(db_session *s, bool keep_probe)
{
	if (s->n_steps) {
		db_session *e = calloc(1, sizeof *e);
		db_session **v = realloc(s->earlier, (s->n_earlier + 1) * sizeof *v);
		if (!e || !v) {
			free(e);
			if (v)
				s->earlier = v;
			return -1;
		}
		s->earlier = v;
		e->phase = s->phase ? strdup(s->phase) : NULL;
		e->pass = s->pass ? strdup(s->pass) : NULL;
		e->probe = s->probe ? strdup(s->probe) : NULL;
		if ((s->phase && !e->phase) || (s->pass && !e->pass) || (s->probe && !e->probe)) {
			db_session_free(e);
			return -1;
		}
		/* the candidates and steps move over */
		e->pred = s->pred;
		e->good = s->good;
		e->layers = s->layers;
		e->n_layers = s->n_layers;
		e->steps = s->steps;
		e->n_steps = s->n_steps;
		e->created = e->updated = s->updated;
		s->earlier[s->n_earlier++] = e;
	} else {
		free(s->layers);
		free(s->steps);
	}
	s->layers = NULL;
	s->n_layers = 0;
	s->steps = NULL;
	s->n_steps = 0;
	free(s->phase);
	free(s->pass);
	s->phase = s->pass = NULL;
	if (!keep_probe) {
		free(s->probe);
		s->probe = NULL;
	}
	return 0;
}

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
	/* all the steps, then the state once: linear in steps and layers */
	db_err e2;
	size_t bad = 0;
	if (db_bisect_replay(b, s->steps, s->n_steps, &bad, &e2) < 0) {
		db_bisect_free(b);
		return db_err_set(err, s->path, NULL, -1, "step %zu: %s", bad + 1, e2.msg);
	}
	return 0;
}

long db_session_add_mark_at(db_session *s, const char *phase, const char *pass, int layer,
                            const char *stage, int rank, db_mark_status st,
                            const char *text)
{
	db_mark *nm = realloc(s->marks, (s->n_marks + 1) * sizeof *nm);
	if (!nm)
		return -1;
	s->marks = nm;
	db_mark *m = &nm[s->n_marks];
	memset(m, 0, sizeof *m);
	m->phase = dup_or_null(phase);
	m->pass = dup_or_null(pass);
	m->stage = dup_or_null(stage);
	m->text = strdup(text ? text : "");
	if ((stage && !m->stage) || (phase && !m->phase) || (pass && !m->pass) || !m->text) {
		free_mark(m);
		return -1;
	}
	m->layer = layer;
	m->rank = rank;
	m->status = st;
	m->time = (int64_t)time(NULL);
	return (long)s->n_marks++;
}

long db_session_add_mark(db_session *s, int layer, const char *stage,
                         int rank, db_mark_status st, const char *text)
{
	return db_session_add_mark_at(s, NULL, NULL, layer, stage, rank, st, text);
}

bool db_session_remove_mark(db_session *s, size_t i)
{
	if (i >= s->n_marks)
		return false;
	free_mark(&s->marks[i]);
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

static bool same_sel(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

long db_session_mark_at(const db_session *s, const char *phase, const char *pass, int layer,
                        const char *stage, int rank, bool substages)
{
	for (size_t i = 0; s && i < s->n_marks; i++) {
		const db_mark *m = &s->marks[i];
		if (m->layer != layer || (m->phase && !same_sel(m->phase, phase)) ||
		    (m->pass && !same_sel(m->pass, pass)) || (rank >= 0 && m->rank >= 0 && m->rank != rank))
			continue;
		if (!stage ? !m->stage : !m->stage ? substages :
		    !strcmp(m->stage, stage) ||
		    (substages && !strncmp(m->stage, stage, strlen(stage)) && m->stage[strlen(stage)] == '.'))
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
			free_kv(&s->view[i]);
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
