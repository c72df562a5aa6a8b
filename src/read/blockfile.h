/* The cache files (metrics cache, entry cache, index snapshots) are written
 * a block at a time and checksummed over their blocks, never built whole in
 * memory (issue 24: at 10^6 files they were 55-83 MB each, written while a
 * first run's memory peaks). The checksum is db_hash64x4 over each block of
 * DB_SUM_BLOCK bytes in turn, each seeded with the last (one block: the
 * plain hash); it is the file's last 8 bytes. */
#ifndef DB_BLOCKFILE_H
#define DB_BLOCKFILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/binio.h"

#define DB_SUM_BLOCK ((size_t)1 << 20)

/* The checksum of p[0..n). */
uint64_t db_block_sum(const void *p, size_t n);

/* A file being written: to a temp file beside path, renamed over path only
 * when whole. On failure, what ("create", "write", "fsync", "rename") and
 * eno say why. */
typedef struct db_bfile {
	int fd;
	char *tmp, *path;
	uint64_t sum;
	bool bad;
	const char *what;
	int eno;
} db_bfile;

/* Open the temp file of path (dir made when missing); false with what/eno. */
bool db_bfile_open(db_bfile *f, const char *dir, const char *path);
/* b's whole blocks to the file, summed, and out of b (last: all of b). */
void db_bfile_spill(db_bfile *f, db_wbuf *b, bool last);
/* The rest of b, the checksum, an fsync when sync, the rename; 0, or -1
 * (nothing left behind; what/eno say why). b is emptied, not freed. */
int db_bfile_close(db_bfile *f, db_wbuf *b, bool sync);
/* For a file whose head is patched after its body (the entry cache's
 * count): the checksum of the temp file's bytes so far, read back in blocks
 * (the bytes written through f are all on the page cache). */
bool db_bfile_sum_back(db_bfile *f);

#endif
