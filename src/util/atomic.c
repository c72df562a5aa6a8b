/* Atomic file replacement: temp file in the same directory + fsync +
 * rename + fsync of the directory (so the rename itself is durable). */
#include "db_atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	size_t n = strlen(path);
	char *tmp = malloc(n + 16);
	if (!tmp)
		return db_err_set(err, path, NULL, -1, "out of memory");
	memcpy(tmp, path, n);
	memcpy(tmp + n, ".tmp.XXXXXX", 12);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		db_err_set(err, path, NULL, -1, "create temp file: %s", strerror(errno));
		free(tmp);
		return -1;
	}
	/* mkstemp makes 0600; a session or report is an ordinary user file. */
	mode_t um = umask(0);
	umask(um);
	fchmod(fd, 0644 & ~um);
	FILE *f = fdopen(fd, "w");
	if (!f) {
		db_err_set(err, path, NULL, -1, "fdopen: %s", strerror(errno));
		close(fd);
		goto fail;
	}
	if (fn(f, ctx, err) < 0) {
		fclose(f);
		goto fail;
	}
	if (fflush(f) != 0 || ferror(f)) {
		db_err_set(err, tmp, NULL, -1, "write: %s", strerror(errno));
		fclose(f);
		goto fail;
	}
	if (fsync(fileno(f)) < 0) {
		db_err_set(err, tmp, NULL, -1, "fsync: %s", strerror(errno));
		fclose(f);
		goto fail;
	}
	if (fclose(f) != 0) {
		db_err_set(err, tmp, NULL, -1, "close: %s", strerror(errno));
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		db_err_set(err, path, NULL, -1, "rename from %s: %s", tmp, strerror(errno));
		goto fail;
	}
	free(tmp);
	return fsync_dir_of(path, err);
fail:
	unlink(tmp);
	free(tmp);
	return -1;
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
