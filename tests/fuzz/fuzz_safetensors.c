/* The safetensors reader alone (JSON header, offsets, dtypes), bypassing
 * the magic-byte dispatcher so every input reaches the JSON parser. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_walk.h"
#include "read/st_npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	db_file *f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup("fuzz.safetensors"))) {
		free(f);
		return 0;
	}
	f->map = data;
	f->map_size = size;
	db_err err;
	if (db_read_safetensors(f, data, size, &err) == 0)
		fuzz_walk_file(f);
	db_file_close(f);
	return 0;
}
