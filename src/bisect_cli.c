/* Shared plumbing of the bisect, replay and export commands. */
#include "bisect_cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool bcli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, name, n))
		return false;
	if (a[n] == '=') {
		*val = a + n + 1;
		return true;
	}
	if (a[n])
		return false;
	if (*i + 1 >= argc) {
		*val = NULL;
		return true;
	}
	*val = argv[++*i];
	return true;
}

char *bcli_abspath(const char *path)
{
	char buf[PATH_MAX];
	if (path && realpath(path, buf))
		return strdup(buf);
	return path ? strdup(path) : NULL;
}

int bcli_open_compare(const char *ref, const char *target, const char *profile,
                      db_compare **out, db_err *err)
{
	db_compare_opts o = {0};
	o.profile = profile;
	return db_compare_open(ref, target, &o, out, err);
}

