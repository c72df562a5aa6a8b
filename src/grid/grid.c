/* The layer × stage grid of one (phase, pass, rank) selection, and the
 * small queries the views and the bisect share. */
#include "db_grid.h"
#include "grid_priv.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

int grid_rank_prio(const db_pair *p)
{
	return p->merged ? 0 : p->f.rank < 0 ? 1 : 2 + p->f.rank;
}

static bool rank_sel(const db_pair *p, int rank)
{
	if (rank == DB_RANK_ANY)
		return true;
	if (rank == -1)
		return p->merged || p->f.rank == -1;
	return !p->merged && p->f.rank == rank;
}

static bool in_sel(const db_pair *p, const char *phase, const char *pass, int rank)
{
	/* the integer tests first: with one rank of 64 selected, most pairs
	 * leave before any strcmp (issue 12) */
	return p->occurrence == 0 && rank_sel(p, rank) && !strcmp(p->f.phase, phase) &&
	       !strcmp(p->f.pass, pass);
}

/* Distinct stage names of the pairs in a selection (borrowed pointers). */
static size_t known_stages(const db_compare *c, const char *phase, const char *pass,
                           int rank, const char ***out)
{
	const char **k = malloc((c->n_pairs + 1) * sizeof *k);
	size_t n = 0;
	db_strmap m;
	db_strmap_init(&m);
	for (size_t i = 0; k && i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (phase && !in_sel(p, phase, pass, rank))
			continue;
		bool added;
		if (db_strmap_put(&m, p->f.stage, n, &added) && added)
			k[n++] = p->f.stage;
	}
	db_strmap_free(&m);
	*out = k;
	return n;
}

const char *grid_parent_of(const db_compare *c, const char *stage, const char **known,
                           size_t n_known, char *buf, size_t len)
{
	const char *r = db_profile_parent(c->profile, stage, known, n_known, buf, len);
	return r ? r : stage;
}

bool grid_records_order(const db_compare *c)
{
	return (c->ref && c->ref->records_order) || (c->tgt && c->tgt->records_order);
}

int grid_model_row(db_grid *g, size_t cap_rows, db_strmap *rows, const db_compare *c, size_t i)
{
	const db_pair *p = &c->pairs[i];
	bool added;
	size_t *r = db_strmap_put(rows, p->f.stage, g->n_rows, &added);
	if (!r)
		return -1;
	if (added)
		return grid_add_row(g, cap_rows, -1, p->f.stage, i);
	if (grid_rank_prio(p) < grid_rank_prio(&c->pairs[g->rows[*r].cells[0]]))
		g->rows[*r].cells[0] = i;
	return 0;
}

size_t grid_layer_row(const db_grid *g, int layer)
{
	size_t lo = g->first_layer_row, hi = lo + g->n_layer_rows;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->rows[mid].layer < layer)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int grid_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The column's own stage beats its sub-stages, the better rank wins, then
 * the later sub-stage. */
bool grid_cell_better(const db_pair *cur, const db_pair *cand, const char *col)
{
	bool own_cur = !strcmp(cur->f.stage, col), own_cand = !strcmp(cand->f.stage, col);
	if (own_cur != own_cand)
		return own_cand;
	if (grid_rank_prio(cand) != grid_rank_prio(cur))
		return grid_rank_prio(cand) < grid_rank_prio(cur);
	return !own_cand && cand->seq > cur->seq;
}

int grid_add_row(db_grid *g, size_t cap_rows, int layer, const char *label,
                 size_t first_cell)
{
	if (g->n_rows >= cap_rows)
		return -1;
	db_grid_row *r = &g->rows[g->n_rows];
	r->layer = layer;
	r->label = strdup(label);
	r->cells = malloc((g->n_cols ? g->n_cols : 1) * sizeof *r->cells);
	if (!r->label || !r->cells) {
		free(r->label);
		free(r->cells);
		return -1;
	}
	for (size_t i = 0; i < (g->n_cols ? g->n_cols : 1); i++)
		r->cells[i] = DB_NO_PAIR;
	r->cells[0] = first_cell;
	g->n_rows++;
	return 0;
}

typedef struct colkey { size_t key, col; } colkey;

static int cmp_colkey(const void *va, const void *vb)
{
	const colkey *a = va, *b = vb;
	return (a->key > b->key) - (a->key < b->key);
}

/* Order of the selection's ncols columns (tops: per pair, its column or
 * DB_NO_PAIR) into out. The stages of the whole (phase, pass), every rank
 * and merged pair, are ordered first (order_cols over stages); a column
 * goes where its first stage ran. So a view that lacks stages (one rank, or
 * merged pairs only: attention in some layers, mlp in others) keeps the
 * order of the full view instead of falling back to first seq. */
static int order_sel_cols(const db_compare *c, const char *phase, const char *pass,
                          int rank, const size_t *tops, size_t ncols, size_t *out)
{
	size_t np = c->n_pairs;
	colrec *nodes = calloc(np + 1, sizeof *nodes);
	lcol *lc = malloc((np + 1) * sizeof *lc);
	size_t *nrank = malloc((np + 1) * sizeof *nrank);
	colkey *ck = malloc((ncols + 1) * sizeof *ck);
	db_strmap sm;
	db_strmap_init(&sm);
	size_t nn = 0, nlc = 0;
	int rc = nodes && lc && nrank && ck ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < np; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->f.layer < 0 || !in_sel(p, phase, pass, DB_RANK_ANY))
			continue;
		bool added;
		size_t *v = db_strmap_put(&sm, p->f.stage, nn, &added);
		if (!v) {
			rc = -1;
			break;
		}
		if (added) {
			int pos = db_profile_stage_pos(c->profile, p->f.stage);
			nodes[nn++] = (colrec){NULL, pos < 0 ? INT_MAX : pos, p->seq};
		}
		lc[nlc++] = (lcol){p->f.layer, i, *v};
	}
	if (rc == 0)
		rc = grid_order_cols(nodes, nn, lc, nlc, grid_records_order(c), nrank);
	if (rc == 0) {
		for (size_t j = 0; j < ncols; j++)
			ck[j] = (colkey){SIZE_MAX, j};
		for (size_t i = 0; i < np; i++) {
			if (tops[i] == DB_NO_PAIR || !in_sel(&c->pairs[i], phase, pass, rank))
				continue;
			size_t *v = db_strmap_get(&sm, c->pairs[i].f.stage);
			if (v && nrank[*v] < ck[tops[i]].key)
				ck[tops[i]].key = nrank[*v];
		}
		qsort(ck, ncols, sizeof *ck, cmp_colkey);
		for (size_t j = 0; j < ncols; j++)
			out[j] = ck[j].col;
	}
	db_strmap_free(&sm);
	free(nodes);
	free(lc);
	free(nrank);
	free(ck);
	return rc;
}

bool grid_begin(const db_compare *c, const char **phase, const char **pass, int rank,
                db_grid *g)
{
	memset(g, 0, sizeof *g);
	if (!*phase)
		*phase = c->n_phases ? c->phases[0] : "";
	if (!*pass)
		*pass = db_default_pass(c, *phase);
	g->phase = strdup(*phase);
	g->pass = strdup(*pass);
	g->rank = rank;
	return g->phase && g->pass;
}

int db_grid_build(const db_compare *c, const char *phase, const char *pass,
                  int rank, db_grid *g)
{
	bool began = grid_begin(c, &phase, &pass, rank, g);
	const char **known = NULL;
	size_t n_known = known_stages(c, phase, pass, rank, &known);
	size_t np = c->n_pairs;
	colrec *cols = calloc(np + 1, sizeof *cols);
	int *layers = malloc((np + 1) * sizeof *layers);
	size_t *tops = malloc((np + 1) * sizeof *tops);   /* per pair: column index */
	db_strmap cm;
	db_strmap_init(&cm);
	size_t ncols = 0, nlayers = 0, nmodel = 0;
	int rc = 0;
	if (!began || !known || !cols || !layers || !tops)
		rc = -1;
	/* columns: top-level stages of layer pairs */
	for (size_t i = 0; rc == 0 && i < np; i++) {
		const db_pair *p = &c->pairs[i];
		tops[i] = DB_NO_PAIR;
		if (!in_sel(p, phase, pass, rank))
			continue;
		if (p->f.layer < 0) {
			nmodel++;
			continue;
		}
		layers[nlayers++] = p->f.layer;
		char buf[256];
		const char *top = grid_parent_of(c, p->f.stage, known, n_known, buf, sizeof buf);
		bool added;
		size_t *v = db_strmap_put(&cm, top, ncols, &added);
		if (!v) {
			rc = -1;
			break;
		}
		if (added) {
			int pos = db_profile_stage_pos(c->profile, top);
			cols[ncols] = (colrec){strdup(top), pos < 0 ? INT_MAX : pos, p->seq};
			if (!cols[ncols].name)
				rc = -1;
			ncols++;
		}
		tops[i] = *v;
	}
	/* order columns; remap pair -> column */
	size_t *remap = rc == 0 ? malloc((ncols + 1) * sizeof *remap) : NULL;
	if (rc == 0 && !remap)
		rc = -1;
	if (rc == 0) {
		size_t *ord = malloc((ncols + 1) * sizeof *ord);
		if (!ord || order_sel_cols(c, phase, pass, rank, tops, ncols, ord) != 0 ||
		    !(g->cols = calloc(ncols + 1, sizeof *g->cols))) {
			rc = -1;
		} else {
			for (size_t j = 0; j < ncols; j++) {
				remap[ord[j]] = j;
				g->cols[j] = cols[ord[j]].name;
				cols[ord[j]].name = NULL;       /* moved into g->cols */
			}
			g->n_cols = ncols;
		}
		free(ord);
	}
	/* distinct layers ascending */
	if (rc == 0 && nlayers) {
		qsort(layers, nlayers, sizeof *layers, grid_cmp_int);
		size_t k = 1;
		for (size_t i = 1; i < nlayers; i++)
			if (layers[i] != layers[k - 1])
				layers[k++] = layers[i];
		nlayers = k;
	}
	size_t cap_rows = nmodel + nlayers;
	if (rc == 0 && !(g->rows = calloc(cap_rows + 1, sizeof *g->rows)))
		rc = -1;
	/* model-level "before" rows, in execution order */
	for (int after = 0; after < 2 && rc == 0; after++) {
		if (after) {
			g->n_layer_rows = nlayers;
			for (size_t l = 0; l < nlayers && rc == 0; l++) {
				char lab[32];
				snprintf(lab, sizeof lab, "L%d", layers[l]);
				rc = grid_add_row(g, cap_rows, layers[l], lab, DB_NO_PAIR);
			}
		}
		db_strmap rows;         /* the rows of this side by label */
		db_strmap_init(&rows);
		for (size_t i = 0; i < np && rc == 0; i++) {
			const db_pair *p = &c->pairs[i];
			if (!in_sel(p, phase, pass, rank) || p->f.layer >= 0 ||
			    db_profile_is_model_after(c->profile, p->f.stage) != (bool)after)
				continue;
			rc = grid_model_row(g, cap_rows, &rows, c, i);
		}
		db_strmap_free(&rows);
		if (!after)
			g->first_layer_row = g->n_rows;
	}
	/* cells: the top-level stage's own pair, else its last sub-stage */
	for (size_t i = 0; i < np && rc == 0; i++) {
		const db_pair *p = &c->pairs[i];
		if (tops[i] == DB_NO_PAIR)
			continue;
		size_t col = remap[tops[i]];
		size_t *cell = &g->rows[grid_layer_row(g, p->f.layer)].cells[col];
		if (*cell == DB_NO_PAIR || grid_cell_better(&c->pairs[*cell], p, g->cols[col]))
			*cell = i;
	}
	for (size_t j = 0; j < ncols && cols; j++)
		free(cols[j].name);
	free(cols);
	free(remap);
	free(layers);
	free(tops);
	free(known);
	db_strmap_free(&cm);
	if (rc != 0) {
		db_grid_free(g);
		return -1;
	}
	return 0;
}

void db_grid_free(db_grid *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_cols; i++)
		free(g->cols[i]);
	free(g->cols);
	for (size_t i = 0; i < g->n_rows; i++) {
		free(g->rows[i].label);
		free(g->rows[i].cells);
	}
	free(g->rows);
	free(g->phase);
	free(g->pass);
	memset(g, 0, sizeof *g);
}

static int cmp_passstr(const void *a, const void *b)
{
	return db_profile_pass_cmp(*(char *const *)a, *(char *const *)b);
}

size_t db_passes(const db_compare *c, const char *phase, char ***out)
{
	*out = NULL;
	char **v = calloc(c->n_pairs + 1, sizeof *v);
	if (!v)
		return 0;
	db_strmap m;
	db_strmap_init(&m);
	size_t n = 0;
	const char *last = NULL;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (phase && *phase && strcmp(p->f.phase, phase))
			continue;
		/* neighbours mostly share their pass: one strcmp, no hashing */
		if (last && !strcmp(p->f.pass, last))
			continue;
		last = p->f.pass;
		bool added;
		if (db_strmap_put(&m, p->f.pass, n, &added) && added && (v[n] = strdup(p->f.pass)))
			n++;
	}
	db_strmap_free(&m);
	qsort(v, n, sizeof *v, cmp_passstr);
	*out = v;
	return n;
}

/* Tokens of a pass: dim 0 of its first tensor (ATOM's n_tok). */
static int64_t pass_tokens(const db_compare *c, const char *phase, const char *pass)
{
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (!strcmp(p->f.phase, phase) && !strcmp(p->f.pass, pass)) {
			if (p->ndim_ref >= 1)
				return p->shape_ref[0];
			if (p->ndim_tgt >= 1)
				return p->shape_tgt[0];
		}
	}
	return -1;
}

/* Walking the pairs in order: the value in m of a pair's pass when the pair
 * is of phase, else NULL. The names are interned and pairs come in runs of
 * one phase and pass: the map is asked only when a pointer changes. */
typedef struct pass_walk {
	const db_strmap *m;
	const char *phase;
	const char *lph, *lpa;  /* the last phase and pass seen */
	bool in;
	size_t *k;
} pass_walk;

static size_t *pass_walk_at(pass_walk *w, const db_pair *p)
{
	if (p->f.phase != w->lph) {
		w->lph = p->f.phase;
		w->in = !strcmp(w->lph, w->phase);
	}
	if (!w->in)
		return NULL;
	if (p->f.pass != w->lpa) {
		w->lpa = p->f.pass;
		w->k = db_strmap_get(w->m, w->lpa);
	}
	return w->k;
}

/* pass_tokens of each of the n passes v of phase, in one pass over the
 * pairs (a pass over all pairs per pass was quadratic in trees with a pass
 * per decode step, issue 12). */
static void pass_tokens_all(const db_compare *c, const char *phase, char *const *v, size_t n,
                            int64_t *ntok)
{
	db_strmap m;
	db_strmap_init(&m);
	bool *found = calloc(n + 1, sizeof *found);
	bool ok = found != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		ntok[i] = -1;
		ok = db_strmap_put(&m, v[i], i, NULL) != NULL;
	}
	if (!ok) {      /* out of memory: the slow way */
		for (size_t i = 0; i < n; i++)
			ntok[i] = pass_tokens(c, phase, v[i]);
	} else {
		size_t left = n;
		pass_walk w = {.m = &m, .phase = phase};
		for (size_t i = 0; left && i < c->n_pairs; i++) {
			const db_pair *p = &c->pairs[i];
			size_t *k = pass_walk_at(&w, p);
			if (!k || found[*k] || (p->ndim_ref < 1 && p->ndim_tgt < 1))
				continue;
			ntok[*k] = p->ndim_ref >= 1 ? p->shape_ref[0] : p->shape_tgt[0];
			found[*k] = true;
			left--;
		}
	}
	free(found);
	db_strmap_free(&m);
}

/* Borrowed pointer to a pair's pass string, valid until rescan/free. */
static const char *pair_pass(const db_compare *c, const char *phase, const char *pass)
{
	for (size_t i = 0; i < c->n_pairs; i++)
		if (!strcmp(c->pairs[i].f.phase, phase) && !strcmp(c->pairs[i].f.pass, pass))
			return c->pairs[i].f.pass;
	return "";
}

/* The profile's rule (first/last/value/prefill); "all" shows the first. */
/* Moves the passes that hold a layer's tensor to the front of v (order
 * kept) and returns their count; n when none does. A pass holding only
 * model-level tensors (the hook's model/logits of the pass before, when a
 * tree was cut to later passes) has nothing to bisect. */
static size_t layered_first(const db_compare *c, const char *phase, char **v, size_t n)
{
	db_strmap m;
	db_strmap_init(&m);
	bool *has = calloc(n + 1, sizeof *has);
	bool ok = has != NULL;
	for (size_t i = 0; ok && i < n; i++)
		ok = db_strmap_put(&m, v[i], i, NULL) != NULL;
	size_t k = n;
	if (ok) {
		pass_walk w = {.m = &m, .phase = phase};
		for (size_t i = 0; i < c->n_pairs; i++) {
			const db_pair *p = &c->pairs[i];
			size_t *j = p->f.layer < 0 ? NULL : pass_walk_at(&w, p);
			if (j)
				has[*j] = true;
		}
		k = 0;
		for (size_t i = 0; i < n; i++)
			if (has[i]) {
				char *t = v[i];
				memmove(v + k + 1, v + k, (i - k) * sizeof *v);
				v[k++] = t;
			}
		if (!k)
			k = n;
	}
	free(has);
	db_strmap_free(&m);
	return k;
}

const char *db_default_pass(const db_compare *c, const char *phase)
{
	if (!phase)
		phase = c->n_phases ? c->phases[0] : "";
	char **v;
	size_t n_all = db_passes(c, phase, &v);
	size_t n = n_all ? layered_first(c, phase, v, n_all) : 0;
	int64_t *ntok = malloc((n + 1) * sizeof *ntok);
	const char *r = "";
	if (n && ntok) {
		pass_tokens_all(c, phase, v, n, ntok);
		int k = db_profile_select_pass(c->profile, (const char *const *)v, ntok, n);
		r = pair_pass(c, phase, v[k >= 0 && (size_t)k < n ? (size_t)k : 0]);
	}
	free(ntok);
	for (size_t i = 0; i < n_all; i++)
		free(v[i]);
	free(v);
	return r;
}

/* Ranks below this are marked in a bitmap (8 KiB), the rest sorted. */
#define RANK_BITS 65536

size_t db_ranks(const db_compare *c, int **out)
{
	int *v = malloc((c->n_pairs + 1) * sizeof *v);
	uint64_t *seen = calloc(RANK_BITS / 64, sizeof *seen);
	*out = v;
	if (!v || !seen) {
		free(seen);
		return 0;
	}
	/* distinct ranks without sorting a value per pair (a qsort of 406k
	 * ints was a third of the first selection at 10^6 files) */
	size_t n = 0, big = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		int r = c->pairs[i].f.rank;
		if (c->pairs[i].merged || r < 0)
			continue;
		if (r < RANK_BITS)
			seen[r / 64] |= (uint64_t)1 << (r % 64);
		else
			big++;
	}
	for (int r = 0; r < RANK_BITS; r++)
		if (seen[r / 64] >> (r % 64) & 1)
			v[n++] = r;
	free(seen);
	if (big) {              /* after the bitmap's: sorted, made distinct */
		size_t k = n;
		for (size_t i = 0; i < c->n_pairs; i++)
			if (!c->pairs[i].merged && c->pairs[i].f.rank >= RANK_BITS)
				v[k++] = c->pairs[i].f.rank;
		qsort(v + n, k - n, sizeof *v, grid_cmp_int);
		size_t d = n;
		for (size_t i = n; i < k; i++)
			if (i == n || v[i] != v[d - 1])
				v[d++] = v[i];
		n = d;
	}
	return n;
}

/* The pairs of one place (phase, pass, layer, occurrence), in pair order:
 * db_substages looks no further (issue 24: <Enter> made passes over every
 * pair, 20-34 ms at 10^6 files). */
typedef struct place {
	const db_compare *c;
	size_t *v, n;
} place;

/* A pair of stage at the place that is merged (want_merged) or of rank. */
static bool has_twin(const place *pl, const char *stage, bool want_merged, int rank)
{
	for (size_t k = 0; k < pl->n; k++) {
		const db_pair *r = &pl->c->pairs[pl->v[k]];
		if (r->merged == want_merged && (want_merged || r->f.rank == rank) &&
		    !strcmp(r->f.stage, stage))
			return true;
	}
	return false;
}

/* q (at p's place) belongs in the sub-stages of p's cell: the same rank;
 * across layouts (one side whole, the other sharded) a merged pair covers
 * every rank, so a rank's cell holds the merged sub-stages it has no pair
 * of, and a merged pair's cell the lowest rank's (low) stages that have no
 * merged pair, as the grid shows them. */
static bool same_cell_sel(const place *pl, const db_pair *q, const db_pair *p, int low)
{
	if (q->merged == p->merged && q->f.rank == p->f.rank)
		return true;
	if (q->merged && !p->merged && p->f.rank >= 0)
		return !has_twin(pl, q->f.stage, false, p->f.rank);
	if (p->merged && !q->merged && q->f.rank >= 0 && q->f.rank == low)
		return !has_twin(pl, q->f.stage, true, -1);
	return false;
}

size_t db_substages(const db_compare *c, size_t pair, size_t **out)
{
	*out = NULL;
	if (pair >= c->n_pairs)
		return 0;
	const db_pair *p = &c->pairs[pair];
	place pl = {c, NULL, 0};
	pl.n = grid_place_pairs(c, pair, &pl.v);
	const char **known = malloc((pl.n + 1) * sizeof *known);
	size_t *v = malloc((pl.n + 1) * sizeof *v);
	if (!pl.v || !known || !v) {
		free(pl.v);
		free(known);
		free(v);
		return 0;
	}
	int low = -1;                   /* the lowest rank at p's place */
	for (size_t k = 0; k < pl.n; k++) {
		const db_pair *q = &c->pairs[pl.v[k]];
		if (!q->merged && q->f.rank >= 0 && (low < 0 || q->f.rank < low))
			low = q->f.rank;
	}
	size_t nk = 0;
	for (size_t k = 0; k < pl.n; k++)
		if (same_cell_sel(&pl, &c->pairs[pl.v[k]], p, low))
			known[nk++] = c->pairs[pl.v[k]].f.stage;
	char buf[256], buf2[256];
	const char *top = grid_parent_of(c, p->f.stage, known, nk, buf, sizeof buf);
	size_t n = 0, own = DB_NO_PAIR;
	for (size_t k = 0; k < pl.n; k++) {
		size_t i = pl.v[k];
		const db_pair *q = &c->pairs[i];
		if (!same_cell_sel(&pl, q, p, low))
			continue;
		if (!strcmp(q->f.stage, top)) {
			own = i;
			continue;
		}
		if (!strcmp(grid_parent_of(c, q->f.stage, known, nk, buf2, sizeof buf2), top))
			v[n++] = i;
	}
	if (own != DB_NO_PAIR)
		v[n++] = own;
	free(known);
	free(pl.v);
	*out = v;
	return n;
}

size_t db_grid_find(const db_compare *c, const db_grid *g, int layer,
                    const char *stage)
{
	for (size_t r = 0; r < g->n_rows; r++) {
		const db_grid_row *row = &g->rows[r];
		if (row->layer != layer)
			continue;
		if (layer < 0) {
			if (!strcmp(row->label, stage))
				return row->cells[0];
			continue;
		}
		for (size_t k = 0; k < g->n_cols; k++)
			if (!strcmp(g->cols[k], stage) && row->cells[k] != DB_NO_PAIR)
				return row->cells[k];
	}
	size_t best = DB_NO_PAIR;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (in_sel(p, g->phase, g->pass, g->rank) && p->f.layer == layer &&
		    !strcmp(p->f.stage, stage) &&
		    (best == DB_NO_PAIR || grid_rank_prio(p) < grid_rank_prio(&c->pairs[best])))
			best = i;
	}
	return best;
}
