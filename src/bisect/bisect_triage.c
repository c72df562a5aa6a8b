/* Which phase and which pass a bisect looks at. A decode-only bug (a KV
 * write index, a position offset) leaves the prefill and the first decode
 * steps bit-identical: a bisect of the profile's pass alone says "nothing
 * bad" about a tree that is bad. Passes are triaged like phases: the probe
 * at the layer dumped last tells whether a pass diverges (an error of any
 * layer reaches it), in causal order, and the choice is said in words. */
#include "db_bisect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_priv.h"
#include "db_grid.h"
#include "db_yield.h"

/* Choose the probe of phase/pass into r (stage, how, why). */
static int choose_probe(db_bisect_run *r, const char *phase, const char *pass, db_err *err)
{
	char *st = NULL;
	if (db_bisect_choose_probe(r->c, phase, pass, r->o.stage, &st, &r->probe_how,
	                           r->probe_why, sizeof r->probe_why, err) < 0)
		return -1;
	free(r->stage);
	r->stage = st;
	return 0;
}

/* The layer whose probe was dumped last in execution order, -1 none. */
static int exec_last_layer(const db_bisect_run *r)
{
	const db_pair *last = NULL;
	db_bsel s;
	db_bsel_open(&s, r->c, r->pass);
	for (size_t k = 0; k < s.n; k++) {
		const db_pair *p = &r->c->pairs[db_bsel_at(&s, k)];
		if (p->f.layer >= 0 && db_bisect_pair_in(r, p) && db_bisect_probe_pair(r, p) &&
		    (!last || p->seq > last->seq))
			last = p;
	}
	db_bsel_close(&s);
	return last ? last->f.layer : -1;
}

/* What one pass's probe said. */
typedef enum { PV_NONE, PV_SAME, PV_OK, PV_DRIFT, PV_BAD } pass_v;

typedef struct triage {
	char **passes;          /* candidates in causal order (owned) */
	size_t n, start;        /* start: the profile's selection */
	pass_v *v;
	long first_bad, first_drift;   /* indices; -1 none */
	long picked;            /* the pass of compare's first divergence; -1 none */
	int probe_layer;        /* the layer probed in the chosen pass */
	char probe[256];
} triage;

static void triage_free(triage *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->passes[i]);
	free(t->passes);
	free(t->v);
	memset(t, 0, sizeof *t);
}

/* Probe pass i of phase with r's probe rules; leaves r->phase/pass NULL. */
static pass_v probe_pass(db_bisect_run *r, const char *phase, const char *pass,
                         int *layer, char *stage, size_t stlen)
{
	db_err e = {{0}};
	*layer = -1;
	stage[0] = '\0';
	if (choose_probe(r, phase, pass, &e) < 0)
		return PV_NONE;
	r->phase = (char *)phase;
	r->pass = (char *)pass;
	db_probe pr;
	int l = exec_last_layer(r);
	db_bisect_probe(r, l, &pr);
	const char *st = l >= 0 ? db_probe_stage_at(r->c, phase, pass, r->stage, l) : NULL;
	r->phase = r->pass = NULL;
	*layer = l;
	char bl[32];
	if (pr.beyond != DB_NO_PAIR) {   /* the probe is back within noise */
		const db_pair *q = &r->c->pairs[pr.beyond];
		snprintf(stage, stlen, "%.100s (beyond noise before it: %s %.100s)", st ? st : "",
		         db_layer_label(q->f.layer, bl, sizeof bl), q->f.stage);
	} else
		snprintf(stage, stlen, "%s", st ? st : "");
	if (!pr.dumped || pr.auto_verdict == DB_V_NONE)
		return PV_NONE;
	/* beyond the noise run's floor is no layouts' drift: it diverges */
	const db_pair *pp = pr.pair != DB_NO_PAIR ? &r->c->pairs[pr.pair] : NULL;
	if (pr.auto_verdict == DB_V_BAD)
		return pr.band > DB_BAND_DRIFT || pr.beyond != DB_NO_PAIR ||
		       (pp && pp->noise == DB_NOISE_BEYOND) ? PV_BAD : PV_DRIFT;
	return pr.m.max_abs == 0 && pr.band == DB_BAND_OK ? PV_SAME : PV_OK;
}

static int triage_probes(db_bisect_run *r, const char *phase, triage *t, db_err *err);

/* The pass is compare's: the pass of db_first_divergence in phase (one
 * rule for "first" across passes, man dumpbisect FIRST DIVERGENCE). A
 * decode step's error sits in its one row and may fade before the last
 * layer (a KV write read by the next layer only), so the probe at the
 * layer dumped last cannot decide it; the probes still word the passes
 * before it. Nothing diverges: the probes alone, as before. */
static int triage_by_first(db_bisect_run *r, const char *phase, triage *t, db_err *err)
{
	db_compare *c = r->c;
	db_bisect_measure_all(r);
	long fd = db_first_divergence(c, phase, NULL, -2);
	long k = -1;
	for (size_t i = t->start; fd >= 0 && i < t->n && k < 0; i++)
		if (!strcmp(t->passes[i], c->pairs[fd].f.pass))
			k = (long)i;
	if (k < 0)
		return triage_probes(r, phase, t, err);
	const db_pair *p = &c->pairs[fd];
	for (size_t i = t->start; i <= (size_t)k; i++) {
		if (db_yield_tick("pass triage", i - t->start, (size_t)k + 1 - t->start))
			return db_err_set(err, NULL, NULL, -1, "pass triage stopped at pass %s "
			                  "(%zu of %zu)", t->passes[i], i - t->start + 1,
			                  (size_t)k + 1 - t->start);
		int l = -1;
		char st[256];
		t->v[i] = probe_pass(r, phase, t->passes[i], &l, st, sizeof st);
		if (i == t->start || (size_t)k == i) {
			t->probe_layer = l;
			snprintf(t->probe, sizeof t->probe, "%s", st);
		}
	}
	bool beyond = p->status != DB_ST_OK || p->band > DB_BAND_DRIFT;
	if (t->v[k] != PV_BAD && t->v[k] != PV_DRIFT) {
		/* the probe is back in the ok band: the place is compare's, when
		 * the probe at its layer is bad (bf16 drift the predicate calls
		 * good is no pass to search: the probes alone word it) */
		db_probe pr;
		r->phase = (char *)phase;
		r->pass = t->passes[k];
		db_bisect_probe(r, p->f.layer, &pr);
		r->phase = r->pass = NULL;
		if (p->f.layer < 0 || pr.auto_verdict != DB_V_BAD) {
			memset(t->v, 0, t->n * sizeof *t->v);
			t->probe_layer = -1;
			t->probe[0] = '\0';
			return triage_probes(r, phase, t, err);
		}
		char bl[32], was[256];
		t->v[k] = beyond ? PV_BAD : PV_DRIFT;
		snprintf(was, sizeof was, "%s", t->probe);
		snprintf(t->probe, sizeof t->probe, "%.100s (%s %.100s is ok again in it)",
		         p->f.stage, t->probe_layer >= 0
		         ? db_layer_label(t->probe_layer, bl, sizeof bl) : "-", was);
		t->probe_layer = p->f.layer;
	}
	if (t->v[k] == PV_BAD)
		t->first_bad = k;
	else
		t->first_drift = k;
	t->picked = k;
	return 0;
}

/* Triage the passes of phase (NULL/"" = the layout has none); stops at the
 * first bad beyond drift. */
static int triage_phase(db_bisect_run *r, const char *phase, triage *t, db_err *err)
{
	memset(t, 0, sizeof *t);
	t->first_bad = t->first_drift = -1;
	t->probe_layer = -1;
	if (r->o.pass) {
		t->passes = malloc(sizeof *t->passes);
		if (!t->passes || !(t->passes[0] = strdup(r->o.pass)))
			return db_err_set(err, NULL, NULL, -1, "out of memory");
		t->n = 1;
	} else {
		t->n = db_passes(r->c, phase, &t->passes);
		if (!t->n) {
			free(t->passes);
			t->passes = malloc(sizeof *t->passes);
			if (!t->passes || !(t->passes[0] = strdup("")))
				return db_err_set(err, NULL, NULL, -1, "out of memory");
			t->n = 1;
		}
		/* passes before the profile's selection are warmups or calls it
		 * rules out: the search starts there */
		const char *dp = db_default_pass(r->c, phase);
		for (size_t i = 0; dp && i < t->n; i++)
			if (!strcmp(t->passes[i], dp))
				t->start = i;
	}
	if (!(t->v = calloc(t->n, sizeof *t->v)))
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	t->picked = -1;
	if (!r->o.pass && t->n - t->start > 1)
		return triage_by_first(r, phase, t, err);
	return triage_probes(r, phase, t, err);
}

/* The passes judged by their probes alone (a pass given, or nothing
 * diverges in the phase). */
static int triage_probes(db_bisect_run *r, const char *phase, triage *t, db_err *err)
{
	/* The first pass that leaves the ok band is where the error starts
	 * (a KV cache written wrong in pass k is read by pass k+1): it wins,
	 * drift or worse, once the passes before it stayed ok. Only when the
	 * very first pass drifts may that be the layouts' noise floor (bf16 at
	 * another TP size drifts in every pass): then the first pass bad
	 * beyond drift wins, if one is. */
	for (size_t i = t->start; i < t->n; i++) {
		/* 20k passes are seconds: the workbench shows how far and may stop */
		if (db_yield_tick("pass triage", i - t->start, t->n - t->start))
			return db_err_set(err, NULL, NULL, -1, "pass triage stopped at pass %s "
			                  "(%zu of %zu)", t->passes[i], i - t->start + 1,
			                  t->n - t->start);
		int l = -1;
		char st[256];
		t->v[i] = probe_pass(r, phase, t->passes[i], &l, st, sizeof st);
		bool div = t->v[i] == PV_BAD || t->v[i] == PV_DRIFT;
		if ((div && t->first_bad < 0 && t->first_drift < 0) || i == t->start ||
		    (t->v[i] == PV_BAD && t->first_bad < 0)) {
			t->probe_layer = l;
			snprintf(t->probe, sizeof t->probe, "%s", st);
		}
		if (t->v[i] == PV_BAD) {
			t->first_bad = (long)i;
			break;
		}
		if (t->v[i] == PV_DRIFT && t->first_drift < 0) {
			t->first_drift = (long)i;
			if (i > t->start)
				break;
		}
	}
	return 0;
}

/* The pass chosen: the first that leaves the ok band after ok ones, else
 * the first bad beyond drift, else the first drift, else the profile's
 * selection. */
static size_t triage_pick(const triage *t)
{
	if (t->picked >= 0)
		return (size_t)t->picked;
	if (t->first_drift > (long)t->start)
		return (size_t)t->first_drift;
	return t->first_bad >= 0 ? (size_t)t->first_bad
	       : t->first_drift >= 0 ? (size_t)t->first_drift : t->start;
}

/* "pass 3" / "passes 0-2" for passes [a, b]. */
static void span_label(const triage *t, size_t a, size_t b, char *buf, size_t len)
{
	if (a == b)
		snprintf(buf, len, "pass %s", t->passes[a]);
	else
		snprintf(buf, len, "passes %s-%s", t->passes[a], t->passes[b]);
}

/* The words of the choice into r->pass_why. */
static void say_why_into(db_bisect_run *r, const triage *t, size_t k, char *w, size_t wl);

static void say_why(db_bisect_run *r, const triage *t, size_t k)
{
	char w[1024] = "";
	say_why_into(r, t, k, w, sizeof w);
	size_t n = strlen(w);
	if (n >= sizeof r->pass_why)
		n = sizeof r->pass_why - 1;
	memcpy(r->pass_why, w, n);
	r->pass_why[n] = '\0';
}

static void say_why_into(db_bisect_run *r, const triage *t, size_t k, char *w, size_t wl)
{
	char l[32], sp[96], at[300];
	if (r->o.pass) {
		snprintf(w, wl, "pass %s as given (--pass, or the session's)", r->o.pass);
		return;
	}
	if (t->n - t->start <= 1)
		return;
	snprintf(at, sizeof at, "%s %s", t->probe_layer >= 0
	         ? db_layer_label(t->probe_layer, l, sizeof l) : "-", t->probe);
	char from[96] = "";
	if (t->start > 0)
		snprintf(from, sizeof from, " (from the profile's pass %s on; %s before it "
		         "left out as warmup)", t->passes[t->start], t->start > 1 ? "those" : "the one");
	if (t->v[k] != PV_BAD && t->v[k] != PV_DRIFT) {
		snprintf(w, wl,
		         "none of the %zu passes (%s-%s) diverges at %s%s; pass %s shown",
		         t->n - t->start, t->passes[t->start], t->passes[t->n - 1], at, from,
		         t->passes[k]);
		return;
	}
	if (k == t->start) {
		snprintf(w, wl,
		         "pass %s is the first of %zu passes and already diverges at %s%s",
		         t->passes[k], t->n - t->start, at, from);
		return;
	}
	bool all_same = true, any_drift = false;
	for (size_t i = t->start; i < k; i++) {
		all_same &= t->v[i] == PV_SAME;
		any_drift |= t->v[i] == PV_DRIFT;
	}
	span_label(t, t->start, k - 1, sp, sizeof sp);
	snprintf(w, wl, "%s %s at %s; pass %s is the first that "
	         "diverges%s%s", sp,
	         all_same ? "bit-identical" : any_drift ? "only drift" : "good", at,
	         t->passes[k], any_drift ? " beyond drift" : "", from);
}

/* Phases in causal order; the first that holds a pass bad beyond drift
 * wins over an earlier one that only drifts (phases are separate runs fed
 * the same tokens; bf16 at another TP size drifts everywhere); else the
 * first that drifts; else the first with a probe at all. */
int db_bisect_choose_phase(db_bisect_run *r, db_err *err)
{
	db_compare *c = r->c;
	r->pass_given = r->o.pass != NULL;
	r->phase_given = r->o.phase != NULL;
	size_t n_ph = r->o.phase || !c->n_phases ? 1 : c->n_phases;
	long best_ph = 0;
	int best_rank = -1;
	triage best = {0}, t;
	for (size_t ph = 0; ph < n_ph; ph++) {
		const char *phase = r->o.phase ? r->o.phase : c->n_phases ? c->phases[ph] : NULL;
		if (triage_phase(r, phase, &t, err) < 0) {
			triage_free(&t);
			triage_free(&best);
			return -1;
		}
		/* bad beyond drift > drift > a probe at all > nothing */
		size_t k = triage_pick(&t);
		int rank = t.v[k] == PV_BAD || k > t.start ? 3 : t.v[k] == PV_DRIFT ? 2
		           : t.v[k] != PV_NONE ? 1 : 0;
		if (rank > best_rank) {
			triage_free(&best);
			best = t;
			best_rank = rank;
			best_ph = (long)ph;
		} else {
			triage_free(&t);
		}
		if (best_rank == 3)
			break;
	}
	const char *phase = r->o.phase ? r->o.phase : c->n_phases ? c->phases[best_ph] : NULL;
	if (phase && !(r->phase = strdup(phase))) {
		triage_free(&best);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	size_t k = triage_pick(&best);
	say_why(r, &best, k);
	r->n_passes = best.n - best.start;
	if (r->o.pass) {
		char **v;
		size_t n = db_passes(c, phase, &v);
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		r->n_passes = n;
	}
	int rc = 0;
	if (!(r->pass = strdup(best.passes[k])))
		rc = db_err_set(err, NULL, NULL, -1, "out of memory");
	triage_free(&best);
	if (rc < 0)
		return -1;
	/* the probe of the chosen selection (its error says why there is none) */
	return choose_probe(r, r->phase, r->pass, err);
}

int db_bisect_triage(db_compare *c, const char *phase, char **phase_out, char **pass_out,
                     char *why, size_t whylen, db_err *err)
{
	*phase_out = *pass_out = NULL;
	if (whylen)
		why[0] = '\0';
	/* a run without a search: the triage alone */
	db_bisect_run r;
	memset(&r, 0, sizeof r);
	r.c = c;
	db_predicate_default(&r.o.pred);        /* as db_bisect_opts_default */
	r.o.good_layer = DB_GOOD_BEFORE;
	r.o.fill_gaps = r.o.final_sentinel = true;
	r.o.phase = phase;
	int rc = db_bisect_choose_phase(&r, err);
	if (rc == 0) {
		snprintf(why, whylen, "%s", r.pass_why);
		*phase_out = r.phase;
		*pass_out = r.pass && *r.pass ? r.pass : NULL;
		if (!*pass_out)
			free(r.pass);
	} else {
		free(r.phase);
		free(r.pass);
	}
	free(r.stage);
	return rc;
}
