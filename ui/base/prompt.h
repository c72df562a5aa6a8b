/* The line editor of the bottom line (ui/base/prompt.c): the ":" command line,
 * the "/" filter and the views' prompts (note title, mark) all read their
 * text here; what the text is for is the opener's done callback, so the
 * editor calls nothing above the workbench's state. */
#ifndef TUI_PROMPT_H
#define TUI_PROMPT_H
#include <curses.h>
#include <stdbool.h>

struct tui;

/* Prompt for a line of text after label; done gets it on Enter (not on
 * Esc). */
void tui_prompt_open(struct tui *t, const char *label,
                     void (*done)(struct tui *t, const char *text, void *arg),
                     void *arg);
/* Feed one key to the prompt; true when consumed. */
bool tui_prompt_key(struct tui *t, int key);
/* The prompt on line y of w, the terminal's cursor after the text. */
void tui_prompt_draw(struct tui *t, WINDOW *w, int y);

#endif
