/* One line per (phase, pass): see db_passes.h. */
#include "db_passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

static const db_compare *sort_c;

static long phase_index(const db_compare *c, const char *ph)
{
	for (size_t i = 0; i < c->n_phases; i++)
		if (!strcmp(c->phases[i], ph))
			return (long)i;
	return -1;
}

static int cmp_line(const void *a, const void *b)
{
	const db_pass_line *x = a, *y = b;
	long px = phase_index(sort_c, x->phase), py = phase_index(sort_c, y->phase);
	if (px != py)
		return px < py ? -1 : 1;
	return db_profile_pass_cmp(x->pass, y->pass);
}

size_t db_pass_lines(const db_compare *c, db_pass_line **out)
{
	*out = NULL;
	db_pass_line *v = calloc(c->n_pairs + 1, sizeof *v);
	if (!v)
		return 0;
	db_strmap m;
	db_strmap_init(&m);
	size_t n = 0, last = (size_t)-1;
	char key[256];
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		size_t k = last;
		/* neighbours mostly share their pass: no hashing then */
		if (k == (size_t)-1 || strcmp(v[k].pass, p->f.pass) || strcmp(v[k].phase, p->f.phase)) {
			snprintf(key, sizeof key, "%s\x1f%s", p->f.phase, p->f.pass);
			bool added;
			size_t *slot = db_strmap_put(&m, key, n, &added);
			if (!slot) {
				free(v);
				db_strmap_free(&m);
				return 0;
			}
			if (added) {
				v[n] = (db_pass_line){.phase = p->f.phase, .pass = p->f.pass,
				                      .first_div = -1, .first_beyond = -1,
				                      .worst = DB_BAND_NONE, .identical = true};
				n++;
			}
			k = *slot;
		}
		last = k;
		db_pass_line *l = &v[k];
		l->n_pairs++;
		if (p->status != DB_ST_OK) {
			l->n_missing++;
			l->identical = false;
		} else if (p->band != DB_BAND_NONE) {
			if (l->worst == DB_BAND_NONE || p->band > l->worst)
				l->worst = p->band;
			if (p->m.max_abs != 0 || p->band != DB_BAND_OK)
				l->identical = false;
		}
		if (db_pair_diverges(p)) {
			if (l->first_div < 0)
				l->first_div = (long)i;
			if (l->first_beyond < 0 && (p->status != DB_ST_OK || p->band > DB_BAND_DRIFT))
				l->first_beyond = (long)i;
		}
	}
	db_strmap_free(&m);
	sort_c = c;
	qsort(v, n, sizeof *v, cmp_line);
	*out = v;
	return n;
}

/* The phase the first divergence is in: the first line's that diverges;
 * when that is drift, the phase of the first pair worse than drift (a
 * later phase bad beyond drift wins over an earlier one that drifts). */
static const char *pick_phase(const db_compare *c, const db_pass_line *v, size_t n)
{
	long fd = -1, fb = -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i].first_div >= 0 && (fd < 0 || v[i].first_div < fd))
			fd = v[i].first_div;
		if (v[i].first_beyond >= 0 && (fb < 0 || v[i].first_beyond < fb))
			fb = v[i].first_beyond;
	}
	if (fd < 0)
		return NULL;
	const db_pair *p = &c->pairs[fd];
	return c->pairs[p->status == DB_ST_OK && p->band == DB_BAND_DRIFT && fb >= 0 ? fb : fd]
	       .f.phase;
}

long db_pass_pick(const db_compare *c, const db_pass_line *v, size_t n, const char *phase)
{
	const char *ph = phase && *phase ? phase : pick_phase(c, v, n);
	if (!ph)
		return -1;
	long first = -1;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].phase, ph))
			continue;
		if (first < 0)
			first = (long)i;
		if (v[i].first_div < 0)
			continue;
		if ((long)i > first || v[i].first_beyond >= 0)
			return (long)i;
		/* the phase's first pass only drifts: a noise floor, maybe */
		for (size_t j = i + 1; j < n; j++)
			if (!strcmp(v[j].phase, ph) && v[j].first_beyond >= 0)
				return (long)j;
		return (long)i;
	}
	return -1;
}

long db_pass_first_diverging(const db_compare *c, const db_pass_line *v, size_t n)
{
	return db_pass_pick(c, v, n, NULL);
}
