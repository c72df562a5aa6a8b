/* Internals shared by bisect_run.c, bisect_analyze.c, bisect_report.c. */
#ifndef DB_BISECT_PRIV_H
#define DB_BISECT_PRIV_H
#include <stdbool.h>
#include <stddef.h>
#include "db_bisect.h"

/* p is in the run's phase and pass selection. */
bool db_bisect_pair_in(const db_bisect_run *r, const db_pair *p);
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

#endif
