/* Internals shared by the files of src/bisect (the state machine's index,
 * the runner, the analysis, the report). */
#ifndef DB_BISECT_PRIV_H
#define DB_BISECT_PRIV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include "db_bisect.h"
#include "db_grid.h"

/* The state recompute reads (bisect_index.c): per candidate its latest
 * verdict (DB_V_NONE) and latest step (-1); Fenwick trees (1-based, n + 1
 * entries) of the unskipped, good and bad candidates. */
typedef struct db_bisect_idx {
	size_t n;
	db_verdict *v;
	long *last;
	int *unsk, *good, *bad;
} db_bisect_idx;

/* (Re)build b->idx from its candidates and steps. -1 on OOM (idx NULL). */
int db_bidx_build(db_bisect *b);
void db_bidx_free(db_bisect_idx *x);
/* Candidate i's latest verdict is v, from step. */
void db_bidx_set(db_bisect_idx *x, size_t i, db_verdict v, long step);
/* Entries of tree t (n positions) in [lo, hi], 0-based. */
size_t db_bidx_count(const int *t, size_t n, long lo, long hi);
/* Position (0-based) of t's k-th entry (k from 1), -1 when fewer. */
long db_bidx_kth(const int *t, size_t n, size_t k);

/* The pairs a walk over one pass reads (db_pass_pairs): the triage probes
 * every pass, and a walk over every pair per probe was quadratic (issue
 * 37). ix NULL: every pair (no pass given, or out of memory). */
typedef struct db_bsel {
	size_t *ix;
	size_t n;
} db_bsel;
static inline void db_bsel_open(db_bsel *s, const db_compare *c, const char *pass)
{
	s->n = db_pass_pairs(c, pass, &s->ix);
	if (!s->ix)
		s->n = c->n_pairs;
}

static inline void db_bsel_close(db_bsel *s)
{
	free(s->ix);
	s->ix = NULL;
	s->n = 0;
}
/* The k-th pair of s (k < s->n). */
static inline size_t db_bsel_at(const db_bsel *s, size_t k)
{
	return s->ix ? s->ix[k] : k;
}

/* p is in the run's phase and pass selection. */
bool db_bisect_pair_in(const db_bisect_run *r, const db_pair *p);
/* Every pair measured before "first" is asked (db_first_divergence reads
 * them all): on the worker pool, as compare measures them, not one pair
 * at a time in this thread; a no-op once they are. */
void db_bisect_measure_all(db_bisect_run *r);
/* The pair standing for (layer, stage) in the run's selection, computed:
 * the merged/rank-less one, else the worst rank. DB_NO_PAIR when none is
 * comparable; *shape_mismatch tells that one exists with unequal shapes,
 * *partial (may be NULL) that one side only has it. */
size_t db_bisect_pick_pair(db_bisect_run *r, int layer, const char *stage,
                           bool *shape_mismatch, bool *partial);

/* p is the probe's tensor at its layer (any stage dumped on both sides
 * for DB_PROBE_LAST). */
bool db_bisect_probe_pair(const db_bisect_run *r, const db_pair *p);
/* Phase and pass of a new run (bisect_triage.c): the given ones, else the
 * first phase, and in it the first pass, that diverges in causal order;
 * sets r->phase, r->pass (owned), the probe and r->pass_why. */
int db_bisect_choose_phase(db_bisect_run *r, db_err *err);

/* The intra-layer walk of layer into res (walk, culprit stage and
 * sub-stage, its role, at_or_before, hint, bad ranks). prev_cos: the cos
 * before the layer; input: the probe of the layer before (NULL = the
 * model's input: good, no error). -1 on OOM. */
int db_bisect_walk_layer(db_bisect_run *r, int layer, double prev_cos,
                         const db_probe *input, db_bisect_result *res);

/* The culprit's first bad token (bisect_token.c): res->has_token, token,
 * token_row, token_rows from the first diverging pair of the culprit's
 * phase, pass, layer and stage (every rank, merged first). */
void db_bisect_token(db_bisect_run *r, db_bisect_result *res);

#endif
