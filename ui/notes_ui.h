/* Notes, marks and the export from the workbench (ui/notes_ui.c): each
 * takes its numbers from what the screen shows. */
#ifndef TUI_NOTES_UI_H
#define TUI_NOTES_UI_H

struct tui;

/* title NULL prompts for it. */
void tui_note_new(struct tui *t, const char *title);
/* args "[status] text" on the selection (empty prompts). */
void tui_mark(struct tui *t, const char *args);
/* The report of what the screen shows into dir (NULL = default: report/
 * beside the session). */
void tui_export(struct tui *t, const char *dir);

#endif
