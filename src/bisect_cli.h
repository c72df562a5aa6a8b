/* Shared plumbing of the bisect, replay and export commands (private). */
#ifndef DB_BISECT_CLI_H
#define DB_BISECT_CLI_H
#include <stdbool.h>
#include "db_bisect.h"
#include "db_compare.h"
#include "db_session.h"

/* "--name VALUE" or "--name=VALUE" at argv[*i]; advances *i past the value.
 * *val borrowed from argv. false when argv[*i] is not that option; exits
 * the caller's parsing with a message (returns true, *val NULL) when the
 * value is missing. */
bool bcli_opt(int argc, char **argv, int *i, const char *name, const char **val);

/* Open a comparison of ref/target (target NULL: one tree holding both). */
int bcli_open_compare(const char *ref, const char *target, const char *profile,
                      db_compare **out, db_err *err);

/* Absolute form of path when it exists (caller frees); a copy otherwise. */
char *bcli_abspath(const char *path);

#endif
