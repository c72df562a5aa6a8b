/* Each shard of a merged pair against its slice of the other side's whole
 * tensor; see db_rank_split.h. The slice is a strided view into the whole
 * (no copy): the same strides, the data moved to the slice's start along
 * the concat dim, that dim's length the shard's. */
#include "db_rank_split.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_routing.h"
#include "pair/compare_priv.h"

static long refuse(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static long refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return 0;
}

typedef struct split_job {
	db_compare *c;
	const db_pair *p;
	db_rank_part *parts;
	size_t n;
	db_wctx *w;
	bool whole_ref;
	const db_item *whole_it;
	const db_item *const *sh_it;
	char *why;
	size_t whylen;
	db_err *err;
} split_job;

/* The shards against their slices of the whole, read under db_wctx_run's
 * guard: 1 when every part is measured, 0 refused (why set), -1 with err. */
static int split_read(void *arg)
{
	split_job *j = arg;
	db_compare *c = j->c;
	const db_pair *p = j->p;
	db_rank_part *parts = j->parts;
	size_t n = j->n;
	db_wctx *w = j->w;
	bool whole_ref = j->whole_ref;
	const db_item *whole_it = j->whole_it;
	const db_item *const *sh_it = j->sh_it;
	char *why = j->why;
	size_t whylen = j->whylen;
	db_err *err = j->err;
	const db_tensor *whole;
	const db_file *fw;
	if (db_wctx_tensor(w, whole_ref ? c->ref : c->tgt, whole_it, &whole, &fw, err) != 0)
		return -1;
	if (!whole->data)
		return (int)refuse(why, whylen, "statistics only: a slice has no statistics");
	if (!db_dtype_size(whole->dtype))
		return (int)refuse(why, whylen, "packed dtype: a slice does not start on a byte");
	int nd = whole->ndim;
	int dim = p->unshard.dim < 0 ? p->unshard.dim + nd : p->unshard.dim;
	if (dim < 0 || dim >= nd)
		return (int)refuse(why, whylen, "the concat dim %ld is outside the tensor (%ld dims)",
		            (long)p->unshard.dim, (long)nd);
	int64_t lo = 0;
	for (size_t k = 0; k < n; k++) {
		const db_tensor *s;
		const db_file *fs;
		/* the cache keeps the whole open beside the shards (n + 2 files) */
		if (db_wctx_tensor(w, whole_ref ? c->tgt : c->ref, sh_it[k], &s, &fs, err) != 0)
			return -1;
		if (!s->data || s->ndim != nd)
			return (int)refuse(why, whylen, "shard %ld is not a slice of the other side (%ld dims)",
			            (long)k, (long)s->ndim);
		for (int d = 0; d < nd; d++)
			if (d != dim && s->shape[d] != whole->shape[d])
				return (int)refuse(why, whylen, "shard %ld differs from the other side outside "
				            "the concat dim %ld", (long)k, (long)dim);
		if (lo + s->shape[dim] > whole->shape[dim])
			return (int)refuse(why, whylen, "the shards are longer than the other side along dim %ld",
			            (long)dim);
		db_tensor slice = *whole;
		slice.shape[dim] = s->shape[dim];
		slice.data = whole->data + (size_t)(lo * whole->stride[dim]) * db_dtype_size(whole->dtype);
		slice.file_offset = -1;         /* not the file's contiguous run any more */
		db_rank_part *pt = &parts[k];
		pt->rank = sh_it[k]->f.rank;
		pt->lo = lo;
		pt->len = s->shape[dim];
		if (db_metrics_compute(whole_ref ? &slice : s, whole_ref ? s : &slice, &pt->m, err) != 0)
			return -1;
		db_pair tmp;
		memcpy(&tmp, p, sizeof tmp);
		tmp.m = pt->m;
		pt->band = db_pair_band(c, &tmp);
		lo += s->shape[dim];
	}
	if (lo != whole->shape[dim])
		return (int)refuse(why, whylen, "the shards cover %ld of %ld along the concat dim", (long)lo,
		            (long)whole->shape[dim]);
	return 1;
}

long db_pair_rank_split(db_compare *c, const db_pair *p, db_rank_part **out,
                        char *why, size_t whylen, db_err *err)
{
	*out = NULL;
	why[0] = '\0';
	size_t nr = p->n_ref_shards, nt = p->n_tgt_shards;
	if (!p->merged || p->status != DB_ST_OK)
		return refuse(why, whylen, "not a merged pair");
	if (p->unshard.how == DB_UNSHARD_SUM)
		return refuse(why, whylen, "partial sums: every rank holds a part of each element, "
		              "so no rank's share of the error can be told apart");
	if (p->unshard.how == DB_UNSHARD_FUSED)
		return refuse(why, whylen, "fused parts: a rank's shard is several slices of the "
		              "other side, not one");
	if (!((nr <= 1 && nt >= 2) || (nt <= 1 && nr >= 2)))
		return refuse(why, whylen, "both sides are sharded (%ld vs %ld ranks)", (long)nr,
		              (long)nt);
	bool whole_ref = nr <= 1;
	const db_item *whole_it = whole_ref ? p->ref : p->tgt;
	const db_item *const *sh_it = whole_ref ? p->tgt_shards : p->ref_shards;
	size_t n = whole_ref ? nt : nr;
	if (!whole_it)
		return refuse(why, whylen, "the whole side is missing");
	db_wctx w;
	if (db_wctx_init(&w, n + 2) != 0)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	db_rank_part *parts = calloc(n, sizeof *parts);
	long rc = -1;
	if (!parts) {
		db_err_set(err, NULL, NULL, -1, "out of memory");
		goto out;
	}
	split_job j = {c, p, parts, n, &w, whole_ref, whole_it, sh_it, why, whylen, err};
	if ((rc = db_wctx_run(&w, split_read, &j, err)) != 1)
		goto out;
	*out = parts;
	parts = NULL;
	rc = (long)n;
out:
	free(parts);
	db_wctx_free(&w);
	return rc;
}
