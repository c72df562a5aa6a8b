/* Detection with the folders around a file or folder cut out of a tree:
 * see lift.c. Beside compare_open.c, its one user. */
#ifndef DB_LIFT_H
#define DB_LIFT_H
#include <stdbool.h>
#include "db_profile.h"

struct db_walk;

typedef struct db_lift {
	db_profile *profile;    /* owned by the caller once found */
	char *root, *sub;       /* malloc'd: the ancestor, the folders below it */
	char why[512];          /* detection's line, with the folders named */
} db_lift;

/* 1 with *out filled when a profile other than generic parses every file
 * of w (the listing of path) once the enclosing folders name them; 0 when
 * none does (out empty). */
int db_lift_detect(const char *path, const struct db_walk *w, bool is_file, db_lift *out);
/* The other side lifted as high as like: *root and *sub (malloc'd). */
bool db_lift_side(const char *path, bool is_file, const db_lift *like, char **root, char **sub);
/* Prefix every file's and directory's name of w with "sub/". -1 on OOM. */
int db_walk_prefix(struct db_walk *w, const char *sub);

#endif
