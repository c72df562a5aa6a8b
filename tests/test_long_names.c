/* Names longer than their field (issue 26 item 14): db_fields keeps a stage
 * of 255 bytes and a phase or pass of 31; a longer value is cut, and the
 * match says so (db_fields.cut) on every path a name takes — a path group,
 * a key group, a plain key appended to the file's stage, a file stage, a
 * rename — so the index can refuse the item instead of pairing it by its
 * first bytes. A name that fits exactly is not cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_profile.h"

static db_profile *parse_ok(const char *yaml)
{
	db_profile *p = NULL;
	db_err err = {{0}};
	if (db_profile_parse(yaml, strlen(yaml), "t.yaml", &p, &err))
		fail_msg("parse: %s\n---\n%s", err.msg, yaml);
	return p;
}

static char *rep(char c, size_t n)
{
	char *s = malloc(n + 1);
	memset(s, c, n);
	s[n] = 0;
	return s;
}

/* match path and key; returns the fields */
static db_fields match(const db_profile *p, const char *path, const char *key)
{
	db_fields f;
	db_err err = {{0}};
	if (db_profile_match_path(p, path, &f, &err) != 1)
		fail_msg("no match: %s", path);
	if (key && db_profile_match_key(p, key, &f, &err) != 1)
		fail_msg("no key match: %s", key);
	return f;
}

static void test_path_groups(void **state)
{
	(void)state;
	db_profile *p = parse_ok("name: x\npath: '^(?<phase>[^/]+)/(?<pass>[^/]+)/(?<stage>.+)\\.pt$'\n");
	char path[1024];
	assert_false(match(p, "fwd/1/attn.q_proj.pt", NULL).cut);
	char *a31 = rep('a', 31), *a32 = rep('a', 32), *s255 = rep('s', 255), *s256 = rep('s', 256);
	snprintf(path, sizeof path, "%s/1/x.pt", a31);
	assert_false(match(p, path, NULL).cut);                 /* fits exactly */
	snprintf(path, sizeof path, "%s/1/x.pt", a32);
	assert_true(match(p, path, NULL).cut);
	snprintf(path, sizeof path, "fwd/%s/x.pt", a32);
	assert_true(match(p, path, NULL).cut);
	snprintf(path, sizeof path, "fwd/1/%.200s/%.55s.pt", s255, s255);  /* 256 with the '/' */
	assert_true(match(p, path, NULL).cut);
	snprintf(path, sizeof path, "fwd/1/%.200s/%.54s.pt", s255, s255);  /* 255 */
	db_fields f = match(p, path, NULL);
	assert_false(f.cut);
	assert_int_equal(strlen(f.stage), 255);
	(void)s256;
	free(a31);
	free(a32);
	free(s255);
	free(s256);
	db_profile_free(p);
}

static void test_keys(void **state)
{
	(void)state;
	/* no key pattern: the key is appended to the file's stage */
	db_profile *p = parse_ok("name: x\npath: '^(?<stage>[^/]+)\\.safetensors$'\n");
	char *k200 = rep('k', 200), *k300 = rep('k', 300);
	char key[512];
	assert_false(match(p, "mod.safetensors", k200).cut);
	assert_true(match(p, "mod.safetensors", k300).cut);
	snprintf(key, sizeof key, "%.251s", k300);      /* "mod." + 251 = 255 */
	assert_false(match(p, "mod.safetensors", key).cut);
	snprintf(key, sizeof key, "%.252s", k300);
	assert_true(match(p, "mod.safetensors", key).cut);
	db_profile_free(p);
	/* a key pattern's stage group */
	p = parse_ok("name: x\npath: '^(?<_file>[^/]+)\\.safetensors$'\nkey: '^(?<stage>.+)$'\n");
	assert_true(match(p, "m.safetensors", k300).cut);
	assert_false(match(p, "m.safetensors", k200).cut);
	db_profile_free(p);
	free(k200);
	free(k300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_groups),
		cmocka_unit_test(test_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
