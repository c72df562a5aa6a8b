/* The noise floors (db_noise.h): a map from a pair's identity (fields,
 * occurrence, merged or not) to the reference-vs-noise rel of the same
 * pair, and the verdict of a reference-vs-target pair against it. */
#include "db_noise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair/compare_priv.h"
#include "util/strmap.h"

struct db_noise {
	char *root;
	db_strmap map;          /* pair key -> index into floor */
	double *floor;
	size_t n;
};

/* Merged and per-rank pairs of one cell are different pairs. */
static void noise_key(const db_pair *p, char *buf, size_t len)
{
	buf[0] = p->merged ? 'm' : 'r';
	db_pair_fields_key(&p->f, p->occurrence, buf + 1, len - 1);
}

db_noise *db_noise_build(const db_compare *nc, const char *root)
{
	db_noise *n = calloc(1, sizeof *n);
	if (!n || !(n->root = strdup(root)) ||
	    !(n->floor = malloc((nc->n_pairs + 1) * sizeof *n->floor))) {
		db_noise_free(n);
		return NULL;
	}
	db_strmap_init(&n->map);
	for (size_t i = 0; i < nc->n_pairs; i++) {
		const db_pair *p = &nc->pairs[i];
		/* only measured pairs give a floor: a layout the noise run cannot
		 * undo says nothing about the noise */
		if (p->status != DB_ST_OK || p->band == DB_BAND_NONE || !(p->m.rel >= 0))
			continue;
		char k[640];
		noise_key(p, k, sizeof k);
		bool added;
		size_t *v = db_strmap_put(&n->map, k, n->n, &added);
		if (!v) {
			db_noise_free(n);
			return NULL;
		}
		if (added)
			n->floor[n->n++] = p->m.rel;
	}
	return n;
}

void db_noise_free(db_noise *n)
{
	if (!n)
		return;
	if (n->floor)
		db_strmap_free(&n->map);
	free(n->floor);
	free(n->root);
	free(n);
}

const char *db_noise_root(const db_compare *c)
{
	const db_cmp_priv *pr = c->priv;
	return pr && pr->noise ? pr->noise->root : NULL;
}

size_t db_noise_floors(const db_compare *c)
{
	const db_cmp_priv *pr = c->priv;
	return pr && pr->noise ? pr->noise->n : 0;
}

void db_noise_judge(const db_compare *c, db_pair *p)
{
	const db_cmp_priv *pr = c->priv;
	p->noise = DB_NOISE_NONE;
	p->noise_floor = p->noise_ratio = NAN;
	if (!pr || !pr->noise || p->status != DB_ST_OK || p->band == DB_BAND_NONE)
		return;
	/* other token ids explain everything after them, noise or not */
	if (p->band == DB_BAND_INPUTS)
		return;
	char k[640];
	noise_key(p, k, sizeof k);
	size_t *v = db_strmap_get(&pr->noise->map, k);
	if (!v) {
		p->noise = DB_NOISE_NO_FLOOR;
		return;
	}
	const db_thresholds *t = &c->profile->thresholds;
	double fl = pr->noise->floor[*v];
	p->noise_floor = fl;
	p->noise_ratio = p->m.rel / (fl > t->noise_min_rel ? fl : t->noise_min_rel);
	bool bad = !(p->noise_ratio <= t->noise_k) || isnan(p->m.cos) ||
	           p->m.nonfinite_mismatch > 0;
	p->noise = bad ? DB_NOISE_BEYOND : DB_NOISE_WITHIN;
	/* the floor decides the word and so the band every glyph shows:
	 * "[drift] beyond noise" or a "~" cell beside a divergence never
	 * (issue 33; the band is recomputed from the metrics before each call) */
	if (!bad)
		p->band = DB_BAND_OK;
	else if (p->band < DB_BAND_ALGO)
		p->band = DB_BAND_ALGO;
}

char *db_noise_str(const db_pair *p, char *buf, size_t len)
{
	if (!len)
		return buf;
	buf[0] = '\0';
	if (p->noise == DB_NOISE_NO_FLOOR)
		snprintf(buf, len, "no noise floor");
	else if (p->noise == DB_NOISE_WITHIN || p->noise == DB_NOISE_BEYOND)
		snprintf(buf, len, "%s noise x%.3g (floor %.2e)",
		         p->noise == DB_NOISE_BEYOND ? "beyond" : "within", p->noise_ratio,
		         p->noise_floor);
	return buf;
}
