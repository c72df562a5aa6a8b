/* Fault injection for the write path, as an LD_PRELOAD shim (built by
 * tests/t_fault_inject.sh with `cc -shared -fPIC`; no change to the
 * program). DB_FAULT lists calls to break:
 *   DB_FAULT="fsync:1,rename:0"   the 2nd fsync and the 1st rename fail,
 *                                 and every later call of those too
 * Calls: write, pwrite, fflush, fsync, fdatasync, rename, open (O_CREAT),
 * mkstemp. The error is DB_FAULT_ERRNO (a number; default ENOSPC, "No space
 * left on device"). write/fflush on fds 0-2 always pass, so the program can
 * still report the error. Each injected failure is logged on stderr as
 * "fault_inject: CALL failed" so the test can tell the fault was reached. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

enum { F_WRITE, F_PWRITE, F_FFLUSH, F_FSYNC, F_FDATASYNC, F_RENAME, F_OPEN, F_MKSTEMP, F_N };
static const char *const names[F_N] = {
	"write", "pwrite", "fflush", "fsync", "fdatasync", "rename", "open", "mkstemp"
};
static long after[F_N];         /* fail once this many calls passed; -1 = never */
static long seen[F_N];
static int fault_errno = ENOSPC;
static int ready;

static void setup(void)
{
	if (ready)
		return;
	for (int i = 0; i < F_N; i++)
		after[i] = -1;
	const char *spec = getenv("DB_FAULT");
	for (const char *p = spec; p && *p;) {
		const char *colon = strchr(p, ':');
		if (!colon)
			break;
		for (int i = 0; i < F_N; i++)
			if (strlen(names[i]) == (size_t)(colon - p) && !strncmp(p, names[i], colon - p))
				after[i] = strtol(colon + 1, NULL, 10);
		const char *comma = strchr(colon, ',');
		p = comma ? comma + 1 : NULL;
	}
	const char *e = getenv("DB_FAULT_ERRNO");
	if (e && *e)
		fault_errno = atoi(e);
	ready = 1;
}

/* True when this call of kind k must fail (and sets errno). */
static int trip(int k)
{
	setup();
	if (after[k] < 0 || seen[k]++ < after[k])
		return 0;
	static const char pre[] = "fault_inject: ";
	ssize_t r = syscall(SYS_write, 2, pre, sizeof pre - 1);     /* write(2) without us */
	r = syscall(SYS_write, 2, names[k], strlen(names[k]));
	r = syscall(SYS_write, 2, " failed\n", 8);
	(void)r;
	errno = fault_errno;
	return 1;
}

#define REAL(ret, name, args) \
	static ret(*real) args; \
	if (!real) \
		real = (ret(*) args)dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(ssize_t, write, (int, const void *, size_t));
	if (fd > 2 && trip(F_WRITE))
		return -1;
	return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	REAL(ssize_t, pwrite, (int, const void *, size_t, off_t));
	if (fd > 2 && trip(F_PWRITE))
		return -1;
	return real(fd, buf, n, off);
}

int fflush(FILE *f)
{
	REAL(int, fflush, (FILE *));
	if (f && fileno(f) > 2 && trip(F_FFLUSH))
		return EOF;
	return real(f);
}

int fsync(int fd)
{
	REAL(int, fsync, (int));
	if (trip(F_FSYNC))
		return -1;
	return real(fd);
}

int fdatasync(int fd)
{
	REAL(int, fdatasync, (int));
	if (trip(F_FDATASYNC))
		return -1;
	return real(fd);
}

int rename(const char *a, const char *b)
{
	REAL(int, rename, (const char *, const char *));
	if (trip(F_RENAME))
		return -1;
	return real(a, b);
}

int mkstemp(char *tmpl)
{
	REAL(int, mkstemp, (char *));
	if (trip(F_MKSTEMP))
		return -1;
	return real(tmpl);
}

int open(const char *path, int flags, ...)
{
	REAL(int, open, (const char *, int, ...));
	mode_t mode = 0;
	if (flags & O_CREAT) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
		if (trip(F_OPEN))
			return -1;
	}
	return real(path, flags, mode);
}
