#include "blockfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/hash.h"

uint64_t db_block_sum(const void *p, size_t n)
{
	const char *c = p;
	uint64_t h = DB_HASH_SEED;
	for (size_t at = 0; at < n; at += DB_SUM_BLOCK)
		h = db_hash64x4(c + at, n - at < DB_SUM_BLOCK ? n - at : DB_SUM_BLOCK, h);
	return h;
}

static bool fail(db_bfile *f, const char *what)
{
	if (!f->bad) {
		f->bad = true;
		f->what = what;
		f->eno = errno;
	}
	return false;
}

/* name is "<base>.tmp.<pid>.<seq>": that pid, else 0. */
static long temp_pid(const char *name, const char *base, size_t bl)
{
	if (strncmp(name, base, bl) || strncmp(name + bl, ".tmp.", 5))
		return 0;
	const char *p = name + bl + 5, *dot = strchr(p, '.');
	if (!dot || dot == p || !dot[1] || strspn(p, "0123456789") != (size_t)(dot - p) ||
	    strspn(dot + 1, "0123456789") != strlen(dot + 1))
		return 0;
	return strtol(p, NULL, 10);
}

/* Temp files of path whose writer is gone (killed mid-write: 55-80 MB each
 * at 10^6 files, never renamed nor removed; issue 37). A live pid keeps its
 * own, this process's in flight included. */
static void clean_stale(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
	DIR *d = dir ? opendir(dir) : NULL;
	size_t bl = strlen(base);
	for (struct dirent *e; d && (e = readdir(d));) {
		long pid = temp_pid(e->d_name, base, bl);
		struct stat st;
		if (pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	if (d)
		closedir(d);
	free(dir);
}

bool db_bfile_open(db_bfile *f, const char *dir, const char *path)
{
	*f = (db_bfile){.fd = -1, .sum = DB_HASH_SEED};
	size_t n = strlen(path) + 32;
	if (db_mkdirs(dir) != 0 || !(f->tmp = malloc(n)) || !(f->path = strdup(path))) {
		fail(f, "create");      /* before free: errno says why */
		free(f->tmp);
		return false;
	}
	clean_stale(path);
	static atomic_uint seq;         /* two scans of one root write at once */
	snprintf(f->tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1));
	if ((f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
		fail(f, "create");
		free(f->tmp);
		free(f->path);
		return false;
	}
	return true;
}

void db_bfile_spill(db_bfile *f, db_wbuf *b, bool last)
{
	while (!f->bad && (b->n >= DB_SUM_BLOCK || (last && b->n))) {
		size_t n = b->n < DB_SUM_BLOCK ? b->n : DB_SUM_BLOCK;
		f->sum = db_hash64x4(b->p, n, f->sum);
		if (b->err) {
			errno = ENOMEM;
			fail(f, "write");
		} else if (db_write_all(f->fd, b->p, n) != 0) {
			fail(f, "write");
		}
		memmove(b->p, b->p + n, b->n - n);
		b->n -= n;
	}
}

bool db_bfile_sum_back(db_bfile *f)
{
	int rfd = f->bad ? -1 : open(f->tmp, O_RDONLY | O_CLOEXEC);
	char *blk = rfd >= 0 ? malloc(DB_SUM_BLOCK) : NULL;
	bool ok = blk != NULL;
	uint64_t h = DB_HASH_SEED;
	while (ok) {
		size_t got = 0;
		ssize_t r = 1;
		while (got < DB_SUM_BLOCK && (r = read(rfd, blk + got, DB_SUM_BLOCK - got)) > 0)
			got += (size_t)r;
		if (r < 0)
			ok = false;
		else if (got)
			h = db_hash64x4(blk, got, h);
		if (got < DB_SUM_BLOCK)
			break;
	}
	free(blk);
	if (rfd >= 0)
		close(rfd);
	if (!ok)
		return fail(f, "write");
	f->sum = h;
	return true;
}

int db_bfile_close(db_bfile *f, db_wbuf *b, bool sync)
{
	db_bfile_spill(f, b, true);
	if (!f->bad && db_write_all(f->fd, &f->sum, 8) != 0)
		fail(f, "write");
	if (!f->bad && sync && fsync(f->fd) != 0)
		fail(f, "fsync");
	if (close(f->fd) != 0)
		fail(f, "write");
	if (!f->bad && rename(f->tmp, f->path) != 0)
		fail(f, "rename");
	if (f->bad)
		unlink(f->tmp);
	free(f->tmp);
	free(f->path);
	f->fd = -1;
	return f->bad ? -1 : 0;
}
