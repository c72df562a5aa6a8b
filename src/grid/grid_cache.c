/* The grid index of one (phase, pass) and the builds through it; see
 * db_grid_cache.h. Each step mirrors db_grid_build (grid.c) over the
 * selection's own pairs instead of a filter over every pair; a change to
 * the grid's rules goes in both (tests/test_grid.c compares them). */
#include "db_grid_cache.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid_cache_priv.h"
#include "grid_priv.h"
#include "util/strmap.h"

db_grid_cache *db_grid_cache_new(void)
{
	return calloc(1, sizeof(db_grid_cache));
}

static void index_clear(db_grid_cache *gc)
{
	free(gc->phase);
	free(gc->pass);
	free(gc->all);
	free(gc->by_rank);
	free(gc->spans);
	free(gc->sid);
	free(gc->stages);
	free(gc->stage_rank);
	free(gc->model_after);
	db_grid_free(&gc->any);
	free(gc->worst_cells);
	memset(gc, 0, sizeof *gc);
}

void db_grid_cache_free(db_grid_cache *gc)
{
	if (gc)
		index_clear(gc);
	free(gc);
}

static int rank_key(const db_pair *p)
{
	return p->merged ? -1 : p->f.rank;
}

typedef struct keyed { int key; size_t i; } keyed;

static int cmp_keyed(const void *va, const void *vb)
{
	const keyed *a = va, *b = vb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* by_rank and its spans from all. */
static int index_ranks(db_grid_cache *gc, const db_compare *c)
{
	keyed *k = malloc((gc->n_all + 1) * sizeof *k);
	gc->by_rank = malloc((gc->n_all + 1) * sizeof *gc->by_rank);
	gc->spans = malloc((gc->n_all + 1) * sizeof *gc->spans);
	if (!k || !gc->by_rank || !gc->spans) {
		free(k);
		return -1;
	}
	int lo = INT_MAX, hi = INT_MIN;
	for (size_t j = 0; j < gc->n_all; j++) {
		k[j] = (keyed){rank_key(&c->pairs[gc->all[j]]), gc->all[j]};
		lo = k[j].key < lo ? k[j].key : lo;
		hi = k[j].key > hi ? k[j].key : hi;
	}
	/* all is in pair order: a stable counting sort by rank gives qsort's
	 * (rank, pair) order without a comparison per pair (the qsort was a
	 * quarter of the first selection at 10^6 files); qsort for wide ranks */
	size_t *at = gc->n_all && (int64_t)hi - lo < 65536
	             ? calloc((size_t)((int64_t)hi - lo) + 2, sizeof *at) : NULL;
	if (at) {
		size_t nk = (size_t)((int64_t)hi - lo) + 1;
		for (size_t j = 0; j < gc->n_all; j++)
			at[k[j].key - lo + 1]++;
		for (size_t r = 1; r <= nk; r++)
			at[r] += at[r - 1];
		keyed *sorted = malloc((gc->n_all + 1) * sizeof *sorted);
		if (sorted) {
			for (size_t j = 0; j < gc->n_all; j++)
				sorted[at[k[j].key - lo]++] = k[j];
			free(k);
			k = sorted;
		} else {
			qsort(k, gc->n_all, sizeof *k, cmp_keyed);
		}
		free(at);
	} else {
		qsort(k, gc->n_all, sizeof *k, cmp_keyed);
	}
	for (size_t j = 0; j < gc->n_all; j++) {
		gc->by_rank[j] = k[j].i;
		if (!j || k[j].key != k[j - 1].key)
			gc->spans[gc->n_spans++] = (rank_span){k[j].key, j, 0};
		gc->spans[gc->n_spans - 1].n++;
	}
	free(k);
	return 0;
}

/* stage_rank: the stages of every rank's layer pairs ordered as
 * order_sel_cols orders them (nodes by first appearance, then
 * grid_order_cols). */
static int index_stage_order(db_grid_cache *gc, const db_compare *c)
{
	size_t ns = gc->n_stages, nn = 0, nlc = 0;
	size_t *node = malloc((ns + 1) * sizeof *node);
	colrec *nodes = calloc(ns + 1, sizeof *nodes);
	size_t *nrank = malloc((ns + 1) * sizeof *nrank);
	lcol *lc = malloc((gc->n_all + 1) * sizeof *lc);
	gc->stage_rank = malloc((ns + 1) * sizeof *gc->stage_rank);
	int rc = node && nodes && nrank && lc && gc->stage_rank ? 0 : -1;
	for (size_t s = 0; rc == 0 && s < ns; s++)
		node[s] = SIZE_MAX;
	for (size_t j = 0; rc == 0 && j < gc->n_all; j++) {
		size_t i = gc->all[j];
		const db_pair *p = &c->pairs[i];
		if (p->f.layer < 0)
			continue;
		uint32_t s = gc->sid[i];
		if (node[s] == SIZE_MAX) {
			int pos = db_profile_stage_pos(c->profile, p->f.stage);
			nodes[nn] = (colrec){NULL, pos < 0 ? INT_MAX : pos, p->seq};
			node[s] = nn++;
		}
		lc[nlc++] = (lcol){p->f.layer, i, node[s]};
	}
	if (rc == 0)
		rc = grid_order_cols(nodes, nn, lc, nlc, grid_records_order(c), nrank);
	if (rc == 0) {
		for (size_t s = 0; s < ns; s++)
			gc->stage_rank[s] = node[s] == SIZE_MAX ? SIZE_MAX : nrank[node[s]];
	}
	free(node);
	free(nodes);
	free(nrank);
	free(lc);
	return rc;
}

int grid_cache_ensure(db_grid_cache *gc, const db_compare *c, const char *phase,
                      const char *pass)
{
	if (gc->gen && gc->gen == c->pairs_gen && gc->c == c && !strcmp(gc->phase, phase) &&
	    !strcmp(gc->pass, pass))
		return 0;
	index_clear(gc);
	size_t np = c->n_pairs;
	gc->phase = strdup(phase);
	gc->pass = strdup(pass);
	gc->all = malloc((np + 1) * sizeof *gc->all);
	gc->sid = malloc((np + 1) * sizeof *gc->sid);
	gc->stages = malloc((np + 1) * sizeof *gc->stages);
	db_strmap sm;
	db_strmap_init(&sm);
	int rc = gc->phase && gc->pass && gc->all && gc->sid && gc->stages ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < np; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->occurrence != 0 || strcmp(p->f.phase, phase) || strcmp(p->f.pass, pass))
			continue;
		bool added;
		size_t *v = db_strmap_put(&sm, p->f.stage, gc->n_stages, &added);
		if (!v) {
			rc = -1;
			break;
		}
		if (added)
			gc->stages[gc->n_stages++] = p->f.stage;
		gc->sid[i] = (uint32_t)*v;
		gc->all[gc->n_all++] = i;
	}
	db_strmap_free(&sm);
	gc->model_after = rc == 0 ? malloc((gc->n_stages + 1) * sizeof *gc->model_after) : NULL;
	if (!gc->model_after)
		rc = -1;
	for (size_t s = 0; rc == 0 && s < gc->n_stages; s++)
		gc->model_after[s] = db_profile_is_model_after(c->profile, gc->stages[s]);
	if (rc == 0)
		rc = index_ranks(gc, c);
	if (rc == 0)
		rc = index_stage_order(gc, c);
	if (rc != 0) {
		index_clear(gc);
		return -1;
	}
	gc->c = c;
	gc->gen = c->pairs_gen;
	return 0;
}

/* The selection's pairs for rank, in pair order (in_sel's rank_sel). */
static size_t select_rank(const db_grid_cache *gc, int rank, const size_t **out)
{
	*out = gc->all;
	if (rank == DB_RANK_ANY)
		return gc->n_all;
	for (size_t k = 0; k < gc->n_spans; k++)
		if (gc->spans[k].key == rank) {
			*out = gc->by_rank + gc->spans[k].start;
			return gc->spans[k].n;
		}
	return 0;
}

/* Scratch of one build, by stage id or column. */
typedef struct build {
	const db_compare *c;
	const db_grid_cache *gc;
	const size_t *sel;
	size_t n_sel;
	size_t *top_col;                /* by stage id: its column, SIZE_MAX none */
	colrec *cols;                   /* in order of first appearance */
	size_t n_cols;
	int *layers;                    /* distinct, ascending */
	size_t n_layers, n_model;
} build;

/* Columns (top-level stages of layer pairs), layers and model pairs of the
 * selection: db_grid_build's first loop, parent_of once per stage. */
static int build_cols(build *b)
{
	const db_grid_cache *gc = b->gc;
	size_t ns = gc->n_stages;
	const char **known = malloc((ns + 1) * sizeof *known);
	bool *seen = calloc(ns + 1, sizeof *seen);
	b->top_col = malloc((ns + 1) * sizeof *b->top_col);
	b->cols = calloc(ns + 1, sizeof *b->cols);
	b->layers = malloc((b->n_sel + 1) * sizeof *b->layers);
	db_strmap cm;
	db_strmap_init(&cm);
	int rc = known && seen && b->top_col && b->cols && b->layers ? 0 : -1;
	size_t n_known = 0;
	for (size_t s = 0; rc == 0 && s < ns; s++)
		b->top_col[s] = SIZE_MAX;
	for (size_t k = 0; rc == 0 && k < b->n_sel; k++) {
		uint32_t s = gc->sid[b->sel[k]];
		if (!seen[s]) {
			seen[s] = true;
			known[n_known++] = gc->stages[s];
		}
	}
	for (size_t k = 0; rc == 0 && k < b->n_sel; k++) {
		const db_pair *p = &b->c->pairs[b->sel[k]];
		if (p->f.layer < 0) {
			b->n_model++;
			continue;
		}
		/* sorted and made distinct below; neighbours mostly share one */
		if (!b->n_layers || b->layers[b->n_layers - 1] != p->f.layer)
			b->layers[b->n_layers++] = p->f.layer;
		uint32_t s = gc->sid[b->sel[k]];
		if (b->top_col[s] != SIZE_MAX)
			continue;
		char buf[256];
		const char *top = grid_parent_of(b->c, p->f.stage, known, n_known, buf, sizeof buf);
		bool added;
		size_t *v = db_strmap_put(&cm, top, b->n_cols, &added);
		if (!v) {
			rc = -1;
			break;
		}
		if (added) {
			int pos = db_profile_stage_pos(b->c->profile, top);
			b->cols[b->n_cols] = (colrec){strdup(top), pos < 0 ? INT_MAX : pos, p->seq};
			if (!b->cols[b->n_cols].name)
				rc = -1;
			b->n_cols++;
		}
		b->top_col[s] = *v;
	}
	if (rc == 0 && b->n_layers) {
		qsort(b->layers, b->n_layers, sizeof *b->layers, grid_cmp_int);
		size_t k = 1;
		for (size_t i = 1; i < b->n_layers; i++)
			if (b->layers[i] != b->layers[k - 1])
				b->layers[k++] = b->layers[i];
		b->n_layers = k;
	}
	db_strmap_free(&cm);
	free(known);
	free(seen);
	return rc;
}

typedef struct colkey { size_t key, col; } colkey;

static int cmp_colkey(const void *va, const void *vb)
{
	const colkey *a = va, *b = vb;
	return (a->key > b->key) - (a->key < b->key);
}

/* g->cols in order_sel_cols' order (a column goes where its first stage
 * is in the order of every rank); remap: first-appearance -> place. */
static int build_order(build *b, db_grid *g, size_t *remap)
{
	size_t nc = b->n_cols;
	colkey *ck = malloc((nc + 1) * sizeof *ck);
	if (!ck || !(g->cols = calloc(nc + 1, sizeof *g->cols))) {
		free(ck);
		return -1;
	}
	for (size_t j = 0; j < nc; j++)
		ck[j] = (colkey){SIZE_MAX, j};
	for (size_t s = 0; s < b->gc->n_stages; s++) {
		size_t col = b->top_col[s], r = b->gc->stage_rank[s];
		if (col != SIZE_MAX && r < ck[col].key)
			ck[col].key = r;
	}
	qsort(ck, nc, sizeof *ck, cmp_colkey);
	for (size_t j = 0; j < nc; j++) {
		remap[ck[j].col] = j;
		g->cols[j] = b->cols[ck[j].col].name;
		b->cols[ck[j].col].name = NULL;         /* moved into g->cols */
	}
	g->n_cols = nc;
	free(ck);
	return 0;
}

/* Model-level rows before the layers, the layer rows, model rows after. */
static int build_rows(build *b, db_grid *g)
{
	size_t cap_rows = b->n_model + b->n_layers;
	if (!(g->rows = calloc(cap_rows + 1, sizeof *g->rows)))
		return -1;
	int rc = 0;
	for (int after = 0; after < 2 && rc == 0; after++) {
		if (after) {
			g->n_layer_rows = b->n_layers;
			for (size_t l = 0; l < b->n_layers && rc == 0; l++) {
				char lab[32];
				snprintf(lab, sizeof lab, "L%d", b->layers[l]);
				rc = grid_add_row(g, cap_rows, b->layers[l], lab, DB_NO_PAIR);
			}
		}
		db_strmap rows;         /* the rows of this side by label */
		db_strmap_init(&rows);
		for (size_t k = 0; k < b->n_sel && rc == 0 && b->n_model; k++) {
			size_t i = b->sel[k];
			const db_pair *p = &b->c->pairs[i];
			if (p->f.layer >= 0 || b->gc->model_after[b->gc->sid[i]] != (bool)after)
				continue;
			rc = grid_model_row(g, cap_rows, &rows, b->c, i);
		}
		db_strmap_free(&rows);
		if (!after)
			g->first_layer_row = g->n_rows;
	}
	return rc;
}

/* Cells: the top-level stage's own pair, else its last sub-stage. */
static void build_cells(build *b, db_grid *g, const size_t *remap)
{
	for (size_t k = 0; k < b->n_sel; k++) {
		size_t i = b->sel[k];
		const db_pair *p = &b->c->pairs[i];
		if (p->f.layer < 0)
			continue;
		size_t col = remap[b->top_col[b->gc->sid[i]]];
		size_t *cell = &g->rows[grid_layer_row(g, p->f.layer)].cells[col];
		if (*cell == DB_NO_PAIR || grid_cell_better(&b->c->pairs[*cell], p, g->cols[col]))
			*cell = i;
	}
}

/* A deep copy of s into d; -1 (d empty) when out of memory. */
static int grid_copy(const db_grid *s, db_grid *d)
{
	memset(d, 0, sizeof *d);
	d->phase = strdup(s->phase);
	d->pass = strdup(s->pass);
	d->rank = s->rank;
	d->first_layer_row = s->first_layer_row;
	d->n_layer_rows = s->n_layer_rows;
	d->cols = calloc(s->n_cols + 1, sizeof *d->cols);
	d->rows = calloc(s->n_rows + 1, sizeof *d->rows);
	int rc = d->phase && d->pass && d->cols && d->rows ? 0 : -1;
	for (; rc == 0 && d->n_cols < s->n_cols; d->n_cols++)
		if (!(d->cols[d->n_cols] = strdup(s->cols[d->n_cols])))
			rc = -1;
	for (size_t r = 0; rc == 0 && r < s->n_rows; r++)
		if ((rc = grid_add_row(d, s->n_rows, s->rows[r].layer, s->rows[r].label, 0)) == 0)
			memcpy(d->rows[r].cells, s->rows[r].cells,
			       (s->n_cols ? s->n_cols : 1) * sizeof *s->rows[r].cells);
	if (rc != 0)
		db_grid_free(d);
	return rc;
}

int db_grid_cache_build(db_grid_cache *gc, const db_compare *c, const char *phase,
                        const char *pass, int rank, db_grid *g)
{
	bool began = grid_begin(c, &phase, &pass, rank, g);
	build b = {.c = c, .gc = gc};
	size_t *remap = NULL;
	int rc = began && grid_cache_ensure(gc, c, phase, pass) == 0 ? 0 : -1;
	if (rc == 0 && rank == DB_RANK_ANY && gc->have_any) {
		db_grid_free(g);        /* kept: every rank's pairs, the costly one */
		return grid_copy(&gc->any, g);
	}
	if (rc == 0) {
		b.n_sel = select_rank(gc, rank, &b.sel);
		rc = build_cols(&b);
	}
	if (rc == 0 && !(remap = malloc((b.n_cols + 1) * sizeof *remap)))
		rc = -1;
	if (rc == 0)
		rc = build_order(&b, g, remap);
	if (rc == 0)
		rc = build_rows(&b, g);
	if (rc == 0)
		build_cells(&b, g, remap);
	for (size_t j = 0; j < b.n_cols; j++)
		free(b.cols[j].name);
	free(b.cols);
	free(b.top_col);
	free(b.layers);
	free(remap);
	if (rc != 0) {
		db_grid_free(g);
		return -1;
	}
	if (rank == DB_RANK_ANY)
		gc->have_any = grid_copy(g, &gc->any) == 0;
	return 0;
}
