/* The restricted pickle VM alone: every opcode, memo, marks, the allowlist
 * and the reduce "calls". Input that starts like a legacy torch.save file
 * runs with legacy persistent ids; up to 6 pickles run back to back, as in
 * a legacy file. Seeds: raw data.pkl records and legacy .pt files. */
#include <stddef.h>
#include <stdint.h>

#include "read/pickle.h"
#include "read/pt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	db_pk *vm = db_pk_new("fuzz.pkl", "data.pkl", db_pt_is_legacy(data, size));
	if (!vm)
		return 0;
	size_t pos = 0;
	for (int run = 0; run < 6 && pos < size; run++) {
		db_pk_val *out = NULL;
		size_t used = 0;
		db_err err;
		if (db_pk_run(vm, data + pos, size - pos, (int64_t)pos, &out, &used, &err))
			break;
		if (used == 0 || used > size - pos)
			__builtin_trap(); /* must consume at least STOP, never more than given */
		pos += used;
	}
	size_t ns;
	db_pk_storages(vm, &ns);
	db_pk_free(vm);
	return 0;
}
