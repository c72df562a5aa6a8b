/* What the verdicts were judged by, said once for every output: the JSON
 * key (judged_by), report.md's line and the SVG's caption. A reader of a
 * report must know whether "diverges" meant a band, a noise run, the
 * bit-identical regime or bits of a slot. */
#include "db_export.h"

#include <stdio.h>

#include "db_noise.h"

const char *db_judged_by_key(const db_compare *c)
{
	long fd = db_first_divergence(c, NULL, NULL, -2);
	return c->n_slots ? "slots_bitwise" : db_noise_root(c) ? "noise"
	       : fd >= 0 && (fd == db_first_not_identical(c) || db_pair_judged_bitwise(&c->pairs[fd]))
	       ? "bit_identical" : "bands";
}

char *db_judged_by_text(const db_compare *c, char *buf, size_t len)
{
	const char *k = db_judged_by_key(c);
	const db_thresholds *t = &c->profile->thresholds;
	if (c->n_slots && c->slots_alone)
		snprintf(buf, len, "slots, bitwise: each of the %d slots of the target's batch against "
		         "the reference run of the prompt alone (any bit off diverges; the band is "
		         "shown beside it)", c->n_slots);
	else if (c->n_slots)
		snprintf(buf, len, "slots, bitwise: slot k against slot 0 of the same batch (%d slots; "
		         "any bit off diverges; the band is shown beside it)", c->n_slots);
	else if (k[0] == 'n')
		snprintf(buf, len, "the noise run %s: a pair diverges when its rel is beyond %g x "
		         "max(floor, %g), the floor being the reference-vs-noise rel at the same "
		         "place (%zu floors; pairs without one keep the bands)", db_noise_root(c),
		         t->noise_k, t->noise_min_rel, db_noise_floors(c));
	else if (k[0] == 'b' && k[1] == 'i' &&
	         db_pair_judged_bitwise(&c->pairs[db_first_divergence(c, NULL, NULL, -2)]))
		snprintf(buf, len, "bitwise, batch slots: the prompt run alone against its rows in the "
		         "other side's batch, and the first layer is bit-identical (the same code and "
		         "kernels), so any bit off diverges, whatever its band");
	else if (k[0] == 'b' && k[1] == 'i')
		snprintf(buf, len, "the bit-identical regime: every pair before the first divergence "
		         "is bit-identical (the same code and kernels), so the first that is not is "
		         "where the runs part, whatever its band");
	else
		snprintf(buf, len, "the bands (the profile's cos / rel thresholds)");
	return buf;
}
