/* The workbench's session file and what lives beside it (ui/session_ui.c):
 * saving the session, the view state it keeps, the notes directory, and
 * handing the terminal to $EDITOR. Below the views and the notes, which
 * all save through it. */
#ifndef TUI_SESSION_UI_H
#define TUI_SESSION_UI_H
#include <stdbool.h>

struct tui;

/* Save the session when it has a file (--session); errors go to the
 * bottom line. */
void tui_session_save(struct tui *t);
/* The view state the session keeps (selection, metric, axes, probe,
 * filter): written at the end of a run, applied at its start. */
void tui_view_state_save(struct tui *t);
void tui_view_state_restore(struct tui *t);
/* The notes directory (--notes, else beside the session, else ./notes);
 * caller frees. */
char *tui_notes_dir(const struct tui *t);
/* Run $EDITOR on path with the terminal handed over; false (nothing done)
 * without $EDITOR or in script mode. */
bool tui_edit_file(struct tui *t, const char *path);

#endif
