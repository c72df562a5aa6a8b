/* Shared by the profile tests: the built-in profiles' names (one list, so
 * a new built-in is checked everywhere) and loading one that must load.
 * Include after <cmocka.h>. */
#ifndef PROFILE_UTIL_H
#define PROFILE_UTIL_H
#include "db_profile.h"

static const char *const BUILTINS[] = {
	"atom", "atom-fwd", "atom-weights", "generic", "sglang-hook", "sglang-v1", "sglang-v2", NULL
};

/* name_or_path as db_profile_load takes it; fails the running test. */
static __attribute__((unused)) db_profile *load(const char *name)
{
	db_profile *p = NULL;
	db_err err = {{0}};
	if (db_profile_load(name, &p, &err))
		fail_msg("load %s: %s", name, err.msg);
	return p;
}

#endif
