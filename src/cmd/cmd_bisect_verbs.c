/* dumpbisect bisect start|good|bad|skip|undo|log|reset|run: the layer
 * bisect one verdict per shell command, git-bisect style. The session file
 * is the whole state (as .git/BISECT_LOG is git's): every command loads
 * it, reopens the comparison, replays the steps through the same state
 * machine the workbench and --auto use, records one change and saves.
 * start, the verdicts and reset hold the session lock from load to save,
 * so two at once take turns (each sees the other's verdict); run, which
 * waits on CMD, merges at each save instead (db_session_save). */
#include "bisect_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db_bisect.h"
#include "db_json.h"
#include "db_session.h"

static const char *const verbs[] = {"start", "good", "bad", "skip", "undo", "log", "reset", "run"};

bool bcli_is_verb(const char *s)
{
	for (size_t i = 0; s && i < sizeof verbs / sizeof *verbs; i++)
		if (!strcmp(s, verbs[i]))
			return true;
	return false;
}

/* --session, else $DUMPBISECT_SESSION, else ./dumpbisect.session */
static const char *session_path(const char *given)
{
	const char *e = getenv("DUMPBISECT_SESSION");
	return given ? given : e && *e ? e : BCLI_DEFAULT_SESSION;
}

/* Everything one verb works on; all owned. */
typedef struct vstate {
	db_session *s;
	db_compare *c;
	db_bisect_run *r;
} vstate;

static void vstate_free(vstate *x)
{
	db_bisect_run_free(x->r);
	db_compare_free(x->c);
	db_session_free(x->s);
}

/* Load the session (locked: held until vstate_free), reopen its
 * comparison and its run with the steps. */
static int vstate_open(vstate *x, const char *path, bool locked, const db_cmd *cmd,
                       const db_cmp_args *ca, db_err *err)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return db_err_set(err, path, NULL, -1, "no bisect in progress (start one with: "
		                  "dumpbisect bisect start REF TARGET --session %s)", path);
	if ((locked ? db_session_load_locked(path, false, &x->s, err)
	            : db_session_load(path, &x->s, err)) < 0 ||
	    db_session_check_trees(x->s, err) < 0)
		return -1;
	db_compare_opts co = {0};
	if (db_cmp_args_apply(cmd, ca, &co) != 0)
		return db_err_set(err, NULL, NULL, -1, "bad comparison options");
	if (!co.profile)
		co.profile = x->s->profile;
	if (db_compare_open(x->s->ref, x->s->target, &co, &x->c, err) < 0)
		return -1;
	return db_session_run_open(x->s, x->c, true, &x->r, err);
}

static int vstate_save(vstate *x, db_err *err)
{
	/* a session the workbench left without a bisect gets the probe and
	 * profile this run chose, so the next command judges the same */
	if (db_session_set_run(x->s, x->r, x->s->profile) < 0)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	int rc = db_session_save_bisect(x->s, NULL, &x->r->sm, err);
	if (rc == 1)
		fprintf(stderr, "dumpbisect: %s: another dumpbisect saved verdicts meanwhile; "
		        "merged with them\n", x->s->path);
	return rc < 0 ? -1 : 0;
}

static void json_layer(FILE *out, int layer)
{
	if (layer == DB_LAYER_FINAL)
		fputs("\"final\"", out);
	else
		fprintf(out, "%d", layer);
}

/* What to do next: the proposed layer with its auto verdict, or the end. */
static void report(FILE *out, int fmt, db_bisect_run *r)
{
	const db_bisect *b = &r->sm;
	bool done = db_bisect_done(b);
	db_probe p = {0};
	int next = done || b->next < 0 ? 0 : b->layers[b->next];
	if (!done && b->next >= 0)
		db_bisect_probe(r, next, &p);
	char l[32];
	if (fmt == DB_FMT_JSON) {
		fprintf(out, "{\"done\": %s, \"next_layer\": ", done ? "true" : "false");
		if (done || b->next < 0)
			fputs("null", out);
		else
			json_layer(out, next);
		fputs(", \"auto_verdict\": ", out);
		db_json_str(out, done || p.auto_verdict == DB_V_NONE ? NULL
		                                                     : db_verdict_name(p.auto_verdict));
		fputs(", \"first_bad_layer\": ", out);
		if (b->phase == DB_BP_FOUND && b->first_bad >= 0)
			json_layer(out, b->layers[b->first_bad]);
		else
			fputs("null", out);
		fputs(", \"state\": ", out);
		db_json_str(out, db_bisect_phase_name(b->phase));
		fputs(", \"message\": ", out);
		db_json_str(out, b->msg);
		fprintf(out, ", \"n_steps\": %zu}\n", b->n_steps);
		return;
	}
	if (done) {
		fprintf(out, "done: %s\n", b->msg);
		return;
	}
	fprintf(out, "next: %s", db_layer_label(next, l, sizeof l));
	if (p.auto_verdict != DB_V_NONE)
		fprintf(out, " (auto: %s, cos %.8f rel %.4g %s)", db_verdict_name(p.auto_verdict),
		        p.m.cos, p.m.rel, db_band_name(p.band));
	else
		fputs(" (auto: none, not dumped on both sides)", out);
	fprintf(out, "; %d probe%s left\n", b->probes_left, b->probes_left == 1 ? "" : "s");
}

/* "7", "L7", "final" */
static bool parse_layer(const char *s, int *layer)
{
	if (!strcmp(s, "final")) {
		*layer = DB_LAYER_FINAL;
		return true;
	}
	if (*s == 'L')
		s++;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v >= DB_LAYER_FINAL)
		return false;
	*layer = (int)v;
	return true;
}

static int finish(const db_cmd *cmd, int fmt, vstate *x, db_err *err)
{
	if (vstate_save(x, err) < 0)
		return db_cmd_error(cmd, "%s", err->msg);
	report(stdout, fmt, x->r);
	if (fflush(stdout) != 0)
		return db_cmd_error(cmd, "writing the result: %s", strerror(errno));
	return 0;
}

/* ------------------------------------------------------------ start */

static int verb_start(int argc, char **argv)
{
	const char *session = NULL, *format = "table", *band = NULL, *cosv = NULL, *relv = NULL,
	           *good = NULL, *layers = NULL;
	db_cmp_args ca = {0};
	db_err err = {{0}};
	db_bisect_opts o;
	db_bisect_opts_default(&o);
	const db_opt opts[] = {
		{"session", 0, "FILE", &session, NULL, "the session file (default: $DUMPBISECT_SESSION,\n"
		                                       "else ./" BCLI_DEFAULT_SESSION ")"},
		{"stage", 0, "S", &o.stage, NULL, "probe stage (default: the profile's)"},
		DB_CMP_OPTS(ca, DB_PROFILE_HELP),
		{"phase", 0, "PH", &o.phase, NULL, "phase to bisect (default: the first that diverges)"},
		{"pass", 0, "PASS", &o.pass, NULL, "pass (default: the first that diverges)"},
		{"band", 0, "B", &band, NULL, "auto verdict bad = worse than band B"},
		{"cos", 0, "X", &cosv, NULL, "auto verdict bad when cos < X"},
		{"rel", 0, "Y", &relv, NULL, "auto verdict bad when rel > Y"},
		{"good", 0, "L", &good, NULL, "layer known good (default: the input)"},
		{"layers", 0, "N", &layers, NULL, "candidates are layers 0..N-1"},
		{"format", 0, "F", &format, NULL, "table (default) or json"},
	};
	const db_cmd cmd = {
		.name = "bisect start",
		.args = "REF [TARGET] [--session FILE] [options]",
		.desc = "Start a layer bisect, one verdict per command; print the layer to judge.",
		.exit = "0 started, 2 usage or input error (or a bisect with steps is already in "
		        "progress in the session: bisect reset first).",
		.opts = opts,
		.n_opts = sizeof opts / sizeof *opts,
		.max_pos = 2,
	};
	const char *pos[2] = {NULL, NULL};
	int npos, rc = db_cmd_parse(&cmd, argc, argv, pos, &npos);
	if (rc >= 0)
		return rc;
	int fmt = db_cmd_format(&cmd, format, DB_FMT_BIT(DB_FMT_TABLE) | DB_FMT_BIT(DB_FMT_JSON));
	if (fmt < 0)
		return 2;
	if (!pos[0])
		return db_cmd_usage_error(&cmd, "REF is missing");
	if (bcli_predicate_opts(&cmd, band, cosv, relv, layers, &o) != 0)
		return 2;
	if (good) {
		int g;
		if (!strcmp(good, "-1"))
			o.good_layer = DB_GOOD_BEFORE;
		else if (parse_layer(good, &g) && g != DB_LAYER_FINAL)
			o.good_layer = g;
		else
			return db_cmd_usage_error(&cmd, "--good takes a layer number, not '%s'", good);
	}
	db_compare_opts co = {0};
	if (db_cmp_args_apply(&cmd, &ca, &co) != 0)
		return 2;
	const char *path = session_path(session);
	vstate x = {0};
	char *ra = bcli_abspath(pos[0]), *ta = pos[1] ? bcli_abspath(pos[1]) : NULL;
	if (db_session_load_locked(path, true, &x.s, &err) < 0)
		goto fail;
	if (x.s->base) {
		/* An existing session keeps its marks and notes; its steps would
		 * be silently dropped, so refuse (bisect reset drops them). */
		/* Another --pass / --phase re-aims: a new bisect there, the one in
		 * progress kept in the session's earlier list (replay judges it). */
		bool reaim = (o.pass && strcmp(o.pass, x.s->pass ? x.s->pass : "")) ||
		             (o.phase && strcmp(o.phase, x.s->phase ? x.s->phase : ""));
		if (x.s->n_steps && !reaim) {
			db_err_set(&err, path, NULL, -1, "a bisect is in progress (%zu steps): "
			           "dumpbisect bisect reset --session %s first (or start one on "
			           "another --pass / --phase)", x.s->n_steps, path);
			goto fail;
		}
		/* a bisect belongs to its pass: one kept there is resumed by
		 * bisect --auto --pass, never begun again over its steps */
		long kept = reaim ? db_session_find_bisect(x.s, o.phase ? o.phase : x.s->phase,
		                                           o.pass ? o.pass : x.s->pass) : -1;
		if (kept >= 0 && x.s->earlier[kept]->n_steps) {
			db_err_set(&err, path, NULL, -1, "the bisect of that pass is kept in the session "
			           "(%zu steps): resume it with dumpbisect bisect --auto --session %s "
			           "--pass %s", x.s->earlier[kept]->n_steps, path,
			           o.pass ? o.pass : x.s->pass ? x.s->pass : "\"\"");
			goto fail;
		}
		if (x.s->n_steps) {
			const char *ph = x.s->phase ? x.s->phase : "", *pa = x.s->pass ? x.s->pass : "";
			if (fmt == DB_FMT_TABLE)
				printf("the bisect on %s%s%s%s%s (%zu steps) is kept in the session\n",
				       *ph ? "phase " : "", ph, *ph && *pa ? ", " : "", *pa ? "pass " : "",
				       pa, x.s->n_steps);
			if (db_session_archive_bisect(x.s, false) < 0) {
				db_err_set(&err, path, NULL, -1, "out of memory");
				goto fail;
			}
		}
		free(x.s->ref);
		free(x.s->target);
		x.s->ref = ra;
		x.s->target = ta;
		ra = ta = NULL;
		free(x.s->layers);
		x.s->layers = NULL;
		x.s->n_layers = 0;
	} else {
		x.s->ref = ra;
		x.s->target = ta;
		ra = ta = NULL;
	}
	if (db_session_check_trees(x.s, &err) < 0 ||
	    db_compare_open(x.s->ref, x.s->target, &co, &x.c, &err) < 0 ||
	    db_bisect_run_open(x.c, &o, &x.r, &err) < 0)
		goto fail;
	x.s->good = o.good_layer;
	if (db_session_set_run(x.s, x.r, co.profile) < 0) {
		db_err_set(&err, path, NULL, -1, "out of memory");
		goto fail;
	}
	if (fmt == DB_FMT_TABLE)
		printf("bisect started in %s: probe %s, %zu candidate layers\n", path, x.r->stage,
		       x.r->sm.n_layers);
	rc = finish(&cmd, fmt, &x, &err);
	goto done;
fail:
	rc = db_cmd_error(&cmd, "%s", err.msg);
done:
	free(ra);
	free(ta);
	vstate_free(&x);
	return rc;
}

/* ------------------------------------------- good, bad, skip, undo */

static int verb_judge(int argc, char **argv)
{
	const char *session = NULL, *format = "table";
	db_cmp_args ca = {0};
	db_err err = {{0}};
	const db_opt opts[] = {
		{"session", 0, "FILE", &session, NULL, "the session file (default: $DUMPBISECT_SESSION,\n"
		                                       "else ./" BCLI_DEFAULT_SESSION ")"},
		DB_CMP_OPTS(ca, DB_PROFILE_SESSION_HELP),
		{"format", 0, "F", &format, NULL, "table (default) or json"},
	};
	char name[32];
	snprintf(name, sizeof name, "bisect %s", argv[0]);
	bool undo = !strcmp(argv[0], "undo");
	const db_cmd cmd = {
		.name = name,
		.args = undo ? "[--session FILE] [options]" : "[LAYER] [--session FILE] [options]",
		.desc = undo ? "Drop the last verdict; print the layer to judge next."
		             : "Record a verdict on LAYER (default: the proposed one); print the next.",
		.exit = "0 recorded, 2 usage or input error.",
		.opts = opts,
		.n_opts = sizeof opts / sizeof *opts,
		.max_pos = undo ? 0 : 1,
	};
	const char *pos[1] = {NULL};
	int npos, rc = db_cmd_parse(&cmd, argc, argv, pos, &npos);
	if (rc >= 0)
		return rc;
	int fmt = db_cmd_format(&cmd, format, DB_FMT_BIT(DB_FMT_TABLE) | DB_FMT_BIT(DB_FMT_JSON));
	if (fmt < 0)
		return 2;
	int layer = -1;
	if (pos[0] && !parse_layer(pos[0], &layer))
		return db_cmd_usage_error(&cmd, "LAYER is a layer number or 'final', not '%s'",
		                          pos[0]);
	vstate x = {0};
	if (vstate_open(&x, session_path(session), true, &cmd, &ca, &err) < 0)
		goto fail;
	db_bisect *b = &x.r->sm;
	if (undo) {
		if (!db_bisect_undo(b)) {
			db_err_set(&err, x.s->path, NULL, -1, "no verdict to undo");
			goto fail;
		}
	} else {
		db_verdict v = DB_V_NONE;
		db_verdict_parse(argv[0], &v);
		if (!pos[0]) {
			if (db_bisect_done(b) || b->next < 0) {
				db_err_set(&err, x.s->path, NULL, -1, "nothing left to judge (%s); "
				           "name a LAYER, or bisect undo", b->msg);
				goto fail;
			}
			layer = b->layers[b->next];
		}
		if (db_bisect_user_step(x.r, layer, v, &err) < 0)
			goto fail;
	}
	rc = finish(&cmd, fmt, &x, &err);
	goto done;
fail:
	rc = db_cmd_error(&cmd, "%s", err.msg);
done:
	vstate_free(&x);
	return rc;
}

/* ------------------------------------------------------- log, reset */

/* Single-quoted for sh: the log lines are commands a shell can rerun. */
static void sh_quote(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	fputc('\'', out);
}

static int verb_log_reset(int argc, char **argv)
{
	const char *session = NULL;
	bool reset = !strcmp(argv[0], "reset");
	const db_opt opts[] = {
		{"session", 0, "FILE", &session, NULL, "the session file (default: $DUMPBISECT_SESSION,\n"
		                                       "else ./" BCLI_DEFAULT_SESSION ")"},
	};
	const db_cmd cmd = {
		.name = reset ? "bisect reset" : "bisect log",
		.args = "[--session FILE]",
		.desc = reset ? "End the bisect: drop its verdicts (trees, marks, notes stay)."
		              : "The verdicts so far, as the shell commands that replay them.",
		.exit = "0 done, 2 usage or input error.",
		.opts = opts,
		.n_opts = 1,
		.max_pos = 0,
	};
	int npos, rc = db_cmd_parse(&cmd, argc, argv, NULL, &npos);
	if (rc >= 0)
		return rc;
	const char *path = session_path(session);
	db_session *s = NULL;
	db_err err = {{0}};
	struct stat st;
	if (stat(path, &st) != 0) {
		db_err_set(&err, path, NULL, -1, "no bisect in progress");
		goto fail;
	}
	if ((reset ? db_session_load_locked(path, false, &s, &err)
	           : db_session_load(path, &s, &err)) < 0)
		goto fail;
	if (reset) {
		size_t n = s->n_steps;
		free(s->steps);
		s->steps = NULL;
		s->n_steps = 0;
		if (db_session_save(s, NULL, &err) < 0)
			goto fail;
		printf("bisect reset: %zu verdict%s dropped; %s keeps the trees, marks and notes\n", n,
		       n == 1 ? "" : "s", path);
	} else {
		char pred[128], l[32];
		printf("# dumpbisect bisect log of %s (probe %s, predicate %s)\n", path,
		       s->probe ? s->probe : "-", db_predicate_str(&s->pred, pred, sizeof pred));
		fputs("dumpbisect bisect start ", stdout);
		sh_quote(stdout, s->ref);
		if (s->target) {
			fputc(' ', stdout);
			sh_quote(stdout, s->target);
		}
		if (s->probe) {
			fputs(" --stage ", stdout);
			sh_quote(stdout, s->probe);
		}
		if (s->profile) {
			fputs(" --profile ", stdout);
			sh_quote(stdout, s->profile);
		}
		/* the log is its pass's (one bisect per pass) */
		if (s->phase && *s->phase) {
			fputs(" --phase ", stdout);
			sh_quote(stdout, s->phase);
		}
		if (s->pass && *s->pass) {
			fputs(" --pass ", stdout);
			sh_quote(stdout, s->pass);
		}
		fputs(" --session ", stdout);
		sh_quote(stdout, path);
		fputc('\n', stdout);
		for (size_t i = 0; i < s->n_steps; i++) {
			const db_bisect_step *t = &s->steps[i];
			printf("# %s: auto %s, cos %.8f rel %.4g %s, by %s\n",
			       db_layer_label(t->layer, l, sizeof l), db_verdict_name(t->auto_verdict),
			       t->cos, t->rel, db_band_name(t->band), t->by_user ? "user" : "auto");
			printf("dumpbisect bisect %s %s --session ", db_verdict_name(t->verdict),
			       t->layer == DB_LAYER_FINAL ? "final" : (snprintf(l, sizeof l, "%d", t->layer), l));
			sh_quote(stdout, path);
			fputc('\n', stdout);
		}
	}
	if (fflush(stdout) != 0) {
		db_err_set(&err, NULL, NULL, -1, "writing: %s", strerror(errno));
		goto fail;
	}
	rc = 0;
	goto done;
fail:
	rc = db_cmd_error(&cmd, "%s", err.msg);
done:
	db_session_free(s);
	return rc;
}

/* -------------------------------------------------------------- run */

/* CMD's exit status judges layer, as in git bisect run: 0 good, 125 skip,
 * 1..127 bad, anything else (128+, a signal) aborts. */
static int judge_by_cmd(const char *cmd, int layer, db_verdict autov, db_verdict *v, db_err *err)
{
	char lb[32];
	if (layer == DB_LAYER_FINAL)
		snprintf(lb, sizeof lb, "final");
	else
		snprintf(lb, sizeof lb, "%d", layer);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return db_err_set(err, NULL, NULL, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* our stdout may be JSON: the command's output goes to stderr */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		setenv("DUMPBISECT_LAYER", lb, 1);
		setenv("DUMPBISECT_AUTO", db_verdict_name(autov), 1);
		execl("/bin/sh", "sh", "-c", cmd, "sh", lb, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return db_err_set(err, NULL, NULL, -1, "waitpid: %s", strerror(errno));
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (code < 0 || code >= 128)
		return db_err_set(err, NULL, NULL, -1, "'%s' for layer %s %s %d; aborting (the "
		                  "verdicts so far are saved)", cmd, lb,
		                  code < 0 ? "was killed by signal" : "exited with status",
		                  code < 0 ? WTERMSIG(st) : code);
	*v = code == 0 ? DB_V_GOOD : code == 125 ? DB_V_SKIP : DB_V_BAD;
	return 0;
}

static void run_more(FILE *out)
{
	fputs("\nCMD runs with $1 and $DUMPBISECT_LAYER the layer (a number or final),\n"
	      "$DUMPBISECT_AUTO its auto verdict (good, bad or none); its stdout goes to\n"
	      "stderr. Exit 0 = good, 125 = skip, 1-127 = bad, 128 or more (or a signal)\n"
	      "aborts, the verdicts so far saved.\n", out);
}

static int verb_run(int argc, char **argv)
{
	const char *session = NULL, *format = "table";
	db_cmp_args ca = {0};
	db_err err = {{0}};
	const db_opt opts[] = {
		{"session", 0, "FILE", &session, NULL, "the session file (default: $DUMPBISECT_SESSION,\n"
		                                       "else ./" BCLI_DEFAULT_SESSION ")"},
		DB_CMP_OPTS(ca, DB_PROFILE_SESSION_HELP),
		{"format", 0, "F", &format, NULL, "table (default) or json"},
	};
	const db_cmd cmd = {
		.name = "bisect run",
		.args = "CMD [--session FILE] [options]",
		.desc = "Judge each proposed layer by the exit status of sh -c CMD (git bisect run).",
		.exit = "0 the bisect ended, 2 usage or input error, or CMD aborted (the verdicts "
		        "so far are saved).",
		.opts = opts,
		.n_opts = sizeof opts / sizeof *opts,
		.max_pos = 1,
		.more = run_more,
	};
	const char *pos[1] = {NULL};
	int npos, rc = db_cmd_parse(&cmd, argc, argv, pos, &npos);
	if (rc >= 0)
		return rc;
	int fmt = db_cmd_format(&cmd, format, DB_FMT_BIT(DB_FMT_TABLE) | DB_FMT_BIT(DB_FMT_JSON));
	if (fmt < 0)
		return 2;
	if (!pos[0])
		return db_cmd_usage_error(&cmd, "CMD is missing");
	vstate x = {0};
	if (vstate_open(&x, session_path(session), false, &cmd, &ca, &err) < 0)
		goto fail;
	while (!db_bisect_done(&x.r->sm) && x.r->sm.next >= 0) {
		int layer = x.r->sm.layers[x.r->sm.next];
		db_probe p;
		db_bisect_probe(x.r, layer, &p);
		db_verdict v = DB_V_NONE;
		char l[32];
		if (judge_by_cmd(pos[0], layer, p.auto_verdict, &v, &err) < 0 ||
		    db_bisect_user_step(x.r, layer, v, &err) < 0 || vstate_save(&x, &err) < 0)
			goto fail;
		if (fmt == DB_FMT_TABLE)
			printf("%s: %s (auto: %s)\n", db_layer_label(layer, l, sizeof l),
			       db_verdict_name(v), db_verdict_name(p.auto_verdict));
	}
	rc = finish(&cmd, fmt, &x, &err);
	goto done;
fail:
	rc = db_cmd_error(&cmd, "%s", err.msg);
done:
	vstate_free(&x);
	return rc;
}

int bcli_verb(int argc, char **argv)
{
	/* argv[0] = "bisect", argv[1] = the verb */
	argc--;
	argv++;
	if (!strcmp(argv[0], "start"))
		return verb_start(argc, argv);
	if (!strcmp(argv[0], "log") || !strcmp(argv[0], "reset"))
		return verb_log_reset(argc, argv);
	if (!strcmp(argv[0], "run"))
		return verb_run(argc, argv);
	return verb_judge(argc, argv);
}
