/* The passes × layers table of the time view; see db_passes.h. */
#include "db_passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

void db_pass_grid_free(db_pass_grid *g)
{
	free(g->lines);
	free(g->layers);
	free(g->cell_of);
	free(g->cells);
	memset(g, 0, sizeof *g);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static size_t layer_col(const db_pass_grid *g, int layer)
{
	const int *hit = bsearch(&layer, g->layers, g->n_layers, sizeof *g->layers, cmp_int);
	return hit ? (size_t)(hit - g->layers) : 0;
}

/* The map pair -> cell: rows as db_pass_lines orders them, columns the
 * distinct layers. */
static int build(const db_compare *c, db_pass_grid *g)
{
	db_pass_grid_free(g);
	g->n_lines = db_pass_lines(c, &g->lines);
	g->layers = malloc((c->n_pairs + 1) * sizeof *g->layers);
	g->cell_of = malloc((c->n_pairs + 1) * sizeof *g->cell_of);
	if ((!g->n_lines && c->n_pairs) || !g->layers || !g->cell_of)
		return -1;
	for (size_t i = 0; i < c->n_pairs; i++)
		g->layers[i] = c->pairs[i].f.layer < 0 ? -1 : c->pairs[i].f.layer;
	qsort(g->layers, c->n_pairs, sizeof *g->layers, cmp_int);
	for (size_t i = 0; i < c->n_pairs; i++)
		if (!g->n_layers || g->layers[g->n_layers - 1] != g->layers[i])
			g->layers[g->n_layers++] = g->layers[i];
	if ((uint64_t)g->n_lines * (g->n_layers ? g->n_layers : 1) > UINT32_MAX)
		return -1;
	g->cells = calloc(g->n_lines * g->n_layers + 1, sizeof *g->cells);
	if (!g->cells)
		return -1;
	db_strmap m;
	db_strmap_init(&m);
	char key[256];
	for (size_t r = 0; r < g->n_lines; r++) {
		snprintf(key, sizeof key, "%s\x1f%s", g->lines[r].phase, g->lines[r].pass);
		bool added;
		if (!db_strmap_put(&m, key, r, &added)) {
			db_strmap_free(&m);
			return -1;
		}
	}
	size_t row = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		/* neighbours mostly share their pass: no hashing then */
		if (i == 0 || strcmp(p->f.pass, c->pairs[i - 1].f.pass) ||
		    strcmp(p->f.phase, c->pairs[i - 1].f.phase)) {
			snprintf(key, sizeof key, "%s\x1f%s", p->f.phase, p->f.pass);
			const size_t *r = db_strmap_get(&m, key);
			row = r ? *r : 0;
		}
		g->cell_of[i] = (uint32_t)(row * g->n_layers + layer_col(g, p->f.layer < 0 ? -1 : p->f.layer));
	}
	db_strmap_free(&m);
	g->gen = c->pairs_gen;
	g->done = (size_t)-1;
	return 0;
}

/* Severity of a not-ok status: what a cell names first. */
static int status_rank(db_status s)
{
	switch (s) {
	case DB_ST_ERROR: return 4;
	case DB_ST_SHAPE_MISMATCH: return 3;
	case DB_ST_NOT_COMPARABLE: return 2;
	case DB_ST_REF_ONLY: case DB_ST_TARGET_ONLY: return 1;
	default: return 0;
	}
}

/* Order of bands, worst last: "inputs differ" sits with drift (the
 * stage's inputs already differed; it is not a verdict on the stage). */
static int band_rank(db_band b)
{
	return b == DB_BAND_INPUTS ? 3 : (int)b * 2 - (b > DB_BAND_DRIFT ? 1 : 0);
}

static void fill(const db_compare *c, db_pass_grid *g)
{
	size_t n = g->n_lines * g->n_layers;
	for (size_t k = 0; k < n; k++)
		g->cells[k] = (db_pass_cell){.band = DB_BAND_NONE, .status = DB_ST_OK,
		                             .first = SIZE_MAX};
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		db_pass_cell *cell = &g->cells[g->cell_of[i]];
		if (cell->first == SIZE_MAX)
			cell->first = i;
		if (p->status != DB_ST_OK) {
			if (status_rank(p->status) > status_rank(cell->status))
				cell->status = p->status;
		} else if (atomic_load_explicit(&p->state, memory_order_acquire) != DB_PAIR_DONE) {
			cell->n_pending++;
		} else if (p->band != DB_BAND_NONE &&
		           (cell->band == DB_BAND_NONE || band_rank(p->band) > band_rank(cell->band))) {
			cell->band = p->band;
		}
	}
}

int db_pass_grid_update(const db_compare *c, db_pass_grid *g)
{
	bool rebuilt = false;
	if (!g->gen || g->gen != c->pairs_gen) {
		if (build(c, g) < 0) {
			db_pass_grid_free(g);
			return -1;
		}
		rebuilt = true;
	}
	size_t done = atomic_load(&c->n_done);
	if (!rebuilt && done == g->done)
		return 0;
	fill(c, g);
	g->done = done;
	return 1;
}

const db_pass_cell *db_pass_grid_cell(const db_pass_grid *g, size_t row, size_t col)
{
	if (row >= g->n_lines || col >= g->n_layers)
		return NULL;
	return &g->cells[row * g->n_layers + col];
}
