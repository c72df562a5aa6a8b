/* The record files of the index snapshots, detection and directory
 * stamps (index_snap.c): where they live, reading one back whole (checked
 * by magic, key and checksum) and writing one atomically. */
#include "snap_record.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/blockfile.h"
#include "util/hash.h"

char *snap_path(const char *dir, const char *root, const char *suffix)
{
	char real[PATH_MAX];
	const char *r = realpath(root, real) ? real : root;
	uint64_t h = db_fnv(r, strlen(r) + 1, DB_FNV_INIT);
	size_t n = strlen(dir) + strlen(suffix) + 24;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s/%016llx.%s", dir, (unsigned long long)h, suffix);
	return s;
}

/* Files from this size on are mapped (record, snap_record.h). */
#define MAP_FROM ((size_t)64 << 10)

static bool get_file(const char *path, size_t min, size_t max, record *rec)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	bool big = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size >= MAP_FROM &&
	           (size_t)st.st_size <= max;
	void *m = big ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
	                     fd, 0)
	              : MAP_FAILED;
	close(fd);
	if (m != MAP_FAILED) {
		*rec = (record){m, (size_t)st.st_size, true};
		return true;
	}
	rec->p = db_slurp(path, min, max, &rec->size);       /* small, or no mapping */
	rec->mapped = false;
	return rec->p != NULL;
}

void drop_record(record *rec)
{
	if (rec->mapped)
		munmap(rec->p, rec->size);
	else
		free(rec->p);
	rec->p = NULL;
}

bool read_record(const char *path, const char *magic, uint64_t key, record *rec)
{
	if (!get_file(path, 24, (size_t)1 << 31, rec))
		return false;
	const char *buf = rec->p;
	size_t size = rec->size;
	uint64_t sum, k;
	memcpy(&sum, buf + size - 8, 8);
	memcpy(&k, buf + 8, 8);
	if (memcmp(buf, magic, 8) || k != key ||
	    sum != db_block_sum(buf, size - 8)) {
		drop_record(rec);
		return false;
	}
	return true;
}

bool load_record(const char *dir, const char *root, const char *tag, const char *magic,
                 uint64_t key, db_rd *r, record *rec)
{
	if (!dir || !*dir)
		return false;
	char *path = snap_path(dir, root, tag);
	bool ok = path && read_record(path, magic, key, rec);
	free(path);
	if (ok)
		*r = (db_rd){rec->p + 16, rec->size - 24, false};
	return ok;
}

/* Temp file + rename, without fsync: a record torn by a crash fails its
 * checksum and reads as a miss, which costs one slow open, not a wrong
 * answer; the sync would cost every first open of a tree. */
void write_record(const char *dir, const char *path, db_wbuf *b)
{
	db_bfile f;
	if (!b->err && db_bfile_open(&f, dir, path))
		(void)db_bfile_close(&f, b, false);
}
