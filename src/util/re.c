#include "db_re.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pcre2_match_context *mctx;
static unsigned long match_limit = DB_RE_MATCH_LIMIT;

static void init(void)
{
	const char *e = getenv("DUMPBISECT_REGEX_LIMIT");
	char *end;
	unsigned long v = e && *e ? strtoul(e, &end, 10) : 0;
	if (e && *e && !*end && v > 0 && v <= 0xffffffffUL)
		match_limit = v;
	if (!(mctx = pcre2_match_context_create(NULL)))
		return;
	pcre2_set_match_limit(mctx, (uint32_t)match_limit);
	/* depth follows a raised match limit, so raising one is enough */
	uint32_t depth = match_limit / 100 > DB_RE_DEPTH_LIMIT ? (uint32_t)(match_limit / 100)
	                                                       : DB_RE_DEPTH_LIMIT;
	pcre2_set_depth_limit(mctx, depth);
}

void *db_re_context(void)
{
	pthread_once(&once, init);
	return mctx;
}

unsigned long db_re_match_limit(void)
{
	pthread_once(&once, init);
	return match_limit;
}

int db_re_error(db_err *err, const char *pattern, const char *subject, int rc)
{
	/* subjects are names from a dump or a tree: quoted, cut when long */
	const char *why;
	char buf[160];
	if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT) {
		why = buf;
		snprintf(buf, sizeof buf, "too much backtracking (%s limit hit; "
		         "DUMPBISECT_REGEX_LIMIT=%lu raises it, a simpler pattern avoids it)",
		         rc == PCRE2_ERROR_MATCHLIMIT ? "match" :
		         rc == PCRE2_ERROR_DEPTHLIMIT ? "depth" : "heap", db_re_match_limit() * 10);
	} else {
		PCRE2_UCHAR m[120];
		if (pcre2_get_error_message(rc, m, sizeof m) < 0)
			snprintf((char *)m, sizeof m, "error %d", rc);
		snprintf(buf, sizeof buf, "%s", (char *)m);
		why = buf;
	}
	size_t sl = strlen(subject);
	return db_err_set(err, NULL, NULL, -1, "regex '%.200s' on '%.200s%s': %s", pattern,
	                  subject, sl > 200 ? "..." : "", why);
}

int db_re_search(const void *re, const char *pattern, const char *subject, void *md,
                 db_err *err)
{
	pcre2_match_data *own = NULL;
	if (!md && !(md = own = pcre2_match_data_create_from_pattern(re, NULL)))
		return db_err_set(err, NULL, NULL, -1, "regex '%.200s': out of memory", pattern);
	int rc = pcre2_match(re, (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED, 0, 0, md,
	                     db_re_context());
	pcre2_match_data_free(own);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	return db_re_error(err, pattern, subject, rc);
}
