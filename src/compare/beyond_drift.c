/* Where a bug shows when the first divergence is only drift: one rule for
 * compare's "first divergence beyond drift", bisect's culprit stage and the
 * workbench's headline, so the three name one place. */
#include "db_compare.h"

#include "db_noise.h"

long db_first_beyond_drift_of(const db_compare *c, long fd)
{
	if (fd < 0 || db_noise_root(c))
		return -1;
	const db_pair *p = &c->pairs[fd];
	return p->status == DB_ST_OK && p->band == DB_BAND_DRIFT ? db_first_beyond_drift(c) : -1;
}
