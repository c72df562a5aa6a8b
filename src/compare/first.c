/* The first divergence: the one function that decides it (issue 33).
 * compare's headline, its JSON, bisect's start, the workbench's f and the
 * report all ask db_first_divergence, so they name the same place.
 *
 * The rule across passes (man dumpbisect, FIRST DIVERGENCE): the pass is
 * db_pass_first_diverging's (the first pass that leaves the ok band after
 * passes that stayed ok; when a phase's very first pass only drifts, the
 * first pass worse than drift), and the place is the first pair in
 * execution order that diverges in that pass (db_pair_diverges), or the
 * bit-identical regime's first pair when that comes before it. */
#include "db_compare.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "db_passes.h"

static bool rank_sel(const db_pair *p, int rank)
{
	if (rank == -2)
		return true;
	if (rank == -1)
		return p->merged || p->f.rank == -1;
	return !p->merged && p->f.rank == rank;
}

long db_first_beyond_drift(const db_compare *c)
{
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (db_pair_diverges(p) && (p->status != DB_ST_OK || p->band > DB_BAND_DRIFT))
			return (long)i;
	}
	return -1;
}

/* The bit-identical regime's first divergence, when it comes before fd
 * and is in the selection. */
static long regime_first(const db_compare *c, const char *phase, const char *pass, int rank,
                         long fd)
{
	long bi = db_first_not_identical(c);
	if (bi < 0 || (fd >= 0 && bi >= fd))
		return fd;
	const db_pair *p = &c->pairs[bi];
	if (!rank_sel(p, rank) || (phase && *phase && strcmp(phase, p->f.phase)) ||
	    (pass && *pass && strcmp(pass, p->f.pass)))
		return fd;
	return bi;
}

static long first_in(const db_compare *c, const char *phase, const char *pass, int rank)
{
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		/* cheap tests first: most pairs do not diverge (issue 12) */
		if (!rank_sel(p, rank) || !db_pair_diverges(p))
			continue;
		if (phase && *phase && strcmp(phase, p->f.phase))
			continue;
		if (pass && *pass && strcmp(pass, p->f.pass))
			continue;
		return regime_first(c, phase, pass, rank, (long)i);
	}
	return regime_first(c, phase, pass, rank, -1);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static void first_in_ranks(const db_compare *c, const char *phase, const char *pass,
                           const int *ranks, size_t n, long *out)
{
	for (size_t k = 0; k < n; k++)
		out[k] = -1;
	size_t left = n;
	for (size_t i = 0; i < c->n_pairs && left; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->merged || p->f.rank < 0 || !db_pair_diverges(p))
			continue;
		if ((phase && *phase && strcmp(phase, p->f.phase)) ||
		    (pass && *pass && strcmp(pass, p->f.pass)))
			continue;
		const int *r = bsearch(&p->f.rank, ranks, n, sizeof *ranks, cmp_int);
		if (r && out[r - ranks] < 0) {
			out[r - ranks] = (long)i;
			left--;
		}
	}
	for (size_t k = 0; k < n; k++)
		out[k] = regime_first(c, phase, pass, ranks[k], out[k]);
}


/* The (phase, pass) the rule picks when the caller named no pass; false
 * when the comparison has one pass (or nothing diverges). */
static bool pick_pass(const db_compare *c, const char *phase, const char **ph,
                      const char **pa)
{
	/* one pass (the common case): nothing to pick, no allocation */
	const char *p0 = c->n_pairs ? c->pairs[0].f.pass : "";
	size_t i = 1;
	while (i < c->n_pairs && !strcmp(c->pairs[i].f.pass, p0))
		i++;
	if (i >= c->n_pairs)
		return false;
	db_pass_line *v;
	size_t n = db_pass_lines(c, &v);
	long k = db_pass_pick(c, v, n, phase);
	if (k >= 0) {
		*ph = v[k].phase;
		*pa = v[k].pass;
	}
	free(v);
	return k >= 0;
}

long db_first_divergence(const db_compare *c, const char *phase, const char *pass, int rank)
{
	const char *ph, *pa;
	if ((pass && *pass) || !pick_pass(c, phase, &ph, &pa))
		return first_in(c, phase, pass, rank);
	long fd = first_in(c, ph, pa, rank);
	return fd >= 0 ? fd : first_in(c, phase, pass, rank);
}

void db_first_divergence_ranks(const db_compare *c, const char *phase, const char *pass,
                               const int *ranks, size_t n, long *out)
{
	const char *ph, *pa;
	if ((pass && *pass) || !pick_pass(c, phase, &ph, &pa)) {
		first_in_ranks(c, phase, pass, ranks, n, out);
		return;
	}
	first_in_ranks(c, ph, pa, ranks, n, out);
	for (size_t k = 0; k < n; k++)
		if (out[k] < 0)
			out[k] = first_in(c, phase, pass, ranks[k]);
}
