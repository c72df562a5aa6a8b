/* Opening a user's file for reading: regular files only, without blocking
 * (see include/db_file.h). */
#include "db_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m)
{
	if (S_ISFIFO(m)) return "a FIFO";
	if (S_ISDIR(m)) return "a directory";
	if (S_ISCHR(m)) return "a character device";
	if (S_ISBLK(m)) return "a block device";
	if (S_ISSOCK(m)) return "a socket";
	return "not a file";
}

int db_open_regular(const char *path, db_err *err)
{
	/* O_NONBLOCK: opening a FIFO with no writer returns at once (it would
	 * wait for one), and fstat below tells what it is */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		db_err_set(err, path, NULL, -1, "cannot open: %s", strerror(e));
		errno = e;
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		db_err_set(err, path, NULL, -1, "cannot stat: %s", strerror(e));
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		db_err_set(err, path, NULL, -1, "not a regular file (%s); not read", kind(st.st_mode));
		errno = EINVAL;
		return -1;
	}
	/* a regular file never blocks; reads go on as usual */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

FILE *db_fopen_regular(const char *path, db_err *err)
{
	int fd = db_open_regular(path, err);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		int e = errno;
		close(fd);
		db_err_set(err, path, NULL, -1, "cannot open: %s", strerror(e));
		errno = e;
	}
	return f;
}
