/* Shared by the reader harnesses: walk every tensor a reader accepted, end
 * to end, so an element reachable through shape/stride that lies outside the
 * bytes the reader checked is caught by ASan. Header-only; fuzz use only. */
#ifndef FUZZ_WALK_H
#define FUZZ_WALK_H
#include <stddef.h>

#include "db_metrics.h"
#include "db_reader.h"

static void fuzz_walk_file(const db_file *f)
{
	for (size_t i = 0; i < f->n_entries; i++) {
		const db_entry *e = &f->entries[i];
		if (e->err || !db_dtype_comparable(e->t.dtype))
			continue;
		/* pt.c lets expanded (stride-0) views reach 2^32 elements: seconds
		 * of metrics, minutes under ASan. Walking them would only report
		 * timeouts; the bytes they read were bounds-checked by the reader. */
		if (db_tensor_numel(&e->t) > (1 << 24))
			continue;
		db_stats s;
		db_err err;
		db_stats_compute(&e->t, &s, &err);
	}
}

#endif
