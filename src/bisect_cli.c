/* Shared plumbing of the bisect, replay and export commands. */
#include "bisect_cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool bcli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, name, n))
		return false;
	if (a[n] == '=') {
		*val = a + n + 1;
		return true;
	}
	if (a[n])
		return false;
	if (*i + 1 >= argc) {
		*val = NULL;
		return true;
	}
	*val = argv[++*i];
	return true;
}

char *bcli_abspath(const char *path)
{
	char buf[PATH_MAX];
	if (path && realpath(path, buf))
		return strdup(buf);
	return path ? strdup(path) : NULL;
}

int bcli_open_compare(const char *ref, const char *target, const char *profile,
                      db_compare **out, db_err *err)
{
	db_compare_opts o = {0};
	o.profile = profile;
	return db_compare_open(ref, target, &o, out, err);
}

static int replace(char **dst, const char *src)
{
	char *d = NULL;
	if (src && !(d = strdup(src)))
		return -1;
	free(*dst);
	*dst = d;
	return 0;
}

int bcli_session_settings(db_session *s, const db_bisect_run *r, const char *profile)
{
	if (!profile && r->c->profile)
		profile = r->c->profile->name;
	if (replace(&s->probe, r->stage) < 0 || replace(&s->phase, r->phase) < 0 ||
	    replace(&s->pass, r->pass) < 0 || replace(&s->profile, profile) < 0)
		return -1;
	s->pred = r->o.pred;
	return 0;
}

int bcli_run_from_session(const db_session *s, db_compare *c, bool with_steps,
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
