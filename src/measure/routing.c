/* Exact comparison of routed expert ids (db_routing.h). */
#include "db_routing.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_reader.h"
#include "dequant.h"

static bool is_int(db_dtype d)
{
	return d >= DB_DT_I8 && d <= DB_DT_U64;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The item's tensor as doubles (malloc'd into *v), 0 or -1 with err; its
 * values are read under a guard (db_bus.h). */
static int load(const db_index *ix, const db_item *it, double **v, int64_t *n, db_err *err)
{
	char *path = db_index_path(ix, it);
	if (!path)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	db_file *f = NULL;
	int rc = db_file_open(path, &f, err);
	const db_entry *en = rc == 0 ? db_file_find(f, it->key) : NULL;
	if (rc == 0 && (!en || en->err))
		rc = db_err_set(err, path, it->key, -1, "%s", en ? en->err : "entry is gone");
	else if (rc == 0 && !en->t.data)
		rc = db_err_set(err, path, it->key, -1, "statistics only: no ids to compare");
	if (rc == 0) {
		*n = db_tensor_numel(&en->t);
		*v = malloc((size_t)(*n ? *n : 1) * sizeof **v);
		if (!*v)
			rc = db_err_set(err, NULL, NULL, -1, "out of memory");
		const void *at = NULL;
		if (rc == 0 && db_tensor_to_f64(&en->t, *v, *n, &at) != 0) {
			rc = db_err_set(err, path, it->key, (int64_t)((const uint8_t *)at - f->map),
			                "file changed while read (it shrank under its mapping); rescan");
			free(*v);
			*v = NULL;
		}
	}
	db_file_close(f);
	free(path);
	return rc;
}

int db_routing_compare(const db_compare *c, const db_pair *p, db_routing *out,
                       db_err *err)
{
	memset(out, 0, sizeof *out);
	if (!c->profile || !db_profile_is_routing_ids(c->profile, p->f.stage) || p->merged ||
	    !p->ref || !p->tgt || p->ref->err || p->tgt->err || p->ref->ndim < 1 ||
	    p->ref->ndim != p->tgt->ndim || !is_int(p->ref->dtype) || !is_int(p->tgt->dtype) ||
	    memcmp(p->ref->shape, p->tgt->shape, (size_t)p->ref->ndim * sizeof *p->ref->shape))
		return 0;
	double *a = NULL, *b = NULL;
	int64_t na = 0, nb = 0;
	if (load(c->ref, p->ref, &a, &na, err) < 0 || load(c->tgt, p->tgt, &b, &nb, err) < 0 ||
	    na != nb) {
		free(a);
		free(b);
		return na != nb ? db_err_set(err, NULL, NULL, -1, "routing ids changed size") : -1;
	}
	int64_t k = p->ref->shape[p->ref->ndim - 1];
	out->k = (int)k;
	out->tokens = k ? na / k : 0;
	for (int64_t t = 0; t < out->tokens; t++) {
		qsort(a + t * k, (size_t)k, sizeof *a, cmp_d);
		qsort(b + t * k, (size_t)k, sizeof *b, cmp_d);
		if (memcmp(a + t * k, b + t * k, (size_t)k * sizeof *a))
			out->rerouted++;
	}
	free(a);
	free(b);
	return 1;
}

const char *db_routing_words(const db_compare *c, const db_pair *p, char *buf, size_t len)
{
	db_routing r;
	db_err e;
	if (p->status == DB_ST_OK && db_routing_compare(c, p, &r, &e) == 1)
		snprintf(buf, len, "%lld of %lld tokens chose other experts", (long long)r.rerouted,
		         (long long)r.tokens);
	else if (len)
		buf[0] = '\0';
	return buf;
}

db_band db_pair_band(const db_compare *c, const db_pair *p)
{
	db_band b = db_band_for(c->profile, p->f.stage, &p->m);
	db_routing r;
	db_err e;
	if (b != DB_BAND_NONE && db_routing_compare(c, p, &r, &e) == 1)
		b = r.rerouted ? DB_BAND_BUG : DB_BAND_OK;
	return db_quant_band(b, &p->m);
}
