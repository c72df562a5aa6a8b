/* The pairs of one heatmap cell across ranks (db_cell_pairs): indexed once
 * per set of pairs, so the hints that look at a cell's ranks (partial sums,
 * replicas across layouts) do not pass over every pair for every pair that
 * diverges. */
#include "pair/compare_priv.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

static void cells_free(db_cells *cl)
{
	free(cl->of);
	free(cl->start);
	free(cl->members);
	free(cl->replica_ranks);
	free(cl->psum_ranks);
	free(cl->psum_ok);
	for (size_t g = 0; cl->vhints && g < cl->n; g++)
		free(atomic_load(&cl->vhints[g]));
	free(cl->vhints);
	memset(cl, 0, sizeof *cl);
}

/* cl for c's pairs: each ranked, unmerged pair's cell, and each cell's
 * pairs in pair order. -1 on OOM (cl empty). */
static int cells_build(const db_compare *c, db_cells *cl)
{
	cells_free(cl);
	size_t np = c->n_pairs;
	db_strmap m;
	db_strmap_init(&m);
	cl->of = malloc((np + 1) * sizeof *cl->of);
	cl->members = malloc((np + 1) * sizeof *cl->members);
	size_t *count = calloc(np + 1, sizeof *count);
	int rc = cl->of && cl->members && count ? 0 : -1;
	for (size_t i = 0; i < np && rc == 0; i++) {
		const db_pair *p = &c->pairs[i];
		cl->of[i] = SIZE_MAX;
		if (p->merged || p->f.rank < 0)
			continue;
		db_ifields f = p->f;
		f.rank = -1;
		char k[600];
		db_pair_fields_key(&f, p->occurrence, k, sizeof k);
		size_t *v = db_strmap_put(&m, k, cl->n, NULL);
		if (!v) {
			rc = -1;
			break;
		}
		if (*v == cl->n)
			cl->n++;
		cl->of[i] = *v;
		count[*v]++;
	}
	if (rc == 0 && (!(cl->start = malloc((cl->n + 1) * sizeof *cl->start)) ||
	                !(cl->replica_ranks = malloc((cl->n + 1) * sizeof *cl->replica_ranks)) ||
	                !(cl->psum_ranks = malloc((cl->n + 1) * sizeof *cl->psum_ranks)) ||
	                !(cl->psum_ok = malloc((np + 1) * sizeof *cl->psum_ok)) ||
	                !(cl->vhints = malloc((cl->n + 1) * sizeof *cl->vhints))))
		rc = -1;
	for (size_t g = 0; rc == 0 && g < cl->n; g++) {
		atomic_init(&cl->replica_ranks[g], -1);
		atomic_init(&cl->psum_ranks[g], -1);
		atomic_init(&cl->vhints[g], NULL);
	}
	atomic_init(&cl->nan_seq, INT64_MIN);
	for (size_t i = 0; rc == 0 && i < np; i++)
		atomic_init(&cl->psum_ok[i], -1);
	if (rc == 0) {
		size_t at = 0;
		for (size_t g = 0; g < cl->n; g++) {
			cl->start[g] = at;
			at += count[g];
			count[g] = cl->start[g];        /* the next free place */
		}
		cl->start[cl->n] = at;
		for (size_t i = 0; i < np; i++)
			if (cl->of[i] != SIZE_MAX)
				cl->members[count[cl->of[i]]++] = i;
	}
	free(count);
	db_strmap_free(&m);
	if (rc != 0)
		cells_free(cl);
	else
		cl->gen = c->pairs_gen;
	return rc;
}

/* p's cell in c's index, built first when needed; SIZE_MAX for none. */
static size_t cell_of(const db_compare *c, const db_pair *p)
{
	db_cmp_priv *pr = c->priv;
	if (!pr)
		return SIZE_MAX;
	pthread_mutex_lock(&pr->cells_mu);
	int rc = pr->cells.gen == c->pairs_gen && pr->cells.of ? 0 : cells_build(c, &pr->cells);
	pthread_mutex_unlock(&pr->cells_mu);
	size_t i = (size_t)(p - c->pairs);
	return rc != 0 || i >= c->n_pairs ? SIZE_MAX : pr->cells.of[i];
}

const size_t *db_cell_pairs(const db_compare *c, const db_pair *p, size_t *n)
{
	const db_cells *cl = &((db_cmp_priv *)c->priv)->cells;
	size_t g = cell_of(c, p);
	*n = g == SIZE_MAX ? 0 : cl->start[g + 1] - cl->start[g];
	return g == SIZE_MAX ? NULL : cl->members + cl->start[g];
}

_Atomic int *db_cell_replica_memo(const db_compare *c, const db_pair *p)
{
	size_t g = cell_of(c, p);
	return g == SIZE_MAX ? NULL : &((db_cmp_priv *)c->priv)->cells.replica_ranks[g];
}

int db_cell_psum_memo(const db_compare *c, const db_pair *p, _Atomic int **ranks,
                      _Atomic signed char **ok)
{
	db_cells *cl = &((db_cmp_priv *)c->priv)->cells;
	size_t g = cell_of(c, p);
	*ranks = g == SIZE_MAX ? NULL : &cl->psum_ranks[g];
	*ok = g == SIZE_MAX ? NULL : cl->psum_ok;
	return g == SIZE_MAX ? -1 : 0;
}

_Atomic(db_vhint *) *db_cell_vhints(const db_compare *c, const db_pair *p)
{
	size_t g = cell_of(c, p);
	return g == SIZE_MAX ? NULL : &((db_cmp_priv *)c->priv)->cells.vhints[g];
}

_Atomic int64_t *db_cells_nan_memo(const db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	if (!pr)
		return NULL;
	pthread_mutex_lock(&pr->cells_mu);
	int rc = pr->cells.gen == c->pairs_gen && pr->cells.of ? 0 : cells_build(c, &pr->cells);
	pthread_mutex_unlock(&pr->cells_mu);
	return rc ? NULL : &pr->cells.nan_seq;
}

void db_cells_drop(db_compare *c)
{
	cells_free(&((db_cmp_priv *)c->priv)->cells);
}
