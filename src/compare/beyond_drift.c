/* Where a bug shows when the first divergence is only drift: one rule for
 * compare's "first divergence beyond drift", bisect's culprit stage and the
 * workbench's headline and f, so the three name one place. */
#include "db_compare.h"

#include <string.h>

#include "db_noise.h"

long db_first_beyond_drift_of(const db_compare *c, long fd)
{
	if (fd < 0 || db_noise_root(c))
		return -1;
	const db_pair *p = &c->pairs[fd];
	if (p->status != DB_ST_OK || p->band != DB_BAND_DRIFT)
		return -1;
	/* in fd's pass: a later pass that grows worse (a KV cache read again,
	 * drift carried) is not where it showed; the per-pass lines say it */
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *q = &c->pairs[i];
		if (db_pair_diverges(q) && (q->status != DB_ST_OK || q->band > DB_BAND_DRIFT) &&
		    !strcmp(q->f.pass, p->f.pass) && !strcmp(q->f.phase, p->f.phase))
			return (long)i;
	}
	return -1;
}
