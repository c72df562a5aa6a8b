/* Regex limits (issue 26 item 8): a pattern that backtracks exponentially
 * (^(a|a)+$ on "aaa...ab") stops at the match limit, in milliseconds, and
 * the limit hit is an error naming the pattern and the subject, never
 * "no match": db_re_search itself, a profile's path and key patterns, its
 * rewrite rules and its per-stage rules (which keep the first error for the
 * caller to report). The commands and the workbench: t_regex_limits.sh,
 * t_tui_filter.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "db_profile.h"
#include "db_re.h"

/* 40 a's then a b: 2^40 ways for (a|a)+ to fail */
#define EVIL_SUBJECT "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"

static void assert_has(const char *msg, const char *want)
{
	if (!msg || !strstr(msg, want))
		fail_msg("message '%s' lacks '%s'", msg ? msg : "(none)", want);
}

/* CPU seconds of this process so far. */
static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void test_search(void **state)
{
	(void)state;
	const char *pat = "^(a|a)+$";
	int ec;
	PCRE2_SIZE eo;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, 0, &ec, &eo, NULL);
	assert_non_null(re);
	db_err err = {{0}};
	assert_int_equal(db_re_search(re, pat, "aaaa", NULL, &err), 1);
	assert_int_equal(db_re_search(re, pat, "b", NULL, &err), 0);
	double t0 = cpu_s();
	/* 100 hits: each stops at the limit (a hit without the limit is
	 * 2^40 steps; the default limit of PCRE2, 10^7, took 0.15 s each) */
	for (int i = 0; i < 100; i++) {
		err.msg[0] = 0;
		assert_int_equal(db_re_search(re, pat, EVIL_SUBJECT, NULL, &err), -1);
	}
	double spent = cpu_s() - t0;
	assert_has(err.msg, "regex '^(a|a)+$'");
	assert_has(err.msg, "on '" EVIL_SUBJECT "'");
	assert_has(err.msg, "too much backtracking");
	assert_has(err.msg, "DUMPBISECT_REGEX_LIMIT");
	assert_true(db_re_match_limit() == DB_RE_MATCH_LIMIT);
	if (spent > 10.0)       /* ~1.5 s on a slow machine; 15 s with PCRE2's own limit */
		fail_msg("100 limit hits took %.1f s of CPU", spent);
	pcre2_code_free(re);
}

static db_profile *parse_ok(const char *yaml)
{
	db_profile *p = NULL;
	db_err err = {{0}};
	if (db_profile_parse(yaml, strlen(yaml), "t.yaml", &p, &err))
		fail_msg("parse: %s\n---\n%s", err.msg, yaml);
	return p;
}

static void test_profile_path_key(void **state)
{
	(void)state;
	db_profile *p = parse_ok(
		"name: evil\n"
		"path: '^(?<stage>(?:a|a)+|good)\\.pt$'\n"
		"key: '^(?<stage>(?:a|a)+|w)$'\n");
	db_fields f;
	db_err err = {{0}};
	assert_int_equal(db_profile_match_path(p, "good.pt", &f, &err), 1);
	assert_int_equal(db_profile_match_path(p, "other.pt", &f, &err), 0);
	assert_int_equal(db_profile_match_path(p, EVIL_SUBJECT ".pt", &f, &err), -1);
	assert_has(err.msg, "regex '^(?<stage>(?:a|a)+|good)\\.pt$' on '" EVIL_SUBJECT ".pt'");
	assert_has(err.msg, "too much backtracking");
	/* fields are reset, as for a path that does not match */
	assert_int_equal(f.layer, -1);
	assert_string_equal(f.stage, "");
	db_fields g;
	assert_int_equal(db_profile_match_path(p, "good.pt", &g, &err), 1);
	f = g;
	assert_int_equal(db_profile_match_key(p, "w", &f, &err), 1);
	f = g;
	assert_int_equal(db_profile_match_key(p, "nope", &f, &err), 0);
	f = g;
	err.msg[0] = 0;
	assert_int_equal(db_profile_match_key(p, EVIL_SUBJECT, &f, &err), -1);
	assert_has(err.msg, "on '" EVIL_SUBJECT "'");
	db_profile_free(p);
}

static void test_profile_rewrite(void **state)
{
	(void)state;
	db_profile *p = parse_ok(
		"name: evil\n"
		"path: '^(?<stage>[a-z]+)\\.pt$'\n"
		"rewrite:\n"
		"  stage:\n"
		"    - ['^(a|a)+$', y]\n");
	db_fields f;
	db_err err = {{0}};
	assert_int_equal(db_profile_match_path(p, "aaa.pt", &f, &err), 1);
	assert_int_equal(db_profile_match_key(p, "", &f, &err), 1);
	assert_string_equal(f.stage, "y");
	assert_int_equal(db_profile_match_path(p, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab.pt", &f, &err), 1);
	assert_int_equal(db_profile_match_key(p, "", &f, &err), -1);
	assert_has(err.msg, "regex '^(a|a)+$'");
	db_profile_free(p);
}

/* Per-stage rules answer plain yes/no: the first limit hit is kept in the
 * profile and every such rule then answers "no" at once. */
static void test_stage_rules(void **state)
{
	(void)state;
	db_profile *p = parse_ok(
		"name: evil\n"
		"path: '^(?<stage>[a-z]+)\\.pt$'\n"
		"input_ids: '^(a|a)+$'\n"
		"substages:\n"
		"  top: '^(b|b)+$'\n");
	assert_null(db_profile_regex_error(p));
	assert_true(db_profile_is_input_ids(p, "aaaa"));
	assert_false(db_profile_is_input_ids(p, "bbbb"));
	char buf[64];
	assert_string_equal(db_profile_parent(p, "bbbb", NULL, 0, buf, sizeof buf), "top");
	assert_null(db_profile_regex_error(p));
	assert_false(db_profile_is_input_ids(p, EVIL_SUBJECT));
	const char *e = db_profile_regex_error(p);
	assert_non_null(e);
	assert_has(e, "regex '^(a|a)+$' on '" EVIL_SUBJECT "'");
	double t0 = cpu_s();
	for (int i = 0; i < 1000; i++)         /* latched: no more matching */
		assert_false(db_profile_is_input_ids(p, EVIL_SUBJECT));
	assert_true(cpu_s() - t0 < 1.0);
	assert_ptr_equal(db_profile_regex_error(p), e);
	db_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_search),
		cmocka_unit_test(test_profile_path_key),
		cmocka_unit_test(test_profile_rewrite),
		cmocka_unit_test(test_stage_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
