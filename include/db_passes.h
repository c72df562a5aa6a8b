/* The comparison over time: one line per (phase, pass) — steps, calls,
 * micro-batches — with where that pass first diverges. A decode-only bug
 * (KV-cache index, position offset) shows as "prefill fine, decode step k
 * bad" here when one pass's heatmap shows nothing. Over computed pairs
 * (db_compare_run); a pair not computed yet counts as not diverging. */
#ifndef DB_PASSES_H
#define DB_PASSES_H
#include <stdbool.h>
#include <stddef.h>
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

#endif
