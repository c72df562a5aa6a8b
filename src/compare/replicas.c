/* The replicated-rank check (db_replicas.h): each side's items grouped by
 * place (phase, pass, layer, stage, occurrence), the groups of several
 * ranks that the dump's meta dims or the profile call replicated, each
 * rank against the group's lowest. */
#include "db_replicas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_re.h"
#include "db_reader.h"
#include "layout/meta_dims.h"

static int cmp_place(const void *a, const void *b)
{
	const db_item *x = *(const db_item *const *)a, *y = *(const db_item *const *)b;
	const void *px[] = {x->f.side, x->f.phase, x->f.pass, x->f.stage};
	const void *py[] = {y->f.side, y->f.phase, y->f.pass, y->f.stage};
	for (int i = 0; i < 4; i++)     /* interned: one pointer per name */
		if (px[i] != py[i])
			return (uintptr_t)px[i] < (uintptr_t)py[i] ? -1 : 1;
	if (x->f.layer != y->f.layer)
		return x->f.layer < y->f.layer ? -1 : 1;
	if (x->occurrence != y->occurrence)
		return x->occurrence < y->occurrence ? -1 : 1;
	if (x->f.rank != y->f.rank)
		return x->f.rank < y->f.rank ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static bool same_place(const db_item *x, const db_item *y)
{
	return x->f.side == y->f.side && x->f.phase == y->f.phase && x->f.pass == y->f.pass &&
	       x->f.stage == y->f.stage && x->f.layer == y->f.layer &&
	       x->occurrence == y->occurrence;
}

/* The dims string says replicated: an "AXIS:replicated" in its comment and
 * no sharded (bracketed) dim. */
static bool dims_replicated(const char *s)
{
	db_dims d;
	db_dims_parse(s, &d);
	const char *h = strchr(s, '#');
	if (d.kind != DB_DIMS_REPLICATED || !h)
		return false;
	for (const char *p = h + 1; *p;) {
		while (*p == ' ' || *p == '\t')
			p++;
		size_t n = strcspn(p, " \t");
		const char *c = memchr(p, ':', n);
		if (c && (size_t)(p + n - c) == 11 && !strncmp(c, ":replicated", 11) && c > p)
			return true;
		p += n;
	}
	return false;
}

/* Why g's ranks must agree ("dims '...'", "profile"), or false. */
static bool replicated(const db_compare *c, const db_index *ix, const db_item *it, char *by,
                       size_t len)
{
	const db_profile *pf = c->profile;
	for (size_t i = 0; pf && i < pf->n_replicated; i++) {
		int m = db_re_search(pf->replicated_re[i], pf->replicated[i], it->f.stage, NULL, NULL);
		if (m > 0) {
			snprintf(by, len, "profile replicated '%.*s'", (int)(len > 24 ? len - 24 : 0),
			         pf->replicated[i]);
			return true;
		}
	}
	/* meta dims live beside the tensor in dict payloads ({value, meta}):
	 * a tree without them is not read for them, file after file */
	if (!pf || !pf->value_key)
		return false;
	char *path = db_index_path(ix, it), dims[160];
	bool yes = path && db_meta_dims_read(path, dims, sizeof dims, NULL) == 1 &&
	           dims_replicated(dims);
	if (yes)
		snprintf(by, len, "dims '%.*s'", (int)(len > 10 ? len - 10 : 0), dims);
	free(path);
	return yes;
}

/* it's tensor as doubles (malloc'd), 0 or -1 with why. */
static int load(const db_index *ix, const db_item *it, double **v, int64_t *n, char *why,
                size_t len)
{
	db_err err = {{0}};
	char *path = db_index_path(ix, it);
	db_file *f = NULL;
	int rc = path ? db_file_open(path, &f, &err) : db_err_set(&err, NULL, NULL, -1, "no memory");
	const db_entry *en = rc == 0 ? db_file_find(f, it->key) : NULL;
	if (rc == 0 && (!en || en->err || !en->t.data))
		rc = db_err_set(&err, path, it->key, -1, "%s", !en ? "entry is gone" : en->err ?
		                en->err : "statistics only: no values");
	if (rc == 0) {
		*n = db_tensor_numel(&en->t);
		*v = malloc((size_t)(*n ? *n : 1) * sizeof **v);
		if (!*v || db_tensor_to_f64(&en->t, *v, *n, NULL) != 0) {
			rc = db_err_set(&err, path, it->key, -1, *v ? "file changed while read"
			                : "out of memory");
			free(*v);
			*v = NULL;
		}
	}
	if (rc != 0)
		snprintf(why, len, "%.*s", (int)(len > 1 ? len - 1 : 0), err.msg);
	db_file_close(f);
	free(path);
	return rc;
}

static void measure(const db_index *ix, db_replica *r, double atol)
{
	double *a = NULL, *b = NULL;
	int64_t na = 0, nb = 0;
	r->max_abs = NAN;
	if (r->base->ndim != r->other->ndim ||
	    memcmp(r->base->shape, r->other->shape, (size_t)r->base->ndim * sizeof(int64_t))) {
		snprintf(r->why, sizeof r->why, "another shape");
	} else if (load(ix, r->base, &a, &na, r->why, sizeof r->why) == 0 &&
	           load(ix, r->other, &b, &nb, r->why, sizeof r->why) == 0) {
		double mx = 0;
		bool nan_off = false;
		for (int64_t i = 0; i < na && i < nb; i++) {
			double d = fabs(b[i] - a[i]);
			if (d > mx)
				mx = d;
			/* a NaN on one side only, or a different Inf, differs */
			nan_off |= isnan(d) && !(isnan(a[i]) && isnan(b[i])) && a[i] != b[i];
		}
		r->max_abs = mx;
		r->passed = mx <= atol && !nan_off;
		if (!r->passed)
			snprintf(r->why, sizeof r->why, nan_off ? "a non-finite value differs"
			         : "max |diff| %.3g > atol %g", mx, atol);
	}
	free(a);
	free(b);
}

static int check_index(const db_compare *c, const db_index *ix, const char *side, double atol,
                       db_replica **out, size_t *n, size_t *cap)
{
	const db_item **v = malloc((ix->n_items ? ix->n_items : 1) * sizeof *v);
	if (!v)
		return -1;
	size_t m = 0;
	for (size_t i = 0; i < ix->n_items; i++)
		if (ix->items[i].f.rank >= 0 && !ix->items[i].err)
			v[m++] = &ix->items[i];
	qsort(v, m, sizeof *v, cmp_place);
	for (size_t i = 0; i < m;) {
		size_t j = i + 1;
		while (j < m && same_place(v[i], v[j]))
			j++;
		char by[192];
		if (j - i > 1 && v[j - 1]->f.rank != v[i]->f.rank &&
		    replicated(c, ix, v[i], by, sizeof by)) {
			for (size_t k = i + 1; k < j; k++) {
				if (v[k]->f.rank == v[k - 1]->f.rank)
					continue;       /* one rank twice: not another replica */
				if (*n == *cap) {
					size_t nc = *cap ? *cap * 2 : 16;
					db_replica *nv = realloc(*out, nc * sizeof *nv);
					if (!nv) {
						free(v);
						return -1;
					}
					*out = nv;
					*cap = nc;
				}
				db_replica *r = &(*out)[(*n)++];
				memset(r, 0, sizeof *r);
				r->side = *v[i]->f.side ? (!strcmp(v[i]->f.side, "ref") ? "ref" : "target")
				                        : side;
				r->base = v[i];
				r->other = v[k];
				snprintf(r->by, sizeof r->by, "%s", by);
				measure(ix, r, atol);
			}
		}
		i = j;
	}
	free(v);
	return 0;
}

int db_replicas_check(const db_compare *c, double atol, db_replica **out, size_t *n,
                      db_err *err)
{
	*out = NULL;
	*n = 0;
	size_t cap = 0;
	if (check_index(c, c->ref, "ref", atol, out, n, &cap) < 0 ||
	    (c->tgt && c->tgt != c->ref && check_index(c, c->tgt, "target", atol, out, n, &cap) < 0)) {
		free(*out);
		*out = NULL;
		*n = 0;
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	return 0;
}
