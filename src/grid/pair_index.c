/* Indexes of the pairs by cell and by place (issue 24): the workbench asks
 * for a cell's ranks on every draw and for a place's sub-stages on
 * <Enter>; a pass over every pair touched one cache line per pair, 10-30 ms
 * a key at 10^6 files. Each index is built once per pairs generation
 * (O(pairs)), kept for the last comparison asked about, and guarded: the
 * commands and the workbench ask from one thread, but nothing here
 * assumes it. */
#include "grid_priv.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

static bool is_member(grid_ix_kind k, const db_pair *q)
{
	return k == GRID_IX_PLACE || (!q->merged && q->f.rank >= 0);
}

/* The key of a pair: its place, and for a cell its stage; rank left out */
static uint64_t key_hash(grid_ix_kind k, const db_pair *p)
{
	uint64_t h = DB_HASH_SEED;
	if (k == GRID_IX_CELL)
		h = db_hash64(p->f.stage, strlen(p->f.stage), h);
	h = db_hash64(p->f.phase, strlen(p->f.phase), h);
	h = db_hash64(p->f.pass, strlen(p->f.pass), h);
	int32_t v[2] = {p->f.layer, p->occurrence};
	return db_hash64(v, sizeof v, h);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || !strcmp(a, b);         /* interned: mostly the pointer */
}

static bool same_key(grid_ix_kind k, const db_pair *q, const db_pair *p)
{
	return q->f.layer == p->f.layer && q->occurrence == p->occurrence &&
	       (k != GRID_IX_CELL || same_str(q->f.stage, p->f.stage)) &&
	       same_str(q->f.phase, p->f.phase) && same_str(q->f.pass, p->f.pass);
}

typedef struct pair_index {
	const db_compare *c;
	unsigned long gen;
	size_t n_pairs;
	size_t cap;             /* slots, a power of two */
	size_t *slot_pair;      /* a member of the slot's key; SIZE_MAX empty */
	size_t *slot_start;     /* its key's pairs in members */
	size_t *slot_n;
	size_t *members;        /* members, key by key, in pair order */
} pair_index;

static pair_index g_ix[2];
static pthread_mutex_t g_lock[2] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};

static void ix_clear(pair_index *x)
{
	free(x->slot_pair);
	free(x->slot_start);
	free(x->slot_n);
	free(x->members);
	memset(x, 0, sizeof *x);
}

static size_t find_slot(grid_ix_kind k, const pair_index *x, const db_compare *c,
                        const db_pair *p)
{
	size_t m = x->cap - 1;
	for (size_t i = key_hash(k, p) & m;; i = (i + 1) & m)
		if (x->slot_pair[i] == SIZE_MAX || same_key(k, &c->pairs[x->slot_pair[i]], p))
			return i;
}

static int ix_build(grid_ix_kind k, pair_index *x, const db_compare *c)
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
		if (!is_member(k, q))
			continue;
		size_t s = find_slot(k, x, c, q);
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
		if (is_member(k, &c->pairs[i])) {
			size_t s = slot_of[i];
			x->members[x->slot_start[s] + x->slot_n[s]++] = i;
		}
	free(slot_of);
	x->c = c;
	x->gen = c->pairs_gen;
	x->n_pairs = n;
	return 0;
}

size_t grid_index_pairs(grid_ix_kind k, const db_compare *c, size_t pair, size_t **out)
{
	*out = NULL;
	if (pair >= c->n_pairs)
		return 0;
	pair_index *x = &g_ix[k];
	size_t n = 0;
	pthread_mutex_lock(&g_lock[k]);
	if ((x->c == c && x->gen == c->pairs_gen && x->n_pairs == c->n_pairs) ||
	    ix_build(k, x, c) == 0) {
		size_t s = find_slot(k, x, c, &c->pairs[pair]);
		size_t m = x->slot_pair[s] == SIZE_MAX ? 0 : x->slot_n[s];
		if ((*out = malloc((m + 1) * sizeof **out))) {
			memcpy(*out, x->members + x->slot_start[s], m * sizeof **out);
			n = m;
		}
	}
	pthread_mutex_unlock(&g_lock[k]);
	return n;
}
