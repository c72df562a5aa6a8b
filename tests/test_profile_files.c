/* Profiles against real files: every built-in profile on its fixture tree
 * (tests/fixtures/layouts, gen_layouts.py), and the YAML examples of
 * man/dumpbisect-profile.5 loaded by the real loader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_profile.h"
#include "db_reader.h"
#include "util/json_parse.h"
#include "lib/profile_util.h"
#include "lib/test_util.h"

/* ---- the real fixture trees (tests/fixtures/layouts, gen_layouts.py) ---- */

typedef struct layout {
	const char *dir, *profile;
	const char *ref, *tgt;          /* side folders; NULL: one folder for both */
} layout;

static const layout LAYOUTS[] = {
	{"sglang_v1", "sglang-v1", "ref", "target"},
	{"sglang_v2", "sglang-v2", "ref", "target"},
	{"miles", "sglang-v1", "baseline", "target"},
	{"fwd_hook", "sglang-hook", "ref", "target"},
	{"atom_hooks", "atom", "ref", "target"},
	{"atom_refpatch", "atom", NULL, NULL},
	{"atom_onedir", "atom", NULL, NULL},
	{"atom_fwd", "atom-fwd", NULL, NULL},
	{"atom_weights", "atom-weights", NULL, NULL},
	{"generic_st", "generic", "ref", "target"},
	{"generic_npy", "generic", "ref", "target"},
	{"generic_npz", "generic", "ref", "target"},
	{NULL, NULL, NULL, NULL},
};

/* Every file under root (but expected.json) must belong to the layout and
 * match its path pattern. Returns the number of files. */
static int walk(const db_profile *p, const char *root, const char *rel)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s%s%s", root, *rel ? "/" : "", rel);
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("cannot open %s", dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "expected.json"))
			continue;
		char sub[1024], full[2100];
		snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		snprintf(full, sizeof full, "%s/%s", root, sub);
		struct stat st;
		assert_int_equal(stat(full, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			n += walk(p, root, sub);
			continue;
		}
		db_fields f;
		if (db_profile_match_path(p, sub, &f, NULL) != 1)
			fail_msg("%s: %s/%s does not match", p->name, root, sub);
		n++;
	}
	closedir(d);
	return n;
}

static void json_field_eq(const char *what, const db_jp *v, const char *got_s, int got_i,
                          bool numeric)
{
	if (!v || v->type == DB_JP_NULL) {
		if (numeric ? got_i != -1 : *got_s != 0)
			fail_msg("%s: expected null, got '%s'/%d", what, got_s, got_i);
	} else if (v->type == DB_JP_NUM) {
		if (numeric ? got_i != (int)v->num : atoi(got_s) != (int)v->num || !*got_s)
			fail_msg("%s: expected %g, got '%s'/%d", what, v->num, got_s, got_i);
	} else if (v->type == DB_JP_STR) {
		if (strcmp(v->str, got_s))
			fail_msg("%s: expected '%s', got '%s'", what, v->str, got_s);
	}
}

/* "path#key" (or a plain path) under root: fields via path and key. */
static void check_entry(const db_profile *p, const char *root, const char *ref,
                        const db_jp *exp, const char *side)
{
	char rel[1024];
	snprintf(rel, sizeof rel, "%s", ref);
	char *hash = strchr(rel, '#');
	const char *key = "";
	if (hash) {
		*hash = 0;
		key = hash + 1;
	}
	db_fields f;
	if (db_profile_match_path(p, rel, &f, NULL) != 1)
		fail_msg("%s: %s does not match", p->name, rel);
	/* the key really is one of the file's flattened keys */
	char full[2100];
	snprintf(full, sizeof full, "%s/%s", root, rel);
	db_file *file = NULL;
	db_err err = {{0}};
	if (db_file_open(full, &file, &err))
		fail_msg("%s", err.msg);
	if (hash) {
		if (!db_file_find(file, key))
			fail_msg("%s has no key '%s'", full, key);
		if (db_profile_match_key(p, key, &f, NULL) != 1)
			fail_msg("%s: key '%s' of %s does not match", p->name, key, rel);
	} else {
		/* no key given: exactly one entry of the file survives the profile */
		db_fields one = f;
		int kept = 0;
		for (size_t i = 0; i < file->n_entries; i++) {
			db_fields g = f;
			if (db_profile_match_key(p, file->entries[i].key, &g, NULL) == 1) {
				one = g;
				kept++;
			}
		}
		if (kept != 1)
			fail_msg("%s: %d entries kept, expected 1", full, kept);
		f = one;
	}
	db_file_close(file);
	char what[1200];
	snprintf(what, sizeof what, "%s %s#%s", p->name, rel, key);
	char pass_txt[32];
	snprintf(pass_txt, sizeof pass_txt, "%s", f.pass);
	json_field_eq(what, db_jp_get(exp, "phase"), f.phase, 0, false);
	json_field_eq(what, db_jp_get(exp, "pass"), pass_txt, 0, false);
	json_field_eq(what, db_jp_get(exp, "rank"), "", f.rank, true);
	json_field_eq(what, db_jp_get(exp, "layer"), "", f.layer, true);
	const db_jp *st = db_jp_get(exp, "stage");
	assert_non_null(st);
	if (strcmp(st->str, f.stage))
		fail_msg("%s: stage: expected '%s', got '%s'", what, st->str, f.stage);
	if (side)
		assert_string_equal(f.side, side);
}

static void test_fixture_layouts(void **state)
{
	for (const layout *l = LAYOUTS; l->dir; l++) {
		char root[512], ref_root[600], tgt_root[600];
		snprintf(root, sizeof root, FIXTURES "/layouts/%s", l->dir);
		db_profile *p = load(l->profile);
		int n = walk(p, root, "");
		assert_true(n >= 2);

		char jpath[700];
		snprintf(jpath, sizeof jpath, "%s/expected.json", root);
		db_jp *js = tu_json(jpath);
		const db_jp *arr = js->type == DB_JP_OBJ ? db_jp_get(js, "pairs") : js;
		assert_non_null(arr);
		assert_int_equal(arr->type, DB_JP_ARR);
		assert_true(arr->n > 0);
		snprintf(ref_root, sizeof ref_root, "%s%s%s", root, l->ref ? "/" : "", l->ref ? l->ref : "");
		snprintf(tgt_root, sizeof tgt_root, "%s%s%s", root, l->tgt ? "/" : "", l->tgt ? l->tgt : "");
		size_t checked = 0;
		for (size_t i = 0; i < arr->n; i++) {
			const db_jp *e = &arr->items[i];
			const db_jp *file = db_jp_get(e, "file");
			const db_jp *r = db_jp_get(e, "ref"), *t = db_jp_get(e, "target");
			if (file) {             /* one-sided listing (atom_refpatch) */
				check_entry(p, root, file->str, e, NULL);
				checked++;
				continue;
			}
			if (!r || r->type != DB_JP_STR)
				continue;       /* merged pairs list their shards */
			bool one = !l->ref;
			check_entry(p, ref_root, r->str, e, one ? "ref" : NULL);
			check_entry(p, tgt_root, t->str, e, one ? "target" : NULL);
			checked++;
		}
		assert_true(checked > 0);
		db_jp_free(js);
		db_profile_free(p);
	}
}

/* ---- man page examples ---- */

/* roff escapes used in the .EX blocks, back to plain text. */
static void unroff(const char *in, char *out, size_t cap)
{
	static const struct { const char *esc, *txt; } map[] = {
		{"\\e", "\\"}, {"\\-", "-"}, {"\\(aq", "'"}, {"\\(dq", "\""}, {"\\(ha", "^"},
		{"\\(ti", "~"}, {"\\(ga", "`"}, {"\\&", ""},
	};
	size_t o = 0;
	while (*in && o + 1 < cap) {
		size_t i, n = sizeof map / sizeof *map;
		for (i = 0; i < n; i++)
			if (!strncmp(in, map[i].esc, strlen(map[i].esc)))
				break;
		if (i < n) {
			for (const char *t = map[i].txt; *t && o + 1 < cap; t++)
				out[o++] = *t;
			in += strlen(map[i].esc);
		} else {
			if (*in == '\\')
				fail_msg("unknown roff escape in example: %s", in);
			out[o++] = *in++;
		}
	}
	out[o] = 0;
}

static void test_manpage_examples(void **state)
{
	FILE *fp = fopen(SRCDIR "/man/dumpbisect-profile.5", "r");
	assert_non_null(fp);
	char line[2048], txt[2048];
	size_t cap = 1 << 16, len = 0;
	char *yaml = malloc(cap);
	assert_non_null(yaml);
	int lineno = 0, start = 0, n_examples = 0;
	enum { OUT, MARKED, IN } st = OUT;
	bool seen[sizeof BUILTINS / sizeof *BUILTINS] = {false};
	while (fgets(line, sizeof line, fp)) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (st == OUT && !strcmp(line, ".\\\" example-profile")) {
			st = MARKED;
		} else if (st == MARKED) {
			if (strcmp(line, ".EX"))
				fail_msg("dumpbisect-profile.5:%d: example-profile not followed by .EX", lineno);
			st = IN;
			len = 0;
			start = lineno + 1;
		} else if (st == IN && !strcmp(line, ".EE")) {
			char origin[64];
			snprintf(origin, sizeof origin, "dumpbisect-profile.5:%d", start);
			db_profile *p = NULL;
			db_err err = {{0}};
			if (db_profile_parse(yaml, len, origin, &p, &err))
				fail_msg("example at line %d does not load: %s", start, err.msg);
			/* the page shows each built-in verbatim */
			for (int i = 0; BUILTINS[i]; i++) {
				if (strcmp(p->name, BUILTINS[i]))
					continue;
				const char *b = db_profile_builtin_yaml(BUILTINS[i]);
				if (strlen(b) != len || memcmp(b, yaml, len))
					fail_msg("dumpbisect-profile.5:%d: example '%s' differs from "
					         "profiles/%s.yaml; run man/gen-profile-examples.py",
					         start, p->name, p->name);
				seen[i] = true;
			}
			db_profile_free(p);
			n_examples++;
			st = OUT;
		} else if (st == IN) {
			if (line[0] == '.')
				fail_msg("dumpbisect-profile.5:%d: macro inside an example", lineno);
			unroff(line, txt, sizeof txt);
			size_t l = strlen(txt);
			assert_true(len + l + 2 < cap);
			memcpy(yaml + len, txt, l);
			len += l;
			yaml[len++] = '\n';
			yaml[len] = 0;
		}
	}
	fclose(fp);
	free(yaml);
	assert_int_equal(st, OUT);
	for (int i = 0; BUILTINS[i]; i++)
		if (!seen[i])
			fail_msg("built-in %s has no example in dumpbisect-profile.5", BUILTINS[i]);
	assert_true(n_examples >= 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manpage_examples),
		cmocka_unit_test(test_fixture_layouts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
