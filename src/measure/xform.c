/* Layout transforms found by the data (xform.h). Once per set of pairs,
 * every weight pair (both sides, the same logical shape, at least 2-d) is
 * sampled as stored and through each known transform of the target; a pair
 * votes for what brings it within reach of the reference (relative L2 of
 * the sample below 0.35: quantization noise reads at most ~0.2, a layout
 * scramble ~1.4). When more weights vote for one transform than for none,
 * it is applied to every weight it fits, and said so; the weights that only
 * matched as stored are the finding (not transformed). A target weight
 * whose shape is the reference's transposed (pairing kept it, db_pair.tposed)
 * is always read transposed and votes for the transpose when that matches;
 * when such votes win, square plain weights are read transposed too, and a
 * square one that matched only as stored is the finding. A reference
 * pre-shuffled against a target as the checkpoint has it votes the same
 * way, its reference read through the candidate; the side with the most
 * votes wins. */
#include "xform.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_dequant.h"
#include "dequant.h"

#define XF_SAMPLE 2048
#define XF_GOOD 0.35

/* The candidates, for one-byte stored elements (fp8, packed fp4 bytes) and
 * two-byte ones: aiter's shuffle_weight (IN, IK) is tile (IN, 2 IK,
 * 16 / element size); shuffle_weight_NK (N, K) is tile (N, K, K / (64 / N)). */
static const db_xform cands1[] = {
	{DB_XF_TILE, 16, 32, 16, "aiter shuffle_weight (16, 16)"},
	{DB_XF_TILE, 32, 32, 16, "aiter shuffle_weight (32, 16)"},
	{DB_XF_TILE, 16, 32, 8, "aiter shuffle_weight_NK (16, 32)"},
	{DB_XF_GATE_UP, 0, 0, 0, "gate/up rows interleaved"},
};
static const db_xform cands2[] = {
	{DB_XF_TILE, 16, 32, 8, "aiter shuffle_weight (16, 16)"},
	{DB_XF_TILE, 32, 32, 8, "aiter shuffle_weight (32, 16)"},
	{DB_XF_GATE_UP, 0, 0, 0, "gate/up rows interleaved"},
};
#define NCAND 4
/* any element size, plain stored values only: a target stored [in, out]
 * (its shape says so, or a square one the data shows) */
static const db_xform xf_transpose = {DB_XF_TRANSPOSE, 0, 0, 0, "transposed"};
#define V_TRANSPOSE NCAND
#define V_REF (NCAND + 1)       /* + k: the reference read through candidate k */
/* MXFP4 weights whose e8m0 scales aiter's e8m0_shuffle left shuffled */
static const db_xform xf_e8m0 = {DB_XF_E8M0, 0, 0, 0, "aiter e8m0_shuffle (scales)"};
#define V_SCALE (V_REF + NCAND)

/* it holds FP4 codes with e8m0 scales the scale shuffle fits. */
static bool e8m0_scales(const db_item *it)
{
	const db_qgroup *g = it->quant;
	return g && !g->err && g->rule->values == DB_QV_E2M1 && !g->rule->split &&
	       (g->rule->scale_type == DB_QS_E8M0 || g->scale->dtype == DB_DT_F8_E8M0FNU) &&
	       db_xform_fits(&xf_e8m0, g->scale->ndim, g->scale->shape);
}

typedef struct xstate {
	unsigned long gen;
	const db_xform *chosen;         /* NULL: none */
	uint8_t *apply;                 /* per pair: read its target through chosen */
	uint8_t *odd;                   /* per pair: matched as stored only */
	size_t votes, weights;          /* for chosen; pairs sampled */
	bool transposed;                /* chosen is the transpose */
	bool on_ref;                    /* chosen is read on the reference side */
} xstate;

static pthread_mutex_t xmu = PTHREAD_MUTEX_INITIALIZER;

/* The stored grid and element size a transform acts on. */
static bool stored_grid(const db_item *it, int *nd, const int64_t **shape, size_t *es)
{
	if (it->quant) {
		const db_qgroup *g = it->quant;
		if (g->err || g->rule->split || g->codes->ndim != g->ndim)
			return false;
		*nd = g->codes->ndim;
		*shape = g->codes->shape;
		*es = 1;
		return true;
	}
	*nd = it->ndim;
	*shape = it->shape;
	*es = db_dtype_size(it->dtype);
	return *es == 1 || *es == 2;
}

static const db_xform *cand(size_t es, int k)
{
	if (es == 1)
		return k < (int)(sizeof cands1 / sizeof *cands1) ? &cands1[k] : NULL;
	return k < (int)(sizeof cands2 / sizeof *cands2) ? &cands2[k] : NULL;
}

/* Weights only (db_pair_is_weight): never the activations of a forward
 * dump, whose sampling would cost a read of every file. */
static bool candidate(const db_compare *c, const db_pair *p)
{
	return p->status == DB_ST_OK && !p->merged && !p->slot.side && p->ref && p->tgt &&
	       p->ndim_ref >= 2 && p->numel >= 256 && db_pair_is_weight(c->profile, p);
}

static double rel_l2(const double *x, const double *y, int n)
{
	double dd = 0, xx = 0;
	for (int i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]))
			continue;
		dd += (y[i] - x[i]) * (y[i] - x[i]);
		xx += x[i] * x[i];
	}
	return xx > 0 ? sqrt(dd / xx) : dd > 0 ? INFINITY : 0;
}

/* The first candidate transform k that brings item it's sample (read into
 * buf) within reach of other: k (*by set), -1 none, -2 unreadable. The
 * error is relative to the reference's sample: buf when it is the
 * reference (on_ref), else other. */
static int first_fit(db_wctx *w, const db_index *ix, const db_item *it, bool on_ref,
                     size_t es, int nd, const int64_t *shape, const int64_t *idx, int n,
                     const double *other, double *buf, const db_xform **by)
{
	db_err e;
	for (int k = 0; k < NCAND; k++) {
		const db_xform *t = cand(es, k);
		if (!t || !db_xform_fits(t, nd, shape))
			continue;
		if (db_side_sample(w, ix, it, t, idx, n, buf, &e) != 0)
			return -2;
		if ((on_ref ? rel_l2(buf, other, n) : rel_l2(other, buf, n)) < XF_GOOD) {
			*by = t;
			return k;
		}
	}
	return -1;
}

/* Which of none (-1) or candidate k brings p's sample within reach; -2
 * when none does (or it cannot be read). */
static int vote(const db_compare *c, db_wctx *w, const db_pair *p, const db_xform **by)
{
	int nd = 0;
	const int64_t *shape = NULL;
	size_t es = 0;
	*by = NULL;
	bool grid = stored_grid(p->tgt, &nd, &shape, &es);
	/* square plain weights may be transposed too, as the data says */
	bool square = !p->tgt->quant && p->tgt->ndim >= 2 &&
	              p->tgt->shape[p->tgt->ndim - 2] == p->tgt->shape[p->tgt->ndim - 1];
	if (!grid && !p->tposed && !square)
		return -2;
	int64_t idx[XF_SAMPLE];
	double x[XF_SAMPLE], y[XF_SAMPLE];
	int n = p->numel < XF_SAMPLE ? (int)p->numel : XF_SAMPLE;
	/* spread over the tensor; an odd stride so rows and tiles vary */
	for (int i = 0; i < n; i++)
		idx[i] = (int64_t)((uint64_t)i * (p->numel / (uint64_t)n) + (uint64_t)i * 7 % 13) %
		         (int64_t)p->numel;
	db_err e;
	if (db_side_sample(w, c->ref, p->ref, NULL, idx, n, x, &e) != 0)
		return -2;
	if (p->tposed || square) {
		/* a transposed shape is never read as stored: no silent reshape */
		if (!p->tposed && (db_side_sample(w, c->tgt, p->tgt, NULL, idx, n, y, &e) != 0 ||
		                   rel_l2(x, y, n) < XF_GOOD))
			return -1;
		if (db_side_sample(w, c->tgt, p->tgt, &xf_transpose, idx, n, y, &e) != 0)
			return -2;
		if (rel_l2(x, y, n) < XF_GOOD) {
			*by = &xf_transpose;
			return V_TRANSPOSE;
		}
		if (p->tposed || !grid)
			return -2;
	}
	if (db_side_sample(w, c->tgt, p->tgt, NULL, idx, n, y, &e) != 0)
		return -2;
	double stored = rel_l2(x, y, n);
	/* e8m0 scales of neighbouring blocks are close: scales read shuffled
	 * leave the sample near (relative L2 ~0.3, FP4 rounding ~0.1), so the
	 * unshuffle must beat as stored clearly, not merely come within reach */
	if (e8m0_scales(p->tgt)) {
		if (db_side_sample(w, c->tgt, p->tgt, &xf_e8m0, idx, n, y, &e) != 0)
			return -2;
		double un = rel_l2(x, y, n);
		if (un < XF_GOOD && un < 0.75 * stored) {
			*by = &xf_e8m0;
			return V_SCALE;
		}
	}
	if (stored < XF_GOOD)
		return -1;
	int k = first_fit(w, c->tgt, p->tgt, false, es, nd, shape, idx, n, x, y, by);
	if (k != -1)
		return k;
	/* the reference pre-shuffled (the target as the checkpoint has it) */
	int rnd;
	const int64_t *rshape;
	size_t res;
	if (!stored_grid(p->ref, &rnd, &rshape, &res) ||
	    db_side_sample(w, c->tgt, p->tgt, NULL, idx, n, y, &e) != 0)
		return -2;
	k = first_fit(w, c->ref, p->ref, true, res, rnd, rshape, idx, n, y, x, by);
	return k >= 0 ? V_REF + k : -2;
}

static void decide(const db_compare *c, db_wctx *w, xstate *xs)
{
	size_t np = c->n_pairs;
	int *v = malloc((np + 1) * sizeof *v);
	size_t *es_of = malloc((np + 1) * sizeof *es_of);
	xs->apply = calloc(np + 1, 1);
	xs->odd = calloc(np + 1, 1);
	if (!v || !es_of || !xs->apply || !xs->odd) {
		free(v);
		free(es_of);
		return;
	}
	size_t none = 0, count[2][NCAND] = {{0}}, tcount = 0, rcount[2][NCAND] = {{0}}, scount = 0;
	size_t *res_of = calloc(np + 1, sizeof *res_of);
	if (!res_of) {
		free(v);
		free(es_of);
		return;
	}
	for (size_t i = 0; i < np; i++) {
		const db_pair *p = &c->pairs[i];
		v[i] = -3;
		int nd = 0;
		const int64_t *shape = NULL;
		if (!candidate(c, p))
			continue;
		if (!stored_grid(p->tgt, &nd, &shape, &es_of[i]))
			es_of[i] = 0;
		if (!stored_grid(p->ref, &nd, &shape, &res_of[i]))
			res_of[i] = 0;
		const db_xform *by;
		v[i] = vote(c, w, p, &by);
		xs->weights++;
		if (v[i] == -1)
			none++;
		else if (v[i] == V_TRANSPOSE)
			tcount++;
		else if (v[i] == V_SCALE)
			scount++;
		else if (v[i] >= V_REF)
			rcount[res_of[i] == 2][v[i] - V_REF]++;
		else if (v[i] >= 0)
			count[es_of[i] == 2][v[i]]++;
	}
	/* most weights match only transposed: the dump stores [in, out]; a
	 * square one that matched as stored is the one left out. Or most
	 * match only with their scales unshuffled: one that matched as stored
	 * kept its scales unshuffled. */
	for (int sp = 0; sp < 2; sp++) {
		size_t sc = sp ? scount : tcount;
		if (sc <= none || sc < 2)
			continue;
		bool beats = sc > (sp ? tcount : scount);
		for (int s = 0; s < 2; s++)
			for (int k = 0; k < NCAND; k++)
				beats &= sc > count[s][k] && sc > rcount[s][k];
		if (beats) {
			xs->chosen = sp ? &xf_e8m0 : &xf_transpose;
			xs->transposed = !sp;
			xs->votes = sc;
			for (size_t i = 0; i < np; i++) {
				const db_pair *p = &c->pairs[i];
				if (v[i] == -3)
					continue;
				if (sp && !e8m0_scales(p->tgt))
					continue;
				int td = p->tgt->ndim;
				if (!sp && (p->tgt->quant || td < 2 || (!p->tposed &&
				            p->tgt->shape[td - 2] != p->tgt->shape[td - 1])))
					continue;
				xs->apply[i] = 1;
				xs->odd[i] = v[i] == -1;
			}
			free(v);
			free(es_of);
			free(res_of);
			return;
		}
	}
	/* the transform most weights vote for, if more than vote for none */
	int best = -1, bes = 0;
	size_t bc = 0;
	bool onref = false;
	for (int r = 0; r < 2; r++)
		for (int s = 0; s < 2; s++)
			for (int k = 0; k < NCAND; k++) {
				size_t n = r ? rcount[s][k] : count[s][k];
				if (n > bc) {
					bc = n;
					best = k;
					bes = s;
					onref = r;
				}
			}
	if (best >= 0 && bc > none && bc >= 2) {
		xs->chosen = cand(bes ? 2 : 1, best);
		xs->votes = bc;
		xs->on_ref = onref;
		for (size_t i = 0; i < np; i++) {
			const db_pair *p = &c->pairs[i];
			int nd = 0;
			const int64_t *shape = NULL;
			size_t es = 0;
			if (v[i] == -3 || p->tposed || !stored_grid(onref ? p->ref : p->tgt, &nd, &shape,
			                                            &es) ||
			    (es == 2) != (bes == 1) || !db_xform_fits(xs->chosen, nd, shape))
				continue;
			xs->apply[i] = 1;
			xs->odd[i] = v[i] == -1;
		}
	}
	free(v);
	free(es_of);
	free(res_of);
}

static void xstate_free(xstate *xs)
{
	if (!xs)
		return;
	free(xs->apply);
	free(xs->odd);
	free(xs);
}

/* The decision for c's current pairs (made at the first call). */
static const xstate *state(const db_compare *c, db_wctx *w)
{
	db_cmp_priv *pr = c->priv;
	pthread_mutex_lock(&xmu);
	xstate *xs = pr->xform;
	if (!xs || xs->gen != c->pairs_gen) {
		xstate_free(xs);
		xs = calloc(1, sizeof *xs);
		if (xs) {
			xs->gen = c->pairs_gen;
			db_wctx own;
			bool mine = !w && db_wctx_init(&own, 8) == 0;   /* a group: codes and 3 companions a side */
			if (w || mine)
				decide(c, w ? w : &own, xs);
			if (mine)
				db_wctx_free(&own);
		}
		pr->xform = xs;
	}
	pthread_mutex_unlock(&xmu);
	return xs;
}

const db_xform *db_pair_xform(const db_compare *c, const db_pair *p, db_wctx *w)
{
	if (p->tposed && p->status == DB_ST_OK)
		return &xf_transpose;   /* its shape says so, whatever the others do */
	if (!candidate(c, p))
		return NULL;
	const xstate *xs = state(c, w);
	size_t i = (size_t)(p - c->pairs);
	return xs && xs->chosen && xs->apply && i < c->n_pairs && xs->apply[i] ? xs->chosen : NULL;
}

void db_xform_drop(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	pthread_mutex_lock(&xmu);
	xstate_free(pr->xform);
	pr->xform = NULL;
	pthread_mutex_unlock(&xmu);
}

bool db_pair_xform_on_ref(const db_compare *c, const db_pair *p)
{
	if (p->tposed || !db_pair_xform(c, p, NULL))
		return false;
	const xstate *xs = state(c, NULL);
	return xs && xs->on_ref;
}

bool db_pair_not_transformed(const db_compare *c, const db_pair *p)
{
	const xstate *xs = candidate(c, p) ? state(c, NULL) : NULL;
	size_t i = (size_t)(p - c->pairs);
	return xs && xs->odd && i < c->n_pairs && xs->odd[i];
}

const char *db_compare_xform_note(const db_compare *c, char *buf, size_t len)
{
	buf[0] = 0;
	const xstate *xs = c->n_pairs ? state(c, NULL) : NULL;
	if (xs && xs->transposed)
		snprintf(buf, len, "target transposed (%zu of %zu weights match only so); square "
		         "weights read transposed too", xs->votes, xs->weights);
	else if (xs && xs->chosen)
		snprintf(buf, len, "%s pre-transformed: %s (%zu of %zu weights match only so); "
		         "read through it for every weight it fits", xs->on_ref ? "reference" : "target",
		         xs->chosen->name, xs->votes, xs->weights);
	return buf;
}

const char *db_pair_xform_name(const db_compare *c, const db_pair *p)
{
	const db_xform *x = db_pair_xform(c, p, NULL);
	return x ? x->name : NULL;
}
