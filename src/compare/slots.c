/* --slots N: slot invariance inside one tree (the seed's Phase 8, ATOM's
 * `compare slot-invariance --n-slots N`). The batch holds the same prompt
 * N times; every tensor with the batch's token rows becomes N-1 pairs of
 * its own, slot 0's rows (reference side) against slot k's (target side),
 * so the grid, bisect, JSON and views need nothing new. Slot k is also the
 * pair's rank field: the rank selector and the per-rank views show slots;
 * in a tree of several ranks the slots of each rank are compared within
 * that rank's tensors, the rank field then rank * N + k (db_slot.ranked).
 *
 * Where the slots are, per pass: the dump's seq_lens (N equal lengths:
 * slot k = rows k*len.., or row k when the tensor has one row per
 * sequence, a decode), else its positions (a sequence starts where the
 * position does not grow), else N equal blocks of the passes ATOM's
 * pick_prefill_call chooses (n_tok % N == 0, n_tok > N, not a power of two
 * when one is not, the earliest) and the decodes of N rows. A pass that is
 * not such a batch (a warmup of another shape) is skipped, and says why. */
#include "db_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_reader.h"
#include "pair/compare_priv.h"
#include "slots_priv.h"

bool db_slots_is_int(db_dtype d)
{
	return (d >= DB_DT_I8 && d <= DB_DT_U64) || d == DB_DT_BOOL;
}

/* Batch bookkeeping the dumpers write beside the model's tensors: the
 * names are SGLang's ForwardBatch fields (not a model's modules). */
bool db_slots_named(const char *stage, const char *field)
{
	size_t n = strlen(stage), m = strlen(field);
	return n >= m && !strcmp(stage + n - m, field) &&
	       (n == m || stage[n - m - 1] == '.' || stage[n - m - 1] == '_');
}

/* The 1-D integer tensor of it into *v (malloc'd); its length, or -1
 * when unreadable or not such a tensor. */
int64_t db_slots_load_ints(const db_index *ix, const db_item *it, int64_t **v)
{
	*v = NULL;
	if (!it || it->err || it->ndim != 1 || !db_slots_is_int(it->dtype))
		return -1;
	char *path = db_index_path(ix, it);
	db_file *f = NULL;
	db_err err = {{0}};
	int64_t n = -1;
	if (path && db_file_open(path, &f, &err) == 0) {
		const db_entry *en = db_file_find(f, it->key);
		double *d = en && !en->err && en->t.ndim == 1 && en->t.data
		            ? malloc((size_t)(en->t.shape[0] + 1) * sizeof *d) : NULL;
		/* read under db_tensor_to_f64's guard: a file that shrinks is no
		 * ids, not a SIGBUS (issue 37) */
		if (d && (*v = malloc((size_t)(en->t.shape[0] + 1) * sizeof **v)) &&
		    db_tensor_to_f64(&en->t, d, en->t.shape[0], NULL) == 0) {
			n = en->t.shape[0];
			for (int64_t i = 0; i < n; i++)
				(*v)[i] = (int64_t)d[i];
		} else {
			free(*v);
			*v = NULL;
		}
		free(d);
		db_file_close(f);
	}
	free(path);
	return n;
}

void db_slots_list_ints(char *buf, size_t cap, const int64_t *v, int64_t n)
{
	size_t k = (size_t)snprintf(buf, cap, "[");
	for (int64_t i = 0; i < n && k < cap; i++) {
		if (i == 6 && n > 8) {
			k += (size_t)snprintf(buf + k, cap - k, ", ... (%lld)", (long long)n);
			break;
		}
		k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)v[i]);
	}
	if (k < cap)
		snprintf(buf + k, cap - k, "]");
}

/* One (phase, pass): its pairs [b, e) and where its slots are. */
typedef struct grp {
	size_t b, e;
	int64_t len;            /* rows per slot; 0: skipped */
	int64_t ntok;           /* the pass's token rows (fallback rule) */
	db_slot_pass *sp;
} grp;

int db_slots_token_dim(const db_compare *c, const db_pair *p)
{
	int d = c->profile ? db_profile_token_dim(c->profile, p->f.stage) : -1;
	return d >= 0 && d < p->ndim_ref ? d : 0;
}

/* From seq_lens or positions; false when neither is dumped. */
static bool from_dump(const db_compare *c, grp *g, int n)
{
	const db_pair *sl = NULL, *pos = NULL;
	for (size_t i = g->b; i < g->e; i++) {
		const db_pair *p = &c->pairs[i];
		if (strcmp(p->f.phase, g->sp->phase) || strcmp(p->f.pass, g->sp->pass))
			continue;
		if (!sl && db_slots_named(p->f.stage, "seq_lens") && p->ref)
			sl = p;
		if (!pos && db_slots_named(p->f.stage, "positions") && p->ref)
			pos = p;
	}
	char l[96];
	int64_t m, *v = NULL;
	char *why = g->sp->why;
	size_t wn = sizeof g->sp->why;
	if (sl && (m = db_slots_load_ints(c->ref, sl->ref, &v)) >= 0) {
		db_slots_list_ints(l, sizeof l, v, m);
		bool equal = m > 0;
		for (int64_t i = 1; i < m; i++)
			equal &= v[i] == v[0];
		if (m != n)
			snprintf(why, wn, "seq_lens %s: %lld sequence%s, not %d", l, (long long)m,
			         m == 1 ? "" : "s", n);
		else if (!equal || v[0] < 1)
			snprintf(why, wn, "seq_lens %s: not %d equal prompts", l, n);
		else {
			g->len = v[0];
			snprintf(why, wn, "seq_lens %s: %d equal sequences", l, n);
		}
		free(v);
		return true;
	}
	free(v);
	v = NULL;
	if (pos && (m = db_slots_load_ints(c->ref, pos->ref, &v)) >= 0) {
		/* a sequence starts where the position does not grow */
		int64_t nseq = 0, first = -1, start = 0;
		bool equal = true;
		for (int64_t i = 1; i <= m; i++)
			if (i == m || v[i] <= v[i - 1]) {
				if (first < 0)
					first = i - start;
				equal &= i - start == first;
				nseq++;
				start = i;
			}
		db_slots_list_ints(l, sizeof l, v, m);
		if (nseq != n)
			snprintf(why, wn, "positions %s: %lld sequence%s, not %d", l, (long long)nseq,
			         nseq == 1 ? "" : "s", n);
		else if (!equal)
			snprintf(why, wn, "positions %s: not %d equal prompts", l, n);
		else {
			g->len = first;
			snprintf(why, wn, "positions %s: %d equal sequences", l, n);
		}
		free(v);
		return true;
	}
	free(v);
	return false;
}

static bool pow2(int64_t x)
{
	return x > 0 && !(x & (x - 1));
}

/* Nothing dumped says where the sequences are: ATOM's rule over the
 * passes of one phase (gs[0..ng) in pass order). */
static void pick_prefill(const db_compare *c, grp *gs, size_t ng, int n)
{
	for (size_t i = 0; i < ng; i++) {
		gs[i].ntok = -1;
		for (size_t j = gs[i].b; j < gs[i].e && gs[i].ntok < 0; j++) {
			const db_pair *p = &c->pairs[j];
			if (p->f.layer >= 0 && p->ndim_ref >= 1 && !p->merged)
				gs[i].ntok = p->shape_ref[db_slots_token_dim(c, p)];
		}
	}
	long best = -1;
	for (size_t i = 0; i < ng; i++) {
		int64_t t = gs[i].ntok;
		if (t > n && t % n == 0 && (best < 0 || (pow2(gs[best].ntok) && !pow2(t))))
			best = (long)i;
	}
	for (size_t i = 0; i < ng; i++) {
		int64_t t = gs[i].ntok;
		if (t == n) {
			gs[i].len = 1;
			snprintf(gs[i].sp->why, sizeof gs[i].sp->why, "%lld token rows: a decode of %d "
			         "sequences (row k)", (long long)t, n);
		} else if ((long)i == best) {
			gs[i].len = t / n;
			snprintf(gs[i].sp->why, sizeof gs[i].sp->why, "%lld token rows: %d equal blocks "
			         "(ATOM's pick_prefill_call: nothing dumped names the sequences)",
			         (long long)t, n);
		} else {
			snprintf(gs[i].sp->why, sizeof gs[i].sp->why, "%lld token rows: not the batch "
			         "(ATOM's pick_prefill_call%s%s)", (long long)t, best >= 0 ? " chose pass " : "",
			         best >= 0 ? gs[best].sp->pass : "");
		}
	}
}

/* The slot pairs of one tensor's pair p into out (n-1 of them), or 0 when
 * p has no token rows of the batch. */
static size_t split_pair(const db_compare *c, const db_pair *p, int n, int64_t len,
                         bool ranked, db_pair *out)
{
	if (p->merged || p->status != DB_ST_OK || !p->ref || !p->tgt || p->ndim_ref < 1 ||
	    db_slots_is_int(p->dtype_ref) || !db_dtype_comparable(p->dtype_ref))
		return 0;
	int d = db_slots_token_dim(c, p);
	int64_t rows = p->shape_ref[d], l;
	if (rows == (int64_t)n * len)
		l = len;
	else if (rows == n)     /* one row per sequence: a decode */
		l = 1;
	else
		return 0;
	for (int k = 1; k < n; k++) {
		db_pair *q = &out[k - 1];
		*q = *p;
		q->error = NULL;
		q->ref_shards = q->tgt_shards = NULL;
		q->f.rank = ranked && p->f.rank >= 0 ? p->f.rank * n + k : k;
		q->slot.ranked = ranked && p->f.rank >= 0;
		q->slot.rank = q->slot.ranked ? p->f.rank : -1;
		q->shape_ref[d] = q->shape_tgt[d] = l;
		q->numel = p->numel / (uint64_t)n;
		q->slot.side = DB_SLOT_IN_TREE;
		q->slot.dim = d;
		q->slot.len = l;
		q->slot.k = k;
		q->slot.ref_start = 0;
		q->slot.given = false;
		atomic_init(&q->slot.start, (int64_t)k * l);
		atomic_init(&q->state, DB_PAIR_PENDING);
	}
	return (size_t)n - 1;
}

int db_slots_split(db_compare *c, int n, db_err *err)
{
	free(c->slot_passes);
	c->slot_passes = NULL;
	c->n_slot_passes = 0;
	c->n_slots = n;
	/* several ranks (TP): slots are compared within each rank's tensors,
	 * one rank field per rank x slot (issue 33) */
	int rank = -1;
	bool ranked = false;
	for (size_t i = 0; i < c->n_pairs && !ranked; i++) {
		const db_pair *p = &c->pairs[i];
		ranked = p->f.rank >= 0 && rank >= 0 && p->f.rank != rank;
		if (p->f.rank >= 0)
			rank = p->f.rank;
	}
	/* the (phase, pass) groups, in the order they first appear */
	grp *gs = calloc(c->n_pairs + 1, sizeof *gs);
	size_t ng = 0;
	size_t *gi = malloc((c->n_pairs + 1) * sizeof *gi);
	if (!gs || !gi)
		goto oom;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		size_t g = 0;
		while (g < ng && (strcmp(c->pairs[gi[g]].f.phase, p->f.phase) ||
		                  strcmp(c->pairs[gi[g]].f.pass, p->f.pass)))
			g++;
		if (g == ng)
			gi[ng++] = i;
	}
	c->slot_passes = calloc(ng + 1, sizeof *c->slot_passes);
	if (!c->slot_passes)
		goto oom;
	c->n_slot_passes = ng;
	for (size_t g = 0; g < ng; g++) {
		db_slot_pass *sp = &c->slot_passes[g];
		const db_pair *p = &c->pairs[gi[g]];
		snprintf(sp->phase, sizeof sp->phase, "%s", p->f.phase);
		snprintf(sp->pass, sizeof sp->pass, "%s", p->f.pass);
		gs[g].sp = sp;
	}
	/* pairs of a pass are not contiguous (model-level stages of another
	 * pass can sit between): a group's range is found per pair below; the
	 * dump's seq_lens / positions decide where they are dumped */
	size_t *gof = malloc((c->n_pairs + 1) * sizeof *gof);
	if (!gof)
		goto oom;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		for (size_t g = 0; g < ng; g++)
			if (!strcmp(gs[g].sp->phase, p->f.phase) && !strcmp(gs[g].sp->pass, p->f.pass)) {
				gof[i] = g;
				break;
			}
	}
	bool any_fallback = false;
	for (size_t g = 0; g < ng; g++) {
		/* the group's pairs as one range: [first, last] */
		gs[g].b = c->n_pairs;
		for (size_t i = 0; i < c->n_pairs; i++)
			if (gof[i] == g) {
				if (gs[g].b == c->n_pairs)
					gs[g].b = i;
				gs[g].e = i + 1;
			}
		if (!from_dump(c, &gs[g], n))
			any_fallback = true;
	}
	if (any_fallback) {
		/* per phase: the passes whose dump named nothing */
		grp *sub = malloc((ng + 1) * sizeof *sub);
		size_t *map = malloc((ng + 1) * sizeof *map);
		bool *seen = calloc(ng + 1, sizeof *seen);
		if (!sub || !map || !seen) {
			free(sub);
			free(map);
			free(seen);
			free(gof);
			goto oom;
		}
		for (size_t g = 0; g < ng; g++) {
			if (seen[g] || gs[g].sp->why[0])
				continue;
			size_t m = 0;
			for (size_t h = g; h < ng; h++)
				if (!seen[h] && !gs[h].sp->why[0] && !strcmp(gs[h].sp->phase, gs[g].sp->phase)) {
					seen[h] = true;
					map[m] = h;
					sub[m++] = gs[h];
				}
			/* pass order: numeric where the names are */
			for (size_t a = 1; a < m; a++)
				for (size_t b = a; b > 0 && db_profile_pass_cmp(sub[b - 1].sp->pass,
				                                                sub[b].sp->pass) > 0; b--) {
					grp t = sub[b];
					sub[b] = sub[b - 1];
					sub[b - 1] = t;
					size_t u = map[b];
					map[b] = map[b - 1];
					map[b - 1] = u;
				}
			pick_prefill(c, sub, m, n);
			for (size_t a = 0; a < m; a++)
				gs[map[a]].len = sub[a].len;
		}
		free(sub);
		free(map);
		free(seen);
	}
	/* the new pairs: n-1 per tensor of a batch pass */
	size_t cap = 0;
	for (size_t i = 0; i < c->n_pairs; i++)
		cap += gs[gof[i]].len > 0 ? (size_t)n - 1 : 0;
	db_pair *np = calloc(cap + 1, sizeof *np);
	if (!np) {
		free(gof);
		goto oom;
	}
	size_t k = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		grp *g = &gs[gof[i]];
		if (g->len <= 0)
			continue;
		size_t m = split_pair(c, &c->pairs[i], n, g->len, ranked, np + k);
		g->sp->n_pairs += m;
		g->sp->n_left += !m;
		g->sp->used = true;
		k += m;
	}
	free(gof);
	free(gs);
	free(gi);
	for (size_t i = 0; i < c->n_pairs; i++) {
		free(c->pairs[i].error);
		free(c->pairs[i].ref_shards);
		free(c->pairs[i].tgt_shards);
	}
	free(c->pairs);
	c->pairs = np;
	c->n_pairs = k;
	c->pairs_gen = db_next_pairs_gen();
	atomic_store(&c->n_done, 0);
	if (!k) {
		char why[600];
		size_t w = 0;
		for (size_t g = 0; g < c->n_slot_passes && g < 3 && w < sizeof why; g++)
			w += (size_t)snprintf(why + w, sizeof why - w, "; pass %s: %s",
			                      c->slot_passes[g].pass, c->slot_passes[g].why);
		return db_err_set(err, NULL, NULL, -1, "--slots %d: no pass of the tree is a batch "
		                  "of %d equal prompts%s", n, n, w ? why : "");
	}
	return 0;
oom:
	free(gs);
	free(gi);
	return db_err_set(err, NULL, NULL, -1, "out of memory");
}

typedef struct pass_ix {
	const char *pass;
	size_t i;
} pass_ix;

static int pass_ix_cmp(const void *a, const void *b)
{
	const pass_ix *x = a, *y = b;
	int r = db_profile_pass_cmp(x->pass, y->pass);
	return r ? r : (x->i > y->i) - (x->i < y->i);
}

void db_sort_passes(size_t *idx, size_t n, const char *(*pass)(const void *ctx, size_t i),
                    const void *ctx)
{
	pass_ix *v = n > 1 ? malloc(n * sizeof *v) : NULL;
	if (!v)
		return;         /* one (or, out of memory, left in listing order) */
	for (size_t k = 0; k < n; k++)
		v[k] = (pass_ix){pass(ctx, idx[k]), idx[k]};
	qsort(v, n, sizeof *v, pass_ix_cmp);
	for (size_t k = 0; k < n; k++)
		idx[k] = v[k].i;
	free(v);
}
