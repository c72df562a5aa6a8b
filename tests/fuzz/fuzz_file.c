/* Any bytes through the format dispatcher: zip directory, pickle VM, .pt
 * (zip and legacy), safetensors, npy, npz. Every tensor the reader accepts
 * is then walked end to end, so a bounds check that lies is caught by ASan. */
#include <stddef.h>
#include <stdint.h>

#include "db_metrics.h"
#include "db_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	db_file *f = NULL;
	db_err err;
	if (db_file_open_mem("fuzz.bin", data, size, &f, &err) != 0)
		return 0;
	for (size_t i = 0; i < f->n_entries; i++) {
		const db_entry *e = &f->entries[i];
		if (e->err || !db_dtype_comparable(e->t.dtype))
			continue;
		db_stats s;
		db_stats_compute(&e->t, &s, &err);
	}
	db_file_close(f);
	return 0;
}
