/* Pairing: join the reference and target indices on (phase, pass, rank,
 * layer, stage, occurrence), add merged pairs for sharded stages and line
 * up cells whose two sides have different parallel layouts (both in
 * compare_merge.c), order the pairs by execution order. Metrics are
 * computed by workers.c. */
#include "db_compare.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_align.h"
#include "companions.h"
#include "compare_build.h"
#include "compare_priv.h"
#include "align_items.h"
#include "standins.h"
#include "layout/index_priv.h"
#include "db_re.h"

/* 1 when the filter keeps it (its stage or its key matches), 0 not, -1
 * when the filter hit its regex limit (err names the filter and the name:
 * "matches no tensor" would be a wrong answer). */
static int item_kept(const db_cmp_priv *pr, const db_profile *prof, const db_item *it, void *md,
                     db_err *err)
{
	if (!pr->filter_re)
		return 1;
	int rc = db_re_search(pr->filter_re, pr->filter, it->f.stage, md, err);
	/* the key of a {value, meta} payload's tensor ("value") names nothing:
	 * a filter that drops a name ("^(?!pre_mlp_layernorm_output$)") must
	 * not keep it through that key */
	const char *inner = it->key && it->key[0] && prof ? db_profile_inner_key(prof, it->key) : it->key;
	if (rc == 0 && inner && inner[0])
		rc = db_re_search(pr->filter_re, pr->filter, it->key, md, err);
	if (rc < 0) {
		db_err e = *err;
		db_err_set(err, NULL, NULL, -1, "--filter: %s", e.msg);
	}
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

/* The pairs come mostly in order (reference pairs by sequence; merged
 * and target-only ones after): sort only past the sorted prefix and
 * merge, O(n) for a tree without them (a full sort was 12 % of a 100k
 * reopen). The order is the same: cmp_sortrec is total (idx). */
static void sort_mostly_sorted(sortrec *sr, size_t n)
{
	size_t k = 1;
	while (k < n && cmp_sortrec(&sr[k - 1], &sr[k]) < 0)
		k++;
	if (k >= n)
		return;
	qsort(sr + k, n - k, sizeof *sr, cmp_sortrec);
	sortrec *tail = malloc((n - k) * sizeof *tail);
	if (!tail) {
		qsort(sr, n, sizeof *sr, cmp_sortrec);
		return;
	}
	memcpy(tail, sr + k, (n - k) * sizeof *tail);
	/* merge from the back: sr[0..k) and tail into sr[0..n) */
	size_t i = k, j = n - k, o = n;
	while (j) {
		if (i && cmp_sortrec(&sr[i - 1], &tail[j - 1]) > 0)
			sr[--o] = sr[--i];
		else
			sr[--o] = tail[--j];
	}
	free(tail);
}

static int collect(const db_cmp_priv *pr, const db_index *ix, const db_item ***out, size_t *n,
                   db_err *err)
{
	*out = malloc((ix->n_items + 1) * sizeof **out);
	pcre2_match_data *md = pr->filter_re
		? pcre2_match_data_create_from_pattern(pr->filter_re, NULL) : NULL;
	if (!*out || (pr->filter_re && !md)) {
		pcre2_match_data_free(md);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	*n = 0;
	int rc = 0;
	for (size_t i = 0; i < ix->n_items && rc >= 0; i++)
		if ((rc = item_kept(pr, ix->profile, &ix->items[i], md, err)) == 1)
			(*out)[(*n)++] = &ix->items[i];
	pcre2_match_data_free(md);
	return rc < 0 ? -1 : 0;
}

/* Quantized weights replaced by their dequantized copies, companions left
 * out (companions.c). */
static int quant_group(db_compare *c, const db_index *ix, const db_item ***items, size_t *n)
{
	const db_item **out = NULL;
	size_t nout = 0;
	db_qset *qs = c->quant;
	if (db_companions_group(c->profile, ix, *items, *n, &qs, &out, &nout) != 0)
		return -1;
	c->quant = qs;
	free(*items);
	*items = out;
	*n = nout;
	return 0;
}

unsigned long db_next_pairs_gen(void)
{
	static _Atomic unsigned long gen;
	return atomic_fetch_add(&gen, 1) + 1;
}

static bool safetensors(const db_item *it)
{
	size_t n = strlen(it->path), k = strlen(".safetensors");
	return n > k && !strcmp(it->path + n - k, ".safetensors");
}

bool db_pair_is_weight(const db_profile *pr, const db_pair *p)
{
	if (!p->ref || !p->tgt)
		return false;
	if (pr->dict_order_none || p->ref->quant || p->tgt->quant)
		return true;
	return !p->f.phase[0] && !p->f.pass[0] && safetensors(p->ref) && safetensors(p->tgt);
}

/* Whether db_build_merged can change pv (true on OOM: it then runs). A cell merges
 * by a shard rule of its stage, or lines up across layouts when its two
 * sides' ranks differ, which leaves a pair one-sided when pairs join on
 * the whole key (not by calls, not lone files). Grouping 10^6 items by
 * cell was a seventh of a reopen's pairing, for nothing in most trees. */
static bool may_merge(const db_profile *pf, const db_pvec *pv, bool lone)
{
	if (pf->pair_calls || lone)
		return true;
	for (size_t i = 0; i < pv->n; i++)
		if (!pv->v[i].ref || !pv->v[i].tgt)
			return true;
	if (!pf->n_shards)
		return false;
	db_nameset seen;
	db_nameset_init(&seen);
	bool ruled = false;
	for (size_t i = 0; i < pv->n && !ruled; i++) {
		const char *st = pv->v[i].f.stage;
		int added = db_nameset_add(&seen, st);
		ruled = added < 0 || (added && db_profile_shard(pf, st));
	}
	db_nameset_free(&seen);
	return ruled;
}

int db_build_pairs(db_compare *c, db_err *err)
{
	db_cmp_priv *pr = c->priv;
	const db_item **ri = NULL, **ti = NULL;
	size_t nri = 0, nti = 0;
	c->quant = NULL;        /* a new generation (a rescan's copy held the old one) */
	if (collect(pr, c->ref, &ri, &nri, err) || collect(pr, c->tgt, &ti, &nti, err)) {
		free(ri);
		free(ti);
		return -1;
	}
	if (quant_group(c, c->ref, &ri, &nri) || quant_group(c, c->tgt, &ti, &nti) ||
	    db_align_items(c, true, &ri, &nri) || db_align_items(c, false, &ti, &nti) ||
	    db_error_standins(c, &ri, &nri, &ti, &nti)) {
		free(ri);
		free(ti);
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
	db_pvec pv = {0};
	db_pkmap by_key;
	db_pkmap_init(&by_key);
	int rc = 0;
	/* room for every pair but merged ones at once: no regrowth (copies
	 * and page faults of a ~50 MB array at 100k files, issue 12) */
	if (db_pvec_grow(&pv, nri + nti) != 0 || db_pkmap_reserve(&by_key, nri) != 0)
		rc = -1;
	for (size_t i = 0; i < nri && rc == 0; i++) {
		db_pkey k = db_pkey_of(&ri[i]->f, ri[i]->occurrence);
		db_pair *p = db_pvec_add(&pv, ri[i]->seq, 0);
		if (!p || !db_pkmap_put(&by_key, &k, pv.n - 1, NULL)) {
			rc = -1;
			break;
		}
		p->f = ri[i]->f;
		p->f.side = "";
		p->f.order = -1;
		p->occurrence = ri[i]->occurrence;
		p->ref = ri[i];
		db_pair_set_side(p, ri[i], true);
	}
	/* two single files holding one tensor each: compare them whatever
	 * their names say */
	bool lone = c->ref->root_is_file && c->tgt->root_is_file && nri == 1 && nti == 1;
	int64_t anchor = -1;
	/* pairing: calls: the target's entries take the reference entry the
	 * alignment gave them, or none */
	long *tmatch = NULL;
	bool *aligned = NULL;
	c->calls_unaligned = c->calls_unaligned_ref = c->calls_unaligned_tgt = 0;
	if (rc == 0 && c->profile->pair_calls && !lone) {
		tmatch = malloc((nti + 1) * sizeof *tmatch);
		aligned = malloc((nti + 1) * sizeof *aligned);
		db_align_fallback fb;
		if (!tmatch || !aligned ||
		    db_align_calls((const db_item *const *)ri, nri, (const db_item *const *)ti, nti,
		                   tmatch, aligned, NULL, &fb))
			rc = -1;
		else {
			c->calls_unaligned = fb.groups;
			c->calls_unaligned_ref = fb.ref_calls;
			c->calls_unaligned_tgt = fb.tgt_calls;
		}
	}
	size_t near = 0;
	for (size_t i = 0; i < nti && rc == 0; i++) {
		db_pkey k = lone ? db_pkey_of(&ri[0]->f, ri[0]->occurrence)
		                 : db_pkey_of(&ti[i]->f, ti[i]->occurrence);
		size_t *v = db_pkmap_get_near(&by_key, &k, &near), vm;
		if (aligned && aligned[i]) {
			vm = (size_t)tmatch[i];
			v = tmatch[i] >= 0 ? &vm : NULL;
		}
		if (v) {
			db_pair *p = &pv.v[*v];
			p->tgt = ti[i];
			db_pair_set_side(p, ti[i], false);
			if (p->ref->seq > anchor)
				anchor = p->ref->seq;
			continue;
		}
		/* target-only: right after the last matched pair seen before it */
		db_pair *p = db_pvec_add(&pv, anchor, 2 + ti[i]->seq);
		/* a call only the target makes may share a name with one only
		 * the reference makes: the first keeps it */
		if (!p || !db_pkmap_put(&by_key, &k, pv.n - 1, NULL)) {
			rc = -1;
			break;
		}
		p->f = ti[i]->f;
		p->f.side = "";
		p->f.order = -1;
		p->occurrence = ti[i]->occurrence;
		p->tgt = ti[i];
		db_pair_set_side(p, ti[i], false);
	}
	free(tmatch);
	free(aligned);
	for (size_t i = 0; i < pv.n; i++)
		db_pair_classify(&pv.v[i]);
	if (rc == 0 && may_merge(c->profile, &pv, lone))
		rc = db_build_merged(c, &pv, ri, nri, ti, nti, &by_key);
	db_pkmap_free(&by_key);
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
	sort_mostly_sorted(sr, n);
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
		/* a transposed shape is read transposed in weights trees only:
		 * an activation of another shape is a finding as it is */
		if (out[i].tposed && !db_pair_is_weight(c->profile, &out[i])) {
			out[i].tposed = false;
			out[i].status = DB_ST_SHAPE_MISMATCH;
		}
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
	db_align_settle(c);
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
	db_qsets_free(c->quant);
	c->quant = NULL;
	db_align_free(c->align);
	c->align = NULL;
	for (size_t i = 0; i < c->n_phases; i++)
		free(c->phases[i]);
	free(c->phases);
	c->phases = NULL;
	c->n_phases = 0;
}
