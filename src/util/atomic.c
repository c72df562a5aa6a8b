/* Atomic file replacement: temp file in the same directory + fsync +
 * rename + fsync of the directory (so the rename itself is durable). The
 * rename happens where the file really is (symlinks followed) and the
 * temp file takes the old file's mode first, so a link stays a link and a
 * private file stays private. */
#include "db_atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The link's target as a path: absolute, or relative to the link's own
 * directory. */
static char *link_target(const char *link, const char *to)
{
	if (to[0] == '/')
		return strdup(to);
	char *copy = strdup(link);
	if (!copy)
		return NULL;
	const char *dir = dirname(copy);
	size_t n = strlen(dir) + strlen(to) + 2;
	char *out = malloc(n);
	if (out)
		snprintf(out, n, "%s/%s", dir, to);
	free(copy);
	return out;
}

char *db_atomic_target(const char *path)
{
	char *cur = strdup(path);
	for (int hops = 0; cur && hops < 40; hops++) {
		struct stat st;
		char to[PATH_MAX];
		if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
			return cur;     /* the file, or where a new one goes */
		ssize_t n = readlink(cur, to, sizeof to - 1);
		if (n < 0)
			return cur;
		to[n] = '\0';
		char *next = link_target(cur, to);
		free(cur);
		cur = next;
	}
	if (cur) {
		free(cur);
		errno = ELOOP;
	} else {
		errno = ENOMEM;
	}
	return NULL;
}

/* "<base>.tmp.XXXXXX" (mkstemp's six characters) */
static bool is_temp_of(const char *name, const char *base)
{
	size_t n = strlen(base);
	if (strncmp(name, base, n) || strncmp(name + n, ".tmp.", 5) || strlen(name + n + 5) != 6)
		return false;
	for (const char *p = name + n + 5; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

int db_atomic_clean(const char *file)
{
	char *dcopy = strdup(file), *bcopy = strdup(file);
	int removed = 0;
	DIR *d = dcopy && bcopy ? opendir(dirname(dcopy)) : NULL;
	if (d) {
		const char *base = basename(bcopy);
		int dfd = dirfd(d);
		for (struct dirent *e; (e = readdir(d));) {
			struct stat st;
			if (is_temp_of(e->d_name, base) &&
			    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode) && unlinkat(dfd, e->d_name, 0) == 0)
				removed++;
		}
		closedir(d);
	}
	free(dcopy);
	free(bcopy);
	return removed;
}

static int fsync_dir_of(const char *path, db_err *err)
{
	char *copy = strdup(path);
	if (!copy)
		return db_err_set(err, path, NULL, -1, "out of memory");
	const char *dir = dirname(copy);
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		db_err_set(err, dir, NULL, -1, "open directory: %s", strerror(errno));
		free(copy);
		return -1;
	}
	/* Some filesystems refuse fsync on directories (EINVAL): the rename
	 * already happened, so that is not worth failing the save for. */
	int rc = 0;
	if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS)
		rc = db_err_set(err, dir, NULL, -1, "fsync directory: %s", strerror(errno));
	close(fd);
	free(copy);
	return rc;
}

int db_atomic_write(const char *path, db_atomic_fn fn, void *ctx, db_err *err)
{
	db_atomic_staged st;
	if (db_atomic_stage(path, fn, ctx, &st, err) < 0)
		return -1;
	return db_atomic_commit(&st, err);
}

static void staged_free(db_atomic_staged *st)
{
	free(st->path);
	free(st->file);
	free(st->tmp);
	memset(st, 0, sizeof *st);
}

void db_atomic_discard(db_atomic_staged *st)
{
	if (st->tmp)
		unlink(st->tmp);
	staged_free(st);
}

/* The new file's mode: the one it replaces keeps its mode (and group,
 * when we may); a new one is an ordinary user file (mkstemp makes 0600). */
static void take_mode(int fd, const char *file)
{
	struct stat old;
	if (stat(file, &old) == 0 && S_ISREG(old.st_mode)) {
		fchmod(fd, old.st_mode & 07777);
		if (old.st_gid != getegid() && fchown(fd, (uid_t)-1, old.st_gid) == 0)
			fchmod(fd, old.st_mode & 07777);        /* chown dropped setgid */
	} else {
		mode_t um = umask(0);
		umask(um);
		fchmod(fd, 0644 & ~um);
	}
}

int db_atomic_stage(const char *path, db_atomic_fn fn, void *ctx, db_atomic_staged *st,
                    db_err *err)
{
	memset(st, 0, sizeof *st);
	if (!(st->path = strdup(path)))
		return db_err_set(err, path, NULL, -1, "out of memory");
	if (!(st->file = db_atomic_target(path))) {
		db_err_set(err, path, NULL, -1, "follow the link: %s", strerror(errno));
		staged_free(st);
		return -1;
	}
	size_t n = strlen(st->file);
	if (!(st->tmp = malloc(n + 16))) {
		staged_free(st);
		return db_err_set(err, path, NULL, -1, "out of memory");
	}
	memcpy(st->tmp, st->file, n);
	memcpy(st->tmp + n, ".tmp.XXXXXX", 12);
	int fd = mkstemp(st->tmp);
	if (fd < 0) {
		db_err_set(err, path, NULL, -1, "create temp file: %s", strerror(errno));
		free(st->tmp);
		st->tmp = NULL;
		staged_free(st);
		return -1;
	}
	take_mode(fd, st->file);
	FILE *f = fdopen(fd, "w");
	if (!f) {
		db_err_set(err, path, NULL, -1, "fdopen: %s", strerror(errno));
		close(fd);
		goto fail;
	}
	/* every message names the file the user asked for, never the temp
	 * file (which is gone by the time it is read) */
	db_err e2 = {{0}};
	if (fn(f, ctx, &e2) < 0) {
		db_err_set(err, path, NULL, -1, "%s", e2.msg);
		fclose(f);
		goto fail;
	}
	if (fflush(f) != 0 || ferror(f)) {
		db_err_set(err, path, NULL, -1, "write: %s", strerror(errno));
		fclose(f);
		goto fail;
	}
	if (fsync(fileno(f)) < 0) {
		db_err_set(err, path, NULL, -1, "fsync: %s", strerror(errno));
		fclose(f);
		goto fail;
	}
	if (fclose(f) != 0) {
		db_err_set(err, path, NULL, -1, "close: %s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	db_atomic_discard(st);
	return -1;
}

int db_atomic_commit(db_atomic_staged *st, db_err *err)
{
	size_t done;
	return db_atomic_commit_all(st, 1, &done, err);
}

int db_atomic_commit_all(db_atomic_staged *st, size_t n, size_t *n_done, db_err *err)
{
	size_t i = 0;
	int rc = 0;
	for (; i < n; i++)
		if (rename(st[i].tmp, st[i].file) < 0) {
			rc = db_err_set(err, st[i].path, NULL, -1, "rename: %s", strerror(errno));
			break;
		}
	*n_done = i;
	for (size_t k = i; k < n; k++)
		db_atomic_discard(&st[k]);
	/* the renames durable: after all of them, so that a directory that
	 * refuses its fsync never leaves half of them renamed */
	for (size_t k = 0; k < i; k++) {
		db_err e2;
		if (fsync_dir_of(st[k].file, &e2) < 0 && rc == 0) {
			*err = e2;
			rc = -1;
		}
		staged_free(&st[k]);
	}
	return rc;
}

struct buf_ctx {
	const void *buf;
	size_t len;
};

static int write_buf(FILE *f, void *ctx, db_err *err)
{
	const struct buf_ctx *b = ctx;
	if (b->len && fwrite(b->buf, 1, b->len, f) != b->len)
		return db_err_set(err, NULL, NULL, -1, "write: %s", strerror(errno));
	return 0;
}

int db_atomic_write_buf(const char *path, const void *buf, size_t len,
                        db_err *err)
{
	struct buf_ctx b = {buf, len};
	return db_atomic_write(path, write_buf, &b, err);
}
