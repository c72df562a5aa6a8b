/* Reading the files a user keeps beside a session (the session itself,
 * notes): only regular files, and never a wait. A FIFO, a device or a
 * socket under a note's or a session's name would block open() or read()
 * forever (a FIFO until some writer comes); it is opened with O_NONBLOCK
 * and refused after fstat says it is no regular file. */
#ifndef DB_FILE_H
#define DB_FILE_H
#include <stdio.h>
#include "db_err.h"

/* A read-only fd of path (close-on-exec, blocking again once known to be a
 * regular file). -1 with err naming path: "cannot open: <why>" (errno
 * kept, ENOENT for a missing file), or "not a regular file (a FIFO)"
 * (errno EINVAL). err may be NULL. */
int db_open_regular(const char *path, db_err *err);
/* The same as a stdio stream ("r"); NULL with err. */
FILE *db_fopen_regular(const char *path, db_err *err);

#endif
