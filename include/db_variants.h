/* Variants: one reference against N targets (fix isolation: each target
 * reverts one change; which variant moves the first divergence, which
 * fixes which layer). Each variant is an ordinary db_compare of REF with
 * its target; this adds what spans them: the per-layer probe matrix and the
 * JSON/summary writers. */
#ifndef DB_VARIANTS_H
#define DB_VARIANTS_H
#include <stdio.h>
#include "db_compare.h"

/* Targets on one command line at most. */
#define DB_MAX_VARIANTS 32

typedef struct db_variants {
	db_compare **v;         /* owned, one per target, in argument order */
	size_t n;
} db_variants;

/* Open ref against each of tgts[0..n-1]. -1 with err naming the target
 * that failed (the others are freed). */
int db_variants_open(const char *ref, const char *const *tgts, size_t n,
                     const db_compare_opts *o, db_variants *out, db_err *err);
void db_variants_free(db_variants *vs);

/* Per variant: the band counts of its computed pairs and its not-ok
 * statuses, as the table's summary line counts them. */
typedef struct db_variant_counts {
	size_t pairs, ok, diverge;
	size_t missing;         /* ref_only, target_only, shape_mismatch */
	size_t error;           /* unreadable */
} db_variant_counts;
void db_variant_count(const db_compare *c, db_variant_counts *k);

/* The pair probing layer in c (phase/pass NULL = any): stage's merged or
 * rank-less pair, else its worst computed rank; -1 when the layer does not
 * have stage on both sides. stage may be DB_PROBE_LAST. */
long db_variant_probe_pair(const db_compare *c, const char *phase, const char *pass,
                           const char *stage, int layer);
/* Sorted distinct layers (>= 0) any variant has; *layers malloc'd. */
size_t db_variants_layers(const db_variants *vs, int **layers);

/* {"variants": [{"target", "first_divergence", "pairs"}, ...]} with each
 * variant's pairs in the compare --format json pair schema (pairs
 * computed). 0 or -1 on a write error. */
int db_variants_json(FILE *out, const db_variants *vs);

#endif
