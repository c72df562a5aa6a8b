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
		/* Known bug, pinned by tests/test_caps.c: pt.c accepts stride-0
		 * views of any element count (2^62 over 3 floats). Walking them
		 * would only report timeouts, so such tensors are not walked here. */
		if (db_tensor_numel(&e->t) > (1 << 24))
			continue;
		db_stats s;
		db_err err;
		db_stats_compute(&e->t, &s, &err);
	}
}

#endif
