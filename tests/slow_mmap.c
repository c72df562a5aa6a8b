/* A slow disk, as an LD_PRELOAD shim (built by tests/t_tui_soak.sh with
 * `cc -shared -fPIC`; no change to the program): every file mapping made
 * by a thread other than the main one (the workers map each dump they
 * read) first waits DB_SLOW_MMAP_US microseconds, so a small tree stays
 * "computing" long enough for the soak test to act during the scan. The
 * main thread is never slowed: the screen must stay live. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	if (!real)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	const char *us = getenv("DB_SLOW_MMAP_US");
	if (fd >= 0 && us && syscall(SYS_gettid) != getpid()) {
		long v = strtol(us, NULL, 10);
		struct timespec ts = {v / 1000000, (v % 1000000) * 1000};
		nanosleep(&ts, NULL);
	}
	return real(addr, len, prot, flags, fd, off);
}
