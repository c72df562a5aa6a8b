/* Signals in the workbench: see signals.h. The handlers call only
 * async-signal-safe functions (write, dup2, tcsetattr, sigaction, raise,
 * pthread_kill, _exit; db_bus_recover: sigprocmask, siglongjmp). */
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "db_bus.h"

static pthread_t main_thread;
static volatile sig_atomic_t quit_sig;      /* the first quit request */
static volatile sig_atomic_t waking;        /* a quit forwarded to the main thread */
static volatile sig_atomic_t held;          /* an editor owns the terminal */

static struct termios shell_tio;            /* the terminal before curses */
static bool have_tio;
static int tty = -1;                        /* where curses draws */
static int tty_own = -1;                    /* our own handle on the same terminal */
static int null_fd = -1;                    /* /dev/null, to silence the drawing */
static char reset_seq[256];
static size_t reset_len;

static const int quit_sigs[] = {SIGINT, SIGTERM, SIGHUP};
static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGQUIT};
#define N_CRASH (sizeof crash_sigs / sizeof crash_sigs[0])
static struct sigaction crash_old[N_CRASH];

static void put(const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Other threads may still be drawing: first point the drawing fd at
 * /dev/null, so no frame lands after the reset, then reset through our own
 * handle. */
static void restore_terminal(void)
{
	if (tty < 0 || tty_own < 0)
		return;
	if (null_fd >= 0)
		dup2(null_fd, tty);
	if (reset_len) {
		ssize_t w = write(tty_own, reset_seq, reset_len);
		(void)w;
	}
	if (have_tio)
		tcsetattr(tty_own, TCSANOW, &shell_tio);
}

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV (segmentation fault)";
	case SIGBUS: return "SIGBUS (bus error: a file shrank under its mapping?)";
	case SIGFPE: return "SIGFPE (arithmetic fault)";
	case SIGILL: return "SIGILL (illegal instruction)";
	case SIGABRT: return "SIGABRT (abort)";
	case SIGQUIT: return "SIGQUIT";
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	}
	return "a signal";
}

static void on_quit(int sig)
{
	int e = errno;
	bool in_main = pthread_equal(pthread_self(), main_thread);
	if (in_main && waking) {
		waking = 0;                 /* our own wake-up: interrupts get_wch */
	} else if (held && sig == SIGINT) {
		/* Ctrl-C inside the editor: the editor's */
	} else if (quit_sig) {
		/* asked twice: the normal exit is stuck (a worker in a slow read) */
		restore_terminal();
		put("dumpbisect: ");
		put(sig_name(sig));
		put(" again: exiting now\n");
		_exit(128 + sig);
	} else {
		quit_sig = sig;
		if (!in_main) {
			/* the loop waits for a key in the main thread: wake it */
			waking = 1;
			pthread_kill(main_thread, sig);
		}
	}
	errno = e;
}

static void report_crash(int sig)
{
	put("\ndumpbisect: internal error: ");
	put(sig_name(sig));
	put(pthread_equal(pthread_self(), main_thread) ? " in the main thread.\n"
	                                                : " in a worker thread.\n");
	put("The terminal is restored; the session and the notes hold every step taken\n"
	    "so far (each is written when it is taken). Please report this bug, with\n"
	    "the file that was being read if you can share it.\n");
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* a dump file that shrank under a guarded read is no crash: back to
	 * the guard, which makes it an error for that file (db_bus.h) */
	db_bus_recover(sig, si);
	if (sig == SIGQUIT && held)
		return;                     /* Ctrl-\ inside the editor: the editor's */
	restore_terminal();
	if (sig == SIGQUIT)
		put("dumpbisect: SIGQUIT: quitting with a core dump\n");
	else
		report_crash(sig);
	for (size_t i = 0; i < N_CRASH; i++)
		if (crash_sigs[i] == sig)
			sigaction(sig, &crash_old[i], NULL);
	/* A fault raised by the CPU happens again on return, now reaching the
	 * previous handler with its real context; any other is sent again. */
	bool fault = (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) &&
	             si->si_code > 0;
	if (!fault)
		raise(sig);
}

void tui_signals_install(void)
{
	main_thread = pthread_self();
	have_tio = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &shell_tio) == 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: the main thread's wait for a key must end */
	sa.sa_handler = on_quit;
	for (size_t i = 0; i < sizeof quit_sigs / sizeof quit_sigs[0]; i++) {
		struct sigaction old;
		/* a signal ignored by whoever started us (nohup) stays ignored */
		if (sigaction(quit_sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(quit_sigs[i], &sa, NULL);
	}
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO;
	for (size_t i = 0; i < N_CRASH; i++)
		sigaction(crash_sigs[i], &sa, &crash_old[i]);
}

void tui_signals_terminal(int tty_fd, const char *reset)
{
	tty = -1;                       /* the handlers see it last */
	if (tty_own >= 0)
		close(tty_own);
	if (null_fd >= 0)
		close(null_fd);
	tty_own = null_fd = -1;
	reset_len = 0;
	if (tty_fd < 0)
		return;
	tty_own = fcntl(tty_fd, F_DUPFD_CLOEXEC, 3);
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (reset) {
		reset_len = strlen(reset);
		if (reset_len >= sizeof reset_seq)
			reset_len = 0;          /* odd terminfo: the termios alone */
		else
			memcpy(reset_seq, reset, reset_len);
	}
	tty = tty_fd;
}

int tui_signal_pending(void)
{
	return quit_sig;
}

void tui_signals_hold(bool hold)
{
	held = hold;
}

void tui_signals_exit(int sig)
{
	signal(sig, SIG_DFL);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);
	_exit(128 + sig);
}
