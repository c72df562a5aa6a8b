/* Files the program writes (sessions, exports) are replaced atomically:
 * write a temp file in the same directory, fsync it, rename it over the
 * target, fsync the directory. A crash (even kill -9) at any point leaves
 * either the old file or the new one, never a torn mix. */
#ifndef DB_ATOMIC_H
#define DB_ATOMIC_H
#include <stddef.h>
#include <stdio.h>
#include "db_err.h"

/* Writer callback: writes the whole content to f (a temp file); returns 0,
 * or -1 with err set to abort (the temp file is removed, target untouched). */
typedef int (*db_atomic_fn)(FILE *f, void *ctx, db_err *err);

/* Replace path with what fn writes. A symlink is followed (also a
 * dangling one, and chains): the file it names is replaced and the link
 * stays a link. The temp file is "<file>.tmp.XXXXXX" beside that file
 * (mkstemp), with the mode of the file it replaces (a new file: 0644 &
 * ~umask). -1 with err naming the path and the failing call (open, write,
 * fsync, rename) on any error. */
int db_atomic_write(const char *path, db_atomic_fn fn, void *ctx, db_err *err);
/* The same in two steps, for several files that change together: stage
 * each (its content written and fsynced to the temp file), then commit each
 * (rename, fsync of the directory) only when all are staged, else discard
 * the staged ones: a write that fails (a full disk) then changes none of
 * them. Both end st (freed); -1 with err naming path and the failing call. */
typedef struct db_atomic_staged {
	char *path;             /* as given, for messages */
	char *file;             /* the file replaced: path, links followed */
	char *tmp;              /* its new content, "<file>.tmp.XXXXXX" */
} db_atomic_staged;
int db_atomic_stage(const char *path, db_atomic_fn fn, void *ctx, db_atomic_staged *st,
                    db_err *err);
int db_atomic_commit(db_atomic_staged *st, db_err *err);
void db_atomic_discard(db_atomic_staged *st);
/* Commit st[0..n) in order, every rename before any directory fsync (a
 * failed fsync then leaves all of them renamed, none half). A rename that
 * fails ends it: the rest are discarded, *n_done says how many were
 * renamed; -1 with err. */
int db_atomic_commit_all(db_atomic_staged *st, size_t n, size_t *n_done, db_err *err);

/* Same with a buffer of len bytes. */
int db_atomic_write_buf(const char *path, const void *buf, size_t len,
                        db_err *err);

/* The file db_atomic_write(path) replaces: path with its symlinks
 * followed (malloc'd). NULL with errno set (ELOOP, ENOMEM, ...). */
char *db_atomic_target(const char *path);

/* Remove the temp files "<file>.tmp.XXXXXX" a killed writer left beside
 * file (the one db_atomic_target names). Only while holding a lock every
 * writer of file takes: otherwise it would pull a live writer's temp file
 * away. Returns how many it removed. */
int db_atomic_clean(const char *file);

#endif
