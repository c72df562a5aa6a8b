/* Keys: one parser for key names ("<Enter>", "<C-x>", "<PgDown>", "q"),
 * shared by the default bindings, the keymap file and the key scripts; and
 * the binding table from keys to actions. */
#ifndef TUI_KEYS_H
#define TUI_KEYS_H
#include <stdbool.h>
#include <stddef.h>
#include "actions.h"

/* A key is a Unicode code point (control characters included) or an ncurses
 * function key code offset by TUI_KEY_FN so the two never collide. */
#define TUI_KEY_FN(k) (0x200000 + (k))
#define TUI_KEY_ENTER '\n'
#define TUI_KEY_ESC 27
#define TUI_KEY_TAB '\t'

/* Map what get_wch returned (is_fn: KEY_CODE_YES) to a key: '\r' and
 * KEY_ENTER become TUI_KEY_ENTER, DEL and ^H become <Backspace>. */
int tui_key_from_curses(int ch, bool is_fn);

/* Parse one key at *s and advance *s past it. Returns the key, or -1 when
 * *s starts with an unknown "<Name>" or invalid UTF-8 (then *s is not
 * moved). "<" that does not start a known name is the key '<'. */
int tui_key_parse(const char **s);
/* Parse a whole string of keys into out (at most max). Returns the count
 * or -1 on an unknown key name (*bad, if not NULL, points at it). */
int tui_keys_parse(const char *s, int *out, int max, const char **bad);
/* Canonical name of key ("<Down>", "q", "<C-r>") in buf; returns buf. */
const char *tui_key_name(int key, char *buf, size_t len);

/* Bindings. tui_bind_defaults loads every action's default keys. */
void tui_bind_defaults(void);
/* Bind key to action in the action's own keymap, replacing what the key did
 * there. */
void tui_bind(int key, enum tui_action a);
/* Remove key from every keymap. */
void tui_unbind(int key);
/* Action of key in keymap km, falling back to GENERIC; A_NONE if none. */
enum tui_action tui_key_action(enum tui_keymap km, int key);
/* Keys bound to a, in binding order; returns the count (<= max). */
size_t tui_action_keys(enum tui_action a, int *keys, size_t max);
void tui_bindings_free(void);

/* Apply a keymap file: lines "bind KEY ACTION", "unbind KEY", "# comment".
 * Bad lines are skipped; the first problem is written to err as
 * "PATH:LINE: what" and the count of bad lines returned (0 = all good;
 * a missing file is not an error). */
int tui_keymap_load(const char *path, char *err, size_t errlen);
/* $XDG_CONFIG_HOME/dumpbisect/keys (an absolute XDG_CONFIG_HOME only), else
 * $HOME/.config/dumpbisect/keys, in buf; NULL when neither applies. */
const char *tui_keymap_path(char *buf, size_t len);

#endif
