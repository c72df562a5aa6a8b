/* Quantized weights grouped with their companions (companions.h): a weight
 * whose name ends as a profile rule's `of` and whose companions (`scale`,
 * `scale2`, `zero`) exist beside it is paired as its dequantized tensor;
 * the companions are consumed, never paired on their own. */
#include "companions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/intern.h"
#include "util/strmap.h"

/* An item's name for companion lookup: its key, else its path without the
 * extension (a file holding one tensor). */
static size_t item_name(const db_item *it, char *buf, size_t len)
{
	const char *s = it->key && it->key[0] ? it->key : it->path;
	size_t n = strlen(s);
	if (!(it->key && it->key[0])) {
		const char *dot = strrchr(s, '.'), *slash = strrchr(s, '/');
		if (dot && (!slash || dot > slash))
			n = (size_t)(dot - s);
	}
	if (n >= len)
		return 0;
	memcpy(buf, s, n);
	buf[n] = 0;
	return n;
}

/* side, phase, pass, rank: the scope companions are looked up in */
static size_t scope(const db_item *it, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s\x1f%s\x1f%s\x1f%d\x1f", it->f.side, it->f.phase,
	                 it->f.pass, it->f.rank);
	return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

typedef struct finder {
	const db_index *ix;
	db_strmap by_name;
} finder;

/* The item named base + suffix in it's scope, or NULL. */
static const db_item *find(const finder *fd, const db_item *it, const char *base, size_t nb,
                           const char *suffix, size_t *idx)
{
	char k[1200];
	size_t s = scope(it, k, sizeof k);
	if (!s || s + nb + strlen(suffix) + 1 > sizeof k)
		return NULL;
	memcpy(k + s, base, nb);
	strcpy(k + s + nb, suffix);
	size_t *v = db_strmap_get(&fd->by_name, k);
	if (!v)
		return NULL;
	if (idx)
		*idx = *v;
	return &fd->ix->items[*v];
}

static char *item_label(const db_item *it)
{
	char *n = db_item_name(it);
	return n ? n : strdup("?");
}

/* g's logical shape and scale blocks; g->err when they do not fit. */
static void settle_group(db_qgroup *g)
{
	const db_quant_rule *r = g->rule;
	char msg[400];
	const db_item *bad = g->codes;
	int rc = 0;
	const db_item *errs[] = {g->codes, g->scale, g->scale2, g->zero, g->gidx};
	for (size_t i = 0; i < sizeof errs / sizeof *errs && !rc; i++)
		if (errs[i] && errs[i]->err) {
			snprintf(msg, sizeof msg, "%s", errs[i]->err);
			g->err = strdup(msg);
			return;
		}
	rc = db_quant_logical_shape(r, g->codes->dtype, g->codes->ndim, g->codes->shape,
	                            &g->ndim, g->shape, msg, sizeof msg);
	if (!rc) {
		bad = g->scale;
		rc = db_quant_scale_blocks(r, g->ndim, g->shape, g->scale->ndim, g->scale->shape,
		                           g->block, msg, sizeof msg);
	}
	if (!rc && g->zero) {
		int64_t zb[DB_MAX_DIMS], zs[DB_MAX_DIMS];
		bad = g->zero;
		db_quant_zero_shape(r, g->zero->dtype, g->zero->ndim, g->zero->shape, zs);
		rc = db_quant_scale_blocks(r, g->ndim, g->shape, g->zero->ndim, zs, zb,
		                           msg, sizeof msg);
		if (!rc && memcmp(zb, g->block, (size_t)g->ndim * sizeof *zb)) {
			snprintf(msg, sizeof msg, "zero points and scales tile the weight differently");
			rc = -1;
		}
	}
	if (!rc && g->gidx) {
		/* one group per input column, each a group of the scales */
		bad = g->gidx;
		int64_t n = 1;
		for (int d = 0; d < g->gidx->ndim; d++)
			n *= g->gidx->shape[d];
		if (g->gidx->ndim != 1 || n != g->shape[g->ndim - 1] ||
		    (g->gidx->dtype != DB_DT_I32 && g->gidx->dtype != DB_DT_I64)) {
			snprintf(msg, sizeof msg, "%s: a group index is one int32 per input column "
			         "(%lld), this one %s [%lld]", r->group_index,
			         (long long)g->shape[g->ndim - 1], db_dtype_name(g->gidx->dtype),
			         (long long)n);
			rc = -1;
		}
	}
	if (!rc && g->scale2) {
		int64_t n = 1;
		for (int d = 0; d < g->scale2->ndim; d++)
			n *= g->scale2->shape[d];
		if (n != 1) {
			bad = g->scale2;
			snprintf(msg, sizeof msg, "%s: a global scale holds one value, this one %lld",
			         r->scale2, (long long)n);
			rc = -1;
		}
	}
	if (!rc)
		return;
	char *lab = item_label(bad);
	size_t n = strlen(lab) + strlen(msg) + strlen(r->name) + 32;
	g->err = malloc(n);
	if (g->err)
		snprintf(g->err, n, "%s: %s (quant rule %s)", lab, msg, r->name);
	free(lab);
}

/* The stage of the dequantized tensor: `of` at its end becomes `as`. */
static int rename_stage(db_ifields *f, const db_quant_rule *r)
{
	char stage[sizeof ((db_fields *)0)->stage];
	size_t ls = strlen(f->stage), lo = strlen(r->of), la = strlen(r->as);
	if (!strcmp(r->of, r->as) || ls < lo || strcmp(f->stage + ls - lo, r->of))
		return 0;
	if (ls - lo + la >= sizeof stage)
		return 0;
	memcpy(stage, f->stage, ls - lo);
	memcpy(stage + ls - lo, r->as, la + 1);
	/* "experts.w_blocks" -> "experts.w", not "experts.w." */
	size_t m = strlen(stage);
	if (m && stage[m - 1] == '.')
		stage[m - 1] = 0;
	const char *s = db_intern(stage);
	if (!s)
		return -1;
	f->stage = s;
	return 0;
}

/* The scale's dtype can be what the rule reads. */
static bool scale_fits(const db_quant_rule *r, db_dtype dt)
{
	switch (r->scale_type) {
	case DB_QS_E8M0: return dt == DB_DT_U8 || dt == DB_DT_F8_E8M0FNU;
	case DB_QS_E4M3: return dt == DB_DT_U8 || dt == DB_DT_F8_E4M3FN;
	case DB_QS_STORED: break;
	}
	return db_dtype_comparable(dt) && !db_dtype_is_complex(dt);
}

/* The group's dtypes and shapes fit its rule: two rules may name the same
 * companions (NVFP4's and MXFP4's weight_scale, int8's). */
static bool group_fits(const db_qgroup *g)
{
	const db_quant_rule *r = g->rule;
	char msg[300];
	int nd;
	int64_t ls[DB_MAX_DIMS], blk[DB_MAX_DIMS];
	const db_item *w = g->codes, *s = g->scale;
	if (w->err || s->err || !scale_fits(r, s->dtype))
		return false;
	if (db_quant_logical_shape(r, w->dtype, w->ndim, w->shape, &nd, ls, msg, sizeof msg))
		return false;
	if (db_quant_scale_blocks(r, nd, ls, s->ndim, s->shape, blk, msg, sizeof msg))
		return false;
	if (g->zero && r->values == DB_QV_INT4) {
		/* GPTQ's and AWQ's qzeros differ in their packing only */
		int64_t zs[DB_MAX_DIMS], zb[DB_MAX_DIMS];
		db_quant_zero_shape(r, g->zero->dtype, g->zero->ndim, g->zero->shape, zs);
		if (g->zero->err || db_quant_scale_blocks(r, nd, ls, g->zero->ndim, zs, zb, msg,
		                                          sizeof msg) ||
		    memcmp(zb, blk, (size_t)nd * sizeof *zb))
			return false;
	}
	return true;
}

/* Which rule groups item i (its companions' indices into ix), or -1: the
 * first whose companions exist and fit; else the first whose companions
 * exist (its group then says why they do not fit). */
static int match_pass(const db_profile *p, const finder *fd, size_t i, size_t comp[8],
                      int *ncomp, db_qgroup *g, bool strict);

static int match(const db_profile *p, const finder *fd, size_t i, size_t comp[8], int *ncomp,
                 db_qgroup *g)
{
	int k = match_pass(p, fd, i, comp, ncomp, g, true);
	return k >= 0 ? k : match_pass(p, fd, i, comp, ncomp, g, false);
}

static int match_pass(const db_profile *p, const finder *fd, size_t i, size_t comp[8],
                      int *ncomp, db_qgroup *g, bool strict)
{
	const db_item *it = &fd->ix->items[i];
	char name[1000];
	size_t nn = item_name(it, name, sizeof name);
	if (!nn)
		return -1;
	for (size_t k = 0; k < p->n_quant; k++) {
		const db_quant_rule *r = &p->quant[k];
		size_t lo = strlen(r->of);
		if (nn <= lo || strcmp(name + nn - lo, r->of) || !db_quant_codes_fit(r, it->dtype))
			continue;
		size_t nb = nn - lo;
		memset(g, 0, sizeof *g);
		int n = 0;
		if (!(g->scale = find(fd, it, name, nb, r->scale, &comp[n])))
			continue;
		n++;
		if (r->scale2) {
			if (!(g->scale2 = find(fd, it, name, nb, r->scale2, &comp[n])))
				continue;
			n++;
		}
		if (r->zero) {
			if (!(g->zero = find(fd, it, name, nb, r->zero, &comp[n])))
				continue;
			n++;
		}
		if (r->group_index &&
		    (g->gidx = find(fd, it, name, nb, r->group_index, &comp[n])))
			n++;
		for (size_t a = 0; a < r->n_also; a++) {
			const db_item *x = find(fd, it, name, nb, r->also[a], &comp[n]);
			if (x) {
				g->also[g->n_also++] = x;
				n++;
			}
		}
		g->rule = r;
		g->codes = it;
		if (strict && !group_fits(g))
			continue;
		*ncomp = n;
		return (int)k;
	}
	return -1;
}

/* Some item could be a rule's codes: most trees (activations, bf16
 * weights) hold none, and build no name map. */
static bool any_codes(const db_profile *p, const db_index *ix)
{
	for (size_t i = 0; i < ix->n_items; i++) {
		char name[1000];
		size_t nn = item_name(&ix->items[i], name, sizeof name);
		for (size_t k = 0; nn && k < p->n_quant; k++) {
			const db_quant_rule *r = &p->quant[k];
			size_t lo = strlen(r->of);
			if (nn > lo && !strcmp(name + nn - lo, r->of) &&
			    db_quant_codes_fit(r, ix->items[i].dtype))
				return true;
		}
	}
	return false;
}

int db_companions_group(const db_profile *p, const db_index *ix, const db_item **in,
                        size_t nin, db_qset **sets, const db_item ***out, size_t *nout)
{
	*out = malloc((nin + 1) * sizeof **out);
	if (!*out)
		return -1;
	*nout = 0;
	if (!p->n_quant || !any_codes(p, ix)) {
		memcpy(*out, in, nin * sizeof *in);
		*nout = nin;
		return 0;
	}
	finder fd = {ix, {0}};
	db_strmap_init(&fd.by_name);
	uint8_t *role = calloc(ix->n_items + 1, 1);     /* 1 companion, 2 grouped weight */
	size_t *gi = calloc(ix->n_items + 1, sizeof *gi);
	db_qset *qs = calloc(1, sizeof *qs);
	int rc = role && gi && qs && db_strmap_reserve(&fd.by_name, ix->n_items) == 0 ? 0 : -1;
	for (size_t i = 0; i < ix->n_items && rc == 0; i++) {
		char k[1200];
		const db_item *it = &ix->items[i];
		size_t s = scope(it, k, sizeof k);
		if (s && item_name(it, k + s, sizeof k - s) && !db_strmap_put(&fd.by_name, k, i, NULL))
			rc = -1;
	}
	/* every weight with its companions, over the whole index: a filter
	 * that keeps a weight keeps its scales too */
	size_t ng = 0;
	db_qgroup g;
	for (size_t i = 0; i < ix->n_items && rc == 0; i++) {
		size_t comp[8];
		int nc = 0;
		if (role[i] == 1 || match(p, &fd, i, comp, &nc, &g) < 0)
			continue;
		bool taken = false;
		for (int c = 0; c < nc; c++)
			taken |= role[comp[c]] == 2;
		if (taken)      /* a weight is nobody's scale */
			continue;
		role[i] = 2;
		for (int c = 0; c < nc; c++)
			role[comp[c]] = 1;
		gi[i] = ng++;
	}
	if (rc == 0 && ng) {
		qs->items = calloc(ng, sizeof *qs->items);
		qs->groups = calloc(ng, sizeof *qs->groups);
		if (!qs->items || !qs->groups)
			rc = -1;
	}
	for (size_t i = 0; i < ix->n_items && rc == 0; i++) {
		if (role[i] != 2)
			continue;
		size_t comp[8];
		int nc = 0;
		db_qgroup *q = &qs->groups[gi[i]];
		match(p, &fd, i, comp, &nc, q);
		settle_group(q);
		db_item *sh = &qs->items[gi[i]];
		*sh = ix->items[i];
		if (rename_stage(&sh->f, q->rule) < 0)
			rc = -1;
		if (!q->err) {
			sh->ndim = q->ndim;
			memcpy(sh->shape, q->shape, sizeof sh->shape);
		}
		sh->quant = q;
		qs->n++;
	}
	for (size_t j = 0; j < nin && rc == 0; j++) {
		size_t i = (size_t)(in[j] - ix->items);
		if (i >= ix->n_items) {         /* not this index's: keep as is */
			(*out)[(*nout)++] = in[j];
			continue;
		}
		if (role[i] == 1)
			continue;
		(*out)[(*nout)++] = role[i] == 2 ? &qs->items[gi[i]] : in[j];
	}
	db_strmap_free(&fd.by_name);
	free(role);
	free(gi);
	if (rc != 0) {
		db_qsets_free(qs);
		free(*out);
		*out = NULL;
		return -1;
	}
	qs->next = *sets;
	*sets = qs;
	return 0;
}

void db_qsets_free(db_qset *s)
{
	while (s) {
		db_qset *nx = s->next;
		for (size_t i = 0; i < s->n; i++)
			free(s->groups[i].err);
		free(s->items);
		free(s->groups);
		free(s);
		s = nx;
	}
}
