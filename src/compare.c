/* Pairing: join the reference and target indices on (phase, pass, rank,
 * layer, stage, occurrence), add merged pairs for sharded stages, order
 * the pairs by execution order. Metrics are computed by workers.c. */
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
#include "strmap.h"

static const char *const status_names[] = {
	"ok", "ref_only", "target_only", "shape_mismatch", "error"
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
	return p->status != DB_ST_OK || p->band > DB_BAND_OK;
}

/* ---- pair building ---------------------------------------------------- */

typedef struct pvec {
	db_pair *v;
	size_t n, cap;
	int64_t *major, *sub;   /* sort keys */
	bool *dead;             /* consumed by a merged pair */
} pvec;

static db_pair *pvec_add(pvec *pv, int64_t major, int64_t sub)
{
	if (pv->n == pv->cap) {
		size_t cap = pv->cap ? pv->cap * 2 : 256;
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
			return NULL;
		pv->cap = cap;
	}
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

static void pair_key(const db_fields *f, int occ, char *buf, size_t len)
{
	char k[512];
	db_fields_key(f, k, sizeof k);
	snprintf(buf, len, "%s\x1f%d", k, occ);
}

/* Merged-pair groups: same cell on every rank. */
typedef struct group {
	const db_item **ref, **tgt;
	size_t n_ref, n_tgt, cap_ref, cap_tgt;
	int64_t max_ref_seq;
	const db_shard_rule *rule;
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

static int add_merged(db_compare *c, pvec *pv, group *g, db_strmap *pairs_by_key)
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
	if (!nr || !nt || (nr < 2 && nt < 2)) {
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
	    db_unshard_shape(rs, nr, nr > 1 ? g->rule : NULL, &p->ndim_ref, p->shape_ref,
	                     msg, sizeof msg) != 0)
		set_error(p, msg);
	if (p->status != DB_ST_ERROR &&
	    db_unshard_shape(ts, nt, nt > 1 ? g->rule : NULL, &p->ndim_tgt, p->shape_tgt,
	                     msg, sizeof msg) != 0)
		set_error(p, msg);
	classify(p);
	/* One side unsharded (or ranks differ): the per-rank pairs of this cell
	 * cannot line up; the merged pair stands for them. */
	if (nr != nt) {
		for (size_t i = 0; i < nr + nt; i++) {
			const db_item *it = i < nr ? rs[i] : ts[i - nr];
			char k[600];
			pair_key(&it->f, it->occurrence, k, sizeof k);
			size_t *v = db_strmap_get(pairs_by_key, k);
			if (v && pv->v[*v].status != DB_ST_OK && pv->v[*v].status != DB_ST_ERROR)
				pv->dead[*v] = true;
		}
	}
	return 0;
}

static int build_merged(db_compare *c, pvec *pv, const db_item **ri, size_t nri,
                        const db_item **ti, size_t nti, db_strmap *pairs_by_key)
{
	db_strmap gm;
	db_strmap_init(&gm);
	group *gs = NULL;
	size_t ng = 0, capg = 0;
	int rc = 0;
	for (size_t i = 0; i < nri + nti && rc == 0; i++) {
		bool is_ref = i < nri;
		const db_item *it = is_ref ? ri[i] : ti[i - nri];
		const db_shard_rule *rule = db_profile_shard(c->profile, it->f.stage);
		if (!rule)
			continue;
		db_fields f = it->f;
		f.rank = -1;
		char k[600];
		pair_key(&f, it->occurrence, k, sizeof k);
		bool added;
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
		rc = add_merged(c, pv, &gs[i], pairs_by_key);
	for (size_t i = 0; i < ng; i++) {
		free(gs[i].ref);
		free(gs[i].tgt);
	}
	free(gs);
	db_strmap_free(&gm);
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

static int build_pairs(db_compare *c, db_err *err)
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
	for (size_t i = 0; i < nri && rc == 0; i++) {
		char k[600];
		pair_key(&ri[i]->f, ri[i]->occurrence, k, sizeof k);
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
		pair_key(lone ? &ri[0]->f : &ti[i]->f, lone ? ri[0]->occurrence : ti[i]->occurrence,
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
	db_pair *out = sr ? malloc((pv.n + 1) * sizeof *out) : NULL;
	if (rc != 0 || !sr || !out) {
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
		free(out);
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
	for (size_t i = 0; i < n; i++) {
		out[i] = pv.v[sr[i].idx];
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
	size_t done = 0;
	for (size_t i = 0; i < n; i++)
		done += out[i].status != DB_ST_OK;
	atomic_store(&c->n_done, done);
	return 0;
}

static int build_phases(db_compare *c)
{
	c->phases = calloc(c->n_pairs + 1, sizeof *c->phases);
	if (!c->phases)
		return -1;
	const db_profile *p = c->profile;
	for (size_t k = 0; k <= p->n_phase_order; k++) {
		for (size_t i = 0; i < c->n_pairs; i++) {
			const char *ph = c->pairs[i].f.phase;
			bool listed = false;
			for (size_t j = 0; j < p->n_phase_order && !listed; j++)
				listed = !strcmp(p->phase_order[j], ph);
			/* pass k < n: phases of the profile's order; last pass: the rest */
			if (k < p->n_phase_order ? strcmp(p->phase_order[k], ph) != 0 : listed)
				continue;
			bool have = false;
			for (size_t j = 0; j < c->n_phases && !have; j++)
				have = !strcmp(c->phases[j], ph);
			if (have)
				continue;
			if (!(c->phases[c->n_phases] = strdup(ph)))
				return -1;
			c->n_phases++;
		}
	}
	return 0;
}

static bool same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	if (!realpath(a, ra) || !realpath(b, rb))
		return !strcmp(a, b);
	return !strcmp(ra, rb);
}

static bool re_has_group(const void *re, const char *name)
{
	if (!re)
		return false;
	int n = pcre2_substring_number_from_name(re, (PCRE2_SPTR)name);
	return n >= 0 || n == PCRE2_ERROR_NOUNIQUESUBSTRING;     /* (?J) duplicates */
}

static bool has_side_group(const db_profile *p)
{
	return re_has_group(p->path_re, "side") || re_has_group(p->key_re, "side");
}

static bool has_side(const db_index *ix, const char *side)
{
	for (size_t i = 0; i < ix->n_items; i++)
		if (!strcmp(ix->items[i].f.side, side))
			return true;
	return false;
}

static void free_pairs(db_compare *c)
{
	for (size_t i = 0; i < c->n_pairs; i++) {
		free(c->pairs[i].error);
		free(c->pairs[i].ref_shards);
		free(c->pairs[i].tgt_shards);
	}
	free(c->pairs);
	c->pairs = NULL;
	c->n_pairs = 0;
	for (size_t i = 0; i < c->n_phases; i++)
		free(c->phases[i]);
	free(c->phases);
	c->phases = NULL;
	c->n_phases = 0;
}

/* Scan both trees and pair them (c->profile, roots and priv set). */
static int scan_and_pair(db_compare *c, db_index **ref, db_index **tgt, db_err *err)
{
	*ref = *tgt = NULL;
	db_cmp_priv *pr = c->priv;
	bool one = pr->one_folder;
	/* entry metadata of unchanged files comes from the cache; one folder
	 * shares one cache between its two sides */
	db_icache *icr = db_icache_open(pr->cache_dir, c->ref_root);
	db_icache *ict = one ? icr : db_icache_open(pr->cache_dir, c->tgt_root);
	int rc = db_index_scan_ic(c->ref_root, c->profile, one ? "ref" : NULL, icr, ref, err);
	if (rc == 0 &&
	    (rc = db_index_scan_ic(c->tgt_root, c->profile, one ? "target" : NULL, ict, tgt, err))) {
		db_index_free(*ref);
		*ref = NULL;
	}
	db_icache_close(icr);
	if (ict != icr)
		db_icache_close(ict);
	if (rc != 0)
		return -1;
	if (one && (!has_side(*ref, "ref") || !has_side(*tgt, "target"))) {
		db_err_set(err, c->ref_root, NULL, -1,
		           "one folder given, but profile %s finds no %s side in it; "
		           "give REF and TARGET folders", c->profile->name,
		           !has_side(*ref, "ref") ? "reference" : "target");
		db_index_free(*ref);
		db_index_free(*tgt);
		*ref = *tgt = NULL;
		return -1;
	}
	return 0;
}

void db_compare_free(db_compare *c)
{
	if (!c)
		return;
	db_compare_stop(c);
	db_cmp_priv *pr = c->priv;
	if (pr) {
		db_cache_close(c);
		pcre2_code_free(pr->filter_re);
		free(pr->filter);
		free(pr->owner);
		free(pr->cache_dir);
		pthread_mutex_destroy(&pr->cache_mu);
		free(pr);
	}
	free_pairs(c);
	db_index_free(c->ref);
	db_index_free(c->tgt);
	if (c->profile)
		db_profile_free(c->profile);
	free(c->ref_root);
	free(c->tgt_root);
	free(c);
}

static int alloc_owner(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	free(pr->owner);
	pr->owner = calloc(c->n_pairs + 1, sizeof *pr->owner);
	if (!pr->owner)
		return -1;
	for (size_t i = 0; i < c->n_pairs; i++)
		atomic_init(&pr->owner[i], DB_OWNER_FREE);
	return 0;
}

static char *default_cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char buf[PATH_MAX];
	if (x && *x)
		snprintf(buf, sizeof buf, "%s/dumpbisect", x);
	else if (home && *home)
		snprintf(buf, sizeof buf, "%s/.cache/dumpbisect", home);
	else
		return NULL;
	return strdup(buf);
}

int db_compare_open(const char *ref, const char *tgt,
                    const db_compare_opts *opts, db_compare **out, db_err *err)
{
	*out = NULL;
	db_compare_opts none = {0};
	if (!opts)
		opts = &none;
	if (!ref || !*ref)
		return db_err_set(err, NULL, NULL, -1, "no reference given");
	db_compare *c = calloc(1, sizeof *c);
	db_cmp_priv *pr = calloc(1, sizeof *pr);
	if (!c || !pr) {
		free(c);
		free(pr);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	c->priv = pr;
	pthread_mutex_init(&pr->cache_mu, NULL);
	atomic_init(&c->n_done, 0);
	atomic_init(&c->n_cached, 0);
	c->ref_root = strdup(ref);
	c->tgt_root = strdup(tgt ? tgt : ref);
	pr->threads = opts->threads;
	if (!c->ref_root || !c->tgt_root)
		goto oom;
	if (opts->cache_dir)
		pr->cache_dir = *opts->cache_dir ? strdup(opts->cache_dir) : NULL;
	else
		pr->cache_dir = default_cache_dir();
	if (opts->filter && *opts->filter) {
		int ec;
		PCRE2_SIZE eo;
		pr->filter_re = pcre2_compile((PCRE2_SPTR)opts->filter, PCRE2_ZERO_TERMINATED,
		                              PCRE2_UTF, &ec, &eo, NULL);
		if (!pr->filter_re) {
			PCRE2_UCHAR m[256];
			pcre2_get_error_message(ec, m, sizeof m);
			db_err_set(err, NULL, NULL, -1, "--filter '%s': at offset %zu: %s",
			           opts->filter, (size_t)eo, (char *)m);
			db_compare_free(c);
			return -1;
		}
		if (!(pr->filter = strdup(opts->filter)))
			goto oom;
	}
	if (opts->profile && *opts->profile) {
		if (db_profile_load(opts->profile, &c->profile, err) != 0) {
			c->profile = NULL;
			db_compare_free(c);
			return -1;
		}
		snprintf(c->why, sizeof c->why, "%s: given with --profile", c->profile->name);
	} else if (db_profile_detect(ref, &c->profile, c->why, sizeof c->why, err) != 0) {
		c->profile = NULL;
		db_compare_free(c);
		return -1;
	}
	/* one folder: TARGET left out, or the same folder with a side group
	 * (the same folder without one compares a tree with itself) */
	pr->one_folder = !tgt || (same_dir(ref, tgt) && has_side_group(c->profile));
	if (scan_and_pair(c, &c->ref, &c->tgt, err) != 0 || build_pairs(c, err) != 0) {
		db_compare_free(c);
		return -1;
	}
	if (build_phases(c) != 0 || alloc_owner(c) != 0)
		goto oom;
	*out = c;
	return 0;
oom:
	db_compare_free(c);
	return db_err_set(err, NULL, NULL, -1, "out of memory");
}

static bool same_item(const db_item *a, const db_item *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a->path, b->path) && !strcmp(a->key, b->key) && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && !a->err && !b->err;
}

static bool same_inputs(const db_pair *a, const db_pair *b)
{
	if (a->merged != b->merged || a->n_ref_shards != b->n_ref_shards ||
	    a->n_tgt_shards != b->n_tgt_shards)
		return false;
	if (!a->merged)
		return same_item(a->ref, b->ref) && same_item(a->tgt, b->tgt);
	for (size_t i = 0; i < a->n_ref_shards; i++)
		if (!same_item(a->ref_shards[i], b->ref_shards[i]))
			return false;
	for (size_t i = 0; i < a->n_tgt_shards; i++)
		if (!same_item(a->tgt_shards[i], b->tgt_shards[i]))
			return false;
	return true;
}

int db_compare_rescan(db_compare *c, db_err *err)
{
	db_compare_stop(c);
	db_compare tmp = *c;    /* new scan into a scratch copy */
	tmp.pairs = NULL;
	tmp.n_pairs = 0;
	tmp.phases = NULL;
	tmp.n_phases = 0;
	if (scan_and_pair(&tmp, &tmp.ref, &tmp.tgt, err) != 0)
		return -1;
	if (build_pairs(&tmp, err) != 0 || build_phases(&tmp) != 0) {
		free_pairs(&tmp);
		db_index_free(tmp.ref);
		db_index_free(tmp.tgt);
		return -1;
	}
	/* carry over finished results of pairs whose inputs did not change */
	db_strmap old;
	db_strmap_init(&old);
	for (size_t i = 0; i < c->n_pairs; i++) {
		char k[620];
		pair_key(&c->pairs[i].f, c->pairs[i].occurrence, k, sizeof k);
		if (c->pairs[i].merged)
			strcat(k, "\x1fm");
		db_strmap_put(&old, k, i, NULL);
	}
	size_t done = 0;
	for (size_t i = 0; i < tmp.n_pairs; i++) {
		db_pair *np = &tmp.pairs[i];
		char k[620];
		pair_key(&np->f, np->occurrence, k, sizeof k);
		if (np->merged)
			strcat(k, "\x1fm");
		size_t *v = db_strmap_get(&old, k);
		if (np->status == DB_ST_OK && v) {
			db_pair *op = &c->pairs[*v];
			if (atomic_load(&op->state) == DB_PAIR_DONE && same_inputs(op, np)) {
				np->status = op->status;
				np->m = op->m;
				np->band = op->band;
				if (op->error)
					np->error = strdup(op->error);
				atomic_store(&np->state, DB_PAIR_DONE);
			}
		}
		done += atomic_load(&np->state) == DB_PAIR_DONE;
	}
	db_strmap_free(&old);
	free_pairs(c);
	db_index_free(c->ref);
	db_index_free(c->tgt);
	c->ref = tmp.ref;
	c->tgt = tmp.tgt;
	c->pairs = tmp.pairs;
	c->n_pairs = tmp.n_pairs;
	c->phases = tmp.phases;
	c->n_phases = tmp.n_phases;
	atomic_store(&c->n_done, done);
	if (alloc_owner(c) != 0)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	return 0;
}

static bool rank_sel(const db_pair *p, int rank)
{
	if (rank == -2)
		return true;
	if (rank == -1)
		return p->merged || p->f.rank == -1;
	return !p->merged && p->f.rank == rank;
}

long db_first_divergence(const db_compare *c, const char *phase,
                         const char *pass, int rank)
{
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (phase && *phase && strcmp(phase, p->f.phase))
			continue;
		if (pass && *pass && strcmp(pass, p->f.pass))
			continue;
		if (!rank_sel(p, rank))
			continue;
		if (db_pair_diverges(p))
			return (long)i;
	}
	return -1;
}
