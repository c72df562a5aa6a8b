/* Read-only ZIP access over bytes in memory (an mmap'ed file): the central
 * directory (incl. ZIP64 end record, locator and 0x0001 extras), lookup by
 * name, payload offsets from the local headers. STORED members are handed
 * out zero-copy; DEFLATE members are inflated with zlib into a buffer the
 * caller then owns. Used by the torch zip reader (pt.c) and the npz reader.
 *
 * Typical use:
 *   db_zip z;
 *   if (db_zip_open(map, size, path, &z, err)) return -1;
 *   const db_zip_entry *e = db_zip_find(&z, "archive/data.pkl");
 *   const uint8_t *p; size_t n; void *owned = NULL;
 *   if (e && db_zip_data(&z, e, &p, &n, &owned, cap, err) == 0) {
 *           ... use p[0..n) ...; free(owned) (or hand it to the db_file)
 *   }
 *   db_zip_close(&z);
 */
#ifndef DB_ZIP_H
#define DB_ZIP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_err.h"

typedef struct db_zip_entry {
	const char *name;      /* NUL-terminated copy, owned by the db_zip */
	size_t name_len;
	uint16_t method;       /* 0 STORED, 8 DEFLATE; others are refused by db_zip_data */
	uint16_t flags;        /* general purpose bit flags */
	uint32_t crc;          /* from the central directory */
	uint64_t csize;        /* compressed size (== usize when STORED) */
	uint64_t usize;        /* uncompressed size */
	uint64_t lho;          /* file offset of the local header */
	uint64_t cd_off;       /* file offset of this central-directory record (for messages) */
} db_zip_entry;

typedef struct db_zip {
	const uint8_t *data;   /* borrowed: the whole file */
	size_t size;
	const char *fname;     /* borrowed: used in error messages */
	db_zip_entry *entries; /* central-directory order; owned */
	size_t n_entries;
	bool check_crc;        /* db_zip_data verifies CRC-32 of STORED members too
	                        * (DEFLATE members are always verified); default false */
	char *names_;          /* private: storage for the names */
	uint32_t *hash_;       /* private: open-addressing name index */
	size_t hash_cap_;
} db_zip;

/* Parse the end records and central directory of data[0..size). fname is
 * only used in messages and must outlive z. On success returns 0 and z must
 * be released with db_zip_close; on failure returns -1 with err set (naming
 * fname and the byte offset) and z needs no close. */
int db_zip_open(const uint8_t *data, size_t size, const char *fname,
                db_zip *z, db_err *err);
void db_zip_close(db_zip *z);

/* Entry with exactly this name (bytes compared), or NULL. Borrowed from z. */
const db_zip_entry *db_zip_find(const db_zip *z, const char *name);

/* File offset of the member's payload (after its local header), checked to
 * lie with csize bytes inside the file. 0 or -1 with err set. */
int db_zip_payload_offset(const db_zip *z, const db_zip_entry *e,
                          uint64_t *off, db_err *err);

/* The member's uncompressed bytes.
 * STORED: *p points into z->data (zero-copy), *owned = NULL.
 * DEFLATE: inflated into a malloc'd buffer; *p = *owned = that buffer, which
 *   the caller frees (or passes to the db_file). Refused when usize > cap
 *   (cap guards against zip bombs; pass SIZE_MAX for none), or when the
 *   inflated length or CRC-32 disagrees with the central directory.
 * Returns 0, or -1 with err naming fname, the member and a byte offset. */
int db_zip_data(const db_zip *z, const db_zip_entry *e, const uint8_t **p,
                size_t *len, void **owned, size_t cap, db_err *err);

/* CRC-32 check of an entry's stored bytes regardless of z->check_crc.
 * 0 when it matches, -1 with err set otherwise. */
int db_zip_verify_crc(const db_zip *z, const db_zip_entry *e, db_err *err);

#endif
