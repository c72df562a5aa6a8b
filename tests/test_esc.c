/* esc.c: the one terminal-safety rule (controls, DEL, C1, bidi, invalid
 * UTF-8), its idempotence and cut, and the Markdown and CSV wrappers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_err.h"
#include "db_esc.h"

/* What a writer prints for s, as a malloc'd string. */
static char *capture(void (*fn)(const char *, FILE *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(s, f);
	fclose(f);
	return buf;
}

static void check(void (*fn)(const char *, FILE *), const char *s, const char *want)
{
	char *got = capture(fn, s);
	if (strcmp(got, want))
		fail_msg("got '%s', want '%s'", got, want);
	free(got);
}

static void test_term(void **state)
{
	(void)state;
	assert_string_equal(db_esc("layers.0.w"), "layers.0.w");
	assert_string_equal(db_esc("a\x1b[31mb"), "a\\x1b[31mb");
	assert_string_equal(db_esc("\x1b]0;PWNED\x07"), "\\x1b]0;PWNED\\x07");
	assert_string_equal(db_esc("t\tn\nr\rdel\x7f"), "t\\x09n\\x0ar\\x0ddel\\x7f");
	/* invalid UTF-8: stray continuation, bad lead, truncated, overlong, surrogate */
	assert_string_equal(db_esc("\xff\x80"), "\\xff\\x80");
	assert_string_equal(db_esc("\xe2\x82"), "\\xe2\\x82");
	assert_string_equal(db_esc("\xc0\xaf"), "\\xc0\\xaf");
	assert_string_equal(db_esc("\xed\xa0\x80"), "\\xed\\xa0\\x80");
	/* C1 (U+009B is CSI on some terminals), bidi, separators */
	assert_string_equal(db_esc("\xc2\x9b" "2J"), "\\u009b2J");
	assert_string_equal(db_esc("abc\xe2\x80\xae" "gpj.exe"), "abc\\u202egpj.exe");
	assert_string_equal(db_esc("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
	assert_string_equal(db_esc("\xe2\x80\xa8"), "\\u2028");
	/* printable UTF-8 is kept */
	assert_string_equal(db_esc("\xc3\xa9t\xc3\xa9 \xe2\x96\x88"), "\xc3\xa9t\xc3\xa9 \xe2\x96\x88");
	assert_string_equal(db_esc(NULL), "");
}

static void test_idempotent(void **state)
{
	(void)state;
	const char *cases[] = {"\x1b[2J\\x1b", "\xe2\x80\xae\xff", "a\\b", "\x01\x02\x7f\xc2\x85"};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char once[256], twice[256];
		db_esc_buf(once, sizeof once, cases[i]);
		db_esc_buf(twice, sizeof twice, once);
		assert_string_equal(once, twice);
		for (const unsigned char *p = (const unsigned char *)once; *p; p++)
			assert_true(*p >= 0x20 && *p != 0x7f);
	}
}

static void test_cut(void **state)
{
	(void)state;
	char big[10000];
	memset(big, '\x1b', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	const char *e = db_esc(big);
	size_t n = strlen(e);
	assert_true(n < DB_ESC_SHORT);
	assert_string_equal(e + n - 3, "...");
	/* never cut inside an escape: what precedes "..." is whole \x1b's */
	assert_int_equal((n - 3) % 4, 0);
	char small[8];
	assert_int_equal(db_esc_buf(small, sizeof small, "\x1b\x1b"), 8);
	assert_string_equal(small, "\\x1b...");
	assert_int_equal(db_esc_buf(small, sizeof small, "abcdefg"), 7);
	assert_string_equal(small, "abcdefg");
	/* the ring: 8 results live at once */
	const char *r[8];
	char want[8][4];
	for (int i = 0; i < 8; i++) {
		snprintf(want[i], sizeof want[i], "%d", i);
		r[i] = db_esc(want[i]);
	}
	for (int i = 0; i < 8; i++)
		assert_string_equal(r[i], want[i]);
}

static void test_md(void **state)
{
	(void)state;
	check(db_esc_md_code, "layers.0.<script>alert(1)</script>\x1b[31m",
	      "`layers.0.<script>alert(1)</script>\\x1b[31m`");
	check(db_esc_md_code, "a`b``c", "```a`b``c```");
	check(db_esc_md_code, "`x", "`` `x ``");
	check(db_esc_md_code, "", "(empty)");
	check(db_esc_md_code, "a|b", "`a|b`");
	check(db_esc_md_cell, "a|b", "`a\\|b`");
	check(db_esc_md_text, "<img src=x onerror=alert(1)> & a|b\x1b", "&lt;img src=x onerror=alert(1)> &amp; a\\|b\\x1b");
	check(db_esc_md_text, "[click](javascript:alert(1)) ![i](http://x/t.png)",
	      "\\[click\\](javascript:alert(1)) !\\[i\\](http://x/t.png)");
}

static void test_csv(void **state)
{
	(void)state;
	check(db_esc_csv, "layers.0.w", "layers.0.w");
	check(db_esc_csv, "=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
	check(db_esc_csv, "+1", "\"'+1\"");
	check(db_esc_csv, "-1", "\"'-1\"");
	check(db_esc_csv, "@SUM(A1)", "\"'@SUM(A1)\"");
	check(db_esc_csv, "a,b", "\"a,b\"");
	check(db_esc_csv, "a\r\nb\x1b", "a\\x0d\\x0ab\\x1b");
	/* a control first is escaped first, so the cell starts with a backslash */
	check(db_esc_csv, "\t=1", "\\x09=1");
}

/* db_err_set escapes where it formats: file, entry and arguments. */
static void test_err(void **state)
{
	(void)state;
	db_err e;
	db_err_set(&e, "/t/\x1b]0;x\x07.pt", "k\xe2\x80\xae", 7, "bad key '%s'", "\x9b\xff");
	assert_string_equal(e.msg, "/t/\\x1b]0;x\\x07.pt: entry 'k\\u202e': byte 7: bad key '\\x9b\\xff'");
	char *d = db_err_dup(&e);
	assert_string_equal(d, e.msg);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_term), cmocka_unit_test(test_idempotent),
		cmocka_unit_test(test_cut),  cmocka_unit_test(test_md),
		cmocka_unit_test(test_csv),  cmocka_unit_test(test_err),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
