/* A signal in a worker thread, on purpose, as an LD_PRELOAD shim (built by
 * tests/t_tui_signals.sh with `cc -shared -fPIC`; no change to the program).
 * With DB_WORKER_SIGNAL=N set, the first mmap of a file or pread a thread
 * other than the main one makes after curses started (newterm) gets signal
 * N in that thread: SIGSEGV (11) is a real fault (a store through NULL),
 * anything else is raise(N). The workers map or read (small files) every
 * dump file they use, so a cold compute reaches it at once. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

typedef struct screen SCREEN;

static atomic_int curses_up, fired;

SCREEN *newterm(const char *type, FILE *out, FILE *in)
{
	static SCREEN *(*real)(const char *, FILE *, FILE *);
	if (!real)
		real = (SCREEN * (*)(const char *, FILE *, FILE *)) dlsym(RTLD_NEXT, "newterm");
	SCREEN *s = real(type, out, in);
	atomic_store(&curses_up, 1);
	return s;
}

static void maybe_fire(void)
{
	const char *e = getenv("DB_WORKER_SIGNAL");
	if (!e || !*e || !atomic_load(&curses_up) || syscall(SYS_gettid) == getpid() ||
	    atomic_exchange(&fired, 1))
		return;
	int sig = atoi(e);
	if (sig == SIGSEGV)
		*(volatile int *)NULL = 1;
	raise(sig);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	if (!real)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	if (fd >= 0)
		maybe_fire();
	return real(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, void *, size_t, off_t);
	if (!real)
		real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
	maybe_fire();
	return real(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off);
}
