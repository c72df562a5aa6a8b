/* The ZIP layer alone: end records, ZIP64 locator and extras, central
 * directory, name index, local headers, inflate with caps and CRC checks.
 * Every byte handed out is read, so a payload bound that lies trips ASan. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "read/zip.h"

static volatile uint8_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	db_zip z;
	db_err err;
	if (db_zip_open(data, size, "fuzz.zip", &z, &err))
		return 0;
	z.check_crc = size & 1;
	for (size_t i = 0; i < z.n_entries && i < 64; i++) {
		const db_zip_entry *e = &z.entries[i];
		if (db_zip_find(&z, e->name) != e)
			abort(); /* the index must find every member by its own name */
		uint64_t off;
		db_zip_payload_offset(&z, e, &off, &err);
		const uint8_t *p;
		size_t n;
		void *owned = NULL;
		if (db_zip_data(&z, e, &p, &n, &owned, 1u << 24, &err) == 0) {
			uint8_t x = 0;
			for (size_t k = 0; k < n; k++)
				x ^= p[k];
			sink = x;
			free(owned);
		}
		if (e->usize <= 1u << 24) /* verify_crc inflates without a cap */
			db_zip_verify_crc(&z, e, &err);
	}
	db_zip_find(&z, "archive/data.pkl");
	db_zip_close(&z);
	return 0;
}
