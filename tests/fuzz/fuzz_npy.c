/* The .npy header parser and the .npz reader (zip of .npy members, stored
 * or deflated), bypassing the dispatcher: input starting "PK" goes to the
 * npz reader, anything else to the npy reader and to db_npy_parse. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_walk.h"
#include "read/st_npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	db_err err;
	bool npz = size >= 2 && data[0] == 'P' && data[1] == 'K';
	if (!npz) {
		db_tensor t;
		db_npy_parse(data, size, "fuzz.npy", "", 0, &t, &err);
	}
	db_file *f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup(npz ? "fuzz.npz" : "fuzz.npy"))) {
		free(f);
		return 0;
	}
	f->map = data;
	f->map_size = size;
	int rc = npz ? db_read_npz(f, data, size, &err) : db_read_npy(f, data, size, &err);
	if (rc == 0)
		fuzz_walk_file(f);
	db_file_close(f);
	return 0;
}
