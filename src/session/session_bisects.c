/* A session's bisects, one per (phase, pass): the current one at the top
 * of the session, the others kept in s->earlier; going back to a pass
 * resumes its bisect, and the export and replay list every one that has
 * steps. Version 1 files are migrated here too (db_session_migrate_v1). */
#include "db_session.h"

#include <stdlib.h>
#include <string.h>

#include "session_priv.h"

static bool same_sel(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

long db_session_find_bisect(const db_session *s, const char *phase, const char *pass)
{
	for (size_t i = s->n_earlier; i > 0; i--) {
		const db_session *e = s->earlier[i - 1];
		if (same_sel(e->phase, phase) && same_sel(e->pass, pass))
			return (long)(i - 1);
	}
	return -1;
}

int db_session_switch_bisect(db_session *s, const char *phase, const char *pass,
                             bool keep_probe)
{
	if ((s->phase || s->pass) && same_sel(s->phase, phase) && same_sel(s->pass, pass))
		return 0;
	long k = db_session_find_bisect(s, phase, pass);
	db_session *e = k >= 0 ? s->earlier[k] : NULL;
	if (e) {
		/* out of the list first: the archive below may append to it */
		memmove(&s->earlier[k], &s->earlier[k + 1],
		        (s->n_earlier - (size_t)k - 1) * sizeof *s->earlier);
		s->n_earlier--;
	}
	if (db_session_archive_bisect(s, keep_probe) < 0) {
		if (e)
			s->earlier[s->n_earlier++] = e;   /* the slot is still allocated */
		return -1;
	}
	if (!e)
		return 0;
	/* its fields move over; e keeps none of them */
	free(s->phase);
	free(s->pass);
	free(s->probe);
	s->phase = e->phase;
	s->pass = e->pass;
	s->probe = e->probe;    /* its steps were judged on it */
	s->pred = e->pred;
	s->good = e->good;
	s->layers = e->layers;
	s->n_layers = e->n_layers;
	s->steps = e->steps;
	s->n_steps = e->n_steps;
	e->phase = e->pass = e->probe = NULL;
	e->layers = NULL;
	e->steps = NULL;
	e->n_layers = e->n_steps = 0;
	db_session_free(e);
	return 1;
}

/* b's state machine from its log (false: it cannot be replayed). */
static bool found(const db_session *b)
{
	db_bisect sm;
	db_err err;
	if (!b->n_steps || db_session_to_bisect(b, &sm, &err) < 0)
		return false;
	bool f = sm.phase == DB_BP_FOUND && sm.first_bad >= 0;
	db_bisect_free(&sm);
	return f;
}

size_t db_session_bisects(const db_session *s, const db_session **out, size_t cap)
{
	size_t n = 0;
	/* two rounds: the found ones, then the rest; in each, the current
	 * one first, then the kept ones, newest first */
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i <= s->n_earlier && n < cap; i++) {
			const db_session *b = i ? s->earlier[s->n_earlier - i] : s;
			if (b->n_steps && found(b) == (round == 0))
				out[n++] = b;
		}
	return n;
}

/* The pass of the bisect in s (the current one first, then the kept
 * ones) that found layer; false when none did. */
static bool pass_that_found(const db_session *s, int layer, const db_session **where)
{
	for (size_t i = 0; i <= s->n_earlier; i++) {
		const db_session *b = i ? s->earlier[s->n_earlier - i] : s;
		db_bisect sm;
		db_err err;
		if (!b->n_steps || db_session_to_bisect(b, &sm, &err) < 0)
			continue;
		bool hit = sm.phase == DB_BP_FOUND && sm.first_bad >= 0 &&
		           sm.layers[sm.first_bad] == layer;
		db_bisect_free(&sm);
		if (hit) {
			*where = b;
			return true;
		}
	}
	return false;
}

static int set_place(db_mark *m, const char *phase, const char *pass)
{
	m->phase = strdup(phase ? phase : "");
	m->pass = strdup(pass ? pass : "");
	return m->phase && m->pass ? 0 : -1;
}

int db_session_migrate_v1(db_session *s)
{
	/* the pass the session was on: its bisect's, else the screen's */
	const char *phase = s->phase, *pass = s->pass;
	if (!pass && !phase) {
		phase = db_session_view_get(s, "phase");
		pass = db_session_view_get(s, "pass");
	}
	for (size_t i = 0; i < s->n_marks; i++) {
		db_mark *m = &s->marks[i];
		const db_session *b;
		if (m->phase || m->pass)
			continue;
		if (pass_that_found(s, m->layer, &b)) {
			if (set_place(m, b->phase, b->pass) < 0)
				return -1;
		} else if (phase || pass) {
			if (set_place(m, phase, pass) < 0)
				return -1;
		}
	}
	return 0;
}
