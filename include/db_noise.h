/* Drift or bug, judged against the run's own noise (issue 23). A noise
 * tree is a second run of the reference side that differs from it only in
 * what is expected to differ (the target's parallel layout or dtype). The
 * reference-vs-noise error of each phase x pass x layer x stage x rank is
 * that pair's floor; a reference-vs-target pair is within noise when its
 * rel is at most noise_k x max(floor, noise_min_rel) (profile thresholds),
 * else beyond noise x ratio. Pairs the noise tree has no floor for keep
 * the bands. */
#ifndef DB_NOISE_H
#define DB_NOISE_H
#include <stdbool.h>
#include "db_compare.h"

typedef struct db_noise db_noise;

/* The floors of nc, a finished comparison of the reference with the noise
 * tree (root names it in the output). NULL when out of memory. */
db_noise *db_noise_build(const db_compare *nc, const char *root);
void db_noise_free(db_noise *n);
/* The noise tree c was opened with (db_compare_opts.noise), or NULL. */
const char *db_noise_root(const db_compare *c);
/* Floors the noise tree gave (pairs of it that were measured). */
size_t db_noise_floors(const db_compare *c);
/* Sets p's noise verdict from its metrics (called when p is measured). */
void db_noise_judge(const db_compare *c, db_pair *p);
/* "beyond noise x12 (floor 3.1e-03)", "within noise x0.9 (floor ...)",
 * "no noise floor" into buf; "" when p has no verdict. Returns buf. */
char *db_noise_str(const db_pair *p, char *buf, size_t len);

#endif
