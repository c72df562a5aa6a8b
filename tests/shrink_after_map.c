/* A file that shrinks under its mapping, on purpose and deterministically:
 * an LD_PRELOAD shim (built by tests/t_shrink.sh with `cc -shared -fPIC`;
 * no change to the program). With DB_SHRINK_PATH=S set, the DB_SHRINK_NTH-th
 * (default 1st) mmap of a file whose path contains S truncates that file to
 * DB_SHRINK_TO bytes (default 0) right after the real mmap: the program then
 * reads a mapping whose pages are gone (SIGBUS), as when torch.save rewrites
 * a dump while it is compared. Once per process. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

static atomic_int seen, fired;

static void maybe_shrink(int fd)
{
	const char *want = getenv("DB_SHRINK_PATH"), *at = getenv("DB_SHRINK_AT");
	if (!want || !*want || fd < 0 || atomic_load(&fired) || (at && strcmp(at, "mmap")))
		return;
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return;
	path[n] = 0;
	if (!strstr(path, want))
		return;
	const char *nth = getenv("DB_SHRINK_NTH"), *to = getenv("DB_SHRINK_TO");
	if (atomic_fetch_add(&seen, 1) + 1 != (nth ? atoi(nth) : 1) || atomic_exchange(&fired, 1))
		return;
	if (truncate(path, to ? atoll(to) : 0) != 0)
		perror("shrink_after_map: truncate");
	else if (getenv("DB_SHRINK_SAY"))       /* for a test that must know */
		fprintf(stderr, "shrink_after_map: truncated %s\n", path);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	if (!real)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	void *p = real(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		maybe_shrink(fd);
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

/* With DB_SHRINK_AT=inflate, the DB_SHRINK_NTH-th inflateInit2_ (zlib)
 * truncates DB_SHRINK_FILE (a path) instead: a deflated member of a file
 * already mapped and opened is then inflated from pages that are gone
 * (a crafted .pt whose data.pkl is deflated: the reader's inflate, outside
 * the pickle's own guard). */
int inflateInit2_(void *strm, int bits, const char *version, int size)
{
	static int (*real)(void *, int, const char *, int);
	if (!real)
		real = (int (*)(void *, int, const char *, int))dlsym(RTLD_NEXT, "inflateInit2_");
	const char *at = getenv("DB_SHRINK_AT"), *file = getenv("DB_SHRINK_FILE");
	if (at && !strcmp(at, "inflate") && file && !atomic_load(&fired)) {
		const char *nth = getenv("DB_SHRINK_NTH"), *to = getenv("DB_SHRINK_TO");
		if (atomic_fetch_add(&seen, 1) + 1 == (nth ? atoi(nth) : 1) &&
		    !atomic_exchange(&fired, 1) && truncate(file, to ? atoll(to) : 0) != 0)
			perror("shrink_after_map: truncate");
	}
	return real(strm, bits, version, size);
}
