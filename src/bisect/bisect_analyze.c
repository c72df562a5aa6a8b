/* End analysis of a bisect: input ids, drift vs sudden drop, the
 * intra-layer sub-stage walk and the bad ranks (seed 002 Phases 4-5). */
#include "db_bisect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_priv.h"
#include "db_grid.h"
#include "db_noise.h"
#include "db_slot.h"

#define STEP_DROP 0.001         /* seed: a single-step cos drop > 0.001 is the culprit */
#define STANDOUT_K 4.0          /* a step K× the median of the others stands out */

const char *db_bisect_kind_name(db_bisect_kind k)
{
	switch (k) {
	case DB_KIND_SUDDEN: return "sudden-drop";
	case DB_KIND_DRIFT: return "accumulated-drift";
	case DB_KIND_INPUT_IDS: return "input-ids";
	case DB_KIND_BACKWARD: return "first-gradient";
	case DB_KIND_INCONCLUSIVE: return "inconclusive";
	default: return "none";
	}
}

void db_bisect_result_free(db_bisect_result *r)
{
	free(r->input_ids_stage);
	free(r->first_bad_stage);
	free(r->first_bad_substage);
	free(r->at_or_before);
	free(r->bad_ranks);
	free(r->walk);
	memset(r, 0, sizeof *r);
}

static double fin_cos(double c)
{
	return isfinite(c) ? c : 0.0;
}

static double fin_rel(double r)
{
	return isfinite(r) ? r : 1.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v without element skip (skip may be out of range). */
static double median_except(const double *v, size_t n, size_t skip, double *tmp)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (i != skip)
			tmp[k++] = v[i];
	if (!k)
		return 0.0;
	qsort(tmp, k, sizeof *tmp, cmp_double);
	return k % 2 ? tmp[k / 2] : 0.5 * (tmp[k / 2 - 1] + tmp[k / 2]);
}

/* Token ids differ anywhere in the run's selection: the stage, else NULL. */
static const char *input_ids_differ(db_bisect_run *r)
{
	db_compare *c = r->c;
	if (!c->profile)
		return NULL;
	for (size_t i = 0; i < c->n_pairs; i++) {
		db_pair *p = &c->pairs[i];
		if (!db_bisect_pair_in(r, p) || !db_profile_is_input_ids(c->profile, p->f.stage))
			continue;
		if (p->status == DB_ST_SHAPE_MISMATCH)
			return p->f.stage;
		if (p->status != DB_ST_OK)
			continue;
		db_compare_pair(c, p);
		if (p->band == DB_BAND_NONE)
			continue;
		if (p->m.max_abs > 0 || p->m.nonfinite_mismatch > 0 || isnan(p->m.cos))
			return p->f.stage;
	}
	return NULL;
}

typedef struct series {
	int *layer;
	double *cos, *rel;
	db_band *band;
	db_verdict *v;
	size_t n;
	bool *stats;            /* the probe was measured on statistics only
	                           (msprobe: a layer without its tensors) */
} series;

static void series_free(series *s)
{
	free(s->layer);
	free(s->cos);
	free(s->rel);
	free(s->band);
	free(s->v);
	free(s->stats);
}

static int build_series(db_bisect_run *r, series *s)
{
	size_t cap = r->sm.n_layers + 1;
	memset(s, 0, sizeof *s);
	s->layer = malloc(cap * sizeof *s->layer);
	s->cos = malloc(cap * sizeof *s->cos);
	s->rel = malloc(cap * sizeof *s->rel);
	s->band = malloc(cap * sizeof *s->band);
	s->v = malloc(cap * sizeof *s->v);
	s->stats = malloc(cap * sizeof *s->stats);
	if (!s->layer || !s->cos || !s->rel || !s->band || !s->v || !s->stats)
		return -1;
	for (size_t i = 0; i < r->sm.n_layers; i++) {
		int l = r->sm.layers[i];
		if (l == DB_LAYER_FINAL)
			continue;
		db_probe pr;
		db_bisect_probe(r, l, &pr);
		if (!pr.dumped)
			continue;
		s->layer[s->n] = l;
		s->cos[s->n] = fin_cos(pr.m.cos);
		s->stats[s->n] = pr.m.stats_only;
		s->rel[s->n] = fin_rel(pr.m.rel);
		s->band[s->n] = pr.band;
		s->v[s->n] = pr.auto_verdict;
		s->n++;
	}
	return 0;
}

/* Index in s of the first layer that stands out (see db_bisect.h), or -1. */
static long standout(const db_bisect_run *r, const series *s, long only)
{
	if (!s->n)
		return -1;
	double *dc = malloc(s->n * sizeof *dc), *dr = malloc(s->n * sizeof *dr);
	double *tmp = malloc(s->n * sizeof *tmp);
	long found = -1;
	if (!dc || !dr || !tmp)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		dc[i] = (i ? s->cos[i - 1] : 1.0) - s->cos[i];
		dr[i] = s->rel[i] - (i ? s->rel[i - 1] : 0.0);
	}
	double ok_rel = r->c->profile ? r->c->profile->thresholds.ok_rel : 0.01;
	for (size_t i = 0; i < s->n; i++) {
		if (only >= 0 && (long)i != only)
			continue;
		db_band prev = i ? s->band[i - 1] : DB_BAND_OK;
		if (s->band[i] <= prev)
			continue;
		bool jump2 = s->band[i] >= prev + 2;
		double mc = median_except(dc, s->n, i, tmp), mr = median_except(dr, s->n, i, tmp);
		bool big_c = dc[i] > STEP_DROP && dc[i] > STANDOUT_K * mc;
		bool big_r = dr[i] > ok_rel && dr[i] > STANDOUT_K * mr;
		if (jump2 || big_c || big_r) {
			found = (long)i;
			break;
		}
	}
out:
	free(dc);
	free(dr);
	free(tmp);
	return found;
}

static const char *c_layer_class(const db_bisect_run *r, int layer)
{
	return r->c->profile ? db_profile_layer_class(r->c->profile, layer) : NULL;
}

/* A backward phase (gradients, in the order backward wrote them): an error
 * flows to the layers below, so the culprit is the first tensor of a layer
 * that diverges in execution order; the walk of that layer and its ranks
 * follow as for a forward bug. */
static int analyze_backward(db_bisect_run *r, db_bisect_result *res, db_err *err)
{
	char l1[32];
	db_compare *c = r->c;
	const db_pair *first = NULL;
	for (size_t i = 0; i < c->n_pairs && !first; i++) {
		db_pair *p = &c->pairs[i];
		if (p->f.layer < 0 || !db_bisect_pair_in(r, p))
			continue;
		db_compare_pair(c, p);
		if (db_pair_diverges(p) && p->status != DB_ST_NOT_COMPARABLE)
			first = p;
	}
	if (!first) {
		res->kind = DB_KIND_NONE;
		snprintf(res->summary, sizeof res->summary,
		         "nothing bad: no gradient of a layer diverges in phase %s",
		         r->phase ? r->phase : "-");
		return 0;
	}
	res->kind = DB_KIND_BACKWARD;
	res->has_first_bad = true;
	res->first_bad_layer = first->f.layer;
	res->layer_class = c_layer_class(r, first->f.layer);
	snprintf(res->probe_why, sizeof res->probe_why,
	         "none: phase %s runs its layers backward (the first layer dumped is the "
	         "highest), so errors flow down and the first diverging tensor in execution "
	         "order is the culprit", r->phase ? r->phase : "-");
	if (db_bisect_walk_layer(r, first->f.layer, 1.0, NULL, res) < 0)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	if (!res->first_bad_stage && !(res->first_bad_stage = strdup(first->f.stage)))
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	/* say only what was checked: a phase given (--phase) was bisected
	 * alone, the forward phases were never looked at (issue 33) */
	snprintf(res->summary, sizeof res->summary,
	         "first diverging gradient: %s %s (backward order; %s)",
	         db_layer_label(first->f.layer, l1, sizeof l1),
	         res->first_bad_substage ? res->first_bad_substage : res->first_bad_stage,
	         r->phase_given ? "only this phase was checked (--phase): the forward phases were not"
	                    : "the forward phases are good");
	return 0;
}

/* The default predicate with a noise run: the verdicts are the noise
 * run's (db_predicate_eval_pair), not the bands'. */
static bool noise_judged(const db_bisect_run *r)
{
	return db_noise_root(r->c) && r->o.pred.kind == DB_PRED_BAND &&
	       r->o.pred.worst_good == DB_BAND_OK;
}

/* the prompt alone against a batch, judged bitwise (db_slot_regime_holds)
 * by the default predicate: as --slots */
static bool bits_judged(const db_bisect_run *r)
{
	return db_slot_regime_holds(r->c) && r->o.pred.kind == DB_PRED_BAND &&
	       r->o.pred.worst_good == DB_BAND_OK;
}

int db_bisect_analyze(db_bisect_run *r, db_bisect_result *res, db_err *err)
{
	char l1[32];
	memset(res, 0, sizeof *res);
	res->standout_layer = INT_MIN;
	res->slots = r->c->n_slots > 0;
	for (size_t i = 0; res->slots && i < r->c->n_pairs && !res->slot_n; i++)
		if (r->c->pairs[i].slot.ranked)
			res->slot_n = r->c->n_slots;
	res->probe_how = r->probe_how;
	snprintf(res->probe, sizeof res->probe, "%s", r->stage ? r->stage : "");
	snprintf(res->probe_why, sizeof res->probe_why, "%s", r->probe_why);
	snprintf(res->phase, sizeof res->phase, "%s", r->phase ? r->phase : "");
	snprintf(res->pass, sizeof res->pass, "%s", r->pass ? r->pass : "");
	snprintf(res->pass_why, sizeof res->pass_why, "%s", r->pass_why);
	res->by_noise = db_noise_root(r->c) != NULL;
	res->by_bits = r->o.pred.kind == DB_PRED_BAND && r->o.pred.worst_good == DB_BAND_OK &&
	               (r->c->n_slots > 0 || db_slot_regime_holds(r->c));
	for (size_t i = 0; r->c->slots_alone && r->pass && i < r->c->n_slot_passes; i++) {
		const db_slot_pass *sp = &r->c->slot_passes[i];
		if (!strcmp(sp->pass, r->pass) && !strcmp(sp->phase, r->phase ? r->phase : ""))
			snprintf(res->ref_pass, sizeof res->ref_pass, "%s", sp->ref_pass);
	}
	const char *ids = input_ids_differ(r);
	if (ids) {
		res->input_ids_mismatch = true;
		if (!(res->input_ids_stage = strdup(ids)))
			return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	if (r->backward)
		return analyze_backward(r, res, err);
	series s;
	if (build_series(r, &s) < 0) {
		series_free(&s);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	for (size_t i = 0; i < s.n && !res->has_crossing; i++)
		if (s.v[i] == DB_V_BAD) {
			res->has_crossing = true;
			res->crossing_layer = s.layer[i];
		}
	long so = standout(r, &s, -1);
	if (so >= 0)
		res->standout_layer = s.layer[so];
	const db_bisect *b = &r->sm;
	int rc = 0;
	if (b->phase == DB_BP_FOUND) {
		int f = b->layers[b->first_bad];
		long si = -1;
		for (size_t i = 0; i < s.n; i++)
			if (s.layer[i] == f)
				si = (long)i;
		if (f == DB_LAYER_FINAL) {
			res->kind = DB_KIND_SUDDEN;
			res->first_bad_stage = r->final_stage ? strdup(r->final_stage) : NULL;
			snprintf(res->summary, sizeof res->summary,
			         "every layer is good but %s is bad: the bug is after the last layer",
			         r->final_stage ? r->final_stage : "the final output");
		} else if (si >= 0 && (standout(r, &s, si) == si ||
		                       /* slots, judged bitwise, or layers judged
		                        * against a noise run: bad after a good
		                        * layer is the drop, whatever the bands */
		                       ((r->c->n_slots || noise_judged(r) || bits_judged(r)) &&
		                        (si == 0 || s.v[si - 1] == DB_V_GOOD)))) {
			res->kind = DB_KIND_SUDDEN;
			res->has_first_bad = true;
			res->first_bad_layer = f;
			res->layer_class = c_layer_class(r, f);
			/* a layer before measured on statistics has no cos to start from */
			double prev = si > 0 && !s.stats[si - 1] ? s.cos[si - 1] : 1.0;
			const char *pst = db_probe_stage_at(r->c, r->phase, r->pass, r->stage, f);
			if (pst)
				snprintf(res->probe, sizeof res->probe, "%s", pst);
			/* the layer's input: the probe of the dumped layer before */
			db_probe in;
			if (si > 0)
				db_bisect_probe(r, s.layer[si - 1], &in);
			rc = db_bisect_walk_layer(r, f, prev, si > 0 ? &in : NULL, res);
			if (!res->first_bad_stage && rc == 0)
				res->first_bad_stage = strdup(res->probe);
			if (s.stats[si])        /* no cos from statistics: say so, never "cos 0" */
				snprintf(res->summary, sizeof res->summary,
				         "first bad layer %s%s%s%s: %s statistics only, rel %.3g",
				         db_layer_label(f, l1, sizeof l1),
				         res->layer_class ? " (class " : "",
				         res->layer_class ? res->layer_class : "",
				         res->layer_class ? ")" : "", res->probe, s.rel[si]);
			else
			snprintf(res->summary, sizeof res->summary,
			         "first bad layer %s%s%s%s: %s cos %.6g -> %.6g, rel %.3g",
			         db_layer_label(f, l1, sizeof l1),
			         res->layer_class ? " (class " : "",
			         res->layer_class ? res->layer_class : "",
			         res->layer_class ? ")" : "", res->probe, prev, s.cos[si], s.rel[si]);
		} else {
			res->kind = DB_KIND_DRIFT;
			snprintf(res->summary, sizeof res->summary,
			         "accumulated drift: no single layer stands out; %s leaves the %s band at %s",
			         strcmp(r->stage, DB_PROBE_LAST) ? r->stage : "each layer's last stage", r->o.pred.kind == DB_PRED_BAND
			                   ? db_band_name(r->o.pred.worst_good) : "chosen",
			         res->has_crossing ? db_layer_label(res->crossing_layer, l1, sizeof l1)
			                           : db_layer_label(f, l1, sizeof l1));
		}
	} else if (b->phase == DB_BP_NO_BAD && !res->has_crossing) {
		res->kind = DB_KIND_NONE;
		/* a "nothing bad" over one pass of many must say so */
		if (r->n_passes > 1 && res->pass[0])
			snprintf(res->summary, sizeof res->summary, "nothing bad in pass %s (of %zu "
			         "passes%s): %s", res->pass, r->n_passes,
			         r->pass_given ? "; --pass chose it"
			                                                       : ", none diverges", b->msg);
		else
			snprintf(res->summary, sizeof res->summary, "nothing bad: %s", b->msg);
	} else {
		res->kind = DB_KIND_INCONCLUSIVE;
		snprintf(res->summary, sizeof res->summary, "inconclusive: %s%s", b->msg,
		         b->phase == DB_BP_NO_BAD ? " (yet a layer before it is bad: non-monotone data)"
		                                  : "");
	}
	series_free(&s);
	/* Token ids first: whatever the layers say, different inputs explain
	 * it (the most common false alarm in the seeds). */
	if (res->input_ids_mismatch) {
		char line[2 * sizeof res->summary];
		snprintf(line, sizeof line,
		         "input ids differ (%s): the runs did not see the same tokens; fix the "
		         "inputs first (then: %s)", ids, res->summary);
		res->kind = DB_KIND_INPUT_IDS;
		memcpy(res->summary, line, sizeof res->summary - 1);
		res->summary[sizeof res->summary - 1] = '\0';
	}
	if (rc == 0 && res->has_first_bad && res->first_bad_stage)
		db_bisect_token(r, res);
	if (rc < 0 || (res->kind == DB_KIND_SUDDEN && res->has_first_bad && !res->first_bad_stage)) {
		db_bisect_result_free(res);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	return 0;
}
