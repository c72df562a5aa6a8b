/* The ":" commands (ui/cmdline.c). Global actions (:view, :help) go
 * through t->action, which the top (ui/tui.c) sets, so the table calls
 * nothing above it. */
#ifndef TUI_CMDLINE_H
#define TUI_CMDLINE_H
#include <stddef.h>

struct tui;

/* Execute a ":" command line (without the colon); a unique prefix of a
 * command's name runs it. */
void tui_command(struct tui *t, const char *line);
/* The ":" commands for the help screen: name, arguments, help; returns the
 * count and sets *names etc. to static tables. */
size_t tui_commands(const char *const **names, const char *const **args,
                    const char *const **help);

#endif
