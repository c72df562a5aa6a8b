/* Bounded regex matching: every PCRE2 match and substitution of the
 * program goes through one match context with a match (backtracking) limit
 * and a depth limit, so a pattern like ^(a|a)+$ costs milliseconds, not
 * minutes, and a limit hit is an error naming the pattern and the subject,
 * never read as "no match". Core and ui/ alike. */
#ifndef DB_RE_H
#define DB_RE_H
#include <stdbool.h>
#include <stddef.h>

#include "db_err.h"

#define DB_RE_MATCH_LIMIT 1000000u      /* default; DUMPBISECT_REGEX_LIMIT */
#define DB_RE_DEPTH_LIMIT 10000u

/* The shared pcre2_match_context (limits set; read-only, safe to share
 * between threads); NULL only when out of memory. */
void *db_re_context(void);
/* The match limit in force. */
unsigned long db_re_match_limit(void);

/* Search re (a pcre2_code, compiled from pattern) in subject. md: match data
 * for re (NULL: made and freed here). 1 match, 0 no match, -1 error with
 * err set: "regex 'PATTERN' on 'SUBJECT': WHY". */
int db_re_search(const void *re, const char *pattern, const char *subject, void *md,
                 db_err *err);
/* The error for a PCRE2 match error code rc (rc < -1) of pattern on
 * subject; returns -1 like db_err_set. */
int db_re_error(db_err *err, const char *pattern, const char *subject, int rc);

#endif
