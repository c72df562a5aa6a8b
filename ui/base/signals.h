/* Signals in the workbench, so the terminal is given back on every exit.
 * SIGINT, SIGTERM and SIGHUP (in any thread) ask the loop to quit: the
 * normal exit path runs (view state saved, curses ended), then the process
 * dies of that signal, as a shell expects. A second one while quitting
 * restores the terminal and exits at once. A crash (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT) in any thread restores the terminal, reports the signal
 * and the thread, then goes on to the previous handler (the default, or
 * ASan's), so core dumps and sanitizer reports still happen; SIGQUIT
 * (Ctrl-\) likewise, without the report. */
#ifndef DB_TUI_SIGNALS_H
#define DB_TUI_SIGNALS_H
#include <stdbool.h>

/* From the thread that reads the keys, before newterm (ncurses then keeps
 * our SIGINT and SIGTERM handlers instead of installing its own). */
void tui_signals_install(void);
/* After newterm: tty_fd (-1 = none: script mode, or curses has ended) is
 * the terminal to put back in the mode it had before curses; reset is what
 * ends curses on it (the terminfo strings, copied). */
void tui_signals_terminal(int tty_fd, const char *reset);
/* The quit signal received, or 0. */
int tui_signal_pending(void);
/* While an external editor runs: Ctrl-C and Ctrl-\ belong to it, not to us. */
void tui_signals_hold(bool hold);
/* After the cleanup: die of sig (the default action). */
void tui_signals_exit(int sig);

#endif
