#include "db_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int db_err_set(db_err *err, const char *file, const char *entry, int64_t offset,
               const char *fmt, ...)
{
	if (!err)
		return -1;
	size_t n = 0, cap = sizeof err->msg;
	int w;
	if (file && (w = snprintf(err->msg, cap, "%s: ", file)) > 0)
		n = (size_t)w < cap ? (size_t)w : cap - 1;
	if (entry && n < cap && (w = snprintf(err->msg + n, cap - n, "entry '%s': ", entry)) > 0)
		n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
	if (offset >= 0 && n < cap && (w = snprintf(err->msg + n, cap - n, "byte %lld: ", (long long)offset)) > 0)
		n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
	va_list ap;
	va_start(ap, fmt);
	if (n < cap)
		vsnprintf(err->msg + n, cap - n, fmt, ap);
	va_end(ap);
	return -1;
}

char *db_err_dup(const db_err *err)
{
	return strdup(err ? err->msg : "");
}
