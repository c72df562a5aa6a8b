/* The comparison over time: one line per (phase, pass) — steps, calls,
 * micro-batches — with where that pass first diverges. A decode-only bug
 * (KV-cache index, position offset) shows as "prefill fine, decode step k
 * bad" here when one pass's heatmap shows nothing. Over computed pairs
 * (db_compare_run); a pair not computed yet counts as not diverging. */
#ifndef DB_PASSES_H
#define DB_PASSES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_compare.h"

typedef struct db_pass_line {
	const char *phase, *pass;   /* borrowed from c's pairs (until a rescan) */
	size_t n_pairs;
	long first_div;             /* first pair (execution order) that diverges, -1 */
	long first_beyond;          /* first worse than drift (or not ok), -1 */
	db_band worst;              /* worst band of its ok pairs (DB_BAND_NONE: none) */
	size_t n_missing;           /* pairs not ok (one side only, shapes, errors) */
	bool identical;             /* every ok pair bit-identical (max |diff| 0) */
} db_pass_line;

/* Lines in causal order (phases as c->phases, passes by the profile's
 * order). Caller frees *out. 0 on OOM or no pairs. */
size_t db_pass_lines(const db_compare *c, db_pass_line **out);
/* Index of the first pass that diverges, as bisect triages passes: in the
 * phase of the first divergence, the first pass leaving the ok band after
 * passes that stayed ok; when the phase's very first pass only drifts (a
 * noise floor: another TP size, bf16), the first pass worse than drift if
 * there is one. -1 when nothing diverges. */
long db_pass_first_diverging(const db_compare *c, const db_pass_line *v, size_t n);
/* The same within phase (NULL or "": the phase of the first divergence):
 * the rule db_first_divergence applies when no pass is named, so the pass
 * of every headline is the pass of its divergence (issue 33). */
long db_pass_pick(const db_compare *c, const db_pass_line *v, size_t n, const char *phase);

/* The time view's table: passes (rows, the order of db_pass_lines) against
 * layers (columns, ascending; -1 for stages outside any layer), each cell
 * the worst verdict of that pass and layer over every rank and stage. The
 * pair -> cell map is built once per set of pairs (pairs_gen) and the
 * verdicts refilled in one sweep when n_done moved, so drawing a thousand
 * passes reads the table and never scans pairs. */
typedef struct db_pass_cell {
	db_band band;               /* worst band of its computed ok pairs, NONE none */
	db_status status;           /* a not-ok status among its pairs, OK none
	                               (the most severe: error, shape, layout, one side) */
	unsigned n_pending;         /* pairs not computed yet */
	size_t first;               /* its first pair (execution order); SIZE_MAX none */
} db_pass_cell;

typedef struct db_pass_grid {
	unsigned long gen;          /* pairs_gen of the build; 0 never built */
	size_t done;                /* n_done at the last fill */
	db_pass_line *lines;        /* rows (owned; strings borrowed from the pairs) */
	size_t n_lines;
	int *layers;                /* columns (owned) */
	size_t n_layers;
	uint32_t *cell_of;          /* per pair: row * n_layers + column (owned) */
	db_pass_cell *cells;        /* n_lines * n_layers (owned) */
} db_pass_grid;

/* Bring g up to date with c: rebuilt when c's pairs changed, refilled when
 * more pairs are computed: 1 when anything changed, 0 when not. A zeroed g
 * is empty. -1 on OOM (g left empty). */
int db_pass_grid_update(const db_compare *c, db_pass_grid *g);
/* Cell (row, col); NULL out of range. */
const db_pass_cell *db_pass_grid_cell(const db_pass_grid *g, size_t row, size_t col);
void db_pass_grid_free(db_pass_grid *g);

#endif
