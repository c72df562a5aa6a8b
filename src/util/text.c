/* Text for terminals and tables: see text.h. */
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool db_term_utf8(void)
{
	const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
	for (size_t i = 0; i < 3; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "UTF8") ||
			       strstr(v, "utf8");
	}
	return false;
}

void db_fmt_shape(int ndim, const int64_t *shape, char *buf, size_t len)
{
	size_t n = 0;
	if (ndim < 0) {
		snprintf(buf, len, "-");
		return;
	}
	n += (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < ndim && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}
