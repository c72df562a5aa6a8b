/* Pairing across ranks: merged pairs that put a sharded stage's shards back
 * together (profile shard rules, SGLang v2 meta dims, Megatron sequence
 * parallel), and the cells whose two sides have different parallel layouts
 * (replicated stages paired rank by rank; partial sums and fused outputs
 * never judged alone). Called by db_build_pairs (compare.c). */
#include "compare_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/index_priv.h"
#include "layout/meta_dims.h"

/* Cell groups: the same cell on every rank, both sides. */
typedef struct group {
	const db_item **ref, **tgt;
	size_t n_ref, n_tgt, cap_ref, cap_tgt;
	int64_t max_ref_seq;
	const db_shard_rule *rule;      /* the profile's, or NULL */
} group;

static int group_push(const db_item ***arr, size_t *n, size_t *cap, const db_item *it)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 4;
		const db_item **a = realloc(*arr, c * sizeof *a);
		if (!a)
			return -1;
		*arr = a;
		*cap = c;
	}
	(*arr)[(*n)++] = it;
	return 0;
}

static int cmp_rank(const void *a, const void *b)
{
	const db_item *x = *(const db_item *const *)a, *y = *(const db_item *const *)b;
	return (x->f.rank > y->f.rank) - (x->f.rank < y->f.rank);
}

/* Ranks are small distinct ints: put each item at its rank (O(k), where
 * sorting 64 ranks of every cell was 7 % of a 100k reopen). False when
 * they are not distinct and dense enough; then sort. */
static bool place_by_rank(const db_item **v, size_t k)
{
	int lo = v[0]->f.rank, hi = lo;
	for (size_t i = 1; i < k; i++) {
		int r = v[i]->f.rank;
		lo = r < lo ? r : lo;
		hi = r > hi ? r : hi;
	}
	size_t span = (size_t)hi - (size_t)lo + 1;
	const db_item *slot[256];
	if (k < 2 || span > sizeof slot / sizeof *slot)
		return k < 2;
	memset(slot, 0, span * sizeof *slot);
	for (size_t i = 0; i < k; i++) {
		const db_item **s = &slot[v[i]->f.rank - lo];
		if (*s)
			return false;   /* a rank twice: qsort's order */
		*s = v[i];
	}
	size_t o = 0;
	for (size_t i = 0; i < span; i++)
		if (slot[i])
			v[o++] = slot[i];
	return true;
}

/* A side of a group: ranked items in rank order, else one rank-less item. */
static size_t side_shards(const db_item **in, size_t n, const db_item **out)
{
	size_t k = 0, unranked = 0;
	for (size_t i = 0; i < n; i++) {
		if (in[i]->f.rank >= 0)
			out[k++] = in[i];
		else
			unranked++;
	}
	if (k) {
		if (!place_by_rank(out, k))
			qsort(out, k, sizeof *out, cmp_rank);
		return k;
	}
	if (unranked == 1) {
		out[0] = in[0];
		return 1;
	}
	return 0;
}

/* A cell's layout from the dump's own metadata. */
typedef struct meta_layout {
	db_dims d;
	db_meta_par par;
} meta_layout;

/* Per-side cache of meta layouts, by phase, stage and layer: one file
 * read for all passes, ranks and occurrences of a cell. The maps give an
 * index into lay. */
typedef struct dims_cache {
	db_pkmap m[2];
	meta_layout *lay;
	size_t n, cap;
	size_t tree_ranks[2];   /* ranks each tree has (highest rank + 1) */
} dims_cache;

static const meta_layout *cached_layout(db_compare *c, dims_cache *dc, bool ref,
                                        const db_item *it)
{
	static const meta_layout none = {.par = {.sp_size = 1}};
	db_pkey k = db_pkey_of(&it->f, 0);
	k.pass = NULL;
	k.rank = 0;
	db_pkmap *m = &dc->m[ref ? 0 : 1];
	size_t *v = db_pkmap_get(m, &k);
	if (v)
		return &dc->lay[*v];
	if (dc->n == dc->cap) {
		size_t cap = dc->cap ? dc->cap * 2 : 16;
		meta_layout *a = realloc(dc->lay, cap * sizeof *a);
		if (!a)
			return &none;
		dc->lay = a;
		dc->cap = cap;
	}
	meta_layout *l = &dc->lay[dc->n];
	memset(l, 0, sizeof *l);
	l->par.sp_size = 1;
	char *path = db_index_path(ref ? c->ref : c->tgt, it);
	char buf[512];
	if (path && db_meta_dims_read(path, buf, sizeof buf, &l->par) == 1)
		db_dims_parse(buf, &l->d);      /* else kind NONE: no dims */
	free(path);
	if (!db_pkmap_put(m, &k, dc->n, NULL))
		return &none;
	return &dc->lay[dc->n++];
}

/* Sequence parallel: the ranks of the side with more ranks hold token
 * slices (dim 0) of the other side's tensor: their dim-0 lengths add up to
 * it and every other dim is equal. */
static bool token_split(const db_item **many, size_t nm, const db_item **few, size_t nf)
{
	if (nf != 1 || nm < 2)
		return false;
	const db_item *w = few[0];
	int64_t tok = 0;
	for (size_t i = 0; i < nm; i++) {
		const db_item *s = many[i];
		if (s->ndim != w->ndim || s->ndim < 1)
			return false;
		for (int d = 1; d < s->ndim; d++)
			if (s->shape[d] != w->shape[d])
				return false;
		tok += s->shape[0];
	}
	return tok == w->shape[0] && many[0]->shape[0] != w->shape[0];
}

static bool weight_phase(const db_profile *p, const char *phase)
{
	for (size_t k = 0; p && phase && k < p->n_weight_phases; k++)
		if (db_glob_match(p->weight_phases[k], phase))
			return true;
	return false;
}

static void set_not_comparable(db_pair *p, const char *msg)
{
	p->status = DB_ST_NOT_COMPARABLE;
	free(p->error);
	p->error = strdup(msg);
}

static db_pair *pair_of(db_pvec *pv, db_pkmap *pairs_by_key, const db_item *it)
{
	db_pkey k = db_pkey_of(&it->f, it->occurrence);
	size_t *v = db_pkmap_get(pairs_by_key, &k);
	return v && !pv->dead[*v] ? &pv->v[*v] : NULL;
}

/* Mixed layouts of a replicated stage: every rank of the side with more
 * ranks pairs with the other side's first rank (its own rank when that
 * side has it: those pairs exist already); the other side's unmatched
 * single items are then used up. Each rank keeps its own metrics, so a bug
 * on one rank shows on that rank only. */
static void pair_replicated(db_pvec *pv, db_pkmap *pairs_by_key, const db_item **rs, size_t nr,
                            const db_item **ts, size_t nt)
{
	bool many_tgt = nt >= nr;
	const db_item **many = many_tgt ? ts : rs, **few = many_tgt ? rs : ts;
	size_t nm = many_tgt ? nt : nr, nf = many_tgt ? nr : nt;
	char msg[300];
	snprintf(msg, sizeof msg, "shapes differ across layouts (%zu vs %zu ranks) and neither the "
	         "profile (shard:) nor the dump's meta dims say how this stage is sharded", nr, nt);
	for (size_t i = 0; i < nm; i++) {
		db_pair *p = pair_of(pv, pairs_by_key, many[i]);
		if (!p || (many_tgt ? p->ref : p->tgt))
			continue;
		if (many_tgt) {
			p->ref = few[0];
			db_pair_set_side(p, few[0], true);
		} else {
			p->tgt = few[0];
			db_pair_set_side(p, few[0], false);
		}
		p->status = DB_ST_OK;
		db_pair_classify(p);
		size_t idx = (size_t)(p - pv->v);
		pv->major[idx] = p->ref->seq;
		pv->sub[idx] = 0;
		if (p->status == DB_ST_SHAPE_MISMATCH)
			set_not_comparable(p, msg);
	}
	for (size_t i = 0; i < nf; i++) {
		db_pair *p = pair_of(pv, pairs_by_key, few[i]);
		if (p && !(many_tgt ? p->tgt : p->ref))
			pv->dead[p - pv->v] = true;
	}
	/* the per-rank pairs that matched by rank: a shape that differs is the
	 * layout too, not a finding */
	for (size_t i = 0; i < nm; i++) {
		db_pair *p = pair_of(pv, pairs_by_key, many[i]);
		if (p && p->status == DB_ST_SHAPE_MISMATCH)
			set_not_comparable(p, msg);
		if (p)
			p->replica = many_tgt ? 2 : 1;    /* checked by db_replica_settle */
	}
}

static int add_merged(db_compare *c, db_pvec *pv, group *g, db_pkmap *pairs_by_key,
                      dims_cache *dc)
{
	const db_item **rs = malloc((g->n_ref + 1) * sizeof *rs);
	const db_item **ts = malloc((g->n_tgt + 1) * sizeof *ts);
	if (!rs || !ts) {
		free(rs);
		free(ts);
		return -1;
	}
	size_t nr = side_shards(g->ref, g->n_ref, rs);
	size_t nt = side_shards(g->tgt, g->n_tgt, ts);
	/* mixed: the sides are laid out differently (TP 1 vs 2, or one side
	 * rank-less), so per-rank pairs do not line up by rank */
	bool mixed = nr && nt && (nr != nt || rs[0]->f.rank != ts[0]->f.rank);
	db_shard_rule rule = {0};
	bool sharded = false;
	char layout_msg[200] = "";      /* non-empty: merged, but not comparable */
	if (g->rule) {
		rule = *g->rule;
		sharded = true;
	} else if (mixed && c->profile->value_key) {
		/* the dump's own metadata ({value, meta} payloads: meta.dims),
		 * read on the side with more ranks */
		bool from_ref = nr > nt;
		size_t nm = from_ref ? nr : nt;
		const meta_layout *l = cached_layout(c, dc, from_ref, from_ref ? rs[0] : ts[0]);
		sharded = db_dims_rule(&l->d, &rule);
		if (sharded && l->par.group_size == 1) {
			/* a group of one rank (moe_ep at EP 1): nothing is split over
			 * these ranks, each holds the whole tensor */
			sharded = false;
		} else if (sharded && l->par.group_size > 1 && (size_t)l->par.group_size != nm) {
			snprintf(layout_msg, sizeof layout_msg, "meta dims shard over %s of %d ranks, "
			         "the tree has %zu: the groups cannot be told apart",
			         l->d.group, l->par.group_size, nm);
		}
		/* no dims, but the meta says sequence parallel: activations whose
		 * token slices add up to the other side's tensor concat on dim 0.
		 * Never weights: a column-parallel weight's row blocks add up the
		 * same way, and a fused one ([gate_r; up_r] per rank) concatenated
		 * is not the other side's [gate; up] (a false bug) */
		if (!sharded && l->d.kind != DB_DIMS_UNKNOWN && l->par.sp_size > 1 &&
		    !weight_phase(c->profile, rs[0]->f.phase) &&
		    (from_ref ? token_split(rs, nr, ts, nt) : token_split(ts, nt, rs, nr))) {
			memset(&rule, 0, sizeof rule);
			rule.how = DB_UNSHARD_CONCAT;
			sharded = true;
		}
	}
	/* the same ranks, another layout: one side's meta dims split a dim that
	 * the other side's hold whole on every rank (a trainer's sequence-
	 * parallel [t/tp, 1, h] against an engine's replicated [t, h]; their
	 * shapes differ rank by rank): that side's shards joined, against one
	 * rank of the other */
	if (!mixed && !sharded && c->profile->value_key && nr > 1 && nr == nt &&
	    (rs[0]->ndim != ts[0]->ndim ||
	     memcmp(rs[0]->shape, ts[0]->shape, (size_t)rs[0]->ndim * sizeof rs[0]->shape[0]))) {
		const meta_layout *lr = cached_layout(c, dc, true, rs[0]);
		const meta_layout *lt = cached_layout(c, dc, false, ts[0]);
		bool sr = lr->d.kind == DB_DIMS_SPLIT, st = lt->d.kind == DB_DIMS_SPLIT;
		if (sr != st && (sr ? lt : lr)->d.kind == DB_DIMS_REPLICATED &&
		    db_dims_rule(sr ? &lr->d : &lt->d, &rule)) {
			sharded = true;
			if (sr)
				nt = 1;
			else
				nr = 1;
		}
	}
	if (!nr || !nt || (!mixed && (!sharded || (nr < 2 && nt < 2)))) {
		free(rs);
		free(ts);
		return 0;
	}
	if (mixed && !sharded) {
		/* a cell lacking ranks its own tree has is missing data (a file
		 * not written), not another layout: those stay ref_only /
		 * target_only */
		bool few_ref = nt >= nr;
		size_t nf = few_ref ? nr : nt, tr = dc->tree_ranks[few_ref ? 0 : 1];
		if (nf >= (tr ? tr : 1))
			pair_replicated(pv, pairs_by_key, rs, nr, ts, nt);
		free(rs);
		free(ts);
		return 0;
	}
	db_pair *p = db_pvec_add(pv, g->max_ref_seq, 1);
	if (!p) {
		free(rs);
		free(ts);
		return -1;
	}
	db_cmp_priv *pr = c->priv;
	if (nr > pr->max_shards)
		pr->max_shards = nr;
	if (nt > pr->max_shards)
		pr->max_shards = nt;
	p->f = rs[0]->f;
	p->f.side = "";
	p->f.rank = -1;
	p->f.order = -1;
	p->occurrence = rs[0]->occurrence;
	p->merged = true;
	p->unshard = rule;
	p->unshard.pattern = NULL;
	p->unshard.re = NULL;
	p->ref = rs[0];
	p->tgt = ts[0];
	p->ref_shards = rs;
	p->tgt_shards = ts;
	p->n_ref_shards = nr;
	p->n_tgt_shards = nt;
	p->dtype_ref = rs[0]->dtype;
	p->dtype_tgt = ts[0]->dtype;
	char msg[512];
	for (size_t i = 0; i < nr + nt && p->status != DB_ST_ERROR; i++) {
		const db_item *it = i < nr ? rs[i] : ts[i - nr];
		if (it->err)
			db_pair_set_error(p, it->err);
	}
	if (p->status != DB_ST_ERROR &&
	    db_unshard_shape(rs, nr, nr > 1 ? &p->unshard : NULL, &p->ndim_ref, p->shape_ref,
	                     msg, sizeof msg) != 0)
		db_pair_set_error(p, msg);
	if (p->status != DB_ST_ERROR &&
	    db_unshard_shape(ts, nt, nt > 1 ? &p->unshard : NULL, &p->ndim_tgt, p->shape_tgt,
	                     msg, sizeof msg) != 0)
		db_pair_set_error(p, msg);
	db_pair_classify(p);
	if (layout_msg[0] && p->status != DB_ST_ERROR)
		set_not_comparable(p, layout_msg);
	if (mixed && rule.how == DB_UNSHARD_FUSED && !rule.n_parts && p->status != DB_ST_ERROR) {
		snprintf(msg, sizeof msg, "fused per-rank output across layouts (%zu vs %zu ranks): "
		         "the ranks' concat is not the other side's tensor; give the shard rule "
		         "its parts to un-fuse it", nr, nt);
		set_not_comparable(p, msg);
	}
	/* Mixed layouts: a rank's shard or partial sum alone is never judged
	 * against the other side's whole tensor; the merged pair stands for
	 * every per-rank pair of this cell. */
	if (mixed) {
		for (size_t i = 0; i < nr + nt; i++) {
			const db_item *it = i < nr ? rs[i] : ts[i - nr];
			db_pair *q = pair_of(pv, pairs_by_key, it);
			if (q)
				pv->dead[q - pv->v] = true;
		}
	}
	return 0;
}

int db_build_merged(db_compare *c, db_pvec *pv, const db_item **ri, size_t nri,
                        const db_item **ti, size_t nti, db_pkmap *pairs_by_key)
{
	db_pkmap gm, rules;
	db_pkmap_init(&gm);
	db_pkmap_init(&rules);          /* stage -> shard rule index + 1 (0 none) */
	dims_cache dc = {0};
	for (size_t i = 0; i < nri + nti; i++) {
		const db_item *it = i < nri ? ri[i] : ti[i - nri];
		size_t *tr = &dc.tree_ranks[i < nri ? 0 : 1];
		if (it->f.rank >= 0 && (size_t)it->f.rank + 1 > *tr)
			*tr = (size_t)it->f.rank + 1;
	}
	db_pkmap_init(&dc.m[0]);
	db_pkmap_init(&dc.m[1]);
	group *gs = NULL;
	size_t ng = 0, capg = 0;
	const char *last_stage = NULL;
	size_t last_rule = 0, near = 0;
	int rc = 0;
	/* every cell: stages without a shard rule still need a look when the
	 * two sides' layouts differ */
	for (size_t i = 0; i < nri + nti && rc == 0; i++) {
		bool is_ref = i < nri;
		const db_item *it = is_ref ? ri[i] : ti[i - nri];
		bool added;
		if (it->f.stage != last_stage) {        /* runs of one stage: one lookup */
			db_pkey sk = {.stage = it->f.stage[0] ? it->f.stage : NULL};
			size_t *ri1 = db_pkmap_put(&rules, &sk, 0, &added);
			if (!ri1) {
				rc = -1;
				break;
			}
			if (added) {
				const db_shard_rule *r = db_profile_shard(c->profile, it->f.stage);
				*ri1 = r ? (size_t)(r - c->profile->shards) + 1 : 0;
			}
			last_stage = it->f.stage;
			last_rule = *ri1;
		}
		const db_shard_rule *rule = last_rule ? &c->profile->shards[last_rule - 1] : NULL;
		db_pkey k = db_pkey_of(&it->f, it->occurrence);
		k.rank = -1;
		size_t *gi = db_pkmap_put_near(&gm, &k, ng, &added, &near);
		if (!gi) {
			rc = -1;
			break;
		}
		if (added) {
			if (ng == capg) {
				capg = capg ? capg * 2 : 16;
				group *n2 = realloc(gs, capg * sizeof *n2);
				if (!n2) {
					rc = -1;
					break;
				}
				gs = n2;
			}
			memset(&gs[ng], 0, sizeof gs[ng]);
			gs[ng].rule = rule;
			gs[ng].max_ref_seq = -1;
			ng++;
		}
		group *g = &gs[*gi];
		if (is_ref) {
			rc = group_push(&g->ref, &g->n_ref, &g->cap_ref, it);
			if (it->seq > g->max_ref_seq)
				g->max_ref_seq = it->seq;
		} else {
			rc = group_push(&g->tgt, &g->n_tgt, &g->cap_tgt, it);
		}
	}
	for (size_t i = 0; i < ng && rc == 0; i++)
		rc = add_merged(c, pv, &gs[i], pairs_by_key, &dc);
	for (size_t i = 0; i < ng; i++) {
		free(gs[i].ref);
		free(gs[i].tgt);
	}
	free(gs);
	db_pkmap_free(&gm);
	db_pkmap_free(&rules);
	db_pkmap_free(&dc.m[0]);
	db_pkmap_free(&dc.m[1]);
	free(dc.lay);
	return rc;
}

/* The logical shape of shards unsharded by r (compare_priv.h). */
int db_unshard_shape(const db_item *const *shards, size_t n,
                     const db_shard_rule *r, int *ndim, int64_t *shape,
                     char *msg, size_t msglen)
{
	const db_item *s0 = shards[0];
	*ndim = s0->ndim;
	memcpy(shape, s0->shape, sizeof s0->shape);
	if (!r || n < 2)
		return 0;
	int dim = r->dim < 0 ? r->dim + s0->ndim : r->dim;
	bool cat = r->how != DB_UNSHARD_SUM;   /* concat, or fused (concat by parts) */
	if (cat && (dim < 0 || dim >= s0->ndim)) {
		snprintf(msg, msglen, "%s: cannot concat shards along dim %d of a %d-d tensor",
		         s0->path, r->dim, s0->ndim);
		return -1;
	}
	for (size_t i = 1; i < n; i++) {
		const db_item *s = shards[i];
		bool ok = s->ndim == s0->ndim;
		for (int d = 0; ok && d < s0->ndim; d++)
			ok = s->shape[d] == s0->shape[d] || (cat && d == dim);
		if (!ok) {
			snprintf(msg, msglen, "%s: shard of rank %d has another shape than rank %d's "
			         "(cannot %s)", s->path, s->f.rank, s0->f.rank,
			         cat ? "concat" : "sum");
			return -1;
		}
		if (cat)
			shape[dim] += s->shape[dim];
	}
	if (r->how == DB_UNSHARD_FUSED && r->n_parts) {
		int64_t tot = 0;
		for (int j = 0; j < r->n_parts; j++)
			tot += r->parts[j];
		for (size_t i = 0; i < n; i++) {
			if (shards[i]->shape[dim] % tot) {
				snprintf(msg, msglen, "%s: rank %d's dim %d (%lld) does not split into the "
				         "profile's fused parts", shards[i]->path, shards[i]->f.rank, r->dim,
				         (long long)shards[i]->shape[dim]);
				return -1;
			}
		}
	}
	return 0;
}
