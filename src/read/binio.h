/* Little binary I/O shared by the on-disk caches (metrics cache, entry
 * cache, index snapshots): a bounds-checked read cursor, a growable write
 * buffer, reading a whole regular file, writing it back. Native byte
 * order, u32-length-prefixed strings; each cache keeps its own magic,
 * header and checksum. */
#ifndef DB_BINIO_H
#define DB_BINIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Read cursor over borrowed bytes. Any read past the end, or a malformed
 * string, sets bad; later reads then yield zeroes / NULL. */
typedef struct db_rd {
	const char *p;
	size_t left;
	bool bad;
} db_rd;

/* Inline: a snapshot load takes six fields an item, 10^6 items (a call
 * each was a tenth of a reopen's instructions). */
static inline void db_rd_take(db_rd *r, void *dst, size_t n)
{
	if (r->bad || r->left < n) {
		r->bad = true;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, r->p, n);
	r->p += n;
	r->left -= n;
}
/* u32 length + bytes without NUL: a malloc'd string (caller frees), or
 * NULL and bad when short, out of memory or holding a NUL. */
char *db_rd_str(db_rd *r);
/* The same into dst of cap bytes; bad (and dst "") when it does not fit. */
void db_rd_fixed(db_rd *r, char *dst, size_t cap);

/* Growable output buffer, zero-initialised; err set on OOM, after which
 * puts are ignored. p is malloc'd: the caller frees it. */
typedef struct db_wbuf {
	char *p;
	size_t n, cap;
	bool err;
} db_wbuf;

void db_wbuf_put(db_wbuf *b, const void *p, size_t n);
/* u32 length + bytes (the reverse of db_rd_str). */
void db_wbuf_str(db_wbuf *b, const char *s);

/* The whole of path if it is a regular file of min..max bytes, read without
 * blocking on a FIFO; malloc'd (caller frees), *len its size. NULL when
 * missing, unreadable, out of bounds or short. */
char *db_slurp(const char *path, size_t min, size_t max, size_t *len);
/* db_slurp of the file NAME in path's folder (a dump's sidecar: msprobe's
 * construct.json, stack.json), of at most max bytes. */
char *db_slurp_beside(const char *path, const char *name, size_t max, size_t *len);

/* All n bytes to fd, retrying on EINTR; 0 or -1. */
int db_write_all(int fd, const void *p, size_t n);

/* mkdir -p with mode 0700; 0 or -1. */
int db_mkdirs(const char *dir);

/* FNV-1a 64 over n bytes from h (start: DB_FNV_INIT). */
#define DB_FNV_INIT 1469598103934665603ull
uint64_t db_fnv(const void *p, size_t n, uint64_t h);

#endif
