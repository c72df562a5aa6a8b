/* Driving the bisect state machine over a comparison: probes, auto
 * verdicts, layers not dumped yet, --run. The end analysis lives in
 * bisect_analyze.c, the outputs in bisect_report.c. */
#include "db_bisect.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bisect_priv.h"
#include "db_grid.h"

void db_bisect_opts_default(db_bisect_opts *o)
{
	memset(o, 0, sizeof *o);
	db_predicate_default(&o->pred);
	o->good_layer = DB_GOOD_BEFORE;
	o->final_sentinel = true;
	/* A layer missing between two dumped ones must not vanish from the
	 * search: the CLI and the workbench both see it (and say so). */
	o->fill_gaps = true;
}

char *db_bisect_dump_hint(const db_bisect_run *r, int layer)
{
	if (layer == DB_LAYER_FINAL || !r->c->profile)
		return NULL;
	return db_profile_dump_command(r->c->profile, layer);
}

void db_bisect_auto_step(db_bisect_run *r, int layer, db_bisect_step *s)
{
	db_probe pr;
	db_bisect_probe(r, layer, &pr);
	memset(s, 0, sizeof *s);
	s->layer = layer;
	s->auto_verdict = pr.auto_verdict;
	s->verdict = pr.auto_verdict != DB_V_NONE ? pr.auto_verdict : DB_V_SKIP;
	s->by_user = false;
	s->cos = pr.dumped ? pr.m.cos : NAN;
	s->rel = pr.dumped ? pr.m.rel : NAN;
	s->band = pr.band;
	s->time = (int64_t)time(NULL);
}

int db_bisect_user_step(db_bisect_run *r, int layer, db_verdict v, db_err *err)
{
	db_bisect_step s;
	db_bisect_auto_step(r, layer, &s);
	s.verdict = v;
	s.by_user = true;       /* typed (or the user's --run command): the user's, agreeing or not */
	return db_bisect_record(&r->sm, &s, err);
}

/* One pass of several (a decode step): its error sits in its own rows and
 * may fade before the last layer (a KV write that only the next layers of
 * this row read). When the last layer's probe (and the final stage's) is
 * ok yet compare's first divergence (db_first_divergence, one rule) is in
 * this pass, the search ends at that layer, as it does at the first
 * diverging weight: hi, or that layer (the final sentinel dropped). */
static int fade_cap(db_bisect_run *r, int hi)
{
	db_compare *c = r->c;
	if (hi < 0 || !r->pass || !*r->pass)
		return hi;
	db_probe pr;
	db_bisect_probe(r, hi, &pr);
	if (pr.auto_verdict == DB_V_BAD || pr.auto_verdict == DB_V_NONE)
		return hi;
	if (r->final_stage) {
		db_bisect_probe(r, DB_LAYER_FINAL, &pr);
		if (pr.auto_verdict == DB_V_BAD)
			return hi;
	}
	long fd = db_first_divergence(c, r->phase, r->pass, -2);
	if (fd < 0 || c->pairs[fd].f.layer < 0 || c->pairs[fd].f.layer >= hi)
		return hi;
	db_bisect_probe(r, c->pairs[fd].f.layer, &pr);
	if (pr.auto_verdict != DB_V_BAD)        /* drift the predicate calls good */
		return hi;
	char l1[32], l2[32];
	size_t n = strlen(r->probe_why);
	snprintf(r->probe_why + n, sizeof r->probe_why - n,
	         "; ok again at %s in this pass: the search ends at %s, the first divergence",
	         db_layer_label(hi, l1, sizeof l1), db_layer_label(c->pairs[fd].f.layer, l2, sizeof l2));
	free(r->final_stage);
	r->final_stage = NULL;
	return c->pairs[fd].f.layer;
}

/* Candidates: 0..n_layers-1; or 0..the highest layer seen (gaps filled);
 * or the layers whose probe is dumped in either tree. */
static int collect_layers(db_bisect_run *r, int **out, size_t *n, db_err *err)
{
	db_compare *c = r->c;
	bool fill = r->o.fill_gaps || r->run_cmd;
	int hi = -1;
	if (r->o.n_layers > 0)
		hi = r->o.n_layers - 1;
	else
		for (size_t i = 0; i < c->n_pairs; i++) {
			const db_pair *p = &c->pairs[i];
			if (db_bisect_pair_in(r, p) && p->f.layer > hi &&
			    (fill || db_bisect_probe_pair(r, p)))
				hi = p->f.layer;
		}
	/* Weights do not accumulate: a layer after the first diverging one may
	 * be good again, so the search ends at the first divergence the
	 * predicate calls bad (rounding within its floor is not one). */
	if (r->probe_how == DB_PROBE_FIRST_DIV && r->o.n_layers <= 0)
		for (size_t i = 0; i < c->n_pairs; i++) {
			db_pair *p = &c->pairs[i];
			if (p->f.layer < 0 || p->f.layer > hi || !db_bisect_pair_in(r, p) ||
			    !db_bisect_probe_pair(r, p))
				continue;
			db_compare_pair(c, p);
			if (db_pair_diverges(p) && db_predicate_eval_pair(&r->o.pred, p, false) == DB_V_BAD)
				hi = p->f.layer;
		}
	if (r->probe_how != DB_PROBE_FIRST_DIV && r->o.n_layers <= 0)
		hi = fade_cap(r, hi);
	size_t span = hi >= 0 ? (size_t)hi + 1 : 0;
	bool *have = calloc(span + 1, sizeof *have);
	int *v = malloc((span + 2) * sizeof *v);
	if (!have || !v) {
		free(have);
		free(v);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	if (fill || r->o.n_layers > 0)
		for (size_t i = 0; i < span; i++)
			have[i] = true;
	else
		for (size_t i = 0; i < c->n_pairs; i++) {
			const db_pair *p = &c->pairs[i];
			if (p->f.layer >= 0 && (size_t)p->f.layer < span && db_bisect_pair_in(r, p) &&
			    db_bisect_probe_pair(r, p))
				have[p->f.layer] = true;
		}
	size_t k = 0;
	for (size_t i = 0; i < span; i++)
		if (have[i])
			v[k++] = (int)i;
	free(have);
	if (r->final_stage)
		v[k++] = DB_LAYER_FINAL;
	*out = v;
	*n = k;
	return 0;
}

/* The last model-level stage drawn after the layers (final logits). The
 * prompt run alone against a batch (batch slots found by themselves): the
 * last such stage that holds the prompt's rows, a slot too (issue 33: a
 * logits tensor of one row per batch, the batch's last sequence, is
 * another request's output and says nothing of the prompt's slot). */
static const char *find_final_stage(db_bisect_run *r)
{
	const char *last = NULL, *last_slot = NULL;
	bool last_is_slot = false;
	for (size_t i = 0; i < r->c->n_pairs; i++) {
		const db_pair *p = &r->c->pairs[i];
		if (p->f.layer != -1 || !db_bisect_pair_in(r, p))
			continue;
		if (r->c->profile && db_profile_is_model_after(r->c->profile, p->f.stage) &&
		    !db_profile_is_input_ids(r->c->profile, p->f.stage)) {
			last = p->f.stage;
			last_is_slot = (p->slot.side == 1 || p->slot.side == 2) && !p->slot.tokens;
			if (last_is_slot)
				last_slot = p->f.stage;
		}
	}
	return last_slot && !last_is_slot ? last_slot : last;
}

/* The selection runs its layers backward: the layer dumped first is higher
 * than the one dumped last (gradients, written as backward ran). */
static bool runs_backward(const db_bisect_run *r)
{
	const db_pair *first = NULL, *last = NULL;
	for (size_t i = 0; i < r->c->n_pairs; i++) {
		const db_pair *p = &r->c->pairs[i];
		if (p->f.layer < 0 || !db_bisect_pair_in(r, p))
			continue;
		if (!first || p->seq < first->seq)
			first = p;
		if (!last || p->seq > last->seq)
			last = p;
	}
	return first && last && first->f.layer > last->f.layer;
}

void db_bisect_run_free(db_bisect_run *r)
{
	if (!r)
		return;
	db_bisect_free(&r->sm);
	free(r->stage);
	free(r->phase);
	free(r->pass);
	free(r->run_cmd);
	free(r->final_stage);
	free(r);
}

int db_bisect_run_open(db_compare *c, const db_bisect_opts *o,
                       db_bisect_run **out, db_err *err)
{
	*out = NULL;
	db_bisect_run *r = calloc(1, sizeof *r);
	if (!r)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	r->c = c;
	r->o = *o;
	if (o->run_cmd && !(r->run_cmd = strdup(o->run_cmd))) {
		db_bisect_run_free(r);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	r->o.run_cmd = r->run_cmd;
	if (db_bisect_choose_phase(r, err) < 0) {
		db_bisect_run_free(r);
		return -1;
	}
	r->o.phase = r->phase;
	r->o.pass = r->pass;
	r->o.stage = r->stage;
	/* the layers are judged as compare names the place in this pass: beyond
	 * the drift where it names a first divergence beyond drift that the
	 * probe of its layer shows (bf16 engine against trainer at TP 1, no
	 * pair across layouts), else from the first one (the drift of a KV
	 * write in fp32 is the place; drift that grows layer by layer is
	 * accumulated drift) */
	r->o.pred.beyond_drift = false;
	if (r->o.pred.kind == DB_PRED_BAND && r->o.pred.worst_good == DB_BAND_OK) {
		db_bisect_measure_all(r);
		long fb = db_first_beyond_drift_of(c, db_first_divergence(c, r->phase, r->pass, -2));
		db_probe pr;
		if (fb >= 0 && c->pairs[fb].f.layer >= 0) {
			db_bisect_probe(r, c->pairs[fb].f.layer, &pr);
			r->o.pred.beyond_drift = pr.dumped && pr.band > DB_BAND_DRIFT &&
			                         pr.band != DB_BAND_NONE;
		}
	}
	if (o->final_sentinel && r->probe_how != DB_PROBE_FIRST_DIV) {
		const char *fs = find_final_stage(r);
		if (fs && !(r->final_stage = strdup(fs))) {
			db_bisect_run_free(r);
			return db_err_set(err, NULL, NULL, -1, "out of memory");
		}
	}
	int *layers = NULL;
	size_t n = 0;
	r->backward = runs_backward(r);
	if (r->backward) {
		/* nothing to search: the analysis names the first diverging
		 * gradient (db_bisect_analyze) */
		if (db_bisect_init(&r->sm, NULL, 0, o->good_layer, err) < 0) {
			db_bisect_run_free(r);
			return -1;
		}
		*out = r;
		return 0;
	}
	if (collect_layers(r, &layers, &n, err) < 0 ||
	    db_bisect_init(&r->sm, layers, n, o->good_layer, err) < 0) {
		free(layers);
		db_bisect_run_free(r);
		return -1;
	}
	free(layers);
	*out = r;
	return 0;
}

int db_bisect_rescan(db_bisect_run *r, db_err *err)
{
	if (db_compare_rescan(r->c, err) < 0)
		return -1;
	if (r->o.n_layers > 0)
		return 0;
	/* new dumps may bring new layers: they join the candidates */
	int *layers = NULL;
	size_t n = 0;
	int rc = collect_layers(r, &layers, &n, err);
	if (rc == 0)
		rc = db_bisect_add_layers(&r->sm, layers, n, err);
	free(layers);
	return rc;
}

/* CMD with every "{layer}" replaced by layer. Caller frees. */
static char *subst_layer(const char *cmd, const char *layer)
{
	size_t n = 0, ll = strlen(layer);
	for (const char *p = cmd; (p = strstr(p, "{layer}")); p += 7)
		n++;
	char *out = malloc(strlen(cmd) + n * ll + 1);
	if (!out)
		return NULL;
	char *o = out;
	for (const char *p = cmd; *p;) {
		if (!strncmp(p, "{layer}", 7)) {
			memcpy(o, layer, ll);
			o += ll;
			p += 7;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

int db_bisect_run_cmd(db_bisect_run *r, int layer, db_err *err)
{
	char lb[32];
	if (!r->run_cmd)
		return db_err_set(err, NULL, NULL, -1, "no --run command");
	if (layer == DB_LAYER_FINAL)
		snprintf(lb, sizeof lb, "final");
	else
		snprintf(lb, sizeof lb, "%d", layer);
	char *cmd = subst_layer(r->run_cmd, lb);
	if (!cmd)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		free(cmd);
		return db_err_set(err, NULL, NULL, -1, "--run: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* Our stdout may be JSON: the command's output goes to stderr. */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		setenv("DUMPBISECT_LAYER", lb, 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			db_err_set(err, NULL, NULL, -1, "--run: waitpid: %s", strerror(errno));
			free(cmd);
			return -1;
		}
	}
	if (WIFSIGNALED(st)) {
		db_err_set(err, NULL, NULL, -1, "--run '%s' for layer %s was killed by signal %d; aborting",
		           cmd, lb, WTERMSIG(st));
		free(cmd);
		return -1;
	}
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 255;
	if (code == 125) {
		free(cmd);
		return 125;
	}
	if (code != 0) {
		db_err_set(err, NULL, NULL, -1, "--run '%s' for layer %s exited with status %d; aborting "
		           "(exit 125 skips a layer)", cmd, lb, code);
		free(cmd);
		return -1;
	}
	free(cmd);
	return db_bisect_rescan(r, err);
}

int db_bisect_run_auto(db_bisect_run *r, db_bisect_step_cb cb, void *ctx,
                       db_err *err)
{
	while (!db_bisect_done(&r->sm)) {
		int layer = r->sm.layers[r->sm.next];
		db_bisect_step s;
		db_bisect_auto_step(r, layer, &s);
		if (s.auto_verdict == DB_V_NONE && r->run_cmd) {
			int rc = db_bisect_run_cmd(r, layer, err);
			if (rc < 0)
				return -1;
			if (rc == 0)
				db_bisect_auto_step(r, layer, &s);
			if (rc == 125 || s.auto_verdict == DB_V_NONE)
				s.verdict = DB_V_SKIP;
			/* exit 125 is a judgement (the layer cannot be tested), not
			 * missing data: recorded as an automatic skip, not "not dumped" */
			if (rc == 125)
				s.auto_verdict = DB_V_SKIP;
		}
		if (db_bisect_record(&r->sm, &s, err) < 0)
			return -1;
		if (cb && cb(&r->sm, ctx, err) < 0)
			return -1;
	}
	return 0;
}
