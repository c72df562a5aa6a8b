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

/* Which variant fixes which layer: the probe stage's pair per layer and
 * variant. */
typedef struct db_variant_matrix {
	int *layers;            /* sorted, owned */
	size_t n_layers, n;     /* n: variants */
	long *pair;             /* [layer * n + variant]: pair index, -1 none; owned */
	char stage[256];        /* the probe (a stage or DB_PROBE_LAST) */
} db_variant_matrix;

/* Build it for phase/pass (NULL = any; the CLI gives the first phase and
 * its default pass) and stage (NULL: the bisect's choice on the first
 * variant). compute: the probe pairs are computed now, except variant
 * skip's (its pool computes them; (size_t)-1 = none). -1 on OOM. */
int db_variants_matrix(const db_variants *vs, const char *phase, const char *pass,
                       const char *stage, bool compute, size_t skip, db_variant_matrix *m);
void db_variant_matrix_free(db_variant_matrix *m);
/* The pair of layer row l, variant v, or NULL. */
const db_pair *db_variant_cell(const db_variants *vs, const db_variant_matrix *m, size_t l,
                               size_t v);
/* "2 3": the variants (1-based) whose probe is ok at row l while another
 * variant's is bad there; "" when none. Returns buf. */
char *db_variant_fixed_by(const db_variants *vs, const db_variant_matrix *m, size_t l,
                          char *buf, size_t len);
/* The matrix as Markdown (notes, the export's variants.md) or as text
 * (the compare table). 0 or -1 on a write error. */
int db_variants_md(FILE *out, const db_variants *vs, const db_variant_matrix *m);
int db_variants_text(FILE *out, const db_variants *vs, const db_variant_matrix *m);

/* {"variants": [{"target", "first_divergence", "pairs"}, ...]} with each
 * variant's pairs in the compare --format json pair schema (pairs
 * computed). 0 or -1 on a write error. */
int db_variants_json(FILE *out, const db_variants *vs);

#endif
