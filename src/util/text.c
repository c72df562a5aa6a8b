/* Text for terminals and tables: see text.h. */
#include "text.h"

#include <limits.h>
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

char *db_rel_path(const char *from_dir, const char *to_file)
{
	char a[PATH_MAX], b[PATH_MAX];
	if (!realpath(from_dir, a) || !realpath(to_file, b))
		return NULL;
	/* the longest common prefix that ends at a folder boundary */
	size_t i = 0, common = 0;
	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			common = i;
		i++;
	}
	if (!a[i] && b[i] == '/')
		common = i;             /* b is under a */
	size_t ups = 0;
	for (const char *p = a + common; *p; p++)
		ups += *p == '/' && p[1];
	size_t n = ups * 3 + strlen(b + common) + 1;
	char *out = malloc(n);
	if (!out)
		return NULL;
	out[0] = '\0';
	for (size_t k = 0; k < ups; k++)
		strcat(out, "../");
	strcat(out, b + common + 1);
	return out;
}
