/* Helpers shared by the unit tests: read a whole file, parse a JSON
 * fixture, write a file, make and remove a scratch directory, look for
 * strings in a text. Include after <cmocka.h> (tu_read, tu_json, tu_put and
 * tu_has_all fail the running test). */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/json_parse.h"

#define TU_FN static __attribute__((unused))

/* Whole file, NUL-terminated, in a malloc'd buffer the caller frees; *n is
 * its size. NULL (and *n = 0) when unreadable. */
TU_FN char *tu_slurp(const char *path, size_t *n)
{
	*n = 0;
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	long sz = -1;
	if (fseek(fp, 0, SEEK_END) == 0)
		sz = ftell(fp);
	char *b = NULL;
	if (sz >= 0 && fseek(fp, 0, SEEK_SET) == 0 && (b = malloc((size_t)sz + 1)) &&
	    fread(b, 1, (size_t)sz, fp) != (size_t)sz) {
		free(b);
		b = NULL;
	}
	fclose(fp);
	if (b) {
		b[sz] = 0;
		*n = (size_t)sz;
	}
	return b;
}

/* tu_slurp, but an unreadable file fails the test. */
TU_FN char *tu_read(const char *path, size_t *n)
{
	char *b = tu_slurp(path, n);
	if (!b)
		fail_msg("cannot read %s", path);
	return b;
}

/* The JSON file at path, parsed (caller frees with db_jp_free); invalid
 * JSON fails the test, naming the byte. */
TU_FN db_jp *tu_json(const char *path)
{
	size_t n, epos = 0;
	const char *emsg = "";
	char *txt = tu_read(path, &n);
	db_jp *v = NULL;
	int rc = db_jp_parse(txt, n, &v, &epos, &emsg);
	free(txt);
	if (rc)
		fail_msg("%s: byte %zu: %s", path, epos, emsg);
	return v;
}

/* n bytes of data as the file path: 0, or -1 when it cannot be written. */
TU_FN int tu_write(const char *path, const void *data, size_t n)
{
	FILE *fp = fopen(path, "wb");
	if (!fp)
		return -1;
	size_t w = fwrite(data, 1, n, fp);
	return fclose(fp) == 0 && w == n ? 0 : -1;
}

/* text as the file path; failing to write fails the test. */
TU_FN void tu_put(const char *path, const char *text)
{
	if (tu_write(path, text, strlen(text)))
		fail_msg("cannot write %s", path);
}

/* A fresh directory $TMPDIR/db_test_<tag>_XXXXXX (default /tmp), its path
 * in buf: 0, or -1 when it cannot be made. */
TU_FN int tu_mkdtemp(char *buf, size_t cap, const char *tag)
{
	const char *base = getenv("TMPDIR");
	snprintf(buf, cap, "%s/db_test_%s_XXXXXX", base && *base ? base : "/tmp", tag);
	return mkdtemp(buf) ? 0 : -1;
}

/* Removes dir and everything below it, read-only parts too: 0 or -1. */
TU_FN int tu_rm_rf(const char *dir)
{
	char cmd[1100];
	snprintf(cmd, sizeof cmd, "chmod -R u+w '%.500s' 2>/dev/null; rm -rf '%.500s'", dir, dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* text holds each of the strings that follow, up to a NULL; the first one
 * missing fails the test, with the text. */
TU_FN __attribute__((sentinel)) void tu_has_all(const char *text, ...)
{
	va_list ap;
	va_start(ap, text);
	for (const char *want; (want = va_arg(ap, const char *));)
		if (!text || !strstr(text, want)) {
			va_end(ap);
			fail_msg("'%s' not found in:\n%s", want, text ? text : "(null)");
		}
	va_end(ap);
}

#endif
