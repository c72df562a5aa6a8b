/* The first bad token of a pair (db_token.h): its rows along the token dim
 * measured one at a time through the pair's own read path (slots, merged
 * shards, the read guard), so a row's numbers are the pair's numbers
 * restricted to that row. */
#include "db_token.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pair/compare_priv.h"

/* The compared tensor's shape: the side that is not sliced. */
static const int64_t *cmp_shape(const db_pair *p, int *nd)
{
	if (p->slot.side == 1) {
		*nd = p->ndim_tgt;
		return p->shape_tgt;
	}
	*nd = p->ndim_ref;
	return p->shape_ref;
}

static int row_metrics(db_compare *c, db_wctx *w, const db_pair *p, const int64_t *sh, int nd,
                       int d, int64_t r, db_metrics *m)
{
	int64_t outer = 1, inner = 1;
	for (int i = 0; i < d; i++)
		outer *= sh[i];
	for (int i = d + 1; i < nd; i++)
		inner *= sh[i];
	db_accum a;
	db_accum_init(&a);
	for (int64_t o = 0; o < outer; o++) {
		int64_t b = (o * sh[d] + r) * inner;
		db_accum part;
		db_accum_init(&part);
		db_err err = {{0}};
		if (db_pair_accum(c, w, p, b, b + inner, &part, &err) != 0)
			return -1;
		db_accum_merge(&a, &part);
	}
	db_accum_finish(&a, m);
	return 0;
}

int db_pair_first_token(const db_compare *cc, const db_pair *p, bool bitwise, db_band upto,
                        db_token_at *out)
{
	db_compare *c = (db_compare *)cc;      /* reads only: the workers' path wants it */
	memset(out, 0, sizeof *out);
	if (atomic_load(&((db_pair *)p)->state) != DB_PAIR_DONE || p->status != DB_ST_OK ||
	    p->m.stats_only)
		return 0;
	int nd;
	const int64_t *sh = cmp_shape(p, &nd);
	if (nd < 1)
		return 0;
	int d = p->slot.tokens ? p->slot.sdim : p->slot.side ? p->slot.dim
	        : c->profile ? db_profile_token_dim(c->profile, p->f.stage) : -1;
	if (d < 0 || d >= nd)
		d = 0;
	int64_t n = sh[d];
	if (n < 1 || n > ((int64_t)1 << 20))
		return 0;
	int64_t start = p->slot.side == 1 || p->slot.side == 2
	                ? atomic_load(&((db_pair *)p)->slot.start) : 0;
	if (start < 0)
		start = 0;
	db_wctx w;
	if (db_wctx_init(&w, db_compare_files_needed(c)) != 0)
		return -1;
	int rc = 0;
	int64_t worst = -1;
	double worst_rel = -1;
	db_metrics wm;
	memset(&wm, 0, sizeof wm);
	for (int64_t r = 0; r < n; r++) {
		db_metrics m;
		if (row_metrics(c, &w, p, sh, nd, d, r, &m) != 0) {
			rc = -1;
			break;
		}
		bool bad = bitwise ? !(m.max_abs == 0)
		                   : db_band_of(&m, &c->profile->thresholds) > upto;
		if (bad || worst < 0 || m.rel > worst_rel) {
			worst = r;
			worst_rel = m.rel;
			wm = m;
		}
		if (bad) {
			rc = 1;
			break;
		}
	}
	if (rc == 0 && worst >= 0)
		rc = 1;
	if (rc == 1) {
		out->row = worst;
		out->token = start + worst;
		out->n_rows = n;
		out->dim = d;
		out->band = db_band_of(&wm, &c->profile->thresholds);
		out->rel = wm.rel;
		out->max_abs = wm.max_abs;
	}
	db_wctx_free(&w);
	return rc;
}

int db_first_divergence_token(const db_compare *c, long fd, db_token_at *out)
{
	if (fd < 0 || (size_t)fd >= c->n_pairs)
		return 0;
	const db_pair *p = &c->pairs[fd];
	bool bitwise = db_pair_judged_bitwise(p) || fd == db_first_not_identical(c);
	return db_pair_first_token(c, p, bitwise, DB_BAND_OK, out);
}

int db_first_beyond_drift_token(const db_compare *c, long fb, db_token_at *out)
{
	if (fb < 0 || (size_t)fb >= c->n_pairs)
		return 0;
	return db_pair_first_token(c, &c->pairs[fb], false, DB_BAND_DRIFT, out);
}

int db_pair_bad_token(const db_compare *c, size_t i, db_token_at *out)
{
	memset(out, 0, sizeof *out);
	if (i >= c->n_pairs)
		return 0;
	const db_pair *p = &c->pairs[i];
	bool bitwise = p->slot.side == DB_SLOT_IN_TREE || (long)i == db_first_not_identical(c);
	db_band upto = p->band > DB_BAND_DRIFT ? DB_BAND_DRIFT : DB_BAND_OK;
	int rc = db_pair_first_token(c, p, bitwise, upto, out);
	if (rc == 1 && !bitwise && out->band <= upto)
		return 0;       /* no row leaves the band by itself: the worst is not "first" */
	return rc;
}

static bool siblings(const db_pair *a, const db_pair *b)
{
	return a->slot.tokens && b->slot.tokens && a->f.phase == b->f.phase &&
	       a->f.layer == b->f.layer && a->f.stage == b->f.stage && a->f.rank == b->f.rank &&
	       a->merged == b->merged && a->occurrence == b->occurrence &&
	       a->slot.dim == b->slot.dim && a->slot.side == b->slot.side;
}

int64_t db_token_curve(const db_compare *cc, size_t i, double **out, int64_t *lo, int64_t *len)
{
	db_compare *c = (db_compare *)cc;      /* reads only, as db_pair_first_token */
	*out = NULL;
	if (i >= c->n_pairs || !c->pairs[i].slot.tokens)
		return 0;
	const db_pair *p = &c->pairs[i];
	const int64_t *whole = p->slot.side == 1 ? p->shape_ref : p->shape_tgt;
	int64_t n = whole[p->slot.dim];
	if (n < 1 || n > ((int64_t)1 << 20))
		return 0;
	double *v = malloc((size_t)n * sizeof *v);
	if (!v)
		return -1;
	for (int64_t r = 0; r < n; r++)
		v[r] = NAN;
	db_wctx w;
	if (db_wctx_init(&w, db_compare_files_needed(c)) != 0) {
		free(v);
		return -1;
	}
	for (size_t j = 0; j < c->n_pairs; j++) {
		const db_pair *q = &c->pairs[j];
		if (!siblings(p, q) || q->status != DB_ST_OK ||
		    atomic_load(&((db_pair *)q)->state) != DB_PAIR_DONE)
			continue;
		int nd;
		const int64_t *sh = cmp_shape(q, &nd);
		int64_t st = atomic_load(&((db_pair *)q)->slot.start);
		for (int64_t r = 0; r < q->slot.len && st + r < n; r++) {
			db_metrics m;
			if (row_metrics(c, &w, q, sh, nd, q->slot.sdim, r, &m) != 0) {
				db_wctx_free(&w);
				free(v);
				return -1;
			}
			v[st + r] = m.rel_l2;
		}
	}
	db_wctx_free(&w);
	*lo = atomic_load(&((db_pair *)p)->slot.start);
	*len = p->slot.len;
	*out = v;
	return n;
}
