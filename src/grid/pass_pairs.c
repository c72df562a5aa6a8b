/* The pairs of each pass, indexed once per pairs generation (issue 37):
 * the bisect's pass triage probes every pass, and each probe walked every
 * pair (20k passes x 2 layers: 35-39 s, compare 0.9 s). With the index a
 * probe reads its own pass's pairs: the triage is linear in the pairs.
 * Kept for the last comparison asked about and guarded as pair_index.c. */
#include "db_grid.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

typedef struct pass_index {
	const db_compare *c;
	unsigned long gen;
	size_t n_pairs;
	db_strmap by_pass;      /* pass -> its group */
	size_t *start;          /* group g's pairs: members[start[g] .. start[g + 1]) */
	size_t *members;        /* every pair, pass by pass, in pair order */
} pass_index;

static pass_index g_px;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void px_clear(pass_index *x)
{
	db_strmap_free(&x->by_pass);
	free(x->start);
	free(x->members);
	memset(x, 0, sizeof *x);
}

static int px_build(pass_index *x, const db_compare *c)
{
	px_clear(x);
	size_t n = c->n_pairs, ng = 0;
	size_t *grp = malloc((n + 1) * sizeof *grp);
	x->members = malloc((n + 1) * sizeof *x->members);
	if (!grp || !x->members)
		goto oom;
	const char *last = NULL;
	size_t last_g = 0;
	for (size_t i = 0; i < n; i++) {
		const char *pass = c->pairs[i].f.pass;
		if (!last || (pass != last && strcmp(pass, last))) {   /* runs share a pass */
			bool added;
			size_t *g = db_strmap_put(&x->by_pass, pass, ng, &added);
			if (!g)
				goto oom;
			ng += added;
			last = pass;
			last_g = *g;
		}
		grp[i] = last_g;
	}
	if (!(x->start = calloc(ng + 2, sizeof *x->start)))
		goto oom;
	for (size_t i = 0; i < n; i++)
		x->start[grp[i] + 2]++;
	for (size_t g = 0; g < ng; g++)
		x->start[g + 2] += x->start[g + 1];
	for (size_t i = 0; i < n; i++)     /* start[g + 1]: g's next slot */
		x->members[x->start[grp[i] + 1]++] = i;
	free(grp);
	x->c = c;
	x->gen = c->pairs_gen;
	x->n_pairs = n;
	return 0;
oom:
	free(grp);
	px_clear(x);
	return -1;
}

size_t db_pass_pairs(const db_compare *c, const char *pass, size_t **out)
{
	*out = NULL;
	if (!pass) {
		size_t *v = malloc((c->n_pairs + 1) * sizeof *v);
		for (size_t i = 0; v && i < c->n_pairs; i++)
			v[i] = i;
		return (*out = v) ? c->n_pairs : SIZE_MAX;
	}
	pass_index *x = &g_px;
	size_t n = SIZE_MAX;
	pthread_mutex_lock(&g_lock);
	if ((x->c == c && x->gen == c->pairs_gen && x->n_pairs == c->n_pairs) ||
	    px_build(x, c) == 0) {
		size_t *g = db_strmap_get(&x->by_pass, pass);
		size_t a = g ? x->start[*g] : 0, b = g ? x->start[*g + 1] : 0;
		if ((*out = malloc((b - a + 1) * sizeof **out))) {
			memcpy(*out, x->members + a, (b - a) * sizeof **out);
			n = b - a;
		}
	}
	pthread_mutex_unlock(&g_lock);
	return n;
}
