/* Numbered notes: the next number after existing files (whatever else is
 * in the directory), never an overwrite, concurrent creators (forked)
 * getting distinct numbers, an unwritable directory as an error value, the
 * listing, slugs and the bisect Markdown. */
#include "db_notes.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/test_util.h"

static char tmpdir[256];

static int setup_dir(void **state)
{
	return tu_mkdtemp(tmpdir, sizeof tmpdir, "notes");
}

static int teardown_dir(void **state)
{
	return tu_rm_rf(tmpdir);
}

static void touch(const char *dir, const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	tu_put(p, text);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char buf[8192];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_slug(void **state)
{
	(void)state;
	const char *cases[][2] = {
		{"Sign flip in o_proj!", "sign_flip_in_o_proj"},
		{"  --Layer 3: routed_scaling_factor ×2.5 -- ", "layer_3_routed_scaling_factor_2_5"},
		{"", "note"},
		{"✓✓✓", "note"},
		{"../../etc/passwd", "etc_passwd"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *s = db_notes_slug(cases[i][0]);
		assert_string_equal(s, cases[i][1]);
		free(s);
	}
	char long_title[200];
	memset(long_title, 'a', sizeof long_title - 1);
	long_title[sizeof long_title - 1] = '\0';
	char *s = db_notes_slug(long_title);
	assert_int_equal(strlen(s), 48);
	free(s);
	char *d = db_notes_dir_for("/x/y/session.yaml");
	assert_string_equal(d, "/x/y/notes");
	free(d);
	d = db_notes_dir_for("session.yaml");
	assert_string_equal(d, "./notes");
	free(d);
	d = db_notes_dir_for(NULL);
	assert_string_equal(d, "notes");
	free(d);
}

static void test_numbering(void **state)
{
	(void)state;
	char dir[400];
	snprintf(dir, sizeof dir, "%s/n1/notes", tmpdir);
	/* a missing directory is created; the first note is 01 */
	assert_int_equal(db_notes_next_number(dir), 1);
	char *path = NULL;
	int num = 0;
	db_err err;
	db_note_sections sec = {"the o_proj shard of rank 1 is negated", "dump attn.o_proj per rank",
	                        "| rank | cos |\n|---|---|\n| 0 | 1.0 |\n| 1 | -1.0 |", NULL, ""};
	assert_int_equal(db_notes_create(dir, "First look", &sec, &path, &num, &err), 0);
	assert_int_equal(num, 1);
	char want[512];
	snprintf(want, sizeof want, "%s/01_first_look.md", dir);
	assert_string_equal(path, want);
	const char *text = slurp(path);
	tu_has_all(text, "# 01 — First look\n",
	           "## Hypothesis\n\nthe o_proj shard of rank 1 is negated\n",
	           "## Experiment\n\ndump attn.o_proj per rank\n",
	           "## Data\n\n| rank | cos |\n|---|---|\n| 0 | 1.0 |\n| 1 | -1.0 |\n",
	           "## Conclusion\n\n_to fill_\n", "## Next step\n\n_to fill_\n", NULL);
	free(path);
	/* 02 by hand, 07_x (not markdown), junk: the next is 08 */
	touch(dir, "02_by_hand.md", "# mine\n");
	assert_int_equal(db_notes_next_number(dir), 3);
	touch(dir, "07_x", "x");
	touch(dir, "junk", "j");
	touch(dir, "9_one_digit.md", "");
	touch(dir, "README.md", "");
	touch(dir, "1x_bad.md", "");
	assert_int_equal(db_notes_next_number(dir), 8);
	assert_int_equal(db_notes_create(dir, "Second", NULL, &path, &num, &err), 0);
	assert_int_equal(num, 8);
	assert_non_null(strstr(path, "/08_second.md"));
	free(path);
	/* the hand-written note was not touched */
	snprintf(want, sizeof want, "%s/02_by_hand.md", dir);
	assert_string_equal(slurp(want), "# mine\n");
	/* a file already at the next name: skipped, never overwritten */
	touch(dir, "09_second.md", "keep me");
	unlink(want);   /* numbers: 01, 07, 08, 09 */
	assert_int_equal(db_notes_next_number(dir), 10);
	/* numbers past 99 keep going */
	touch(dir, "99_last.md", "");
	assert_int_equal(db_notes_create(dir, "Second", NULL, &path, &num, &err), 0);
	assert_int_equal(num, 100);
	free(path);
	snprintf(want, sizeof want, "%s/09_second.md", dir);
	assert_string_equal(slurp(want), "keep me");
	/* the listing: NN_*.md only, by number, titles from the "# " line */
	db_note_entry *e = NULL;
	size_t n = db_notes_list(dir, &e);
	assert_int_equal(n, 5);
	assert_int_equal(e[0].number, 1);
	assert_string_equal(e[0].title, "First look");   /* less its "01 — " */
	assert_int_equal(e[1].number, 8);
	assert_string_equal(e[2].name, "09_second.md");
	assert_string_equal(e[2].title, "09_second.md");   /* no "# " line */
	assert_int_equal(e[3].number, 99);
	assert_int_equal(e[4].number, 100);
	db_notes_list_free(e, n);
	assert_int_equal(db_notes_list("/nonexistent/notes", &e), 0);
	assert_null(e);
}

/* Several processes create notes at once: distinct numbers, 1..N, no file
 * lost. */
static void test_concurrent(void **state)
{
	(void)state;
	char dir[400];
	snprintf(dir, sizeof dir, "%s/conc", tmpdir);
	enum { PROCS = 6, EACH = 5 };
	pid_t pids[PROCS];
	for (int p = 0; p < PROCS; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0) {
			for (int i = 0; i < EACH; i++) {
				char title[64];
				snprintf(title, sizeof title, "writer %d note %d", p, i);
				db_err err;
				if (db_notes_create(dir, title, NULL, NULL, NULL, &err) < 0) {
					fprintf(stderr, "%s\n", err.msg);
					_exit(1);
				}
			}
			_exit(0);
		}
	}
	for (int p = 0; p < PROCS; p++) {
		int st;
		assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	db_note_entry *e = NULL;
	size_t n = db_notes_list(dir, &e);
	assert_int_equal(n, PROCS * EACH);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(e[i].number, (int)i + 1);
	db_notes_list_free(e, n);
}

static void test_unwritable(void **state)
{
	(void)state;
	char dir[400];
	db_err err;
	char *path = (char *)1;
	/* a file where the directory should be */
	touch(tmpdir, "plainfile", "");
	snprintf(dir, sizeof dir, "%s/plainfile", tmpdir);
	assert_int_equal(db_notes_create(dir, "x", NULL, &path, NULL, &err), -1);
	assert_null(path);
	assert_non_null(strstr(err.msg, "notes directory is not a directory"));
	snprintf(dir, sizeof dir, "%s/plainfile/notes", tmpdir);
	assert_int_equal(db_notes_create(dir, "x", NULL, NULL, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "cannot create notes directory: Not a directory"));
	/* a filesystem nobody may create in, even root */
	assert_int_equal(db_notes_create("/proc/db_notes_test", "x", NULL, NULL, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "/proc/db_notes_test: cannot create notes directory"));
	if (geteuid() == 0)
		return;     /* root ignores the mode bits below */
	snprintf(dir, sizeof dir, "%s/ro", tmpdir);
	assert_int_equal(mkdir(dir, 0555), 0);
	assert_int_equal(db_notes_create(dir, "x", NULL, &path, NULL, &err), -1);
	assert_null(path);
	assert_non_null(strstr(err.msg, "cannot create note: Permission denied"));
}

static void test_md_bisect(void **state)
{
	(void)state;
	db_bisect b;
	db_err err;
	int layers[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	assert_int_equal(db_bisect_init(&b, layers, 8, DB_GOOD_BEFORE, &err), 0);
	db_bisect_step s = {7, DB_V_BAD, DB_V_BAD, false, 0.5, 0.75, DB_BAND_BUG, 0};
	assert_int_equal(db_bisect_record(&b, &s, &err), 0);
	s = (db_bisect_step){3, DB_V_GOOD, DB_V_BAD, true, 0.99995, 0.02, DB_BAND_DRIFT, 0};
	assert_int_equal(db_bisect_record(&b, &s, &err), 0);
	char *md = db_md_bisect(&b, NULL);
	assert_non_null(md);
	tu_has_all(md, "Bisect state: **search** — between L3 (good) and L7 (bad): 3 left, ~2 probes\n",
	           "- good bound: L3\n- bad bound: L7\n", "- next: L5\n",
	           "| 1 | L7 | bad | auto | 0.50000000 | 0.75 | bug |\n",
	           "| 2 | L3 | good | user | 0.99995000 | 0.02 | drift |\n", NULL);
	free(md);
	db_bisect_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slug),
		cmocka_unit_test(test_numbering),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_unwritable),
		cmocka_unit_test(test_md_bisect),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
