/* --slots N REF TARGET: batch invariance against the prompt run alone (the
 * seed's Phase 8, second half). The reference ran the prompt by itself,
 * the target ran it N times in one batch, often after a warmup pass of
 * another shape. Pairing on the pass names would pair the warmup with the
 * prefill, so the passes are aligned from the data first: a target pass
 * goes with an alone pass when it holds N sequences of the alone pass's
 * length (seq_lens, else positions) and N times its token rows; the shift
 * that aligns the most passes wins (the smallest one on a tie). Then every
 * tensor of an aligned pass becomes N pairs, the alone run's tensor
 * against slot k's rows of the target's (slot k in the rank field, as
 * --slots in one tree), judged bitwise: the same prompt through the same
 * kernels owes the same bits in any slot. */
#include "db_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair/compare_priv.h"
#include "slots_priv.h"
#include "util/strmap.h"

/* One (phase, pass) of one side: what its dump says about its sequences. */
typedef struct desc {
	char phase[32], pass[32];
	const db_item *sl, *pos;        /* seq_lens, positions (first found) */
	int64_t rows;                   /* token rows of its first layer tensor */
	int64_t nseq, len;              /* sequences and their length when all are
	                                   equal (len -1: unequal); nseq -1 unknown */
	char what[104];                 /* "seq_lens [12]", "48 token rows" */
} desc;

typedef struct side {
	desc *d;
	size_t n;
	db_strmap at;                   /* "phase\x1fpass" -> index in d */
} side;

static void pp_key(const char *phase, const char *pass, char *k, size_t n)
{
	snprintf(k, n, "%s\x1f%s", phase, pass);
}

static int item_token_dim(const db_compare *c, const db_item *it)
{
	int d = c->profile ? db_profile_token_dim(c->profile, it->f.stage) : -1;
	return d >= 0 && d < it->ndim ? d : 0;
}

/* The (phase, pass) groups of one side, from the pairs' items (so --filter
 * holds) and the index's batch fields (seq_lens may be filtered out). */
static int list_side(const db_compare *c, const db_index *ix, bool ref, side *s)
{
	db_strmap_init(&s->at);
	s->d = NULL;
	s->n = 0;
	size_t cap = 0;
	for (size_t pass_two = 0; pass_two < 2; pass_two++) {
		size_t n = pass_two ? ix->n_items : c->n_pairs;
		for (size_t i = 0; i < n; i++) {
			const db_item *it;
			if (pass_two)
				it = &ix->items[i];
			else {
				const db_pair *p = &c->pairs[i];
				it = p->merged ? NULL : ref ? p->ref : p->tgt;
			}
			if (!it)
				continue;
			char k[80];
			pp_key(it->f.phase, it->f.pass, k, sizeof k);
			size_t *v = db_strmap_get(&s->at, k);
			if (!v && pass_two)
				continue;       /* a pass the filter left without tensors */
			if (!v) {
				if (s->n == cap) {
					cap = cap ? cap * 2 : 16;
					desc *nd = realloc(s->d, cap * sizeof *nd);
					if (!nd)
						return -1;
					s->d = nd;
				}
				desc *d = &s->d[s->n];
				memset(d, 0, sizeof *d);
				snprintf(d->phase, sizeof d->phase, "%s", it->f.phase);
				snprintf(d->pass, sizeof d->pass, "%s", it->f.pass);
				d->rows = d->nseq = -1;
				if (!(v = db_strmap_put(&s->at, k, s->n++, NULL)))
					return -1;
			}
			desc *d = &s->d[*v];
			if (!d->sl && db_slots_named(it->f.stage, "seq_lens"))
				d->sl = it;
			else if (!d->pos && db_slots_named(it->f.stage, "positions"))
				d->pos = it;
			else if (d->rows < 0 && !pass_two && it->f.layer >= 0 && it->ndim >= 1 &&
			         !db_slots_is_int(it->dtype))
				d->rows = it->shape[item_token_dim(c, it)];
		}
	}
	return 0;
}

/* nseq and len of d from its seq_lens, else its positions. */
static void read_seqs(const db_index *ix, desc *d)
{
	int64_t *v = NULL, m;
	char l[88];
	if (d->sl && (m = db_slots_load_ints(ix, d->sl, &v)) > 0) {
		d->nseq = m;
		d->len = v[0];
		for (int64_t i = 1; i < m; i++)
			if (v[i] != v[0])
				d->len = -1;
		db_slots_list_ints(l, sizeof l, v, m);
		snprintf(d->what, sizeof d->what, "seq_lens %s", l);
		free(v);
		return;
	}
	free(v);
	v = NULL;
	if (d->pos && (m = db_slots_load_ints(ix, d->pos, &v)) > 0) {
		/* a sequence starts where the position does not grow */
		int64_t nseq = 0, start = 0;
		d->len = -2;
		for (int64_t i = 1; i <= m; i++)
			if (i == m || v[i] <= v[i - 1]) {
				d->len = d->len == -2 || d->len == i - start ? i - start : -1;
				nseq++;
				start = i;
			}
		d->nseq = nseq;
		db_slots_list_ints(l, sizeof l, v, m);
		snprintf(d->what, sizeof d->what, "positions %s", l);
	} else if (d->rows >= 0)
		snprintf(d->what, sizeof d->what, "%lld token rows", (long long)d->rows);
	else
		snprintf(d->what, sizeof d->what, "no tensor with token rows");
	free(v);
}

/* Target pass t holds n copies of alone pass a. */
static bool holds(const desc *a, const desc *t, int n)
{
	if (a->nseq >= 0 && t->nseq >= 0) {
		if (a->nseq != 1 || t->nseq != n || t->len < 0 || t->len != a->len)
			return false;
	}
	if (a->rows >= 0 && t->rows >= 0 && t->rows != (int64_t)n * a->rows)
		return false;
	return a->rows >= 0 || (a->nseq >= 0 && t->nseq >= 0);
}

static void free_side(side *s)
{
	free(s->d);
	db_strmap_free(&s->at);
}

/* The shift of target passes against alone passes (target index = alone
 * index + shift) that lines up the most of them holding n copies (*cnt),
 * the forward one first on a tie (a warmup precedes). */
static long best_shift(const side *a, const side *t, const size_t *ai, size_t na,
                       const size_t *ti, size_t nt, int n, size_t *cnt)
{
	long best = 0;
	*cnt = 0;
	for (long m = 0; m < (long)(na + nt); m++)
		for (int sgn = 1; sgn >= -1; sgn -= 2) {
			long sh = sgn * m;
			if (!m && sgn < 0)
				continue;
			size_t k = 0;
			for (size_t x = 0; x < na; x++) {
				long y = (long)x + sh;
				k += y >= 0 && y < (long)nt && holds(&a->d[ai[x]], &t->d[ti[y]], n);
			}
			if (k > *cnt) {
				*cnt = k;
				best = sh;
			}
		}
	return best;
}

static const char *pass_name(const void *s, size_t i)
{
	return ((const side *)s)->d[i].pass;
}

/* Indices of s's groups of phase, in pass order, into out; their count. */
static size_t phase_passes(const side *s, const char *phase, size_t *out)
{
	size_t m = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->d[i].phase, phase))
			out[m++] = i;
	db_sort_passes(out, m, pass_name, s);
	return m;
}

static int one_rank(const db_compare *c, bool ref, db_err *err)
{
	int rank = -1;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_item *it = ref ? c->pairs[i].ref : c->pairs[i].tgt;
		if (!it || c->pairs[i].merged || it->f.rank < 0)
			continue;
		if (rank >= 0 && it->f.rank != rank)
			return db_err_set(err, NULL, NULL, -1, "--slots: the %s tree has several ranks "
			                  "(%d and %d); slot k takes the rank's place: give one rank's "
			                  "folder", ref ? "reference" : "target", rank, it->f.rank);
		rank = it->f.rank;
	}
	return 0;
}

/* The key an item is found by across the two trees: its fields at pass,
 * without side and rank. */
static void cross_key(const db_item *it, const char *pass, int occ, char *k, size_t n)
{
	db_ifields f = it->f;
	f.side = "";
	f.rank = -1;
	f.pass = pass;          /* only read, for the key */
	db_pair_fields_key(&f, occ, k, n);
}

/* The n pairs of target tensor p against alone tensor r, or 0 when the
 * shapes are not n copies along the token dim. */
static size_t split_alone(const db_compare *c, const db_pair *p, const db_item *r, int n,
                          db_pair *out)
{
	const db_item *t = p->tgt;
	if (t->err || r->err || t->ndim < 1 || t->ndim != r->ndim || db_slots_is_int(t->dtype) ||
	    !db_dtype_comparable(t->dtype) || !db_dtype_comparable(r->dtype) ||
	    db_dtype_is_complex(t->dtype) != db_dtype_is_complex(r->dtype))
		return 0;
	int d = item_token_dim(c, t);
	for (int i = 0; i < t->ndim; i++)
		if (i != d && t->shape[i] != r->shape[i])
			return 0;
	int64_t l = r->shape[d];
	if (l < 1 || t->shape[d] != (int64_t)n * l)
		return 0;
	uint64_t numel = 1;
	for (int i = 0; i < r->ndim; i++)
		numel *= (uint64_t)r->shape[i];
	for (int k = 0; k < n; k++) {
		db_pair *q = &out[k];
		memset(q, 0, sizeof *q);
		q->f = p->f;
		q->f.rank = k;
		q->occurrence = p->occurrence;
		q->ref = r;
		q->tgt = t;
		q->seq = p->seq;
		q->status = DB_ST_OK;
		q->ndim_ref = q->ndim_tgt = r->ndim;
		memcpy(q->shape_ref, r->shape, sizeof q->shape_ref);
		memcpy(q->shape_tgt, r->shape, sizeof q->shape_tgt);
		q->dtype_ref = r->dtype;
		q->dtype_tgt = t->dtype;
		q->dtype_differs = r->dtype != t->dtype;
		q->numel = numel;
		q->slot.side = DB_SLOT_IN_TREE;
		q->slot.alone = true;
		q->slot.dim = d;
		q->slot.len = l;
		q->slot.k = k;
		q->slot.ref_start = 0;
		atomic_init(&q->slot.start, (int64_t)k * l);
		atomic_init(&q->state, DB_PAIR_PENDING);
	}
	return (size_t)n;
}

/* The first passes of each phase are enough to see a warmup's shift: a
 * tree of thousands of decode steps is not read pass by pass to decide. */
#define FIND_PASSES 8

int db_slots_alone_find(db_compare *c)
{
	db_err e = {{0}};
	if (one_rank(c, true, &e) || one_rank(c, false, &e))
		return 0;
	side a = {0}, t = {0};
	db_strmap_init(&a.at);
	db_strmap_init(&t.at);
	int n = 0;
	bool moved = false;
	size_t *ai = NULL, *ti = NULL;
	if (list_side(c, c->ref, true, &a) || list_side(c, c->tgt, false, &t) ||
	    !(ai = malloc((a.n + 1) * sizeof *ai)) || !(ti = malloc((t.n + 1) * sizeof *ti)))
		goto out;
	char done[8][32];       /* phases tried (a tree has a few) */
	size_t n_done = 0;
	for (size_t g = 0; g < t.n && !moved && n_done < 8; g++) {
		bool first = true;      /* each phase once: at its first group */
		for (size_t h = 0; h < n_done && first; h++)
			first = strcmp(done[h], t.d[g].phase) != 0;
		if (!first)
			continue;
		snprintf(done[n_done++], sizeof done[0], "%s", t.d[g].phase);
		size_t na = phase_passes(&a, t.d[g].phase, ai), nt = phase_passes(&t, t.d[g].phase, ti);
		na = na < FIND_PASSES ? na : FIND_PASSES;
		nt = nt < FIND_PASSES ? nt : FIND_PASSES;
		for (size_t x = 0; x < na; x++) {
			read_seqs(c->ref, &a.d[ai[x]]);
			if (a.d[ai[x]].nseq != 1)
				goto none;      /* the reference is not one prompt alone */
		}
		for (size_t y = 0; y < nt; y++) {
			const desc *d = &t.d[ti[y]];
			read_seqs(c->tgt, &t.d[ti[y]]);
			if (d->nseq >= 2 && d->len > 0) {
				if (n && d->nseq != n)
					goto none;      /* batches of other sizes */
				n = (int)d->nseq;
			}
		}
		if (!n)
			continue;
		size_t cnt, at0 = 0;
		long sh = best_shift(&a, &t, ai, na, ti, nt, n, &cnt);
		for (size_t x = 0; x < na && x < nt; x++)
			at0 += holds(&a.d[ai[x]], &t.d[ti[x]], n);
		moved = cnt && sh != 0 && cnt > at0;
	}
	if (!moved)
none:
		n = 0;
out:
	free(ai);
	free(ti);
	free_side(&a);
	free_side(&t);
	return n;
}

int db_slots_alone(db_compare *c, int n, db_err *err)
{
	free(c->slot_passes);
	c->slot_passes = NULL;
	c->n_slot_passes = 0;
	c->n_slots = n;
	c->slots_alone = true;
	c->slots_align[0] = 0;
	if (one_rank(c, true, err) || one_rank(c, false, err))
		return -1;
	side a, t;      /* the alone run, the batch run */
	if (list_side(c, c->ref, true, &a) || list_side(c, c->tgt, false, &t)) {
		free_side(&a);
		free_side(&t);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	for (size_t i = 0; i < a.n; i++)
		read_seqs(c->ref, &a.d[i]);
	for (size_t i = 0; i < t.n; i++)
		read_seqs(c->tgt, &t.d[i]);
	/* per target group: the alone group it goes with (-1 none) */
	long *with = malloc((t.n + 1) * sizeof *with);
	size_t *ai = malloc((a.n + 1) * sizeof *ai), *ti = malloc((t.n + 1) * sizeof *ti);
	bool *a_used = calloc(a.n + 1, sizeof *a_used);
	c->slot_passes = calloc(t.n + a.n + 1, sizeof *c->slot_passes);
	db_pair *np = NULL;
	db_strmap rk;
	db_strmap_init(&rk);
	int rc = -1;
	if (!with || !ai || !ti || !a_used || !c->slot_passes)
		goto oom;
	for (size_t i = 0; i < t.n; i++)
		with[i] = -1;
	bool any = false;
	for (size_t g = 0; g < t.n; g++) {
		/* each phase once: at its first group */
		bool first = true;
		for (size_t h = 0; h < g && first; h++)
			first = strcmp(t.d[h].phase, t.d[g].phase) != 0;
		if (!first)
			continue;
		size_t na = phase_passes(&a, t.d[g].phase, ai), nt = phase_passes(&t, t.d[g].phase, ti);
		size_t best_n;
		long best = best_shift(&a, &t, ai, na, ti, nt, n, &best_n);
		if (!best_n)
			continue;
		any = true;
		for (size_t x = 0; x < na; x++) {
			long y = (long)x + best;
			if (y >= 0 && y < (long)nt && holds(&a.d[ai[x]], &t.d[ti[y]], n)) {
				with[ti[y]] = (long)ai[x];
				a_used[ai[x]] = true;
			}
		}
		if (!c->slots_align[0] && na && nt) {
			long y0 = best >= 0 ? best : 0, x0 = best >= 0 ? 0 : -best;
			snprintf(c->slots_align, sizeof c->slots_align, "alone pass %s = batch pass %s "
			         "(shift %+ld, from the data)", a.d[ai[x0]].pass,
			         y0 < (long)nt ? t.d[ti[y0]].pass : "?", best);
		}
	}
	if (!any) {
		char wa[192] = "", wt[192] = "";
		if (a.n)
			snprintf(wa, sizeof wa, "; alone pass %s: %s", a.d[0].pass, a.d[0].what);
		if (t.n)
			snprintf(wt, sizeof wt, "; batch pass %s: %s", t.d[t.n > 1].pass,
			         t.d[t.n > 1].what);
		db_err_set(err, NULL, NULL, -1, "--slots %d: no pass of the target holds %d copies of "
		           "a pass of the reference (the prompt alone)%s%s", n, n, wa, wt);
		goto out;
	}
	/* the slot passes: the target's, in order, then alone passes left over */
	for (size_t g = 0; g < t.n; g++) {
		db_slot_pass *sp = &c->slot_passes[c->n_slot_passes++];
		snprintf(sp->phase, sizeof sp->phase, "%s", t.d[g].phase);
		snprintf(sp->pass, sizeof sp->pass, "%s", t.d[g].pass);
		if (with[g] >= 0) {
			const desc *x = &a.d[with[g]];
			snprintf(sp->ref_pass, sizeof sp->ref_pass, "%s", x->pass);
			snprintf(sp->why, sizeof sp->why, "%s: %d copies of alone pass %s (%s)",
			         t.d[g].what, n, x->pass, x->what);
		} else
			snprintf(sp->why, sizeof sp->why, "%s: no pass of the alone run goes with it "
			         "(a warmup, or another batch)", t.d[g].what);
	}
	for (size_t i = 0; i < a.n; i++)
		if (!a_used[i]) {
			db_slot_pass *sp = &c->slot_passes[c->n_slot_passes++];
			snprintf(sp->phase, sizeof sp->phase, "%s", a.d[i].phase);
			snprintf(sp->ref_pass, sizeof sp->ref_pass, "%s", a.d[i].pass);
			snprintf(sp->why, sizeof sp->why, "alone pass %s (%s): no batch pass of the "
			         "target holds it %d times", a.d[i].pass, a.d[i].what, n);
		}
	/* the alone run's tensors by fields (pass, without rank) */
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		char k[620];
		if (p->merged || !p->ref)
			continue;
		cross_key(p->ref, p->ref->f.pass, p->occurrence, k, sizeof k);
		if (!db_strmap_put(&rk, k, i, NULL))
			goto oom;
	}
	size_t cap = 0;
	for (size_t i = 0; i < c->n_pairs; i++)
		cap += !c->pairs[i].merged && c->pairs[i].tgt ? (size_t)n : 0;
	if (!(np = calloc(cap + 1, sizeof *np)))
		goto oom;
	size_t k = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->merged || !p->tgt)
			continue;
		char key[620];
		pp_key(p->tgt->f.phase, p->tgt->f.pass, key, sizeof key);
		size_t *g = db_strmap_get(&t.at, key);
		if (!g || with[*g] < 0)
			continue;
		db_slot_pass *sp = &c->slot_passes[*g];
		cross_key(p->tgt, a.d[with[*g]].pass, p->occurrence, key, sizeof key);
		size_t *r = db_strmap_get(&rk, key);
		size_t m = r ? split_alone(c, p, c->pairs[*r].ref, n, np + k) : 0;
		sp->n_pairs += m;
		sp->n_left += !m;
		sp->used = true;
		k += m;
	}
	for (size_t i = 0; i < c->n_pairs; i++) {
		free(c->pairs[i].error);
		free(c->pairs[i].ref_shards);
		free(c->pairs[i].tgt_shards);
	}
	free(c->pairs);
	c->pairs = np;
	np = NULL;
	c->n_pairs = k;
	c->pairs_gen = db_next_pairs_gen();
	atomic_store(&c->n_done, 0);
	rc = 0;
	if (!k)
		rc = db_err_set(err, NULL, NULL, -1, "--slots %d: the passes align (%s) but no tensor "
		                "of the target holds %d copies of the alone run's", n, c->slots_align, n);
	goto out;
oom:
	rc = db_err_set(err, NULL, NULL, -1, "out of memory");
out:
	free(np);
	free(with);
	free(ai);
	free(ti);
	free(a_used);
	db_strmap_free(&rk);
	free_side(&a);
	free_side(&t);
	return rc;
}
