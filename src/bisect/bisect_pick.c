/* Reading a run's selection: which pairs are in it, which pair stands for
 * a (layer, stage), the probe of a layer. Below the runner and the triage,
 * which both ask it. */
#include "db_bisect.h"

#include <math.h>
#include <string.h>

#include "bisect_priv.h"
#include "db_grid.h"
#include "db_noise.h"

bool db_bisect_pair_in(const db_bisect_run *r, const db_pair *p)
{
	if (r->phase && strcmp(p->f.phase, r->phase))
		return false;
	if (r->pass && strcmp(p->f.pass, r->pass))
		return false;
	return true;
}

/* Worse first: higher band, then lower cos. */
static bool worse(const db_pair *a, const db_pair *b)
{
	if (a->band != b->band)
		return a->band > b->band;
	double ca = isnan(a->m.cos) ? -2 : a->m.cos, cb = isnan(b->m.cos) ? -2 : b->m.cos;
	return ca < cb;
}

size_t db_bisect_pick_pair(db_bisect_run *r, int layer, const char *stage,
                           bool *shape_mismatch, bool *partial)
{
	db_compare *c = r->c;
	size_t best = DB_NO_PAIR, best_merged = DB_NO_PAIR;
	*shape_mismatch = false;
	if (partial)
		*partial = false;
	db_bsel s;
	db_bsel_open(&s, c, r->pass);
	for (size_t k = 0; k < s.n; k++) {
		size_t i = db_bsel_at(&s, k);
		db_pair *p = &c->pairs[i];
		if (p->f.layer != layer || strcmp(p->f.stage, stage) || !db_bisect_pair_in(r, p))
			continue;
		if (p->status == DB_ST_SHAPE_MISMATCH) {
			*shape_mismatch = true;
			continue;
		}
		if (p->status != DB_ST_OK) {
			if (partial && (p->status == DB_ST_REF_ONLY || p->status == DB_ST_TARGET_ONLY))
				*partial = true;
			continue;
		}
		db_compare_pair(c, p);
		if (p->band == DB_BAND_NONE)
			continue;
		size_t *slot = (p->merged || p->f.rank == -1) ? &best_merged : &best;
		if (*slot == DB_NO_PAIR || worse(p, &c->pairs[*slot]))
			*slot = i;
	}
	db_bsel_close(&s);
	return best_merged != DB_NO_PAIR ? best_merged : best;
}

/* With a noise run, the first pair of the selection up to pair `upto`
 * (execution order) that is beyond noise, DB_NO_PAIR none. An error a
 * stage introduces beyond noise can be back within noise at the layer's
 * output (rotary_emb's x90 is x4 after o_proj and the MLP); beyond noise
 * anywhere before a probe makes it bad, so the search stays monotone. */
static size_t beyond_noise_upto(db_bisect_run *r, size_t upto)
{
	db_compare *c = r->c;
	if (!db_noise_root(c) || r->o.pred.kind != DB_PRED_BAND ||
	    r->o.pred.worst_good != DB_BAND_OK)
		return DB_NO_PAIR;
	db_bsel s;
	db_bsel_open(&s, c, r->pass);
	size_t found = DB_NO_PAIR;
	for (size_t k = 0; k < s.n && found == DB_NO_PAIR; k++) {
		size_t i = db_bsel_at(&s, k);
		if (i > upto)
			break;
		db_pair *p = &c->pairs[i];
		if (p->status != DB_ST_OK || !db_bisect_pair_in(r, p))
			continue;
		db_compare_pair(c, p);
		if (p->status == DB_ST_OK && p->noise == DB_NOISE_BEYOND)
			found = i;
	}
	db_bsel_close(&s);
	return found;
}

void db_bisect_probe(db_bisect_run *r, int layer, db_probe *out)
{
	memset(out, 0, sizeof *out);
	out->layer = layer;
	out->pair = DB_NO_PAIR;
	out->beyond = DB_NO_PAIR;
	out->m.cos = out->m.rel = NAN;
	out->band = DB_BAND_NONE;
	out->auto_verdict = DB_V_NONE;
	const char *stage = db_probe_stage_at(r->c, r->phase, r->pass, r->stage, layer);
	int l = layer;
	if (layer == DB_LAYER_FINAL) {
		stage = r->final_stage;
		l = -1;
	}
	if (!stage)
		return;
	bool mismatch;
	size_t i = db_bisect_pick_pair(r, l, stage, &mismatch, NULL);
	if (i == DB_NO_PAIR && mismatch) {
		/* Different shapes on the two sides: nothing to measure, but
		 * certainly not equal. */
		out->dumped = true;
		out->band = DB_BAND_BUG;
		out->auto_verdict = DB_V_BAD;
		return;
	}
	if (i == DB_NO_PAIR)
		return;
	const db_pair *p = &r->c->pairs[i];
	out->pair = i;
	out->dumped = true;
	out->m = p->m;
	out->band = p->band;
	out->auto_verdict = db_predicate_eval_pair(&r->o.pred, p, false);
	if (out->auto_verdict == DB_V_GOOD && (out->beyond = beyond_noise_upto(r, i)) != DB_NO_PAIR)
		out->auto_verdict = DB_V_BAD;
}

/* p is the probe's tensor at its layer. With DB_PROBE_LAST every layer
 * that has a tensor on both sides has a probe (its last one). */
bool db_bisect_probe_pair(const db_bisect_run *r, const db_pair *p)
{
	if (strcmp(r->stage, DB_PROBE_LAST))
		return !strcmp(p->f.stage, r->stage);
	return p->status == DB_ST_OK || p->status == DB_ST_SHAPE_MISMATCH;
}

void db_bisect_measure_all(db_bisect_run *r)
{
	if (!db_compare_finished(r->c))
		db_compare_run(r->c);
}
