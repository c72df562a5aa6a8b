/* Shared by the session files (private to src/): the format version the
 * YAML reader accepts and the writer writes, freeing marks, the session
 * lock and the three-way merge a save does when another writer came
 * first. */
#ifndef DB_SESSION_PRIV_H
#define DB_SESSION_PRIV_H
#include "db_session.h"

#define DB_SESSION_VERSION 2
/* The tag of a string that is not UTF-8 (a tree path's raw bytes), written
 * with '%' and every byte over 0x7f as %XX. */
#define DB_YAML_BYTES "!bytes"

/* A version 1 file read into s: its marks placed (include/db_session.h).
 * -1 on OOM. */
int db_session_migrate_v1(db_session *s);

/* Frees the strings of m[0..n) and then m. */
void db_session_free_marks(db_mark *m, size_t n);

/* The session lock of path: an exclusive flock on the directory the file
 * is renamed in (the file itself is replaced at every save, so a lock on
 * it would not outlive the save). Blocks until granted. Returns the fd to
 * give db_session_unlock, -2 when the directory cannot be opened for
 * reading (no lock, nothing to wait for: a save will say why it fails), or
 * -1 with err. */
int db_session_lock(const char *path, db_err *err);
/* Releases a lock from db_session_lock (fd < 0: nothing). */
void db_session_unlock(int fd);

/* The whole file at path into *buf (malloc'd, NUL-terminated) and *len.
 * 0 read, 1 it does not exist, -1 with err. */
int db_session_read_file(const char *path, char **buf, size_t *len, db_err *err);

/* s becomes the three-way merge of its base (s->base, none = an empty
 * session), the file's text now (text, len) and itself; see
 * db_session_save. -1 with err (s unchanged) when they cannot be merged. */
int db_session_merge(db_session *s, const char *text, size_t len, db_err *err);

#endif
