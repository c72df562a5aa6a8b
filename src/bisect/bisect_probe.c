/* Choosing the layer probe (issue 11: no default stage name). The probe is
 * found in the dumps, never assumed: a stage the user gave; else the
 * profile's first candidate that both trees dump in every layer the bisect
 * covers (a stage only some layers have — MoE or hybrid models — would
 * leave holes in the search); else what each layer ends with, in execution
 * order. Weights do not accumulate through layers, so a weights profile
 * asks for the first diverging stage instead ("@first-divergence"), and a
 * tree of weights whose profile names no probe (a safetensors checkpoint
 * under the generic profile) probes the stage of its first weight beyond
 * drift: each layer's last stage there is a norm, blind to the others. */
#include "db_bisect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_priv.h"
#include "pair/compare_priv.h"

const char *db_probe_how_name(db_probe_how h)
{
	switch (h) {
	case DB_PROBE_GIVEN: return "given";
	case DB_PROBE_CANDIDATE: return "profile";
	case DB_PROBE_LAST_STAGE: return "last-stage";
	case DB_PROBE_FIRST_DIV: return "first-divergence";
	}
	return "given";
}

static bool sel(const db_pair *p, const char *phase, const char *pass)
{
	return (!phase || !strcmp(p->f.phase, phase)) && (!pass || !strcmp(p->f.pass, pass));
}

/* Both trees have the tensor (measurable or at least present twice). */
static bool both_sides(const db_pair *p)
{
	return p->status == DB_ST_OK || p->status == DB_ST_SHAPE_MISMATCH ||
	       (p->status == DB_ST_ERROR && p->ref && p->tgt);
}

/* Layers with at least one tensor on both sides, as a bitmap over
 * 0..*span-1. Caller frees. */
static bool *covered_layers(const db_compare *c, const db_bsel *s, const char *phase,
                            const char *pass, size_t *span)
{
	int hi = -1;
	for (size_t k = 0; k < s->n; k++) {
		const db_pair *p = &c->pairs[db_bsel_at(s, k)];
		if (sel(p, phase, pass) && p->f.layer > hi)
			hi = p->f.layer;
	}
	*span = (size_t)(hi + 1);
	bool *v = calloc(*span + 1, sizeof *v);
	if (!v)
		return NULL;
	for (size_t k = 0; k < s->n; k++) {
		const db_pair *p = &c->pairs[db_bsel_at(s, k)];
		if (p->f.layer >= 0 && sel(p, phase, pass) && both_sides(p))
			v[p->f.layer] = true;
	}
	return v;
}

/* The first covered layer that lacks stage on either side, -1 when every
 * covered layer has it, -2 when no layer has it at all. */
static long missing_layer(const db_compare *c, const db_bsel *s, const char *phase,
                          const char *pass, const bool *cov, size_t span, const char *stage)
{
	bool *has = calloc(span + 1, sizeof *has);
	if (!has)
		return -2;
	bool any = false;
	for (size_t k = 0; k < s->n; k++) {
		const db_pair *p = &c->pairs[db_bsel_at(s, k)];
		if (p->f.layer >= 0 && sel(p, phase, pass) && both_sides(p) &&
		    !strcmp(p->f.stage, stage))
			any = has[p->f.layer] = true;
	}
	long miss = any ? -1 : -2;
	for (size_t l = 0; any && l < span && miss < 0; l++)
		if (cov[l] && !has[l])
			miss = (long)l;
	free(has);
	return miss;
}

const char *db_probe_stage_at(const db_compare *c, const char *phase, const char *pass,
                              const char *stage, int layer)
{
	if (!stage || strcmp(stage, DB_PROBE_LAST))
		return stage;
	if (layer < 0)
		return NULL;
	const db_pair *last = NULL;
	db_bsel s;
	db_bsel_open(&s, c, pass);
	for (size_t k = 0; k < s.n; k++) {
		const db_pair *p = &c->pairs[db_bsel_at(&s, k)];
		if (p->f.layer == layer && sel(p, phase, pass) && both_sides(p) &&
		    (!last || p->seq > last->seq))
			last = p;
	}
	db_bsel_close(&s);
	return last ? last->f.stage : NULL;
}

static int pick_first_div(db_compare *c, const db_bsel *s, const char *phase,
                          const char *pass, char **stage)
{
	for (size_t k = 0; k < s->n; k++) {
		db_pair *p = &c->pairs[db_bsel_at(s, k)];
		if (p->f.layer < 0 || !sel(p, phase, pass))
			continue;
		db_compare_pair(c, p);
		if (db_pair_diverges(p) && both_sides(p))
			return (*stage = strdup(p->f.stage)) ? 1 : -1;
	}
	return 0;
}

/* Every selected layer pair is a weight of a checkpoint (and there is one). */
static bool weights_only_in(const db_compare *c, const db_bsel *s, const char *phase,
                            const char *pass)
{
	size_t n = 0;
	for (size_t k = 0; k < s->n; k++) {
		const db_pair *p = &c->pairs[db_bsel_at(s, k)];
		if (p->f.layer < 0 || !sel(p, phase, pass) || !p->ref || !p->tgt)
			continue;
		if (!db_pair_is_weight(c->profile, p))
			return false;
		n++;
	}
	return n > 0;
}

static bool weights_only(const db_compare *c, const char *phase, const char *pass)
{
	db_bsel s;
	db_bsel_open(&s, c, pass);
	bool w = weights_only_in(c, &s, phase, pass);
	db_bsel_close(&s);
	return w;
}

bool db_probe_computes(const db_compare *c, const char *phase, const char *pass)
{
	for (size_t i = 0; c->profile && i < c->profile->n_probes; i++)
		if (!strcmp(c->profile->probes[i], DB_PROBE_FIRST_DIVERGENCE))
			return true;
	return c->profile && weights_only(c, phase, pass);
}

/* The stage of the first pair beyond drift (or not comparable as paired)
 * in the lowest layer: every weight computed. 0 when none is. */
static int pick_bad_weight(db_compare *c, const db_bsel *s, const char *phase,
                           const char *pass, char **stage)
{
	const db_pair *best = NULL;
	for (size_t k = 0; k < s->n; k++) {
		db_pair *p = &c->pairs[db_bsel_at(s, k)];
		if (p->f.layer < 0 || !sel(p, phase, pass) || !both_sides(p))
			continue;
		db_compare_pair(c, p);
		bool bad = db_pair_diverges(p) && (p->status != DB_ST_OK || p->band > DB_BAND_DRIFT);
		if (bad && (!best || p->f.layer < best->f.layer))
			best = p;
	}
	return !best ? 0 : (*stage = strdup(best->f.stage)) ? 1 : -1;
}

int db_bisect_choose_probe(db_compare *c, const char *phase, const char *pass,
                           const char *given, char **stage, db_probe_how *how,
                           char *why, size_t whylen, db_err *err)
{
	*stage = NULL;
	size_t span;
	db_bsel s;              /* the pass's pairs: each walk below reads them only */
	db_bsel_open(&s, c, pass);
	bool *cov = covered_layers(c, &s, phase, pass, &span);
	if (!cov) {
		db_bsel_close(&s);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	size_t nc = given ? 1 : (c->profile ? c->profile->n_probes : 0);
	/* a phase of weights (a trainer's parameters) does not accumulate
	 * either: the profile's weight_phases probe the first divergence */
	bool wph = false;
	for (size_t k = 0; !given && phase && c->profile && k < c->profile->n_weight_phases; k++)
		if (db_glob_match(c->profile->weight_phases[k], phase)) {
			given = DB_PROBE_FIRST_DIVERGENCE;
			nc = 1;
			wph = true;
		}
	char skipped[256] = "";
	size_t sk = 0;
	int rc = 0;
	for (size_t k = 0; k < nc && !*stage && rc == 0; k++) {
		const char *cand = given ? given : c->profile->probes[k];
		*how = given ? DB_PROBE_GIVEN : DB_PROBE_CANDIDATE;
		if (!strcmp(cand, DB_PROBE_FIRST_DIVERGENCE)) {
			*how = DB_PROBE_FIRST_DIV;
			rc = pick_first_div(c, &s, phase, pass, stage);
			if (rc < 0)
				db_err_set(err, NULL, NULL, -1, "out of memory");
			if (rc > 0) {
				snprintf(why, whylen, "%s, the first diverging stage (%s: weights do not "
				         "accumulate through layers)", *stage,
				         wph ? "a phase of weights, the profile's weight_phases"
				             : given ? "as asked" : "the profile's choice");
				rc = 0;
			} else if (rc == 0 && wph) {
				/* nothing diverges: any weight will do, the bisect says so */
				for (size_t j = 0; j < s.n && !*stage; j++) {
					const db_pair *p = &c->pairs[db_bsel_at(&s, j)];
					if (p->f.layer >= 0 && sel(p, phase, pass) && both_sides(p) &&
					    !(*stage = strdup(p->f.stage)))
						rc = db_err_set(err, NULL, NULL, -1, "out of memory");
				}
				snprintf(why, whylen, "%s: no weight diverges in phase %s (a phase of "
				         "weights, the profile's weight_phases)", *stage ? *stage : "-", phase);
			} else if (rc == 0 && given) {
				rc = db_err_set(err, NULL, NULL, -1, "--stage %s: no layer stage diverges",
				                DB_PROBE_FIRST_DIVERGENCE);
			}
			continue;
		}
		if (!strcmp(cand, DB_PROBE_LAST)) {
			*how = DB_PROBE_LAST_STAGE;
			if (!(*stage = strdup(cand)))
				rc = db_err_set(err, NULL, NULL, -1, "out of memory");
			snprintf(why, whylen, "each layer's last stage in execution order (%s)",
			         given ? "as asked" : "the profile's choice");
			continue;
		}
		long miss = missing_layer(c, &s, phase, pass, cov, span, cand);
		if (miss == -1 || given) {
			if (given && miss == -2) {
				rc = db_err_set(err, NULL, NULL, -1,
				                "probe stage '%s' is not dumped for any layer%s%s in both "
				                "trees; choose another (bisect --stage; in the workbench, "
				                ":probe STAGE)", cand, phase ? " of phase " : "",
				                phase ? phase : "");
				break;
			}
			if (!(*stage = strdup(cand)))
				rc = db_err_set(err, NULL, NULL, -1, "out of memory");
			else if (given && miss >= 0)
				snprintf(why, whylen, "%s, as asked (not dumped at L%ld: that layer is "
				         "skipped)", cand, miss);
			else if (given)
				snprintf(why, whylen, "%s, as asked", cand);
			else
				snprintf(why, whylen, "%s, the profile's candidate %zu%s%s%s", cand, k + 1,
				         sk ? " (" : "", skipped, sk ? ")" : "");
			continue;
		}
		/* say why each earlier candidate lost, briefly */
		int w = miss == -2 ? snprintf(skipped + sk, sizeof skipped - sk, "%s%s: not dumped",
		                              sk ? "; " : "", cand)
		                   : snprintf(skipped + sk, sizeof skipped - sk,
		                              "%s%s: not dumped at L%ld", sk ? "; " : "", cand, miss);
		if (w > 0 && (size_t)w < sizeof skipped - sk)
			sk += (size_t)w;
	}
	if (rc == 0 && !*stage && !given && weights_only_in(c, &s, phase, pass)) {
		rc = pick_bad_weight(c, &s, phase, pass, stage);
		if (rc < 0)
			db_err_set(err, NULL, NULL, -1, "out of memory");
		if (rc > 0) {
			*how = DB_PROBE_FIRST_DIV;
			snprintf(why, whylen, "%s, the lowest layer's weight beyond drift (a tree of "
			         "weights: every weight of each layer compared; weights do not "
			         "accumulate through layers)", *stage);
			rc = 0;
		}
	}
	if (rc == 0 && !*stage) {
		bool any = false;
		for (size_t l = 0; l < span && !any; l++)
			any = cov[l];
		if (!any) {
			rc = db_err_set(err, NULL, NULL, -1,
			                "no layer is dumped in both trees%s%s: nothing to bisect",
			                phase ? " in phase " : "", phase ? phase : "");
		} else if (!(*stage = strdup(DB_PROBE_LAST))) {
			rc = db_err_set(err, NULL, NULL, -1, "out of memory");
		} else {
			*how = DB_PROBE_LAST_STAGE;
			snprintf(why, whylen, "each layer's last stage in execution order (%s)",
			         sk ? skipped : "the profile names no probe");
		}
	}
	free(cov);
	db_bsel_close(&s);
	if (rc < 0) {
		free(*stage);
		*stage = NULL;
	}
	return rc < 0 ? -1 : 0;
}
