/* Session files: round trip of every field (awkward strings, NaN, the final
 * sentinel), atomic saves, corrupt files reported with file:line:column,
 * moved trees. Also the helper modes of tests/t_atomic_kill.sh:
 *   DB_SESSION_SAVE_LOOP=FILE  save FILE forever, "saved N" after each save
 *   DB_SESSION_SAVES=N         (with SAVE_LOOP) stop after N saves
 *   DB_SESSION_CHECK=FILE      load FILE, check it is one whole generation
 *   DB_SESSION_UNSAFE=1        (with SAVE_LOOP) rewrite in place instead: the
 *                              control showing the check catches torn files */
#include "db_session.h"

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "db_atomic.h"
#include "lib/test_util.h"

static char tmpdir[256];

static int setup_dir(void **state)
{
	return tu_mkdtemp(tmpdir, sizeof tmpdir, "session");
}

static int teardown_dir(void **state)
{
	return tu_rm_rf(tmpdir);
}

static db_session *sample(void)
{
	db_session *s = db_session_new("/data/ref run", "/data/tgt: \"bf16\"");
	assert_non_null(s);
	s->profile = strdup("sglang-v1");
	s->phase = strdup("true");          /* looks like a bool */
	s->pass = strdup("0");              /* looks like a number */
	s->probe = strdup("hidden_out");
	db_err err;
	assert_int_equal(db_predicate_parse("cos<0.99,rel>0.1", &s->pred, &err), 0);
	s->good = 2;
	int layers[6] = {2, 3, 4, 5, 6, DB_LAYER_FINAL};
	db_bisect b;
	assert_int_equal(db_bisect_init(&b, layers, 6, 2, &err), 0);
	db_bisect_step st = {DB_LAYER_FINAL, DB_V_BAD, DB_V_BAD, false, 0.25, 1.5, DB_BAND_BUG, 1700000001};
	assert_int_equal(db_bisect_record(&b, &st, &err), 0);
	st = (db_bisect_step){4, DB_V_SKIP, DB_V_NONE, false, NAN, NAN, DB_BAND_NONE, 1700000002};
	assert_int_equal(db_bisect_record(&b, &st, &err), 0);
	st = (db_bisect_step){5, DB_V_GOOD, DB_V_BAD, true, 0.99999999999999989, 1e-300, DB_BAND_DRIFT, 1700000003};
	assert_int_equal(db_bisect_record(&b, &st, &err), 0);
	assert_int_equal(db_session_sync_bisect(s, &b, &err), 0);
	db_bisect_free(&b);
	assert_true(db_session_add_mark(s, 5, "attn.o_proj", 1, DB_MARK_CONFIRMED,
	                                "sign flip: \"o_proj\" # not a comment\nsecond line") == 0);
	assert_true(db_session_add_mark(s, -1, NULL, -1, DB_MARK_REFUTED, "") == 1);
	assert_true(db_session_add_mark(s, 3, "ffn_out", -1, DB_MARK_SUSPECT, "émoji ✓ ~") == 2);
	assert_int_equal(db_session_add_note(s, "notes/01_first look.md"), 0);
	assert_int_equal(db_session_add_note(s, "notes/02_- dash.md"), 0);
	assert_int_equal(db_session_view_set(s, "cursor", "4,2"), 0);
	assert_int_equal(db_session_view_set(s, "filter", "^attn\\.(q|k)$"), 0);
	assert_int_equal(db_session_view_set(s, "empty", ""), 0);
	assert_int_equal(db_session_view_set(s, "gone", "x"), 0);
	assert_int_equal(db_session_view_set(s, "gone", NULL), 0);
	return s;
}

static void same_num(double a, double b)
{
	if (isnan(a))
		assert_true(isnan(b));
	else
		assert_memory_equal(&a, &b, sizeof a);
}

static void test_round_trip(void **state)
{
	(void)state;
	db_session *s = sample();
	size_t len;
	char *text = db_session_dump(s, &len);
	assert_non_null(text);
	db_session *t = NULL;
	db_err err;
	if (db_session_parse(text, len, "mem", &t, &err) < 0)
		fail_msg("%s\n%s", err.msg, text);
	assert_string_equal(t->ref, s->ref);
	assert_string_equal(t->target, s->target);
	assert_string_equal(t->profile, "sglang-v1");
	assert_string_equal(t->phase, "true");
	assert_string_equal(t->pass, "0");
	assert_string_equal(t->probe, "hidden_out");
	assert_int_equal(t->pred.kind, DB_PRED_THRESH);
	assert_true(t->pred.cos_min == 0.99 && t->pred.rel_max == 0.1);
	assert_int_equal(t->good, 2);
	assert_int_equal(t->n_layers, 6);
	assert_int_equal(t->layers[5], DB_LAYER_FINAL);
	assert_int_equal(t->n_steps, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(t->steps[i].layer, s->steps[i].layer);
		assert_int_equal(t->steps[i].verdict, s->steps[i].verdict);
		assert_int_equal(t->steps[i].auto_verdict, s->steps[i].auto_verdict);
		assert_int_equal(t->steps[i].by_user, s->steps[i].by_user);
		assert_int_equal(t->steps[i].band, s->steps[i].band);
		assert_int_equal(t->steps[i].time, s->steps[i].time);
		same_num(t->steps[i].cos, s->steps[i].cos);
		same_num(t->steps[i].rel, s->steps[i].rel);
	}
	assert_int_equal(t->n_marks, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(t->marks[i].layer, s->marks[i].layer);
		assert_int_equal(t->marks[i].rank, s->marks[i].rank);
		assert_int_equal(t->marks[i].status, s->marks[i].status);
		assert_string_equal(t->marks[i].text, s->marks[i].text);
		if (s->marks[i].stage)
			assert_string_equal(t->marks[i].stage, s->marks[i].stage);
		else
			assert_null(t->marks[i].stage);
	}
	assert_int_equal(t->n_notes, 2);
	assert_string_equal(t->notes[1], "notes/02_- dash.md");
	assert_int_equal(t->n_view, 3);
	assert_string_equal(db_session_view_get(t, "filter"), "^attn\\.(q|k)$");
	assert_string_equal(db_session_view_get(t, "empty"), "");
	assert_null(db_session_view_get(t, "gone"));
	assert_int_equal(t->created, s->created);
	/* a second dump is the same text */
	size_t len2;
	char *text2 = db_session_dump(t, &len2);
	assert_int_equal(len, len2);
	assert_string_equal(text, text2);
	/* the bisect state comes back */
	db_bisect b;
	assert_int_equal(db_session_to_bisect(t, &b, &err), 0);
	assert_int_equal(b.n_steps, 3);
	assert_int_equal(b.layers[b.bad], DB_LAYER_FINAL);
	assert_int_equal(b.layers[b.good], 5);
	assert_int_equal(b.layers[b.next], 6);
	db_bisect_free(&b);
	assert_int_equal(db_session_find_mark(t, 3, "ffn_out"), 2);
	assert_int_equal(db_session_find_mark(t, -1, NULL), 1);
	assert_int_equal(db_session_find_mark(t, 3, NULL), -1);
	assert_true(db_session_remove_mark(t, 0));
	assert_int_equal(db_session_find_mark(t, 3, "ffn_out"), 1);
	free(text);
	free(text2);
	db_session_free(s);
	db_session_free(t);
}

static void test_save_load(void **state)
{
	(void)state;
	char path[400];
	snprintf(path, sizeof path, "%s/s.yaml", tmpdir);
	db_session *s = sample();
	db_err err;
	assert_int_equal(db_session_save(s, path, &err), 0);
	assert_string_equal(s->path, path);
	db_session_view_set(s, "cursor", "9,9");
	assert_int_equal(db_session_save(s, NULL, &err), 0);
	db_session *t = NULL;
	assert_int_equal(db_session_load(path, &t, &err), 0);
	assert_string_equal(db_session_view_get(t, "cursor"), "9,9");
	assert_string_equal(t->path, path);
	/* no temp files left beside it */
	DIR *d = opendir(tmpdir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		assert_null(strstr(e->d_name, ".tmp."));
	closedir(d);
	/* saving into a missing directory is an error, not a crash */
	snprintf(path, sizeof path, "%s/no/such/dir/s.yaml", tmpdir);
	assert_int_equal(db_session_save(t, path, &err), -1);
	assert_non_null(strstr(err.msg, "create temp file"));
	db_session_free(s);
	db_session_free(t);
}

/* Parse text; the error must be exactly want. */
static void corrupt(const char *text, const char *want)
{
	db_session *s = (db_session *)1;
	db_err err;
	assert_int_equal(db_session_parse(text, strlen(text), "s.yaml", &s, &err), -1);
	assert_null(s);
	if (strcmp(err.msg, want))
		fail_msg("text:\n%s\ngot:  %s\nwant: %s", text, err.msg, want);
}

static void test_corrupt(void **state)
{
	(void)state;
	corrupt("dumpbisect_session: 1\nsteps: [\n  {layer: 1, verdict: bad}\n",
	        "s.yaml:4:1: did not find expected ',' or ']' while parsing a flow sequence");
	corrupt("dumpbisect_session: 1\ngood: abc\n",
	        "s.yaml:2:7: 'good': 'abc' is not an integer in [-1, 2147483647]");
	corrupt("dumpbisect_session: 1\nlayers: [1, 2]\nsteps:\n  - {layer: 1, verdict: maybe}\n",
	        "s.yaml:4:25: 'verdict': expected good, bad, skip or none");
	corrupt("dumpbisect_session: 1\nlayers: [1, 2]\nsteps:\n  - {layer: 3, verdict: bad}\n",
	        "s.yaml: step 1 is on layer 3, which is not in 'layers'");
	corrupt("dumpbisect_session: 1\nsteps:\n  - [1, bad]\n", "s.yaml:3:5: a step must be a mapping");
	corrupt("dumpbisect_session: 1\nsteps:\n  - {verdict: bad}\n",
	        "s.yaml:3:5: a step needs 'layer' and 'verdict'");
	corrupt("dumpbisect_session: 1\nmarks:\n  - {layer: 2, status: sure}\n",
	        "s.yaml:3:24: 'status': expected suspect, confirmed or refuted");
	corrupt("dumpbisect_session: 1\npredicate: cos<<1\n",
	        "s.yaml:2:12: predicate 'cos<<1': expected band:NAME, cos<X, rel>Y or cos<X,rel>Y");
	corrupt("dumpbisect_session: 1\nview: [a, b]\n", "s.yaml:2:7: 'view' must be a mapping");
	corrupt("dumpbisect_session: 3\n",
	        "s.yaml:1:21: 'dumpbisect_session': '3' is not an integer in [1, 2]");
	corrupt("foo: bar\n", "s.yaml:1:1: not a dumpbisect session (no 'dumpbisect_session: 2')");
	corrupt("- 1\n- 2\n", "s.yaml:1:1: not a dumpbisect session (top level is not a mapping)");
	corrupt("", "s.yaml:1:1: empty file, not a dumpbisect session");
	corrupt("dumpbisect_session: 1\nref: \"unterminated\n",
	        "s.yaml:3:1: found unexpected end of stream while scanning a quoted scalar");
	/* a file: the error names it and the file stays as it was */
	char path[400];
	snprintf(path, sizeof path, "%s/bad.yaml", tmpdir);
	const char *bad = "dumpbisect_session: 1\nsteps: 7\n";
	db_err err;
	assert_int_equal(db_atomic_write_buf(path, bad, strlen(bad), &err), 0);
	db_session *s = NULL;
	assert_int_equal(db_session_load(path, &s, &err), -1);
	char want[512];
	snprintf(want, sizeof want, "%s:2:8: 'steps' must be a list", path);
	assert_string_equal(err.msg, want);
	FILE *f = fopen(path, "r");
	char back[64] = "";
	assert_int_equal(fread(back, 1, sizeof back - 1, f), strlen(bad));
	fclose(f);
	assert_string_equal(back, bad);
	snprintf(path, sizeof path, "%s/missing.yaml", tmpdir);
	assert_int_equal(db_session_load(path, &s, &err), -1);
	assert_non_null(strstr(err.msg, "cannot open session: No such file or directory"));
}

static void test_moved_trees(void **state)
{
	(void)state;
	db_session *s = db_session_new(tmpdir, "/nonexistent/target/tree");
	db_err err;
	assert_int_equal(db_session_check_trees(s, &err), -1);
	assert_string_equal(err.msg, "session: target tree /nonexistent/target/tree is gone "
	                    "(No such file or directory; moved?); give --target DIR");
	free(s->target);
	s->target = strdup(tmpdir);
	assert_int_equal(db_session_check_trees(s, &err), 0);
	free(s->ref);
	s->ref = strdup("/nonexistent/ref");
	assert_int_equal(db_session_check_trees(s, &err), -1);
	assert_non_null(strstr(err.msg, "reference tree /nonexistent/ref is gone"));
	assert_non_null(strstr(err.msg, "--ref DIR"));
	db_session_free(s);
}

/* ------------------------------------------ two writers, merged on save */

static void add_step(db_session *s, int layer, db_verdict v, int64_t t)
{
	s->steps = realloc(s->steps, (s->n_steps + 1) * sizeof *s->steps);
	s->steps[s->n_steps++] = (db_bisect_step){layer, v, v, false, 0.5, 0.1, DB_BAND_BUG, t};
}

static void drop_step(db_session *s)
{
	s->n_steps--;
}

/* "good 5,skip 4,..." */
static void steps_are(const db_session *s, const char *want)
{
	char got[256] = "";
	for (size_t i = 0; i < s->n_steps; i++) {
		char l[32];
		size_t n = strlen(got);
		snprintf(got + n, sizeof got - n, "%s %s,", db_verdict_name(s->steps[i].verdict),
		         db_layer_label(s->steps[i].layer, l, sizeof l));
	}
	assert_string_equal(got, want);
}

/* The base (sample: bad final, skip L4, good L5) saved by "us"; "they"
 * load it too, undo good L5, judge L3 bad, drop one mark, add one and a
 * note; we add bad L6, a mark and a note and save: everything of both is
 * there, their undo holds, nothing twice. */
static void test_merge_two_writers(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/merge.yaml", tmpdir);
	db_err err;
	db_session *ours = sample(), *theirs = NULL;
	assert_int_equal(db_session_save(ours, path, &err), 0);
	assert_int_equal(db_session_load(path, &theirs, &err), 0);
	drop_step(theirs);
	add_step(theirs, 3, DB_V_BAD, 1700000010);
	assert_true(db_session_remove_mark(theirs, 1));
	db_session_add_mark(theirs, 4, "mlp", 0, DB_MARK_SUSPECT, "theirs");
	db_session_add_note(theirs, "notes/03_theirs.md");
	assert_int_equal(db_session_save(theirs, NULL, &err), 0);

	add_step(ours, 6, DB_V_BAD, 1700000011);
	db_session_add_mark(ours, 6, "mlp", 0, DB_MARK_SUSPECT, "ours");
	db_session_add_note(ours, "notes/04_ours.md");
	db_session_view_set(ours, "cursor", "6,0");
	if (db_session_save(ours, NULL, &err) != 1)
		fail_msg("save after another writer: %s", err.msg);
	db_session *got = NULL;
	assert_int_equal(db_session_load(path, &got, &err), 0);
	steps_are(got, "bad final,skip L4,bad L3,bad L6,");
	steps_are(ours, "bad final,skip L4,bad L3,bad L6,");
	assert_int_equal(got->n_marks, 4);            /* 3 - theirs' removal + theirs + ours */
	assert_int_equal(db_session_find_mark(got, -1, NULL), -1);
	assert_true(db_session_find_mark(got, 4, "mlp") >= 0);
	assert_true(db_session_find_mark(got, 6, "mlp") >= 0);
	assert_int_equal(got->n_notes, 4);
	assert_string_equal(db_session_view_get(got, "cursor"), "6,0");

	/* nothing changed on disk since: a plain save, no merge */
	assert_int_equal(db_session_save(ours, NULL, &err), 0);
	/* both set the bisect up anew: refused, the file and ours untouched */
	free(theirs->probe);
	theirs->probe = strdup("attn_out");
	assert_int_equal(db_session_save(theirs, NULL, &err), 1);
	free(ours->probe);
	ours->probe = strdup("mlp_out");
	size_t before_len;
	char *before = db_session_dump(ours, &before_len);
	assert_int_equal(db_session_save(ours, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "set the bisect up anew"));
	char *after = db_session_dump(ours, NULL);
	assert_string_equal(before, after);
	db_session_free(got);
	assert_int_equal(db_session_load(path, &got, &err), 0);
	assert_string_equal(got->probe, "attn_out");
	free(before);
	free(after);
	db_session_free(got);
	db_session_free(theirs);
	db_session_free(ours);
}

/* ------------------------------------------------ t_atomic_kill.sh modes */

/* Generation g: 100 + g % 400 steps, view gen = g, view count = steps, so
 * a torn file that still parses is caught too. */
static db_session *generation(long g)
{
	db_session *s = db_session_new("/ref", "/tgt");
	size_t n = 100 + (size_t)(g % 400);
	s->layers = malloc(n * sizeof *s->layers);
	s->steps = calloc(n, sizeof *s->steps);
	for (size_t i = 0; i < n; i++) {
		s->layers[i] = (int)i;
		s->steps[i] = (db_bisect_step){(int)i, DB_V_GOOD, DB_V_GOOD, false, 1.0 - 1e-9 * (double)i,
		                               (double)g, DB_BAND_OK, 1700000000 + g};
	}
	s->n_layers = s->n_steps = n;
	char buf[32];
	snprintf(buf, sizeof buf, "%ld", g);
	db_session_view_set(s, "gen", buf);
	snprintf(buf, sizeof buf, "%zu", n);
	db_session_view_set(s, "count", buf);
	return s;
}

static int save_loop(const char *path)
{
	char *base = NULL;
	size_t base_len = 0;
	db_session *prev;
	db_err e0;
	if (db_session_load(path, &prev, &e0) == 0) {
		/* a killed saver's file: resumed, as a real writer does */
		base = prev->base;
		base_len = prev->base_len;
		prev->base = NULL;
		db_session_free(prev);
	}
	const char *limit = getenv("DB_SESSION_SAVES");
	for (long g = 0; !limit || g < atol(limit); g++) {
		db_session *s = generation(g);
		db_err err;
		/* one writer saving over and over: its base is what it last
		 * wrote, so no save sees another writer's change to merge */
		s->base = base;
		s->base_len = base_len;
		if (getenv("DB_SESSION_UNSAFE")) {
			/* the torn-write control: a plain rewrite in place */
			size_t len;
			char *text = db_session_dump(s, &len);
			FILE *f = fopen(path, "w");
			for (size_t o = 0; f && o < len; o += 512) {
				fwrite(text + o, 1, len - o < 512 ? len - o : 512, f);
				fflush(f);
			}
			if (f)
				fclose(f);
			free(text);
		} else if (db_session_save(s, path, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		base = s->base;
		base_len = s->base_len;
		s->base = NULL;
		db_session_free(s);
		printf("saved %ld\n", g);
		fflush(stdout);
	}
	free(base);
	return 0;
}

static int check_file(const char *path)
{
	db_session *s = NULL;
	db_err err;
	if (db_session_load(path, &s, &err) < 0) {
		fprintf(stderr, "TORN: %s\n", err.msg);
		return 3;
	}
	const char *gen = db_session_view_get(s, "gen"), *count = db_session_view_get(s, "count");
	int rc = 0;
	if (!gen || !count || (size_t)atol(count) != s->n_steps ||
	    s->n_steps != 100 + (size_t)(atol(gen) % 400) ||
	    s->steps[s->n_steps - 1].rel != (double)atol(gen)) {
		fprintf(stderr, "TORN: %s does not hold one whole generation\n", path);
		rc = 3;
	} else {
		printf("%s\n", gen);
	}
	db_session_free(s);
	return rc;
}

/* Issue 34: one bisect per (phase, pass), marks on their place, and a
 * version 1 file migrated (its mark placed on the pass whose bisect found
 * its layer). */
static void test_per_pass(void **state)
{
	(void)state;
	const char *v1 =
		"dumpbisect_session: 1\nphase: \"\"\npass: \"0\"\nlayers: [0, 1, 2, 3]\n"
		"steps:\n  - {layer: 3, verdict: good}\n"
		"marks:\n  - {layer: 2, stage: attn, rank: -1, status: confirmed, text: x}\n"
		"  - {layer: 1, stage: mlp, rank: 1, status: suspect, text: y}\n"
		"earlier:\n  - {phase: \"\", pass: \"3\", layers: [0, 1, 2, 3], steps: [\n"
		"      {layer: 3, verdict: bad}, {layer: 1, verdict: good}, {layer: 2, verdict: bad}]}\n";
	db_session *s = NULL;
	db_err err;
	assert_int_equal(db_session_parse(v1, strlen(v1), "v1.yaml", &s, &err), 0);
	/* the mark of L2: pass 3's bisect found L2; the other: the session's pass */
	assert_string_equal(s->marks[0].pass, "3");
	assert_string_equal(s->marks[1].pass, "0");
	assert_int_equal(db_session_mark_at(s, "", "3", 2, "attn", -1, false), 0);
	assert_int_equal(db_session_mark_at(s, "", "0", 2, "attn", -1, false), -1);
	assert_int_equal(db_session_mark_at(s, NULL, "0", 1, "mlp", 1, false), 1);
	assert_int_equal(db_session_mark_at(s, NULL, "0", 1, "mlp", 0, false), -1);  /* rank 0 */
	assert_int_equal(db_session_mark_at(s, NULL, "0", 1, "mlp", -1, false), 1);  /* all ranks */
	assert_int_equal(db_session_mark_at(s, NULL, "3", 2, "attn.o_proj", -1, true), -1);
	assert_int_equal(db_session_mark_at(s, NULL, "3", 2, "att", -1, true), -1);
	/* the found one first */
	const db_session *v[4];
	assert_int_equal(db_session_bisects(s, v, 4), 2);
	assert_ptr_equal(v[0], s->earlier[0]);
	assert_ptr_equal(v[1], s);
	/* back to pass 3: resumed; pass 0's kept */
	assert_int_equal(db_session_switch_bisect(s, "", "3", false), 1);
	assert_string_equal(s->pass, "3");
	assert_int_equal(s->n_steps, 3);
	assert_int_equal(s->n_earlier, 1);
	assert_string_equal(s->earlier[0]->pass, "0");
	assert_int_equal(db_session_switch_bisect(s, NULL, "3", false), 0);    /* there already */
	/* a pass with none: a new one, pass 3's kept */
	assert_int_equal(db_session_switch_bisect(s, "", "5", false), 0);
	assert_null(s->pass);
	assert_int_equal(s->n_steps, 0);
	assert_int_equal(s->n_earlier, 2);
	assert_int_equal(db_session_find_bisect(s, NULL, "3"), 1);
	/* written as version 2, the marks with their pass, read back the same */
	size_t len;
	char *text = db_session_dump(s, &len);
	assert_non_null(strstr(text, "dumpbisect_session: 2\n"));
	db_session *t = NULL;
	assert_int_equal(db_session_parse(text, len, "v2.yaml", &t, &err), 0);
	assert_string_equal(t->marks[0].pass, "3");
	assert_string_equal(t->marks[0].phase, "");
	assert_int_equal(t->n_earlier, 2);
	free(text);
	db_session_free(t);
	db_session_free(s);
}

int main(void)
{
	const char *loop = getenv("DB_SESSION_SAVE_LOOP"), *check = getenv("DB_SESSION_CHECK");
	if (loop)
		return save_loop(loop);
	if (check)
		return check_file(check);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_save_load),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_moved_trees),
		cmocka_unit_test(test_merge_two_writers),
		cmocka_unit_test(test_per_pass),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
