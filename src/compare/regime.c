/* The bit-identical regime (issue 23): without a noise run, a run can
 * still speak for itself. When every comparable pair before a pair (causal
 * order) is bit-identical, the two runs share code and kernels up to there,
 * so the first pair that is not is where they part, whatever its band.
 * Established only once a stage inside a layer came out bit-identical. */
#include "db_compare.h"

#include <stdatomic.h>

#include "db_noise.h"

long db_first_not_identical(const db_compare *c)
{
	if (db_noise_root(c))
		return -1;      /* the noise run judges instead */
	/* equal inputs show nothing about the kernels: the regime holds once
	 * a layer's computed stage has come out bit-identical */
	bool computed = false;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		/* missing or not comparable pairs say nothing either way */
		if (p->status != DB_ST_OK)
			continue;
		if (atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire) !=
		    DB_PAIR_DONE)
			return -1;
		if (p->m.byte_equal == 1.0) {
			computed |= p->f.layer >= 0;
			continue;
		}
		if (!computed)
			return -1;
		/* a slot: --slots and a batch slot found by itself are judged
		 * bitwise pair by pair (db_pair_judged_bitwise, decided where the
		 * comparison sees its first layer: measure/slot.c), rows aligned
		 * by token (--align) keep their own rules */
		if (p->slot.side)
			return -1;
		/* another layout or dtype is not the same kernels: no regime */
		if (p->dtype_differs || p->replica ||
		    (p->merged && p->n_ref_shards != p->n_tgt_shards) || !(p->m.byte_equal >= 0))
			return -1;
		return (long)i;
	}
	return -1;
}
