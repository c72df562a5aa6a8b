/* msprobe's dump.json reader alone (Python-flavoured JSON: NaN, Infinity;
 * call names, tensors and statistics), bypassing the dispatcher's sniffing
 * so every input reaches the parser. No construct.json: the name has no
 * folder. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_walk.h"
#include "read/msprobe_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	db_file *f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup("dump.json"))) {
		free(f);
		return 0;
	}
	f->map = data;
	f->map_size = size;
	db_err err;
	if (db_read_msprobe(f, data, size, &err) == 0)
		fuzz_walk_file(f);
	db_file_close(f);
	return 0;
}
