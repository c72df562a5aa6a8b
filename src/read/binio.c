/* Shared pieces of the cache file formats; see binio.h. */
#include "binio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *db_rd_str(db_rd *r)
{
	uint32_t l;
	db_rd_take(r, &l, 4);
	if (r->bad || r->left < l) {
		r->bad = true;
		return NULL;
	}
	char *s = malloc((size_t)l + 1);
	if (!s) {
		r->bad = true;
		return NULL;
	}
	memcpy(s, r->p, l);
	s[l] = 0;
	r->p += l;
	r->left -= l;
	if (strlen(s) != l) {
		free(s);
		r->bad = true;
		return NULL;
	}
	return s;
}

void db_rd_fixed(db_rd *r, char *dst, size_t cap)
{
	uint32_t l;
	db_rd_take(r, &l, 4);
	if (r->bad || l >= cap || r->left < l) {
		r->bad = true;
		dst[0] = 0;
		return;
	}
	memcpy(dst, r->p, l);
	dst[l] = 0;
	r->p += l;
	r->left -= l;
	if (strlen(dst) != l)
		r->bad = true;
}

void db_wbuf_put(db_wbuf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 65536;
		while (cap < b->n + n)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q) {
			b->err = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

void db_wbuf_str(db_wbuf *b, const char *s)
{
	uint32_t l = (uint32_t)strlen(s);
	db_wbuf_put(b, &l, 4);
	db_wbuf_put(b, s, l);
}

char *db_slurp(const char *path, size_t min, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (uintmax_t)st.st_size < min || (uintmax_t)st.st_size > max ||
	    !(buf = malloc(st.st_size ? (size_t)st.st_size : 1))) {
		close(fd);
		return NULL;
	}
	size_t size = (size_t)st.st_size, got = 0;
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != size) {
		free(buf);
		return NULL;
	}
	*len = size;
	return buf;
}

char *db_slurp_beside(const char *path, const char *name, size_t max, size_t *len)
{
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path + 1) : 0;
	char *p = malloc(dl + strlen(name) + 1);
	if (!p)
		return NULL;
	memcpy(p, path, dl);
	strcpy(p + dl, name);
	char *buf = db_slurp(p, 0, max, len);
	free(p);
	return buf;
}

int db_write_all(int fd, const void *p, size_t n)
{
	const char *s = p;
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int db_mkdirs(const char *dir)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", dir);
	for (char *s = buf + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(buf, 0700) != 0 && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

uint64_t db_fnv(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}
