/* The record files of index_snap.c: a magic, a key, a body and a
 * checksum; see snap_record.c. Not a public header. */
#ifndef DB_SNAP_RECORD_H
#define DB_SNAP_RECORD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/binio.h"

/* A record file's bytes: mapped when large (read-only, its pages mapped
 * at once): a 10^6-file snapshot is 83 MB a side, which read() copied into
 * as many fresh pages, each a fault. Our files are replaced by rename,
 * never truncated in place, so a mapping does not lose its pages. */
typedef struct record {
	char *p;
	size_t size;            /* the whole file, trailer included */
	bool mapped;
} record;

/* dir/HASH(realpath of root).suffix, malloc'd; NULL on OOM. */
char *snap_path(const char *dir, const char *root, const char *suffix);
/* The whole file into *rec if it is ours (magic, checksum) and its key is
 * key; false otherwise (nothing to drop). */
bool read_record(const char *path, const char *magic, uint64_t key, record *rec);
/* The record of root's tag in dir (read_record), with *r over its body
 * (past magic and key, before the trailer); false when there is none of
 * ours. drop_record it. */
bool load_record(const char *dir, const char *root, const char *tag, const char *magic,
                 uint64_t key, db_rd *r, record *rec);
void drop_record(record *rec);
/* b (magic, key, body) with its checksum to path, by a temp file and a
 * rename, without fsync (see snap_record.c); dir is made when missing. A
 * large record is written a block at a time instead (read/blockfile.h). */
void write_record(const char *dir, const char *path, db_wbuf *b);
#endif
