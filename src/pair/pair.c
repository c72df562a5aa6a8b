/* One pair and the vector pairs grow in: status names, an item's name, the
 * divergence predicate, the sides and status of a new pair, and its cell
 * key. Below compare.c (joining) and compare_merge.c (merged pairs), which
 * both build pairs with it. */
#include "db_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_build.h"
#include "compare_priv.h"
#include "db_quant.h"
#include "layout/index_priv.h"

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

bool db_pair_judged_bitwise(const db_pair *p)
{
	return p->slot.side == DB_SLOT_IN_TREE ||
	       atomic_load_explicit(&((db_pair *)p)->bitwise, memory_order_relaxed);
}

bool db_pair_diverges(const db_pair *p)
{
	if (atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire) != DB_PAIR_DONE)
		return false;
	/* a layout that cannot be undone says nothing about the model */
	if (p->status == DB_ST_NOT_COMPARABLE)
		return false;
	/* slots of one batch hold the same prompt: the same kernels owe the
	 * same bits, so any bit that differs is the divergence (its band is
	 * shown beside it) */
	if (p->status == DB_ST_OK && db_pair_judged_bitwise(p))
		return !(p->m.byte_equal == 1.0);
	/* --noise: the run's own noise decides, where it has a floor */
	if (p->status == DB_ST_OK && p->noise == DB_NOISE_WITHIN)
		return false;
	if (p->status == DB_ST_OK && p->noise == DB_NOISE_BEYOND)
		return true;
	return p->status != DB_ST_OK || p->band > DB_BAND_OK;
}

/* ---- pair building ---------------------------------------------------- */

int db_pvec_grow(db_pvec *pv, size_t cap)
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

db_pair *db_pvec_add(db_pvec *pv, int64_t major, int64_t sub)
{
	if (pv->n == pv->cap && db_pvec_grow(pv, pv->cap ? pv->cap * 2 : 256) != 0)
		return NULL;
	pv->major[pv->n] = major;
	pv->sub[pv->n] = sub;
	pv->dead[pv->n] = false;
	db_pair *p = &pv->v[pv->n++];
	memset(p, 0, sizeof *p);
	p->ndim_ref = p->ndim_tgt = -1;
	return p;
}

void db_pair_set_side(db_pair *p, const db_item *it, bool ref)
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

void db_pair_set_error(db_pair *p, const char *msg)
{
	p->status = DB_ST_ERROR;
	free(p->error);
	p->error = strdup(msg);
}

/* The target's shape is the reference's with its last two dims swapped
 * (and differs from it), its values plain: a transposed weight. */
static bool swapped_last2(const db_pair *p)
{
	int n = p->ndim_ref;
	if (p->merged || n < 2 || p->ndim_tgt != n || (p->tgt && p->tgt->quant) ||
	    p->shape_ref[n - 2] == p->shape_ref[n - 1])
		return false;
	for (int d = 0; d < n - 2; d++)
		if (p->shape_ref[d] != p->shape_tgt[d])
			return false;
	return p->shape_ref[n - 2] == p->shape_tgt[n - 1] && p->shape_ref[n - 1] == p->shape_tgt[n - 2];
}

/* Status of a pair whose sides are set; OK means "to be computed". */
void db_pair_classify(db_pair *p)
{
	const db_item *r = p->ref, *t = p->tgt;
	if (r && r->err && !p->merged) {
		db_pair_set_error(p, r->err);
		return;
	}
	if (t && t->err && !p->merged) {
		db_pair_set_error(p, t->err);
		return;
	}
	if (p->status == DB_ST_ERROR)
		return;
	/* a quantized weight whose companions do not fit it */
	for (int s = 0; s < 2; s++) {
		const db_item *it = s ? t : r;
		if (it && it->quant && it->quant->err && !p->merged) {
			db_pair_set_error(p, it->quant->err);
			return;
		}
	}
	if (p->ndim_ref < 0) {
		p->status = DB_ST_TARGET_ONLY;
		return;
	}
	if (p->ndim_tgt < 0) {
		p->status = DB_ST_REF_ONLY;
		return;
	}
	p->dtype_differs = p->dtype_ref != p->dtype_tgt;
	/* equal numel but another shape is a mismatch too: no silent reshape;
	 * a weight stored [in, out] against [out, in] may be read transposed
	 * (db_build_pairs keeps that for weights trees only) */
	p->tposed = false;
	if (!shapes_equal(p->ndim_ref, p->shape_ref, p->ndim_tgt, p->shape_tgt)) {
		if (!swapped_last2(p)) {
			p->status = DB_ST_SHAPE_MISMATCH;
			return;
		}
		p->tposed = true;
	}
	/* codes with their scales compare dequantized */
	if ((!db_dtype_comparable(p->dtype_ref) && !(r && r->quant)) ||
	    (!db_dtype_comparable(p->dtype_tgt) && !(t && t->quant))) {
		char msg[160];
		snprintf(msg, sizeof msg, "not comparable: dtype %s vs %s",
		         db_dtype_name(p->dtype_ref), db_dtype_name(p->dtype_tgt));
		db_pair_set_error(p, msg);
		return;
	}
	if (db_dtype_is_complex(p->dtype_ref) != db_dtype_is_complex(p->dtype_tgt)) {
		char msg[160];
		snprintf(msg, sizeof msg, "not comparable: complex vs real (%s vs %s)",
		         db_dtype_name(p->dtype_ref), db_dtype_name(p->dtype_tgt));
		db_pair_set_error(p, msg);
		return;
	}
	p->status = DB_ST_OK;
	p->numel = shape_numel(p->ndim_ref, p->shape_ref);
}

void db_pair_fields_key(const db_ifields *f, int occ, char *buf, size_t len)
{
	db_fields_key_occ(f, occ, buf, len);
}
