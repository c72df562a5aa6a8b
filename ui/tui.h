/* The ncurses workbench: `dumpbisect REF TARGET [options]`. */
#ifndef DB_TUI_H
#define DB_TUI_H

/* argv[0] is the program name; returns the exit code. */
int tui_main(int argc, char **argv);

#endif
