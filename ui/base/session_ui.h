/* The workbench's session file and what lives beside it (ui/session_ui.c):
 * saving the session, the view state it keeps, the notes directory, and
 * handing the terminal to $EDITOR. Below the views and the notes, which
 * all save through it. */
#ifndef TUI_SESSION_UI_H
#define TUI_SESSION_UI_H
#include <stdbool.h>
#include <stddef.h>

struct tui;

/* Save the session when it has a file (--session, or the automatic one
 * once it holds work); errors go to the bottom line. */
void tui_session_save(struct tui *t);
/* The workbench's exit status rc, or 1 when its last save failed (said
 * on standard error: call with the terminal given back). */
int tui_session_exit(const struct tui *t, int rc);
/* The automatic session of these trees (no --session):
 * $XDG_STATE_HOME/dumpbisect/sessions/NAME-HASH/session.yaml (default
 * ~/.local/state), HASH over the trees' absolute paths, so the same trees
 * reopen it from anywhere. NULL without a state folder; caller frees. */
char *tui_session_auto_path(const char *ref, const char *const *targets, size_t n);
/* The bottom line "<before>PATH<after>" about the session's file: $HOME
 * as ~, the path's middle cut to fit the line. */
void tui_session_say(struct tui *t, bool err, const char *before, const char *after);
/* The comparison options the session keeps as it keeps its trees (--noise,
 * --slots, --align): into co where the command line (cli) gave none. */
struct db_cmp_args;
struct db_compare_opts;
void tui_session_opts(const struct tui *t, const struct db_cmp_args *cli,
                      struct db_compare_opts *co);
/* Has work that would be lost: bisect steps, marks or notes. */
bool tui_session_has_work(const struct tui *t);
/* The view state the session keeps (selection, metric, axes, probe,
 * filter): written at the end of a run, applied at its start. */
void tui_view_state_save(struct tui *t);
void tui_view_state_restore(struct tui *t);
/* The notes directory (--notes, else beside the session, else ./notes);
 * caller frees. */
char *tui_notes_dir(const struct tui *t);
/* Run $EDITOR on path with the terminal handed over, as git runs it:
 * sh -c '<$EDITOR> "$@"' <$EDITOR> path, so its quotes and arguments
 * work. 1 when it exited 0; 0 without $EDITOR (nothing done); -1 when it
 * could not run or exited otherwise, with why ("exited with status 1")
 * in why. */
int tui_edit_file(struct tui *t, const char *path, char *why, size_t len);

#endif
