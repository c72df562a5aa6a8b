/* Shared by the session files (private to src/): the format version the
 * YAML reader accepts and the writer writes, and freeing marks. */
#ifndef DB_SESSION_PRIV_H
#define DB_SESSION_PRIV_H
#include "db_session.h"

#define DB_SESSION_VERSION 1

/* Frees the strings of m[0..n) and then m. */
void db_session_free_marks(db_mark *m, size_t n);

#endif
