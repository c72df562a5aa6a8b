/* YAML bounds (issue 26 item 9): aliases that would expand a document past
 * 16 times its text are refused before a reader copies anything (one 100 KB
 * scalar aliased 100,000 times was 9.8 GB and 20 s), and nesting deeper
 * than 128 is refused by a scan of the text before libyaml parses it (its
 * scanner is quadratic in depth: 300k '[' took over a minute). Profiles and
 * sessions alike; honest anchors, block scalars, quoted text and comments
 * full of brackets still load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "db_profile.h"
#include "db_session.h"

static void assert_has(const char *msg, const char *want)
{
	if (!msg || !strstr(msg, want))
		fail_msg("message '%s' lacks '%s'", msg ? msg : "(none)", want);
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* A growable string. */
typedef struct sb { char *s; size_t n, cap; } sb;

static void add(sb *b, const char *s, size_t times)
{
	size_t l = strlen(s);
	if (b->n + l * times + 1 > b->cap) {
		b->cap = (b->n + l * times + 1) * 2;
		b->s = realloc(b->s, b->cap);
		assert_non_null(b->s);
	}
	for (size_t k = 0; k < times; k++) {
		memcpy(b->s + b->n, s, l);
		b->n += l;
	}
	b->s[b->n] = 0;
}

static int profile(const sb *b, db_err *err)
{
	db_profile *p = NULL;
	err->msg[0] = 0;
	int rc = db_profile_parse(b->s, b->n, "p.yaml", &p, err);
	db_profile_free(p);
	return rc;
}

static void test_profile_aliases(void **state)
{
	(void)state;
	sb b = {0};
	char big[10001];
	memset(big, 'A', 10000);
	big[10000] = 0;
	add(&b, "name: x\npath: a\ndescription: &a ", 1);
	add(&b, big, 1);
	add(&b, "\nstage_order: [*a", 1);
	add(&b, ", *a", 100000);       /* 1 GB expanded from 410 KB */
	add(&b, "]\n", 1);
	db_err err;
	double t0 = cpu_s();
	assert_int_equal(profile(&b, &err), -1);
	assert_true(cpu_s() - t0 < 5.0);
	assert_has(err.msg, "p.yaml:4:");
	assert_has(err.msg, "aliases expand this document past");
	free(b.s);
	/* honest anchors: a list used three times */
	sb ok = {0};
	add(&ok, "name: x\npath: a\nstage_order: &o [a, b, c]\nmodel_after: *o\nprobe: *o\n", 1);
	if (profile(&ok, &err))
		fail_msg("%s", err.msg);
	free(ok.s);
}

static void test_alias_cycle(void **state)
{
	(void)state;
	sb b = {0};
	add(&b, "name: x\npath: a\nprobe: &c [a, *c]\n", 1);
	db_err err;
	assert_int_equal(profile(&b, &err), -1);
	assert_has(err.msg, "p.yaml:3:8: an alias inside the node it names");
	free(b.s);
}

static void test_depth(void **state)
{
	(void)state;
	db_err err;
	/* flow: 300k '[' */
	sb f = {0};
	add(&f, "name: x\npath: a\nprobe: ", 1);
	add(&f, "[", 300000);
	add(&f, "]", 300000);
	double t0 = cpu_s();
	assert_int_equal(profile(&f, &err), -1);
	assert_has(err.msg, "p.yaml:3:135: nested deeper than 128 levels (refused before parsing)");
	/* block: 400k "- " */
	sb bl = {0};
	add(&bl, "name: x\npath: a\nprobe:\n", 1);
	add(&bl, "- ", 400000);
	add(&bl, "x\n", 1);
	assert_int_equal(profile(&bl, &err), -1);
	assert_has(err.msg, "nested deeper than 128 levels");
	/* block: indentation, 200 levels of mappings */
	sb in = {0};
	add(&in, "name: x\npath: a\nthresholds:\n", 1);
	for (int i = 1; i <= 200; i++) {
		add(&in, " ", (size_t)i);
		add(&in, "a:\n", 1);
	}
	assert_int_equal(profile(&in, &err), -1);
	assert_has(err.msg, "nested deeper than 128 levels");
	assert_true(cpu_s() - t0 < 5.0);
	/* 100 levels pass the scan (then the reader says what it wants) */
	sb ok = {0};
	add(&ok, "name: x\npath: a\nprobe: ", 1);
	add(&ok, "[", 100);
	add(&ok, "]", 100);
	assert_int_equal(profile(&ok, &err), -1);
	assert_has(err.msg, "probe");
	if (strstr(err.msg, "nested deeper"))
		fail_msg("100 levels refused: %s", err.msg);
	free(f.s);
	free(bl.s);
	free(in.s);
	free(ok.s);
}

/* Brackets in text are not nesting: block scalars, quotes, comments. */
static void test_depth_not_fooled(void **state)
{
	(void)state;
	sb b = {0};
	add(&b, "name: x\ndescription: |\n  ", 1);
	add(&b, "[", 300);
	add(&b, "\n  - - - - ", 1);
	add(&b, "{", 300);
	add(&b, "\npath: '", 1);
	add(&b, "\\[", 300);
	add(&b, "'\n# ", 1);
	add(&b, "[", 300);
	add(&b, "\nkey: \"\\\"", 1);
	add(&b, "\\\\[", 300);
	add(&b, "\"\nprobe: [a, 'b]]]', \"c[[[\"]\n", 1);
	db_profile *p = NULL;
	db_err err;
	if (db_profile_parse(b.s, b.n, "p.yaml", &p, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(p->n_probes, 3);
	assert_string_equal(p->probes[1], "b]]]");
	db_profile_free(p);
	free(b.s);
}

static const char SESSION_HEAD[] =
	"dumpbisect_session: 1\nref: \"/r\"\ntarget: \"/t\"\npredicate: \"band:ok\"\n"
	"good: -1\ncreated: 1\nupdated: 1\nsteps: []\nmarks: []\n";

static void test_session(void **state)
{
	(void)state;
	db_session *s = NULL;
	db_err err;
	/* notes: one 100 KB name aliased 100,000 times */
	sb n = {0};
	char big[100001];
	memset(big, 'N', 100000);
	big[100000] = 0;
	add(&n, SESSION_HEAD, 1);
	add(&n, "layers: []\nnotes: [&n ", 1);
	add(&n, big, 1);
	add(&n, ", *n", 100000);
	add(&n, "]\n", 1);
	double t0 = cpu_s();
	assert_int_equal(db_session_parse(n.s, n.n, "s.yaml", &s, &err), -1);
	assert_has(err.msg, "s.yaml:11:");
	assert_has(err.msg, "aliases expand this document past");
	/* view: one value aliased 60,000 times */
	sb v = {0};
	add(&v, SESSION_HEAD, 1);
	add(&v, "layers: []\nnotes: []\nview:\n  k: &v ", 1);
	add(&v, big, 1);
	add(&v, "\n", 1);
	for (int i = 0; i < 60000; i++) {
		char line[32];
		snprintf(line, sizeof line, "  k%d: *v\n", i);
		add(&v, line, 1);
	}
	assert_int_equal(db_session_parse(v.s, v.n, "s.yaml", &s, &err), -1);
	assert_has(err.msg, "aliases expand this document past");
	/* 300k nested '[' */
	sb d = {0};
	add(&d, SESSION_HEAD, 1);
	add(&d, "notes: []\nlayers: ", 1);
	add(&d, "[", 300000);
	add(&d, "]", 300000);
	add(&d, "\n", 1);
	assert_int_equal(db_session_parse(d.s, d.n, "s.yaml", &s, &err), -1);
	assert_has(err.msg, "s.yaml:11:");
	assert_has(err.msg, "nested deeper than 128 levels");
	assert_true(cpu_s() - t0 < 5.0);
	/* the head alone is a session */
	sb ok = {0};
	add(&ok, SESSION_HEAD, 1);
	add(&ok, "layers: [1, 2]\nnotes: []\n", 1);
	if (db_session_parse(ok.s, ok.n, "s.yaml", &s, &err))
		fail_msg("%s", err.msg);
	db_session_free(s);
	free(n.s);
	free(v.s);
	free(d.s);
	free(ok.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_aliases),
		cmocka_unit_test(test_alias_cycle),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_depth_not_fooled),
		cmocka_unit_test(test_session),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
