/* What the bisect state machine derives its state from, kept up to date as
 * steps are recorded: each candidate's latest verdict and step, and three
 * Fenwick trees counting the unskipped, good and bad candidates. A step
 * costs O(log n); recompute asks counts and positions in O(log n) instead
 * of passing over every layer and every step (a session of 600k steps, a
 * bisect over 100k layers: linear, not quadratic). Rebuilt from the log
 * when steps are dropped or candidates added. */
#include "bisect_priv.h"

#include <stdlib.h>

void db_bidx_free(db_bisect_idx *x)
{
	if (!x)
		return;
	free(x->v);
	free(x->last);
	free(x->unsk);
	free(x->good);
	free(x->bad);
	free(x);
}

static void fen_add(int *t, size_t n, size_t i, int d)
{
	for (size_t k = i + 1; k <= n; k += k & -k)
		t[k] += d;
}

/* Entries in positions [0, i]; i < 0: none. */
static size_t fen_prefix(const int *t, size_t n, long i)
{
	size_t s = 0;
	for (size_t k = i < 0 ? 0 : (size_t)i + 1 > n ? n : (size_t)i + 1; k; k -= k & -k)
		s += (size_t)t[k];
	return s;
}

size_t db_bidx_count(const int *t, size_t n, long lo, long hi)
{
	if (hi < lo)
		return 0;
	return fen_prefix(t, n, hi) - fen_prefix(t, n, lo - 1);
}

long db_bidx_kth(const int *t, size_t n, size_t k)
{
	if (!k)
		return -1;
	size_t pos = 0, step = 1;
	while (step * 2 <= n)
		step *= 2;
	for (; step; step /= 2)
		if (pos + step <= n && (size_t)t[pos + step] < k) {
			pos += step;
			k -= (size_t)t[pos];
		}
	return pos < n ? (long)pos : -1;    /* pos + 1 (1-based) is the k-th */
}

/* The tree of verdict v (NULL for NONE, which only the unskipped count). */
static int *tree_of(db_bisect_idx *x, db_verdict v)
{
	return v == DB_V_GOOD ? x->good : v == DB_V_BAD ? x->bad : NULL;
}

void db_bidx_set(db_bisect_idx *x, size_t i, db_verdict v, long step)
{
	db_verdict old = x->v[i];
	x->last[i] = step;
	if (old == v)
		return;
	int *t;
	if ((t = tree_of(x, old)))
		fen_add(t, x->n, i, -1);
	if ((t = tree_of(x, v)))
		fen_add(t, x->n, i, +1);
	if ((old == DB_V_SKIP) != (v == DB_V_SKIP))
		fen_add(x->unsk, x->n, i, v == DB_V_SKIP ? -1 : +1);
	x->v[i] = v;
}

/* Candidate index of layer in the sorted layers, -1 (db_bisect_index's
 * search; here so the index needs nothing of the state machine). */
static long index_of(const int *layers, size_t n, int layer)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (layers[mid] < layer)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && layers[lo] == layer ? (long)lo : -1;
}

int db_bidx_build(db_bisect *b)
{
	db_bidx_free(b->idx);
	b->idx = NULL;
	size_t n = b->n_layers;
	db_bisect_idx *x = calloc(1, sizeof *x);
	if (!x)
		return -1;
	x->n = n;
	x->v = calloc(n + 1, sizeof *x->v);
	x->last = malloc((n + 1) * sizeof *x->last);
	x->unsk = calloc(n + 1, sizeof *x->unsk);
	x->good = calloc(n + 1, sizeof *x->good);
	x->bad = calloc(n + 1, sizeof *x->bad);
	if (!x->v || !x->last || !x->unsk || !x->good || !x->bad) {
		db_bidx_free(x);
		return -1;
	}
	/* every candidate unskipped: the tree of all ones, built in O(n) */
	for (size_t k = 1; k <= n; k++) {
		x->unsk[k] = (int)(k & -k);
		x->last[k - 1] = -1;
	}
	for (size_t s = 0; s < b->n_steps; s++) {
		long ix = index_of(b->layers, n, b->steps[s].layer);
		if (ix >= 0)
			db_bidx_set(x, (size_t)ix, b->steps[s].verdict, (long)s);
	}
	b->idx = x;
	return 0;
}
