/* db_rank_pairs from an index of the pairs by cell (issue 24). The
 * headline and the rank note ask for a cell's ranks on every draw; a pass
 * over every pair touched one cache line per pair, 10 ms a key at 10^6
 * files. The index is built once per pairs generation (O(pairs)), kept for
 * the last comparison asked about, and guarded: the commands and the
 * workbench ask from one thread, but nothing here assumes it. */
#include "db_grid.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

static bool is_rank_pair(const db_pair *q)
{
	return !q->merged && q->f.rank >= 0;
}

/* The cell of a pair, its rank left out */
static uint64_t cell_hash(const db_pair *p)
{
	uint64_t h = db_hash64(p->f.stage, strlen(p->f.stage), DB_HASH_SEED);
	h = db_hash64(p->f.phase, strlen(p->f.phase), h);
	h = db_hash64(p->f.pass, strlen(p->f.pass), h);
	int32_t v[2] = {p->f.layer, p->occurrence};
	return db_hash64(v, sizeof v, h);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || !strcmp(a, b);         /* interned: mostly the pointer */
}

static bool same_cell(const db_pair *q, const db_pair *p)
{
	return q->f.layer == p->f.layer && q->occurrence == p->occurrence &&
	       same_str(q->f.stage, p->f.stage) && same_str(q->f.phase, p->f.phase) &&
	       same_str(q->f.pass, p->f.pass);
}

typedef struct rank_index {
	const db_compare *c;
	unsigned long gen;
	size_t n_pairs;
	size_t cap;             /* slots, a power of two */
	size_t *slot_pair;      /* a rank pair of the slot's cell; SIZE_MAX empty */
	size_t *slot_start;     /* its cell's pairs in members */
	size_t *slot_n;
	size_t *members;        /* rank pairs, cell by cell, in pair order */
} rank_index;

static rank_index g_ix;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void ix_clear(rank_index *x)
{
	free(x->slot_pair);
	free(x->slot_start);
	free(x->slot_n);
	free(x->members);
	memset(x, 0, sizeof *x);
}

static size_t find_slot(const rank_index *x, const db_compare *c, const db_pair *p)
{
	size_t m = x->cap - 1;
	for (size_t i = cell_hash(p) & m;; i = (i + 1) & m)
		if (x->slot_pair[i] == SIZE_MAX || same_cell(&c->pairs[x->slot_pair[i]], p))
			return i;
}

static int ix_build(rank_index *x, const db_compare *c)
{
	ix_clear(x);
	size_t n = c->n_pairs, cap = 16;
	while (cap < 2 * n + 2)
		cap *= 2;
	x->slot_pair = malloc(cap * sizeof *x->slot_pair);
	x->slot_start = calloc(cap, sizeof *x->slot_start);
	x->slot_n = calloc(cap, sizeof *x->slot_n);
	x->members = malloc((n + 1) * sizeof *x->members);
	size_t *slot_of = malloc((n + 1) * sizeof *slot_of);
	if (!x->slot_pair || !x->slot_start || !x->slot_n || !x->members || !slot_of) {
		free(slot_of);
		ix_clear(x);
		return -1;
	}
	memset(x->slot_pair, 0xff, cap * sizeof *x->slot_pair);
	x->cap = cap;
	for (size_t i = 0; i < n; i++) {
		const db_pair *q = &c->pairs[i];
		if (!is_rank_pair(q))
			continue;
		size_t s = find_slot(x, c, q);
		if (x->slot_pair[s] == SIZE_MAX)
			x->slot_pair[s] = i;
		x->slot_n[s]++;
		slot_of[i] = s;
	}
	size_t at = 0;
	for (size_t s = 0; s < cap; s++) {
		x->slot_start[s] = at;
		at += x->slot_n[s];
		x->slot_n[s] = 0;
	}
	for (size_t i = 0; i < n; i++)
		if (is_rank_pair(&c->pairs[i])) {
			size_t s = slot_of[i];
			x->members[x->slot_start[s] + x->slot_n[s]++] = i;
		}
	free(slot_of);
	x->c = c;
	x->gen = c->pairs_gen;
	x->n_pairs = n;
	return 0;
}

size_t db_rank_pairs(const db_compare *c, size_t pair, size_t **out)
{
	*out = NULL;
	if (pair >= c->n_pairs)
		return 0;
	const db_pair *p = &c->pairs[pair];
	size_t *v = NULL, n = 0;
	pthread_mutex_lock(&g_lock);
	if ((g_ix.c == c && g_ix.gen == c->pairs_gen && g_ix.n_pairs == c->n_pairs) ||
	    ix_build(&g_ix, c) == 0) {
		size_t s = find_slot(&g_ix, c, p);
		size_t k = g_ix.slot_pair[s] == SIZE_MAX ? 0 : g_ix.slot_n[s];
		if ((v = malloc((k + 1) * sizeof *v))) {
			/* insertion by rank (few ranks), stable: pair order among equals */
			for (size_t a = 0; a < k; a++) {
				size_t i = g_ix.members[g_ix.slot_start[s] + a], j = n++;
				while (j > 0 && c->pairs[v[j - 1]].f.rank > c->pairs[i].f.rank) {
					v[j] = v[j - 1];
					j--;
				}
				v[j] = i;
			}
		}
	}
	pthread_mutex_unlock(&g_lock);
	*out = v;
	return n;
}
