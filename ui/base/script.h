/* Scripted keys for tests (tig's libtest approach): DUMPBISECT_SCRIPT names
 * a file of keys, one line at a time, in the key-parser syntax ("<Down>",
 * "<Enter>", ":save-display out.screen"); a line starting with ':' or '/'
 * gets an implicit <Enter>; blank lines and "#" comments are skipped. The
 * main loop feeds the next key only when the program is idle. A watchdog
 * (DUMPBISECT_WATCHDOG seconds, default 30, re-armed at every key) ends a
 * hung run with exit code 3. */
#ifndef TUI_SCRIPT_H
#define TUI_SCRIPT_H
#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

/* Load the script; -1 with "PATH:LINE: why" in err. */
int script_open(const char *path, char *err, size_t errlen);
bool script_active(void);
/* Next key and re-arm the watchdog; -1 when the script is over. */
int script_next(void);
/* The next key without taking it; -1 when the script is over. */
int script_peek(void);
/* A script line "@wait-file PATH" holds the next key until PATH exists
 * (bounded by the watchdog): a test writes into the trees meanwhile. 1
 * ready, 0 waiting, 2 the file has just appeared (the caller looks at the
 * trees once more before the key; the next call says 1). */
int script_ready(void);
void script_free(void);
/* Write the virtual screen, one line per row, trailing blanks trimmed,
 * UTF-8 (or the locale's charset), to path. -1 with err. */
int script_save_display(WINDOW *w, const char *path, char *err, size_t errlen);

/* The colour pair of every cell, one character per cell ('.' = default,
 * 'a' + pair - 1 otherwise), one line per row: tests check NO_COLOR. */
int script_save_colors(WINDOW *w, const char *path, char *err, size_t errlen);

#endif
