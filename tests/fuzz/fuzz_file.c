/* Any bytes through the format dispatcher: zip directory, pickle VM, .pt
 * (zip and legacy), safetensors, npy, npz. Every tensor the reader accepts
 * is then walked end to end, so a bounds check that lies is caught by ASan. */
#include <stddef.h>
#include <stdint.h>

#include "db_reader.h"
#include "fuzz_walk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	db_file *f = NULL;
	db_err err;
	if (db_file_open_mem("fuzz.bin", data, size, &f, &err) != 0)
		return 0;
	fuzz_walk_file(f);
	db_file_close(f);
	return 0;
}
