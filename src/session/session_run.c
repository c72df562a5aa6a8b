/* Between a session and a bisect run: open a run with the session's
 * settings (and steps), record a run's settings in the session, save a
 * run's steps (taking in another writer's). */
#include "db_session.h"

#include <stdlib.h>
#include <string.h>

static int replace(char **dst, const char *src)
{
	char *d = NULL;
	if (src && !(d = strdup(src)))
		return -1;
	free(*dst);
	*dst = d;
	return 0;
}

int db_session_set_run(db_session *s, const db_bisect_run *r, const char *profile)
{
	if (!profile && r->c->profile)
		profile = r->c->profile->name;
	if (replace(&s->probe, r->stage) < 0 || replace(&s->phase, r->phase) < 0 ||
	    replace(&s->pass, r->pass) < 0 || replace(&s->profile, profile) < 0)
		return -1;
	s->pred = r->o.pred;
	return 0;
}

int db_session_run_open(const db_session *s, db_compare *c, bool with_steps,
                        db_bisect_run **out, db_err *err)
{
	db_bisect_opts o;
	db_bisect_opts_default(&o);
	o.stage = s->probe;
	o.phase = s->phase;
	o.pass = s->pass;
	o.pred = s->pred;
	o.good_layer = s->good;
	if (db_bisect_run_open(c, &o, out, err) < 0)
		return -1;
	if (!s->n_layers)
		return 0;
	/* The session's candidates (and steps) win over what the trees show:
	 * replay must judge the same layers that were judged. */
	db_bisect sm;
	db_session tmp = *s;
	if (!with_steps)
		tmp.n_steps = 0;
	if (db_session_to_bisect(&tmp, &sm, err) < 0) {
		db_bisect_run_free(*out);
		*out = NULL;
		return -1;
	}
	db_bisect_free(&(*out)->sm);
	(*out)->sm = sm;
	return 0;
}

int db_session_save_bisect(db_session *s, const char *path, db_bisect *b, db_err *err)
{
	if (db_session_sync_bisect(s, b, err) < 0)
		return -1;
	int rc = db_session_save(s, path, err);
	if (rc != 1)
		return rc;
	/* another writer's verdicts are in s now: b goes on from there */
	db_bisect nb;
	if (db_session_to_bisect(s, &nb, err) < 0)
		return -1;
	db_bisect_free(b);
	*b = nb;
	return 1;
}
