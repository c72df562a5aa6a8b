/* An index of the pairs by place (issue 24): the workbench asks for a
 * cell's ranks on every draw and for its sub-stages on <Enter>; a pass over
 * every pair touched one cache line per pair, 10-34 ms a key at 10^6 files.
 * One index serves both, so the first draw pays its build (40 ms at 10^6
 * files) and no key does. It is built once per pairs generation (O(pairs)),
 * kept for the last comparison asked about, and guarded: the commands and
 * the workbench ask from one thread, but nothing here assumes it. */
#include "grid_priv.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

/* The place of a pair: phase, pass, layer, occurrence; the names are the
 * dump's, so hashed keyed (db_strmap_hash: issue 37) */
static uint64_t key_hash(const db_pair *p)
{
	char b[600];            /* one hash call: phase, pass (< 256 each), ints */
	size_t a = strlen(p->f.phase), c = strlen(p->f.pass);
	if (a > 255 || c > 255)
		return db_strmap_hash(p->f.pass, c) ^ (uint64_t)p->f.layer;
	int32_t v[2] = {p->f.layer, p->occurrence};
	memcpy(b, v, sizeof v);
	memcpy(b + sizeof v, p->f.phase, a + 1);
	memcpy(b + sizeof v + a + 1, p->f.pass, c);
	return db_strmap_hash(b, sizeof v + a + 1 + c);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || !strcmp(a, b);         /* interned: mostly the pointer */
}

static bool same_key(const db_pair *q, const db_pair *p)
{
	return q->f.layer == p->f.layer && q->occurrence == p->occurrence &&
	       same_str(q->f.phase, p->f.phase) && same_str(q->f.pass, p->f.pass);
}

typedef struct pair_index {
	const db_compare *c;
	unsigned long gen;
	size_t n_pairs;
	size_t cap;             /* slots, a power of two */
	size_t *slot_pair;      /* a pair of the slot's place; SIZE_MAX empty */
	size_t *slot_start;     /* its place's pairs in members */
	size_t *slot_n;
	size_t *members;        /* every pair, place by place, in pair order */
} pair_index;

static pair_index g_ix;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void ix_clear(pair_index *x)
{
	free(x->slot_pair);
	free(x->slot_start);
	free(x->slot_n);
	free(x->members);
	memset(x, 0, sizeof *x);
}

static size_t find_slot(const pair_index *x, const db_compare *c, const db_pair *p)
{
	size_t m = x->cap - 1;
	for (size_t i = key_hash(p) & m;; i = (i + 1) & m)
		if (x->slot_pair[i] == SIZE_MAX || same_key(&c->pairs[x->slot_pair[i]], p))
			return i;
}

static int ix_build(pair_index *x, const db_compare *c)
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
	for (size_t i = 0; i < n; i++) {
		size_t s = slot_of[i];
		x->members[x->slot_start[s] + x->slot_n[s]++] = i;
	}
	free(slot_of);
	x->c = c;
	x->gen = c->pairs_gen;
	x->n_pairs = n;
	return 0;
}

size_t grid_place_pairs(const db_compare *c, size_t pair, size_t **out)
{
	*out = NULL;
	if (pair >= c->n_pairs)
		return 0;
	pair_index *x = &g_ix;
	size_t n = 0;
	pthread_mutex_lock(&g_lock);
	if ((x->c == c && x->gen == c->pairs_gen && x->n_pairs == c->n_pairs) ||
	    ix_build(x, c) == 0) {
		size_t s = find_slot(x, c, &c->pairs[pair]);
		size_t m = x->slot_pair[s] == SIZE_MAX ? 0 : x->slot_n[s];
		if ((*out = malloc((m + 1) * sizeof **out))) {
			memcpy(*out, x->members + x->slot_start[s], m * sizeof **out);
			n = m;
		}
	}
	pthread_mutex_unlock(&g_lock);
	return n;
}
