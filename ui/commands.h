/* The binary's commands: one table for the dispatch (main.c), the command
 * list of the usage and the "did you mean" of a mistyped command. */
#ifndef UI_COMMANDS_H
#define UI_COMMANDS_H
#include <stdio.h>

typedef struct ui_command {
	const char *name;
	int (*run)(int argc, char **argv);      /* argv[0] = the command's name */
	const char *args, *summary;             /* for the usage's list */
} ui_command;

/* The command called name, or NULL. */
const ui_command *ui_command_find(const char *name);
/* The command nearest a mistyped word (at most two edits, or a prefix),
 * or NULL. */
const char *ui_command_suggest(const char *word);
/* "commands:" and one line per command. */
void ui_commands_usage(FILE *out);

#endif
