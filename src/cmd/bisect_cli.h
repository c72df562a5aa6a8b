/* Shared plumbing of the bisect, replay and export commands (private). */
#ifndef DB_BISECT_CLI_H
#define DB_BISECT_CLI_H
#include <stdbool.h>
#include "cmd_util.h"
#include "db_bisect.h"
#include "db_compare.h"
#include "db_session.h"

/* Absolute form of path when it exists (caller frees); a copy otherwise. */
char *bcli_abspath(const char *path);

/* Open the workbench through db_cmd_tui_hook with the session file (may
 * be NULL), the trees (NULL: the session's) and the comparison options;
 * returns its exit code, or 2 after a message when no workbench is linked. */
/* db_session_load of file, with ref / target (NULL: the session's) made
 * absolute in place of its trees, then db_session_check_trees. *out is
 * set as by db_session_load (the caller frees it, also on failure);
 * 0 or -1 with err set. */
int bcli_load_session(const char *file, const char *ref, const char *target, db_session **out,
                      db_err *err);

/* The workbench on these (no_session: its --no-session). */
int bcli_open_tui(const db_cmd *c, const char *session, bool no_session, const char *ref,
                  const char *target,
                  const db_cmp_args *a);

/* --band / --cos / --rel (at most one of band and cos/rel) into o->pred and
 * --layers into o->n_layers, as the bisect commands share them (NULL =
 * not given). 0, or 2 after a usage message naming the option. */
int bcli_predicate_opts(const db_cmd *c, const char *band, const char *cosv, const char *relv,
                        const char *layers, db_bisect_opts *o);

/* The git-bisect verbs (src/cmd/cmd_bisect_verbs.c): `bisect VERB ...`, the
 * session file as the state. bcli_is_verb says whether argv[1] names one;
 * bcli_verb runs it (argv[0] = "bisect") and returns the exit code. */
#define BCLI_DEFAULT_SESSION "dumpbisect.session"
bool bcli_is_verb(const char *s);
int bcli_verb(int argc, char **argv);

#endif
