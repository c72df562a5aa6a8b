/* The session file on disk: reading it, the session lock that writers take
 * turns under, and the save (read again, merge when another writer came
 * first, write atomically). The YAML itself: session_yaml_read.c and
 * session_yaml_write.c. */
#include "db_session.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db_atomic.h"
#include "db_file.h"
#include "session_priv.h"

#define SESSION_MAX ((size_t)64 << 20)

int db_session_lock(const char *path, db_err *err)
{
	/* the directory of the file a save replaces: a link's target's */
	char *copy = db_atomic_target(path);
	if (!copy)
		return db_err_set(err, path, NULL, -1, "session lock: %s", strerror(errno));
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return -2;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		/* a filesystem without flock: no lock to take, none to wait for */
		if (errno == ENOLCK || errno == EOPNOTSUPP)
			break;
		db_err_set(err, path, NULL, -1, "session lock: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void db_session_unlock(int fd)
{
	if (fd >= 0)
		close(fd);      /* releases the flock */
}

int db_session_read_file(const char *path, char **out, size_t *outlen, db_err *err)
{
	*out = NULL;
	*outlen = 0;
	/* a FIFO named like the session would hold us forever */
	db_err e2;
	FILE *f = db_fopen_regular(path, &e2);
	if (!f) {
		if (errno == ENOENT)
			return 1;
		return db_err_set(err, NULL, NULL, -1, "session %s", e2.msg);
	}
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (len < cap - 1)
			break;
		if (cap >= SESSION_MAX) {
			free(buf);
			fclose(f);
			return db_err_set(err, path, NULL, -1, "session file larger than 64 MiB");
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int rerr = ferror(f);
	fclose(f);
	if (!buf)
		return db_err_set(err, path, NULL, -1, "out of memory");
	if (rerr) {
		free(buf);
		return db_err_set(err, path, NULL, -1, "read error");
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

int db_session_load(const char *path, db_session **out, db_err *err)
{
	*out = NULL;
	char *buf;
	size_t len;
	int rc = db_session_read_file(path, &buf, &len, err);
	if (rc == 1)
		return db_err_set(err, path, NULL, -1, "cannot open session: %s", strerror(ENOENT));
	if (rc < 0)
		return -1;
	if (db_session_parse(buf, len, path, out, err) < 0) {
		free(buf);
		return -1;
	}
	/* the text read is the base a later save merges from */
	(*out)->base = buf;
	(*out)->base_len = len;
	if (!((*out)->path = strdup(path))) {
		db_session_free(*out);
		*out = NULL;
		return db_err_set(err, path, NULL, -1, "out of memory");
	}
	return 0;
}

int db_session_load_locked(const char *path, bool create, db_session **out, db_err *err)
{
	*out = NULL;
	int fd = db_session_lock(path, err);
	if (fd == -1)
		return -1;
	struct stat st;
	if (create && stat(path, &st) < 0 && errno == ENOENT) {
		if (!(*out = db_session_new(NULL, NULL)) || !((*out)->path = strdup(path))) {
			db_session_free(*out);
			*out = NULL;
			db_session_unlock(fd);
			return db_err_set(err, path, NULL, -1, "out of memory");
		}
	} else if (db_session_load(path, out, err) < 0) {
		db_session_unlock(fd);
		return -1;
	}
	if (fd >= 0) {
		(*out)->locked = true;
		(*out)->lock_fd = fd;
	}
	return 0;
}

/* Under the lock: merge what another writer saved since our base, then
 * write. 0 written, 1 written after a merge, -1 with err. */
static int save_locked(db_session *s, db_err *err)
{
	char *disk;
	size_t len;
	int rc = db_session_read_file(s->path, &disk, &len, err);
	if (rc < 0)
		return -1;
	int merged = 0;
	if (rc == 0 && !(s->base && s->base_len == len && !memcmp(s->base, disk, len))) {
		if (db_session_merge(s, disk, len, err) < 0) {
			free(disk);
			return -1;
		}
		/* s holds the file's content now: should the write below fail,
		 * the next save must not merge the same changes in twice */
		free(s->base);
		s->base = disk;
		s->base_len = len;
		disk = NULL;
		merged = 1;
	}
	free(disk);
	/* under the lock every writer takes, a temp file beside the session
	 * is a killed writer's: nobody else will ever rename it */
	char *file = db_atomic_target(s->path);
	if (file)
		db_atomic_clean(file);
	free(file);
	s->updated = (int64_t)time(NULL);
	size_t n;
	char *text = db_session_dump(s, &n);
	if (!text)
		return db_err_set(err, s->path, NULL, -1, "cannot render the session (a name or path "
		                  "that is not UTF-8, or out of memory)");
	if (db_atomic_write_buf(s->path, text, n, err) < 0) {
		free(text);
		return -1;
	}
	free(s->base);
	s->base = text;
	s->base_len = n;
	return merged;
}

int db_session_save(db_session *s, const char *path, db_err *err)
{
	if (!path)
		path = s->path;
	if (!path)
		return db_err_set(err, NULL, NULL, -1, "session has no file name");
	if (path != s->path && !(s->path && !strcmp(path, s->path))) {
		char *np = strdup(path);
		if (!np)
			return db_err_set(err, path, NULL, -1, "out of memory");
		if (s->path) {
			/* another file: what we read before is no base for it */
			free(s->base);
			s->base = NULL;
			s->base_len = 0;
		}
		free(s->path);
		s->path = np;
	}
	/* held already (db_session_load_locked), else taken for this save */
	int fd = s->locked ? s->lock_fd : db_session_lock(s->path, err);
	if (fd == -1)
		return -1;
	int rc = save_locked(s, err);
	if (!s->locked)
		db_session_unlock(fd);
	return rc;
}
