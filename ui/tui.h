/* The ncurses workbench: `dumpbisect REF TARGET [options]`. */
#ifndef DB_TUI_H
#define DB_TUI_H
#include <stdio.h>

/* argv[0] is the program name; returns the exit code. */
int tui_main(int argc, char **argv);
/* The workbench's usage: options, commands, exit status. */
void tui_usage(FILE *out);

#endif
