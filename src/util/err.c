#include "db_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "db_esc.h"

int db_err_set(db_err *err, const char *file, const char *entry, int64_t offset,
               const char *fmt, ...)
{
	if (!err)
		return -1;
	char raw[sizeof err->msg];
	size_t n = 0, cap = sizeof raw;
	int w;
	raw[0] = '\0';
	if (file && (w = snprintf(raw, cap, "%s: ", file)) > 0)
		n = (size_t)w < cap ? (size_t)w : cap - 1;
	if (entry && n < cap && (w = snprintf(raw + n, cap - n, "entry '%s': ", entry)) > 0)
		n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
	if (offset >= 0 && n < cap && (w = snprintf(raw + n, cap - n, "byte %lld: ", (long long)offset)) > 0)
		n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
	va_list ap;
	va_start(ap, fmt);
	if (n < cap)
		vsnprintf(raw + n, cap - n, fmt, ap);
	va_end(ap);
	/* Escaped here, once, for every sink: the path, entry and format
	 * arguments (keys, module names) are foreign text, and a db_err goes to
	 * stderr, the status line, notes and JSON "error" fields alike. */
	db_esc_buf(err->msg, sizeof err->msg, raw);
	return -1;
}

char *db_err_dup(const db_err *err)
{
	return strdup(err ? err->msg : "");
}
