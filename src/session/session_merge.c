/* The three-way merge a session save does when another writer changed the
 * file since this session read or wrote it (db_session_save): the base is
 * the text last read or written, "theirs" the file now, "ours" the session
 * in memory. The result starts as theirs and takes our changes. */
#include "session_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool num_eq(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

static bool step_eq(const db_bisect_step *a, const db_bisect_step *b)
{
	return a->layer == b->layer && a->verdict == b->verdict &&
	       a->auto_verdict == b->auto_verdict && a->by_user == b->by_user &&
	       a->band == b->band && a->time == b->time && num_eq(a->cos, b->cos) &&
	       num_eq(a->rel, b->rel);
}

static bool mark_eq(const db_mark *a, const db_mark *b)
{
	return a->layer == b->layer && a->rank == b->rank && a->status == b->status &&
	       a->time == b->time && str_eq(a->stage, b->stage) && str_eq(a->text, b->text) &&
	       str_eq(a->phase, b->phase) && str_eq(a->pass, b->pass);
}

/* One bisect's aim: phase, pass, probe, predicate, start bound and
 * candidates (an 'earlier' entry holds these and its steps). */
static bool aim_eq(const db_session *a, const db_session *b)
{
	if (!str_eq(a->phase, b->phase) || !str_eq(a->pass, b->pass) ||
	    !str_eq(a->probe, b->probe) || a->good != b->good || a->n_layers != b->n_layers)
		return false;
	if (a->pred.kind != b->pred.kind || a->pred.worst_good != b->pred.worst_good ||
	    !num_eq(a->pred.cos_min, b->pred.cos_min) || !num_eq(a->pred.rel_max, b->pred.rel_max))
		return false;
	return !a->n_layers || !memcmp(a->layers, b->layers, a->n_layers * sizeof *a->layers);
}

static bool steps_eq(const db_session *a, const db_session *b)
{
	if (a->n_steps != b->n_steps)
		return false;
	for (size_t i = 0; i < a->n_steps; i++)
		if (!step_eq(&a->steps[i], &b->steps[i]))
			return false;
	return true;
}

/* The bisect setup: trees, profile, noise run, slots, the aim and the
 * bisects re-aimed away from. One writer's `bisect start` (or re-aim)
 * changes it as a whole. */
static bool setup_eq(const db_session *a, const db_session *b)
{
	if (!str_eq(a->ref, b->ref) || !str_eq(a->target, b->target) ||
	    !str_eq(a->profile, b->profile) || !str_eq(a->noise, b->noise) ||
	    !str_eq(a->slots, b->slots) || !str_eq(a->align, b->align) || !aim_eq(a, b) ||
	    a->n_earlier != b->n_earlier)
		return false;
	for (size_t i = 0; i < a->n_earlier; i++)
		if (!aim_eq(a->earlier[i], b->earlier[i]) || !steps_eq(a->earlier[i], b->earlier[i]))
			return false;
	return true;
}

static bool view_eq(const db_session *a, const db_session *b)
{
	if (a->n_view != b->n_view)
		return false;
	for (size_t i = 0; i < a->n_view; i++)
		if (!str_eq(a->view[i].key, b->view[i].key) || !str_eq(a->view[i].value, b->view[i].value))
			return false;
	return true;
}

static int dup_into(char **dst, const char *src)
{
	char *d = NULL;
	if (src && !(d = strdup(src)))
		return -1;
	free(*dst);
	*dst = d;
	return 0;
}

/* r takes ours' aim (r's strings and arrays are its own). */
static int take_aim(db_session *r, const db_session *ours)
{
	if (dup_into(&r->phase, ours->phase) < 0 || dup_into(&r->pass, ours->pass) < 0 ||
	    dup_into(&r->probe, ours->probe) < 0)
		return -1;
	int *l = malloc((ours->n_layers ? ours->n_layers : 1) * sizeof *l);
	if (!l)
		return -1;
	if (ours->n_layers)
		memcpy(l, ours->layers, ours->n_layers * sizeof *l);
	free(r->layers);
	r->layers = l;
	r->n_layers = ours->n_layers;
	r->pred = ours->pred;
	r->good = ours->good;
	return 0;
}

/* A copy of an 'earlier' entry: its aim and steps. NULL on OOM. */
static db_session *dup_earlier(const db_session *e)
{
	db_session *d = db_session_new(NULL, NULL);
	if (!d || take_aim(d, e) < 0 ||
	    !(d->steps = malloc((e->n_steps ? e->n_steps : 1) * sizeof *d->steps))) {
		db_session_free(d);
		return NULL;
	}
	if (e->n_steps)
		memcpy(d->steps, e->steps, e->n_steps * sizeof *d->steps);
	d->n_steps = e->n_steps;
	d->created = e->created;
	d->updated = e->updated;
	return d;
}

/* r takes ours' setup (r is theirs, parsed: its strings are its own). */
static int take_setup(db_session *r, const db_session *ours)
{
	if (dup_into(&r->ref, ours->ref) < 0 || dup_into(&r->target, ours->target) < 0 ||
	    dup_into(&r->profile, ours->profile) < 0 || dup_into(&r->noise, ours->noise) < 0 ||
	    dup_into(&r->slots, ours->slots) < 0 || dup_into(&r->align, ours->align) < 0 ||
	    take_aim(r, ours) < 0)
		return -1;
	db_session **v = calloc(ours->n_earlier ? ours->n_earlier : 1, sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < ours->n_earlier; i++)
		if (!(v[i] = dup_earlier(ours->earlier[i]))) {
			while (i--)
				db_session_free(v[i]);
			free(v);
			return -1;
		}
	for (size_t i = 0; i < r->n_earlier; i++)
		db_session_free(r->earlier[i]);
	free(r->earlier);
	r->earlier = v;
	r->n_earlier = ours->n_earlier;
	return 0;
}

static size_t common_steps(const db_session *a, const db_session *b)
{
	size_t n = 0;
	while (n < a->n_steps && n < b->n_steps && step_eq(&a->steps[n], &b->steps[n]))
		n++;
	return n;
}

/* Each side keeps the base's steps up to where it undid any; theirs new
 * steps follow, then ours (less the ones they recorded too). */
static int merge_steps(db_session *r, const db_session *base, const db_session *ours)
{
	size_t pt = common_steps(base, r), po = common_steps(base, ours);
	size_t keep = pt < po ? pt : po;
	size_t cap = keep + (r->n_steps - pt) + (ours->n_steps - po) + 1;
	db_bisect_step *v = malloc(cap * sizeof *v);
	if (!v)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < keep; i++)
		v[n++] = base->steps[i];
	for (size_t i = pt; i < r->n_steps; i++)
		v[n++] = r->steps[i];
	for (size_t i = po; i < ours->n_steps; i++) {
		bool twice = false;
		for (size_t j = pt; j < r->n_steps && !twice; j++)
			twice = step_eq(&ours->steps[i], &r->steps[j]);
		if (!twice)
			v[n++] = ours->steps[i];
	}
	free(r->steps);
	r->steps = v;
	r->n_steps = n;
	return 0;
}

static bool has_mark(const db_session *s, const db_mark *m)
{
	for (size_t i = 0; i < s->n_marks; i++)
		if (mark_eq(&s->marks[i], m))
			return true;
	return false;
}

/* Theirs less the marks we removed, plus the ones we added. */
static int merge_marks(db_session *r, const db_session *base, const db_session *ours)
{
	for (size_t i = r->n_marks; i-- > 0;)
		if (has_mark(base, &r->marks[i]) && !has_mark(ours, &r->marks[i]))
			db_session_remove_mark(r, i);
	for (size_t i = 0; i < ours->n_marks; i++) {
		const db_mark *m = &ours->marks[i];
		if (has_mark(base, m) || has_mark(r, m))
			continue;
		long k = db_session_add_mark_at(r, m->phase, m->pass, m->layer, m->stage, m->rank,
		                                m->status, m->text);
		if (k < 0)
			return -1;
		r->marks[k].time = m->time;
	}
	return 0;
}

static int merge_notes(db_session *r, const db_session *ours)
{
	for (size_t i = 0; i < ours->n_notes; i++) {
		bool there = false;
		for (size_t j = 0; j < r->n_notes && !there; j++)
			there = !strcmp(r->notes[j], ours->notes[i]);
		if (!there && db_session_add_note(r, ours->notes[i]) < 0)
			return -1;
	}
	return 0;
}

static int take_view(db_session *r, const db_session *ours)
{
	while (r->n_view)
		db_session_view_set(r, r->view[0].key, NULL);
	for (size_t i = 0; i < ours->n_view; i++)
		if (db_session_view_set(r, ours->view[i].key, ours->view[i].value) < 0)
			return -1;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The first step whose layer is no candidate, or -1. */
static long stray_step(const db_session *r)
{
	int *l = malloc((r->n_layers ? r->n_layers : 1) * sizeof *l);
	if (!l)
		return r->n_steps ? 0 : -1;
	if (r->n_layers)
		memcpy(l, r->layers, r->n_layers * sizeof *l);
	qsort(l, r->n_layers, sizeof *l, cmp_int);
	long bad = -1;
	for (size_t i = 0; i < r->n_steps && bad < 0; i++)
		if (!bsearch(&r->steps[i].layer, l, r->n_layers, sizeof *l, cmp_int))
			bad = (long)i;
	free(l);
	return bad;
}

/* s takes r's content; s keeps its file, base and lock. r is freed. */
static void adopt(db_session *s, db_session *r)
{
	db_session old = *s;
	*s = *r;
	s->path = old.path;
	s->base = old.base;
	s->base_len = old.base_len;
	s->locked = old.locked;
	s->lock_fd = old.lock_fd;
	old.path = NULL;
	old.base = NULL;
	old.locked = false;
	*r = old;
	db_session_free(r);
}

int db_session_merge(db_session *s, const char *text, size_t len, db_err *err)
{
	const char *name = s->path ? s->path : "session";
	db_session *base = NULL, *r = NULL;
	db_err e2 = {{0}};
	if (db_session_parse(text, len, name, &r, &e2) < 0)
		return db_err_set(err, NULL, NULL, -1, "changed on disk by another writer and it no "
		                  "longer reads (%s); not saved over", e2.msg);
	if (s->base ? db_session_parse(s->base, s->base_len, name, &base, &e2) < 0
	            : !(base = db_session_new(NULL, NULL))) {
		db_session_free(r);
		return db_err_set(err, name, NULL, -1, "merge base: %s", s->base ? e2.msg : "out of memory");
	}
	int rc = 0;
	if (setup_eq(s, base) || setup_eq(s, r)) {
		/* ours unchanged (or the same as theirs): theirs stands */
	} else if (setup_eq(r, base)) {
		rc = take_setup(r, s);
	} else {
		rc = db_err_set(err, name, NULL, -1, "changed on disk by another writer, and both "
		                "set the bisect up anew (trees, probe, predicate or candidates); "
		                "not saved over it: reopen the session");
		goto out;
	}
	if (rc == 0)
		rc = merge_steps(r, base, s);
	if (rc == 0)
		rc = merge_marks(r, base, s);
	if (rc == 0)
		rc = merge_notes(r, s);
	if (rc == 0 && !view_eq(s, base))
		rc = take_view(r, s);
	if (rc < 0) {
		db_err_set(err, name, NULL, -1, "merging with the file on disk: out of memory");
		goto out;
	}
	long stray = stray_step(r);
	if (stray >= 0) {
		char l[32];
		rc = db_err_set(err, name, NULL, -1, "changed on disk by another writer; merged, the "
		                "verdict on %s is no candidate of the bisect there; not saved over it",
		                db_layer_label(r->steps[stray].layer, l, sizeof l));
		goto out;
	}
	adopt(s, r);
	r = NULL;
out:
	db_session_free(r);
	db_session_free(base);
	return rc;
}
