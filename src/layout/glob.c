/* Shell-style globs for stage names (stage_order, model_after, ignore_keys).
 * Stage names hold dots, not path separators, so '*' crosses everything. */
#include "db_profile.h"

#include <fnmatch.h>

bool db_glob_match(const char *glob, const char *s)
{
	if (!glob || !s)
		return false;
	return fnmatch(glob, s, 0) == 0;
}
