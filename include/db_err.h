/* Errors as values. Every message names the file, the entry and the byte
 * offset when they are known, so a user can find the bad spot with xxd. */
#ifndef DB_ERR_H
#define DB_ERR_H
#include <stdint.h>

typedef struct db_err {
	char msg[1024];
} db_err;

/* Formats "FILE: entry 'ENTRY': byte OFFSET: MESSAGE". file/entry may be NULL
 * and offset < 0 to leave that part out. err may be NULL (then it is a no-op).
 * Always returns -1 so callers can `return db_err_set(...)`. The message is
 * made terminal-safe as it is formatted (db_esc_buf): file, entry and the
 * arguments are foreign text, and every sink of a db_err shows it to a
 * person. Escaping is idempotent, so a sink that escapes again is harmless. */
int db_err_set(db_err *err, const char *file, const char *entry, int64_t offset,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Caller owns the returned copy of err->msg (malloc'd; NULL on OOM). */
char *db_err_dup(const db_err *err);

#endif
