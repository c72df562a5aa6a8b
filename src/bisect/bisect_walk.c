/* The intra-layer walk of a bisect's bad layer (seed 002 Phase 5): every
 * stage of the layer in execution order with the error it receives and the
 * error it leaves, so the culprit is the stage that introduces the error,
 * not the first tensor that shows it (an input that arrived bad, a stage
 * after ones that could not be compared). */
#include "db_bisect.h"
#include "db_calls.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_priv.h"
#include "db_grid.h"
#include "db_rank_split.h"
#include "db_verdict.h"

#define STEP_DROP 0.001         /* seed: a single-step cos drop > 0.001 is the culprit */

const char *db_stage_role_name(db_stage_role r)
{
	switch (r) {
	case DB_ROLE_INTRODUCES: return "introduces";
	case DB_ROLE_AMPLIFIES: return "amplifies";
	case DB_ROLE_INHERITS: return "inherits";
	case DB_ROLE_ON_ENTRY: return "bad on entry";
	case DB_ROLE_NOT_COMPARABLE: return "not comparable";
	case DB_ROLE_ONE_SIDE: return "one side only";
	default: return "ok";
	}
}

static double fin_cos(double c)
{
	return isfinite(c) ? c : 0.0;
}

/* stage is in one tree only at layer while some other layer has it in both:
 * "only in the reference" / "only in the target", else NULL. */
static const char *one_sided_here(const db_bisect_run *r, int layer, const char *stage)
{
	const char *which = NULL;
	bool elsewhere = false;
	for (size_t i = 0; i < r->c->n_pairs; i++) {
		const db_pair *p = &r->c->pairs[i];
		if (strcmp(p->f.stage, stage) || !db_bisect_pair_in(r, p))
			continue;
		if (p->f.layer == layer && p->status == DB_ST_REF_ONLY)
			which = "only in the reference";
		else if (p->f.layer == layer && p->status == DB_ST_TARGET_ONLY)
			which = "only in the target";
		else if (p->f.layer != layer && p->f.layer >= 0 && p->ref && p->tgt)
			elsewhere = true;
	}
	return elsewhere ? which : NULL;
}

/* Why stage at layer could not be compared (a pair of it is not
 * comparable or unreadable), else NULL. */
static const char *not_comparable_here(const db_bisect_run *r, int layer, const char *stage)
{
	for (size_t i = 0; i < r->c->n_pairs; i++) {
		const db_pair *p = &r->c->pairs[i];
		if (p->f.layer != layer || strcmp(p->f.stage, stage) || !db_bisect_pair_in(r, p))
			continue;
		if (p->status == DB_ST_NOT_COMPARABLE || p->status == DB_ST_ERROR)
			return p->error ? p->error : db_status_name(p->status);
	}
	return NULL;
}

/* X.inputs.N / X.input: a tensor as it entered a module, not made by it. */
static bool is_entry(const char *stage)
{
	const char *d = strrchr(stage, '.');
	if (d && d[1] >= '0' && d[1] <= '9') {
		const char *e = d;
		while (e > stage && e[-1] != '.')
			e--;
		return (size_t)(d - e) >= 5 && (!strncmp(e, "inputs", 6) || !strncmp(e, "input.", 6));
	}
	return d && (!strcmp(d, ".inputs") || !strcmp(d, ".input"));
}

static double err_of(const db_metrics *m)
{
	return isfinite(m->rel_l2) ? m->rel_l2 : isfinite(m->rel) ? m->rel : 1.0;
}

/* Length of stage without a tuple index (".0", ".1"). */
static size_t base_len(const char *stage)
{
	const char *d = strrchr(stage, '.');
	if (d && d[1] && strspn(d + 1, "0123456789") == strlen(d + 1))
		return (size_t)(d - stage);
	return strlen(stage);
}

/* a and b are members of one tuple output (mod / mod.0, mod.1; a profile
 * may have renamed mod.0 to mod): they share the module's input. */
static bool siblings(const char *a, const char *b)
{
	size_t la = base_len(a), lb = base_len(b);
	return la == lb && !strncmp(a, b, la) && (la != strlen(a) || lb != strlen(b));
}

/* The roles of the comparable rows and the culprit's index (-1 none). */
static long assign_roles(db_bisect_run *r, db_bisect_result *res, double in_err, bool in_bad)
{
	db_compare *c = r->c;
	double amp_k = c->profile ? c->profile->thresholds.amplify : 10.0;
	long first_intro = -1, best_amp = -1;
	/* a tuple's members share the module's input; the next module gets
	 * the worst of them (it reads one, we do not know which) */
	const db_substage_row *prev = NULL;
	double g_in = in_err, g_out = 0;
	bool g_in_bad = in_bad, g_out_bad = false;
	for (size_t i = 0; i < res->n_walk; i++) {
		db_substage_row *w = &res->walk[i];
		if (w->role == DB_ROLE_NOT_COMPARABLE || w->role == DB_ROLE_ONE_SIDE) {
			/* nothing measured: the error carried passes over it; a
			 * module one tree lacks here only, while all is still ok,
			 * is the finding (a port that dropped it) */
			w->err_in = w->err_out = w->amp = w->sqnr_db = NAN;
			if (w->role == DB_ROLE_ONE_SIDE && first_intro < 0 && !(prev ? g_out_bad : g_in_bad))
				first_intro = (long)i;
			continue;
		}
		bool sib = prev && siblings(prev->stage, w->stage);
		if (!sib) {
			if (prev) {
				g_in = g_out;
				g_in_bad = g_out_bad;
			}
			g_out = 0;
			g_out_bad = false;
		}
		in_err = g_in;
		in_bad = g_in_bad;
		w->err_in = in_err;
		bool out_bad;
		if (w->pair == DB_NO_PAIR) {        /* other shapes: certainly not equal */
			w->err_out = INFINITY;
			out_bad = true;
		} else {
			const db_pair *p = &c->pairs[w->pair];
			w->err_out = err_of(&p->m);
			out_bad = db_predicate_eval_pair(&r->o.pred, p, false) == DB_V_BAD;
		}
		w->sqnr_db = w->err_out > 0 ? -20.0 * log10(w->err_out) : INFINITY;
		w->amp = in_err > 0 ? w->err_out / in_err : w->err_out > 0 ? INFINITY : 1.0;
		if (!out_bad)
			w->role = DB_ROLE_OK;
		else if (is_entry(w->stage))
			w->role = DB_ROLE_ON_ENTRY;
		else if (!in_bad)
			w->role = DB_ROLE_INTRODUCES;
		else if (w->amp >= amp_k)
			w->role = DB_ROLE_AMPLIFIES;
		else
			w->role = DB_ROLE_INHERITS;
		if (w->role == DB_ROLE_INTRODUCES && first_intro < 0)
			first_intro = (long)i;
		if (w->role == DB_ROLE_AMPLIFIES &&
		    (best_amp < 0 || w->amp > res->walk[best_amp].amp))
			best_amp = (long)i;
		prev = w;
		if (w->err_out > g_out)
			g_out = w->err_out;
		g_out_bad |= out_bad;
	}
	if (first_intro >= 0)
		return first_intro;
	if (best_amp >= 0)
		return best_amp;
	/* nothing introduces or amplifies (the error came in with the layer's
	 * input, or grows by less than the factor at every stage): the first
	 * stage of the layer that leaves ok or drops by more than the seed's
	 * 0.001, inputs that arrived bad excepted */
	for (size_t i = 0; i < res->n_walk; i++) {
		db_substage_row *w = &res->walk[i];
		if (w->role == DB_ROLE_ON_ENTRY || w->role == DB_ROLE_NOT_COMPARABLE)
			continue;
		const db_pair *p = w->pair != DB_NO_PAIR ? &c->pairs[w->pair] : NULL;
		bool leaves = w->role == DB_ROLE_ONE_SIDE || w->role != DB_ROLE_OK ||
		              (p ? db_predicate_eval_pair(&r->o.pred, p, true) == DB_V_BAD
		                 : w->band > DB_BAND_OK);
		/* a pair the noise run judged: its step drop is noise too */
		bool judged = p && (p->noise == DB_NOISE_WITHIN || p->noise == DB_NOISE_BEYOND);
		if (leaves || (!judged && isfinite(w->step_drop) && w->step_drop > STEP_DROP))
			return (long)i;
	}
	return -1;
}

/* The not-comparable stages right before row k (since the last compared
 * one), "a, b, c" into a new string; NULL when none (or OOM). */
static char *skipped_before(const db_bisect_result *res, long k)
{
	long a = k;
	while (a > 0 && res->walk[a - 1].role == DB_ROLE_NOT_COMPARABLE)
		a--;
	if (a == k)
		return NULL;
	size_t len = 1;
	for (long i = a; i < k; i++)
		len += strlen(res->walk[i].stage) + 2;
	char *s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (long i = a; i < k; i++) {
		if (i > a)
			strcat(s, ", ");
		strcat(s, res->walk[i].stage);
	}
	return s;
}

/* The culprit is compared merged only (the other side has another
 * layout): each shard against its slice of the other side's whole names
 * the bad ranks; partial sums and the like stay not separable, with why. */
static int sliced_ranks(db_bisect_run *r, db_pair *p, db_bisect_result *res)
{
	db_rank_part *parts = NULL;
	db_err err = {{0}};
	long n = db_pair_rank_split(r->c, p, &parts, res->ranks_why, sizeof res->ranks_why, &err);
	if (n <= 0) {
		if (n < 0)
			snprintf(res->ranks_why, sizeof res->ranks_why, "%.250s", err.msg);
		res->ranks_unknown = true;
		return 0;
	}
	int *bad = malloc((size_t)n * sizeof *bad);
	if (!bad) {
		free(parts);
		return -1;
	}
	size_t n_bad = 0;
	for (long k = 0; k < n; k++) {
		db_pair tmp;
		memcpy(&tmp, p, sizeof tmp);
		tmp.m = parts[k].m;
		tmp.band = parts[k].band;
		atomic_store(&tmp.state, DB_PAIR_DONE);
		if (db_predicate_eval_pair(&r->o.pred, &tmp, true) == DB_V_BAD)
			bad[n_bad++] = parts[k].rank;
	}
	free(parts);
	if (!n_bad) {
		/* the whole is bad and no slice is: say so rather than guess */
		free(bad);
		snprintf(res->ranks_why, sizeof res->ranks_why,
		         "no rank's slice is bad on its own, only the merged tensor");
		res->ranks_unknown = true;
		return 0;
	}
	res->bad_ranks = bad;           /* shards come in rank order */
	res->n_bad_ranks = n_bad;
	res->all_ranks_bad = n_bad == (size_t)n;
	res->ranks_sliced = true;
	return 0;
}

/* Bad ranks at the culprit row w, when only some are. */
static int culprit_ranks(db_bisect_run *r, int layer, const db_substage_row *w,
                         db_bisect_result *res)
{
	db_compare *c = r->c;
	size_t n_ranks = 0, n_bad = 0;
	int *bad = malloc((c->n_pairs + 1) * sizeof *bad);
	if (!bad)
		return -1;
	for (size_t i = 0; i < c->n_pairs; i++) {
		db_pair *p = &c->pairs[i];
		if (p->merged || p->f.rank < 0 || p->f.layer != layer ||
		    strcmp(p->f.stage, w->stage) || !db_bisect_pair_in(r, p))
			continue;
		bool is_bad = p->status == DB_ST_SHAPE_MISMATCH;
		if (p->status == DB_ST_OK) {
			db_compare_pair(c, p);
			is_bad = db_predicate_eval_pair(&r->o.pred, p, true) == DB_V_BAD;
		} else if (!is_bad) {
			continue;
		}
		n_ranks++;
		if (!is_bad)
			continue;
		bool dup = false;
		for (size_t k = 0; k < n_bad && !dup; k++)
			dup = bad[k] == p->f.rank;
		if (!dup)
			bad[n_bad++] = p->f.rank;
	}
	if (n_bad) {
		for (size_t a = 1; a < n_bad; a++)   /* insertion sort: few ranks */
			for (size_t b = a; b > 0 && bad[b - 1] > bad[b]; b--) {
				int t = bad[b];
				bad[b] = bad[b - 1];
				bad[b - 1] = t;
			}
		res->bad_ranks = bad;
		res->n_bad_ranks = n_bad;
		res->all_ranks_bad = n_bad == n_ranks;
	} else {
		free(bad);
		if (n_ranks == 0 && w->pair != DB_NO_PAIR && c->pairs[w->pair].merged)
			return sliced_ranks(r, &c->pairs[w->pair], res);
	}
	return 0;
}

int db_bisect_walk_layer(db_bisect_run *r, int layer, double prev_cos,
                         const db_probe *input, db_bisect_result *res)
{
	db_compare *c = r->c;
	/* distinct stages of the layer, in execution order */
	const char **stages = malloc((c->n_pairs + 1) * sizeof *stages);
	if (!stages)
		return -1;
	size_t ns = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->f.layer != layer || !db_bisect_pair_in(r, p))
			continue;
		bool seen = false;
		for (size_t j = 0; j < ns && !seen; j++)
			seen = !strcmp(stages[j], p->f.stage);
		if (!seen)
			stages[ns++] = p->f.stage;
	}
	res->walk = calloc(ns ? ns : 1, sizeof *res->walk);
	if (!res->walk) {
		free(stages);
		return -1;
	}
	for (size_t j = 0; j < ns; j++) {
		bool mismatch, partial;
		size_t pi = db_bisect_pick_pair(r, layer, stages[j], &mismatch, &partial);
		/* a module one side lacks here but both have elsewhere (a port that
		 * dropped it at this layer) is a finding; missing everywhere is a
		 * dump choice, not a bug; one that could not be compared is shown
		 * in its place with the reason, never skipped */
		const char *one_side = NULL, *nc = NULL;
		if (pi == DB_NO_PAIR && !mismatch && partial)
			one_side = one_sided_here(r, layer, stages[j]);
		if (pi == DB_NO_PAIR && !mismatch && !one_side)
			nc = not_comparable_here(r, layer, stages[j]);
		if (pi == DB_NO_PAIR && !mismatch && !one_side && !nc)
			continue;
		db_substage_row *w = &res->walk[res->n_walk++];
		w->one_side = one_side;
		w->reason = nc;
		w->role = one_side ? DB_ROLE_ONE_SIDE : nc ? DB_ROLE_NOT_COMPARABLE : DB_ROLE_OK;
		const char *top = c->profile
			? db_profile_parent(c->profile, stages[j], stages, ns, w->top, sizeof w->top)
			: NULL;
		if (top != w->top)
			snprintf(w->top, sizeof w->top, "%s", top ? top : stages[j]);
		w->stage = stages[j];
		w->pair = pi;
		if (pi == DB_NO_PAIR) {
			w->cos = w->rel = NAN;
			w->band = nc ? DB_BAND_NONE : DB_BAND_BUG;
			w->step_drop = NAN;
		} else {
			const db_pair *p = &c->pairs[pi];
			w->cos = p->m.cos;
			w->rel = p->m.rel;
			w->stats_only = p->status == DB_ST_OK && p->m.stats_only;
			w->band = p->band;
			w->word = db_verdict_word(p);
			w->step_drop = prev_cos - fin_cos(p->m.cos);
			prev_cos = fin_cos(p->m.cos);
		}
	}
	/* stage pointers point into c->pairs (stable until a rescan) */
	free(stages);
	for (size_t i = 0; i < c->n_pairs && !res->calls[0]; i++)
		if (c->pairs[i].f.layer == layer && db_bisect_pair_in(r, &c->pairs[i]))
			db_call_finding(c, i, res->calls, sizeof res->calls, NULL);
	bool in_bad = input && input->dumped && input->auto_verdict == DB_V_BAD;
	double in_err = input && input->dumped ? err_of(&input->m) : 0.0;
	long culprit = assign_roles(r, res, in_err, in_bad);
	/* compare names the first divergence beyond drift (bf16 engine
	 * against trainer drifts at every stage): in its layer the walk
	 * names the same stage (db_first_beyond_drift_of, one rule) */
	db_bisect_measure_all(r);       /* "first" reads every pair */
	long fb = db_first_beyond_drift_of(c, db_first_divergence(c, NULL, NULL, -2));
	if (fb >= 0 && c->pairs[fb].f.layer == layer && db_bisect_pair_in(r, &c->pairs[fb]))
		for (size_t i = 0; i < res->n_walk; i++)
			if (!strcmp(res->walk[i].stage, c->pairs[fb].f.stage))
				culprit = (long)i;
	if (culprit < 0)
		return 0;
	db_substage_row *w = &res->walk[culprit];
	w->culprit = true;
	res->first_bad_role = w->role;
	res->first_bad_stage = strdup(w->top);
	if (strcmp(w->stage, w->top))
		res->first_bad_substage = strdup(w->stage);
	if (!res->first_bad_stage || (strcmp(w->stage, w->top) && !res->first_bad_substage))
		return -1;
	res->at_or_before = skipped_before(res, culprit);
	if (w->pair != DB_NO_PAIR)
		db_pair_hint(c, &c->pairs[w->pair], &res->first_bad_hint);
	/* the dump records its calls' stacks: where the culprit was made */
	size_t fp = w->pair;
	for (size_t i = 0; fp == DB_NO_PAIR && i < c->n_pairs; i++)
		if (c->pairs[i].f.layer == layer && !strcmp(c->pairs[i].f.stage, w->stage) &&
		    db_bisect_pair_in(r, &c->pairs[i]))
			fp = i;
	if (c->profile && c->profile->pair_calls && fp != DB_NO_PAIR)
		db_call_frames(c, &c->pairs[fp], res->frame_ref, res->frame_tgt, sizeof res->frame_ref);
	return culprit_ranks(r, layer, w, res);
}
