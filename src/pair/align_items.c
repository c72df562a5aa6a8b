/* Token alignment, the pairing side: the whole pass's items copied once per
 * step pass (see align_items.h), and each pair holding a copy settled after
 * the join. Why copies and not a pass of their own: the join, the merging of
 * shards across layouts (TP 1 against TP 2) and every view downstream key
 * on the pass, so a copy under the step's pass name gets all of them
 * unchanged, and the step's pass stays what the time view shows. */
#include "align_items.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_priv.h"
#include "layout/meta_dims.h"
#include "util/strmap.h"

const db_align_vitem *db_align_vitem_of(const db_compare *c, const db_item *it)
{
	const db_align *a = c->align;
	if (!a || !a->n_v || !it)
		return NULL;
	const db_align_vitem *v = (const db_align_vitem *)(const void *)it;
	if (v < a->v || v >= a->v + a->n_v)
		return NULL;
	return v;
}

static const db_align_group *group_of(const db_align *a, const db_item *it)
{
	for (size_t g = 0; g < a->n_g; g++)
		if (it->f.phase == a->g[g].phase && it->f.pass == a->g[g].whole_pass)
			return &a->g[g];
	return NULL;
}

int db_align_items(db_compare *c, bool ref, const db_item ***items, size_t *n)
{
	db_align *a = c->align;
	if (!a || a->whole != (ref ? 1 : 2))
		return 0;
	size_t nv = 0, keep = 0;
	int64_t max_seq = 0;
	for (size_t i = 0; i < *n; i++) {
		const db_align_group *g = group_of(a, (*items)[i]);
		if (g)
			nv += g->n_steps;
		else
			keep++;
		if ((*items)[i]->seq > max_seq)
			max_seq = (*items)[i]->seq;
	}
	free(a->v);
	a->v = NULL;
	a->n_v = 0;
	if (!nv)
		return 0;
	a->v = calloc(nv, sizeof *a->v);
	const db_item **out = malloc((keep + nv + 1) * sizeof *out);
	if (!a->v || !out) {
		free(out);
		return -1;
	}
	size_t m = 0;
	for (size_t i = 0; i < *n; i++) {
		const db_item *it = (*items)[i];
		const db_align_group *g = group_of(a, it);
		if (!g) {
			out[m++] = it;
			continue;
		}
		for (size_t k = 0; k < g->n_steps; k++) {
			db_align_vitem *v = &a->v[a->n_v++];
			v->it = *it;
			v->it.f.pass = g->steps[k].pass;
			/* step k's copies after step k-1's: the order the stepping
			 * side ran them in */
			v->it.seq = (int64_t)k * (max_seq + 1) + it->seq;
			v->g = g;
			v->k = k;
		}
	}
	/* the copies after the items kept, so that the array of copies is
	 * filled in the order they are listed */
	for (size_t i = 0; i < a->n_v; i++)
		out[m++] = &a->v[i].it;
	free(*items);
	*items = out;
	*n = m;
	return 0;
}

static uint64_t numel_of(int nd, const int64_t *s)
{
	uint64_t k = 1;
	for (int i = 0; i < nd; i++)
		k *= (uint64_t)s[i];
	return k;
}

static void not_comparable(db_pair *p, const char *msg)
{
	p->status = DB_ST_NOT_COMPARABLE;
	p->band = DB_BAND_NONE;
	free(p->error);
	p->error = strdup(msg);
	db_metrics *m = &p->m;
	memset(m, 0, sizeof *m);
	m->cos = m->rel = m->rel_l2 = m->rel_diff = m->max_abs = m->mean_abs = NAN;
	m->byte_equal = NAN;
	m->argmax = -1;
	atomic_store(&p->state, DB_PAIR_DONE);
}

static void fmt_shape(int nd, const int64_t *s, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	o += (size_t)snprintf(buf + o, len - o, "[");
	for (int i = 0; i < nd && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "", (long long)s[i]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

/* Shapes a (na dims) and b (nb) with the size-1 axes of the one with more
 * dims dropped, first ones first, until both have as many: the kept axes'
 * indices into ra, rb; their count, -1 when that cannot make them equal in
 * rank. */
static int squeeze(const int64_t *a, int na, const int64_t *b, int nb, int *ra, int *rb)
{
	int drop_a = na > nb ? na - nb : 0, drop_b = nb > na ? nb - na : 0, n = 0, m = 0;
	for (int i = 0; i < na; i++)
		if (drop_a && a[i] == 1)
			drop_a--;
		else
			ra[n++] = i;
	for (int i = 0; i < nb; i++)
		if (drop_b && b[i] == 1)
			drop_b--;
		else
			rb[m++] = i;
	return drop_a || drop_b || n != m ? -1 : n;
}

/* The token dim the dump's own metadata names for it (meta dims "t ...",
 * {value, meta} payloads), read once per stage; -1 when none says. Where it
 * says, the tokens are aligned along that dim only. */
static int token_dim(const db_compare *c, const db_index *ix, const db_item *it, db_strmap *memo)
{
	if (!c->profile || !c->profile->value_key)
		return -1;
	size_t *v = db_strmap_get(memo, it->f.stage);
	if (v)
		return (int)*v - 1;
	char buf[256];
	int d = -1;
	char *path = db_index_path(ix, it);
	if (path && db_meta_dims_read(path, buf, sizeof buf, NULL) == 1)
		d = db_dims_token_dim(buf);
	free(path);
	db_strmap_put(memo, it->f.stage, (size_t)(d + 1), NULL);
	return d;
}

/* it is in a step pass of a group. */
static bool step_pass(const db_align *a, const db_item *it)
{
	for (size_t g = 0; g < a->n_g; g++)
		for (size_t k = 0; it->f.phase == a->g[g].phase && k < a->g[g].n_steps; k++)
			if (it->f.pass == a->g[g].steps[k].pass)
				return true;
	return false;
}

/* One pair whose whole side is a copy v, or (v NULL) missing. */
static void settle_one(db_pair *p, const db_align_vitem *v, int whole, int tdim)
{
	int nw = whole == 1 ? p->ndim_ref : p->ndim_tgt, ns = whole == 1 ? p->ndim_tgt : p->ndim_ref;
	const int64_t *sw = whole == 1 ? p->shape_ref : p->shape_tgt;
	const int64_t *ss = whole == 1 ? p->shape_tgt : p->shape_ref;
	const char *wn = whole == 1 ? "reference" : "target", *sn = whole == 1 ? "target" : "reference";
	char msg[320], a[96], b[96];
	if (p->status == DB_ST_ERROR || (p->merged && p->status == DB_ST_NOT_COMPARABLE))
		return;         /* unreadable, or a layout merging cannot undo: as paired */
	/* a tensor one side dumped and the other did not is listed, never a
	 * divergence: the two batchings dump differently (a forward hook writes
	 * a pass's top output with the next pass, which the one pass never has;
	 * a decode step has no prefill-only metadata) */
	if (!v || nw < 0 || ns < 0) {
		snprintf(msg, sizeof msg, "only the %s has it in the aligned passes", nw < 0 || !v ? sn : wn);
		not_comparable(p, msg);
		return;
	}
	const db_align_step *st = &v->g->steps[v->k];
	bool last = v->k + 1 == v->g->n_steps;
	/* the token dim: the one dim where the whole pass has all the tokens and
	 * this step its own; every other dim the same, once the side with more
	 * dims has its size-1 axes squeezed (a trainer's [t, 1, h] against an
	 * engine's [t, h]) */
	int rw[DB_MAX_DIMS], rs[DB_MAX_DIMS], n = squeeze(sw, nw, ss, ns, rw, rs);
	int d = -1;
	int64_t fold = 1;       /* rows per token: [T*H, d] from [T, H, d] */
	bool other = n < 0;
	for (int j = 0; j < n && !other; j++) {
		int64_t w = sw[rw[j]], s = ss[rs[j]];
		if (w == s)
			continue;
		int64_t m = w % v->g->n_tokens == 0 ? w / v->g->n_tokens : 0;
		if (d < 0 && m >= 1 && s == st->len * m && (tdim < 0 || rs[j] == tdim)) {
			d = j;
			fold = m;
		} else
			other = true;
	}
	fmt_shape(nw, sw, a, sizeof a);
	fmt_shape(ns, ss, b, sizeof b);
	if (!other && d >= 0 && db_dtype_comparable(p->dtype_ref) &&
	    db_dtype_comparable(p->dtype_tgt) &&
	    db_dtype_is_complex(p->dtype_ref) == db_dtype_is_complex(p->dtype_tgt)) {
		p->status = DB_ST_OK;
		p->band = DB_BAND_NONE;
		free(p->error);
		p->error = NULL;
		p->dtype_differs = p->dtype_ref != p->dtype_tgt;
		p->slot.side = whole;
		p->slot.dim = rw[d];
		p->slot.sdim = rs[d];
		/* folded: the token is the outer factor of the flattened dim (a
		 * reshape of [T, H, d]), so token t's rows are t*H .. t*H+H-1 */
		p->slot.len = st->len * fold;
		p->slot.given = true;
		p->slot.tokens = true;
		p->slot.k = -1;
		atomic_store(&p->slot.start, st->start * fold);
		p->numel = numel_of(ns, ss);
		atomic_store(&p->state, DB_PAIR_PENDING);
		return;
	}
	if (!other && d < 0) {
		/* the same shape in every pass: not per token (a state, a weight,
		 * the batch's metadata). The last step has seen every token, as
		 * the whole pass has: compared as it is; before it, the two hold
		 * different moments of the sequence. */
		if (last && v->g->exact)
			return;
		snprintf(msg, sizeof msg, "not per token (%s in every pass): the whole pass holds it "
		         "after token %lld, this pass after token %lld", a,
		         (long long)v->g->n_tokens - 1, (long long)(st->start + st->len - 1));
	} else
		snprintf(msg, sizeof msg, "not per token: %s (the whole %lld tokens) against %s "
		         "(this pass's %lld) differ %s", a, (long long)v->g->n_tokens, b,
		         (long long)st->len, n < 0 ? "in rank" : "outside one token dim");
	not_comparable(p, msg);
}

void db_align_settle(db_compare *c)
{
	db_align *a = c->align;
	if (!a || !a->n_v)
		return;
	db_strmap tdims;        /* stage -> its "t" dim + 1 on the stepping side (0: none) */
	db_strmap_init(&tdims);
	for (size_t i = 0; i < c->n_pairs; i++) {
		db_pair *p = &c->pairs[i];
		const db_align_vitem *v = db_align_vitem_of(c, a->whole == 1 ? p->ref : p->tgt);
		const db_item *s = a->whole == 1 ? p->tgt : p->ref;
		if (v)
			settle_one(p, v, a->whole, s ? token_dim(c, a->whole == 1 ? c->tgt : c->ref, s,
			                                         &tdims) : -1);
		else if (s && !(a->whole == 1 ? p->ref : p->tgt) && step_pass(a, s))
			settle_one(p, NULL, a->whole, -1);
	}
	db_strmap_free(&tdims);
}

void db_align_free(db_align *a)
{
	if (!a)
		return;
	for (size_t g = 0; g < a->n_g; g++)
		free(a->g[g].steps);
	free(a->g);
	free(a->v);
	free(a);
}
