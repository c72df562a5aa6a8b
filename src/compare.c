/* Pairing: join the reference and target indices on (phase, pass, rank,
 * layer, stage, occurrence), add merged pairs for sharded stages, line up
 * cells whose two sides have different parallel layouts, order the pairs
 * by execution order. Metrics are computed by workers.c. */
#include "db_compare.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <limits.h>
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_priv.h"
#include "index_priv.h"
#include "meta_dims.h"
#include "strmap.h"

static const char *const status_names[] = {
	"ok", "ref_only", "target_only", "shape_mismatch", "error", "not_comparable"
};

const char *db_status_name(db_status s)
{
	return (unsigned)s < sizeof status_names / sizeof *status_names ? status_names[s] : "?";
}

char *db_item_name(const db_item *it)
{
	if (!it)
		return NULL;
	if (!it->key || !it->key[0])
		return strdup(it->path);
	size_t n = strlen(it->path) + strlen(it->key) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s:%s", it->path, it->key);
	return s;
}

bool db_pair_diverges(const db_pair *p)
{
	if (atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire) != DB_PAIR_DONE)
		return false;
	/* a layout that cannot be undone says nothing about the model */
	if (p->status == DB_ST_NOT_COMPARABLE)
		return false;
	return p->status != DB_ST_OK || p->band > DB_BAND_OK;
}

/* ---- pair building ---------------------------------------------------- */

typedef struct pvec {
	db_pair *v;
	size_t n, cap;
	int64_t *major, *sub;   /* sort keys */
	bool *dead;             /* consumed by a merged pair */
} pvec;

static int grow_pvec(pvec *pv, size_t cap)
{
	db_pair *v = realloc(pv->v, cap * sizeof *v);
	if (v)
		pv->v = v;
	int64_t *ma = realloc(pv->major, cap * sizeof *ma);
	if (ma)
		pv->major = ma;
	int64_t *su = realloc(pv->sub, cap * sizeof *su);
	if (su)
		pv->sub = su;
	bool *d = realloc(pv->dead, cap * sizeof *d);
	if (d)
		pv->dead = d;
	if (!v || !ma || !su || !d)
		return -1;
	pv->cap = cap;
	return 0;
}

static db_pair *pvec_add(pvec *pv, int64_t major, int64_t sub)
{
	if (pv->n == pv->cap && grow_pvec(pv, pv->cap ? pv->cap * 2 : 256) != 0)
		return NULL;
	pv->major[pv->n] = major;
	pv->sub[pv->n] = sub;
	pv->dead[pv->n] = false;
	db_pair *p = &pv->v[pv->n++];
	memset(p, 0, sizeof *p);
	p->ndim_ref = p->ndim_tgt = -1;
	return p;
}

static void set_side(db_pair *p, const db_item *it, bool ref)
{
	if (!it)
		return;
	if (ref) {
		p->ndim_ref = it->ndim;
		memcpy(p->shape_ref, it->shape, sizeof p->shape_ref);
		p->dtype_ref = it->dtype;
	} else {
		p->ndim_tgt = it->ndim;
		memcpy(p->shape_tgt, it->shape, sizeof p->shape_tgt);
		p->dtype_tgt = it->dtype;
	}
}

static bool shapes_equal(int na, const int64_t *a, int nb, const int64_t *b)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static uint64_t shape_numel(int n, const int64_t *s)
{
	uint64_t k = 1;
	for (int i = 0; i < n; i++)
		k *= (uint64_t)s[i];
	return k;
}

static void set_error(db_pair *p, const char *msg)
{
	p->status = DB_ST_ERROR;
	free(p->error);
	p->error = strdup(msg);
}

/* Status of a pair whose sides are set; OK means "to be computed". */
static void classify(db_pair *p)
{
	const db_item *r = p->ref, *t = p->tgt;
	if (r && r->err && !p->merged) {
		set_error(p, r->err);
		return;
	}
	if (t && t->err && !p->merged) {
		set_error(p, t->err);
		return;
	}
	if (p->status == DB_ST_ERROR)
		return;
	if (p->ndim_ref < 0) {
		p->status = DB_ST_TARGET_ONLY;
		return;
	}
	if (p->ndim_tgt < 0) {
		p->status = DB_ST_REF_ONLY;
		return;
	}
	p->dtype_differs = p->dtype_ref != p->dtype_tgt;
	/* equal numel but another shape is a mismatch too: no silent reshape */
	if (!shapes_equal(p->ndim_ref, p->shape_ref, p->ndim_tgt, p->shape_tgt)) {
		p->status = DB_ST_SHAPE_MISMATCH;
		return;
	}
	if (!db_dtype_comparable(p->dtype_ref) || !db_dtype_comparable(p->dtype_tgt)) {
		char msg[160];
		snprintf(msg, sizeof msg, "not comparable: dtype %s vs %s",
		         db_dtype_name(p->dtype_ref), db_dtype_name(p->dtype_tgt));
		set_error(p, msg);
		return;
	}
	if (db_dtype_is_complex(p->dtype_ref) != db_dtype_is_complex(p->dtype_tgt)) {
		char msg[160];
		snprintf(msg, sizeof msg, "not comparable: complex vs real (%s vs %s)",
		         db_dtype_name(p->dtype_ref), db_dtype_name(p->dtype_tgt));
		set_error(p, msg);
		return;
	}
	p->status = DB_ST_OK;
	p->numel = shape_numel(p->ndim_ref, p->shape_ref);
}

static bool item_kept(const db_cmp_priv *pr, const db_item *it)
{
	if (!pr->filter_re)
		return true;
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(pr->filter_re, NULL);
	if (!md)
		return true;
	bool ok = pcre2_match(pr->filter_re, (PCRE2_SPTR)it->f.stage, PCRE2_ZERO_TERMINATED,
	                      0, 0, md, NULL) >= 0 ||
	          (it->key && it->key[0] &&
	           pcre2_match(pr->filter_re, (PCRE2_SPTR)it->key, PCRE2_ZERO_TERMINATED,
	                       0, 0, md, NULL) >= 0);
	pcre2_match_data_free(md);
	return ok;
}

void db_pair_fields_key(const db_fields *f, int occ, char *buf, size_t len)
{
	db_fields_key_occ(f, occ, buf, len);
}

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
	db_strmap m[2];
	meta_layout *lay;
	size_t n, cap;
	size_t tree_ranks[2];   /* ranks each tree has (highest rank + 1) */
} dims_cache;

static const meta_layout *cached_layout(db_compare *c, dims_cache *dc, bool ref,
                                        const db_item *it)
{
	static const meta_layout none = {.par = {.sp_size = 1}};
	char k[340];
	snprintf(k, sizeof k, "%s\x1f%d\x1f%s", it->f.phase, it->f.layer, it->f.stage);
	db_strmap *m = &dc->m[ref ? 0 : 1];
	size_t *v = db_strmap_get(m, k);
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
	if (!db_strmap_put(m, k, dc->n, NULL))
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

static void set_not_comparable(db_pair *p, const char *msg)
{
	p->status = DB_ST_NOT_COMPARABLE;
	free(p->error);
	p->error = strdup(msg);
}

static db_pair *pair_of(pvec *pv, db_strmap *pairs_by_key, const db_item *it)
{
	char k[600];
	db_pair_fields_key(&it->f, it->occurrence, k, sizeof k);
	size_t *v = db_strmap_get(pairs_by_key, k);
	return v && !pv->dead[*v] ? &pv->v[*v] : NULL;
}

/* Mixed layouts of a replicated stage: every rank of the side with more
 * ranks pairs with the other side's first rank (its own rank when that
 * side has it: those pairs exist already); the other side's unmatched
 * single items are then used up. Each rank keeps its own metrics, so a bug
 * on one rank shows on that rank only. */
static void pair_replicated(pvec *pv, db_strmap *pairs_by_key, const db_item **rs, size_t nr,
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
			set_side(p, few[0], true);
		} else {
			p->tgt = few[0];
			set_side(p, few[0], false);
		}
		p->status = DB_ST_OK;
		classify(p);
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

static int add_merged(db_compare *c, pvec *pv, group *g, db_strmap *pairs_by_key,
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
		 * token slices add up to the other side's tensor concat on dim 0 */
		if (!sharded && l->d.kind != DB_DIMS_UNKNOWN && l->par.sp_size > 1 &&
		    (from_ref ? token_split(rs, nr, ts, nt) : token_split(ts, nt, rs, nr))) {
			memset(&rule, 0, sizeof rule);
			rule.how = DB_UNSHARD_CONCAT;
			sharded = true;
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
	db_pair *p = pvec_add(pv, g->max_ref_seq, 1);
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
	p->f.side[0] = 0;
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
			set_error(p, it->err);
	}
	if (p->status != DB_ST_ERROR &&
	    db_unshard_shape(rs, nr, nr > 1 ? &p->unshard : NULL, &p->ndim_ref, p->shape_ref,
	                     msg, sizeof msg) != 0)
		set_error(p, msg);
	if (p->status != DB_ST_ERROR &&
	    db_unshard_shape(ts, nt, nt > 1 ? &p->unshard : NULL, &p->ndim_tgt, p->shape_tgt,
	                     msg, sizeof msg) != 0)
		set_error(p, msg);
	classify(p);
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

static int build_merged(db_compare *c, pvec *pv, const db_item **ri, size_t nri,
                        const db_item **ti, size_t nti, db_strmap *pairs_by_key)
{
	db_strmap gm, rules;
	db_strmap_init(&gm);
	db_strmap_init(&rules);         /* stage -> shard rule index + 1 (0 none) */
	dims_cache dc = {0};
	for (size_t i = 0; i < nri + nti; i++) {
		const db_item *it = i < nri ? ri[i] : ti[i - nri];
		size_t *tr = &dc.tree_ranks[i < nri ? 0 : 1];
		if (it->f.rank >= 0 && (size_t)it->f.rank + 1 > *tr)
			*tr = (size_t)it->f.rank + 1;
	}
	db_strmap_init(&dc.m[0]);
	db_strmap_init(&dc.m[1]);
	group *gs = NULL;
	size_t ng = 0, capg = 0;
	int rc = 0;
	/* every cell: stages without a shard rule still need a look when the
	 * two sides' layouts differ */
	for (size_t i = 0; i < nri + nti && rc == 0; i++) {
		bool is_ref = i < nri;
		const db_item *it = is_ref ? ri[i] : ti[i - nri];
		bool added;
		size_t *ri1 = db_strmap_put(&rules, it->f.stage, 0, &added);
		if (!ri1) {
			rc = -1;
			break;
		}
		if (added) {
			const db_shard_rule *r = db_profile_shard(c->profile, it->f.stage);
			*ri1 = r ? (size_t)(r - c->profile->shards) + 1 : 0;
		}
		const db_shard_rule *rule = *ri1 ? &c->profile->shards[*ri1 - 1] : NULL;
		db_fields f = it->f;
		f.rank = -1;
		char k[600];
		db_pair_fields_key(&f, it->occurrence, k, sizeof k);
		size_t *gi = db_strmap_put(&gm, k, ng, &added);
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
	db_strmap_free(&gm);
	db_strmap_free(&rules);
	db_strmap_free(&dc.m[0]);
	db_strmap_free(&dc.m[1]);
	free(dc.lay);
	return rc;
}

typedef struct sortrec {
	int64_t major, sub;
	size_t idx;
} sortrec;

static int cmp_sortrec(const void *va, const void *vb)
{
	const sortrec *a = va, *b = vb;
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->sub != b->sub)
		return a->sub < b->sub ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static int collect(const db_cmp_priv *pr, const db_index *ix, const db_item ***out, size_t *n)
{
	*out = malloc((ix->n_items + 1) * sizeof **out);
	if (!*out)
		return -1;
	*n = 0;
	for (size_t i = 0; i < ix->n_items; i++)
		if (item_kept(pr, &ix->items[i]))
			(*out)[(*n)++] = &ix->items[i];
	return 0;
}

unsigned long db_next_pairs_gen(void)
{
	static _Atomic unsigned long gen;
	return atomic_fetch_add(&gen, 1) + 1;
}

int db_build_pairs(db_compare *c, db_err *err)
{
	db_cmp_priv *pr = c->priv;
	const db_item **ri = NULL, **ti = NULL;
	size_t nri = 0, nti = 0;
	if (collect(pr, c->ref, &ri, &nri) || collect(pr, c->tgt, &ti, &nti)) {
		free(ri);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	if (!nri || !nti) {
		const db_index *ix = !nri ? c->ref : c->tgt;
		const char *what = !nri ? "reference" : "target";
		int rc;
		if (ix->n_items && pr->filter)
			rc = db_err_set(err, NULL, NULL, -1, "--filter '%s' matches no tensor of the %s",
			                pr->filter, what);
		else
			rc = db_err_set(err, ix->root, NULL, -1,
			                "no tensors in the %s (%zu files, %zu parsed by profile %s, "
			                "%zu unparsed); nothing to compare",
			                what, ix->n_files_seen, ix->n_files, c->profile->name,
			                ix->n_unparsed);
		free(ri);
		free(ti);
		return rc;
	}
	pvec pv = {0};
	db_strmap by_key;
	db_strmap_init(&by_key);
	int rc = 0;
	/* room for every pair but merged ones at once: no regrowth (copies
	 * and page faults of a ~50 MB array at 100k files, issue 12) */
	if (grow_pvec(&pv, nri + nti) != 0 || db_strmap_reserve(&by_key, nri) != 0)
		rc = -1;
	for (size_t i = 0; i < nri && rc == 0; i++) {
		char k[600];
		db_pair_fields_key(&ri[i]->f, ri[i]->occurrence, k, sizeof k);
		db_pair *p = pvec_add(&pv, ri[i]->seq, 0);
		bool added;
		if (!p || !db_strmap_put(&by_key, k, pv.n - 1, &added)) {
			rc = -1;
			break;
		}
		p->f = ri[i]->f;
		p->f.side[0] = 0;
		p->f.order = -1;
		p->occurrence = ri[i]->occurrence;
		p->ref = ri[i];
		set_side(p, ri[i], true);
	}
	/* two single files holding one tensor each: compare them whatever
	 * their names say */
	bool lone = c->ref->root_is_file && c->tgt->root_is_file && nri == 1 && nti == 1;
	int64_t anchor = -1;
	for (size_t i = 0; i < nti && rc == 0; i++) {
		char k[600];
		db_pair_fields_key(lone ? &ri[0]->f : &ti[i]->f, lone ? ri[0]->occurrence : ti[i]->occurrence,
		         k, sizeof k);
		size_t *v = db_strmap_get(&by_key, k);
		if (v) {
			db_pair *p = &pv.v[*v];
			p->tgt = ti[i];
			set_side(p, ti[i], false);
			if (p->ref->seq > anchor)
				anchor = p->ref->seq;
			continue;
		}
		/* target-only: right after the last matched pair seen before it */
		db_pair *p = pvec_add(&pv, anchor, 2 + ti[i]->seq);
		if (!p || !db_strmap_put(&by_key, k, pv.n - 1, NULL)) {
			rc = -1;
			break;
		}
		p->f = ti[i]->f;
		p->f.side[0] = 0;
		p->f.order = -1;
		p->occurrence = ti[i]->occurrence;
		p->tgt = ti[i];
		set_side(p, ti[i], false);
	}
	for (size_t i = 0; i < pv.n; i++)
		classify(&pv.v[i]);
	if (rc == 0)
		rc = build_merged(c, &pv, ri, nri, ti, nti, &by_key);
	db_strmap_free(&by_key);
	free(ri);
	free(ti);

	sortrec *sr = rc == 0 ? malloc((pv.n + 1) * sizeof *sr) : NULL;
	size_t *to = sr ? malloc((pv.n + 1) * sizeof *to) : NULL;
	if (rc != 0 || !sr || !to) {
		for (size_t i = 0; i < pv.n; i++) {
			free(pv.v[i].error);
			free(pv.v[i].ref_shards);
			free(pv.v[i].tgt_shards);
		}
		free(pv.v);
		free(pv.major);
		free(pv.sub);
		free(pv.dead);
		free(sr);
		free(to);
		return db_err_set(err, NULL, NULL, -1, "out of memory while pairing");
	}
	size_t n = 0;
	for (size_t i = 0; i < pv.n; i++) {
		if (pv.dead[i]) {
			free(pv.v[i].error);
			continue;
		}
		sr[n++] = (sortrec){pv.major[i], pv.sub[i], i};
	}
	qsort(sr, n, sizeof *sr, cmp_sortrec);
	/* Into sorted order in place (a second array of pairs was the peak
	 * of memory at 100k files): pair sr[i].idx goes to i, the dead ones
	 * after the live ones; cycles of swaps put one pair home each. */
	size_t nd = n;
	for (size_t i = 0; i < pv.n; i++)
		if (pv.dead[i])
			to[i] = nd++;
	for (size_t i = 0; i < n; i++)
		to[sr[i].idx] = i;
	for (size_t i = 0; i < pv.n; i++) {
		while (to[i] != i) {
			size_t j = to[i];
			db_pair tmp = pv.v[j];
			pv.v[j] = pv.v[i];
			pv.v[i] = tmp;
			to[i] = to[j];
			to[j] = j;
		}
	}
	free(to);
	db_pair *out = pv.v;
	if (n + 1 < pv.cap) {
		db_pair *shrunk = realloc(pv.v, (n + 1) * sizeof *shrunk);
		if (shrunk)
			out = shrunk;
	}
	pv.v = NULL;
	for (size_t i = 0; i < n; i++) {
		out[i].seq = (int64_t)i;
		if (out[i].status != DB_ST_OK) {
			out[i].band = DB_BAND_NONE;
			db_metrics *m = &out[i].m;
			memset(m, 0, sizeof *m);
			m->cos = m->rel = m->rel_l2 = m->rel_diff = m->max_abs = m->mean_abs = NAN;
			m->byte_equal = NAN;
			m->argmax = -1;
			atomic_init(&out[i].state, DB_PAIR_DONE);
		} else {
			atomic_init(&out[i].state, DB_PAIR_PENDING);
		}
	}
	free(sr);
	free(pv.v);
	free(pv.major);
	free(pv.sub);
	free(pv.dead);
	c->pairs = out;
	c->n_pairs = n;
	c->pairs_gen = db_next_pairs_gen();
	size_t done = 0;
	for (size_t i = 0; i < n; i++)
		done += out[i].status != DB_ST_OK;
	atomic_store(&c->n_done, done);
	return 0;
}

static bool in_list(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* The profile's phases in its order, then the others in order of first
 * appearance. One pass over the pairs: a tree holds few phases, and runs of
 * pairs share one (100k pairs, issue 12). */
int db_build_phases(db_compare *c)
{
	const db_profile *p = c->profile;
	const char **seen = calloc(c->n_pairs + 1, sizeof *seen);
	c->phases = calloc(c->n_pairs + 1, sizeof *c->phases);
	if (!seen || !c->phases) {
		free(seen);
		return -1;
	}
	size_t n_seen = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const char *ph = c->pairs[i].f.phase;
		if (n_seen && !strcmp(seen[n_seen - 1], ph))
			continue;
		if (!in_list((char *const *)seen, n_seen, ph))
			seen[n_seen++] = ph;
	}
	int rc = 0;
	for (size_t k = 0; k <= p->n_phase_order && rc == 0; k++)
		for (size_t i = 0; i < n_seen && rc == 0; i++) {
			bool listed = in_list(p->phase_order, p->n_phase_order, seen[i]);
			if (k < p->n_phase_order ? strcmp(p->phase_order[k], seen[i]) != 0 : listed)
				continue;
			if (in_list(c->phases, c->n_phases, seen[i]))
				continue;
			if (!(c->phases[c->n_phases] = strdup(seen[i])))
				rc = -1;
			else
				c->n_phases++;
		}
	free(seen);
	return rc;
}

void db_free_pairs(db_compare *c)
{
	for (size_t i = 0; i < c->n_pairs; i++) {
		free(c->pairs[i].error);
		free(c->pairs[i].ref_shards);
		free(c->pairs[i].tgt_shards);
	}
	free(c->pairs);
	c->pairs = NULL;
	c->n_pairs = 0;
	c->pairs_gen = db_next_pairs_gen();
	for (size_t i = 0; i < c->n_phases; i++)
		free(c->phases[i]);
	free(c->phases);
	c->phases = NULL;
	c->n_phases = 0;
}
