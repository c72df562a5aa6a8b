/* dumpbisect bisect REF [TARGET] --auto: the whole layer bisect headless,
 * auto verdicts, optional --run to produce missing dumps, the session
 * saved after every step. */
#include "db_cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bisect_cli.h"
#include "db_bisect.h"
#include "db_esc.h"
#include "db_session.h"

typedef struct save_ctx {
	db_session *s;
	db_bisect_run *r;
	struct timespec saved;  /* the last save */
	bool unsaved;           /* steps since then */
} save_ctx;

static double since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/* After every step; another writer's verdicts saved meanwhile are merged
 * in and the run goes on from there. A layer skipped for want of dumps
 * (the next run finds it undumped again) waits up to a second for the
 * next save: over 100k candidates mostly undumped, a save per skip (the
 * whole file each time) was quadratic. */
static int save_step(const db_bisect *b, void *ctx, db_err *err)
{
	save_ctx *x = ctx;
	if (!x->s)
		return 0;
	const db_bisect_step *last = b->n_steps ? &b->steps[b->n_steps - 1] : NULL;
	bool undumped = last && last->verdict == DB_V_SKIP && last->auto_verdict == DB_V_NONE;
	if (undumped && !db_bisect_done(b) && x->saved.tv_sec && since(&x->saved) < 1.0) {
		x->unsaved = true;
		return 0;
	}
	int rc = db_session_save_bisect(x->s, NULL, &x->r->sm, err);
	clock_gettime(CLOCK_MONOTONIC, &x->saved);
	x->unsaved = false;
	if (rc == 1)
		fprintf(stderr, "dumpbisect bisect: %s: another dumpbisect saved verdicts meanwhile; "
		        "merged with them\n", db_esc(x->s->path));
	return rc < 0 ? -1 : 0;
}

static bool file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* The CI gate's rules (--pass-if, or a profile's pass_if) as the predicate:
 * "pass-if:" and the rules one a line, the text a session keeps. */
static int rules_pred(const char *const *v, size_t n, db_predicate *pred, db_err *err)
{
	char text[8192] = "pass-if:";
	size_t l = strlen(text);
	for (size_t i = 0; i < n; i++) {
		if (strchr(v[i], '\n'))
			return db_err_set(err, NULL, NULL, -1, "a rule is one line: '%s'", v[i]);
		int k = snprintf(text + l, sizeof text - l, "%s%s", i ? "\n" : "", v[i]);
		if (k < 0 || (size_t)k >= sizeof text - l)
			return db_err_set(err, NULL, NULL, -1, "the rules are too long");
		l += (size_t)k;
	}
	return db_predicate_parse(text, pred, err);
}

int db_cmd_bisect(int argc, char **argv)
{
	/* `bisect start|good|...`: one verdict per command (a tree named like
	 * a verb is given as ./start) */
	if (argc > 1 && bcli_is_verb(argv[1]))
		return bcli_verb(argc, argv);
	const char *session = NULL, *format = "table", *band = NULL, *cosv = NULL, *relv = NULL,
	           *good = NULL, *layers = NULL, *ref_opt = NULL, *tgt_opt = NULL;
	bool autov = false, no_session = false;
	db_cmp_args ca = {0};
	db_err err = {{0}};
	db_bisect_opts o;
	db_bisect_opts_default(&o);
	db_optlist pass_if = {.name = "pass-if"};
	db_optlist *const lists[] = {&pass_if};
	const db_opt opts[] = {
		{"auto", 0, NULL, NULL, &autov, "judge every step by the predicate (headless)"},
		{"stage", 0, "S", &o.stage, NULL, "probe stage (default: the first of the profile's\n"
		 "probe candidates the trees have; in a tree of\n"
		 "weights only, every weight of each layer compared\n"
		 "and the lowest layer's weight beyond drift probed;\n"
		 "else each layer's last stage; see HOW THE PROBE IS\n"
		 "CHOSEN)"},
		DB_CMP_OPTS(ca, "profile name or YAML file (default: auto-detect;\n"
		                "the session's when resuming)"),
		DB_NOISE_OPT(ca),
		DB_SLOTS_OPT(ca),
		{"phase", 0, "PH", &o.phase, NULL, "phase to bisect (default: the first that diverges)"},
		{"pass", 0, "PASS", &o.pass, NULL, "pass (default: the first that diverges)"},
		{"band", 0, "B", &band, NULL, "bad = worse than band B (ok, drift, algo, bug)"},
		{"cos", 0, "X", &cosv, NULL, "bad when cos < X"},
		{"rel", 0, "Y", &relv, NULL, "bad when rel > Y (--cos and --rel exclude --band)"},
		{"pass-if", 0, "[REGEX:] EXPR", NULL, NULL, "bad when the CI gate's rules fail the probe\n"
		 "(repeatable, as compare --pass-if; excludes\n"
		 "--band, --cos and --rel)"},
		{"good", 0, "L", &good, NULL, "layer known good (default: the input)"},
		{"layers", 0, "N", &layers, NULL, "candidates are layers 0..N-1 (default: 0..the\n"
		                                              "highest layer dumped)"},
		{"run", 0, "CMD", &o.run_cmd, NULL,
		 "produce missing dumps: sh -c CMD, with {layer} and\n"
		 "$DUMPBISECT_LAYER set; exit 125 skips the layer,\n"
		 "any other non-zero status aborts"},
		{"session", 0, "FILE", &session, NULL,
		 "create or resume a session (saved after every step)"},
		{"no-session", 0, NULL, NULL, &no_session,
		 "keep no session, as the workbench's --no-session\n"
		 "(with --auto, what no --session means too)"},
		{"ref", 0, "DIR", &ref_opt, NULL, "the reference tree (overrides a resumed session's)"},
		{"target", 0, "DIR", &tgt_opt, NULL, "the target tree (overrides a resumed session's)"},
		{"format", 0, "F", &format, NULL, "table (default) or json"},
	};
	const db_cmd cmd = {
		.name = "bisect",
		.args = "REF [TARGET] --auto [options]\n"
		        "       dumpbisect bisect --session FILE --auto [options]\n"
		        "       dumpbisect bisect start|good|bad|skip|undo|log|reset|run ...\n"
		        "       (one verdict per command: dumpbisect bisect VERB --help)",
		.desc = "Binary search over layers for the first bad one, then its sub-stage and ranks.",
		.exit = "0 nothing is bad, 1 a bad layer was found (or the result is inconclusive "
		        "between skipped layers), 2 usage or input error, or a --run command that "
		        "failed.",
		.opts = opts,
		.n_opts = sizeof opts / sizeof *opts,
		.max_pos = 2,
		.lists = lists,
		.n_lists = 1,
	};
	const char *pos[2] = {NULL, NULL};
	int npos, rc = db_cmd_parse(&cmd, argc, argv, pos, &npos);
	if (rc >= 0)
		return rc;
	/* --ref / --target replace one tree; a lone positional REF is a
	 * folder holding both sides. */
	bool one_tree = npos == 1 && !tgt_opt;
	if (ref_opt)
		pos[0] = ref_opt;
	if (tgt_opt)
		pos[1] = tgt_opt;
	if (session && no_session)       /* the workbench's words */
		return db_cmd_usage_error(&cmd, "--session and --no-session: give one");
	int fmt = db_cmd_format(&cmd, format, DB_FMT_BIT(DB_FMT_TABLE) | DB_FMT_BIT(DB_FMT_JSON));
	if (fmt < 0)
		return 2;
	if (bcli_predicate_opts(&cmd, band, cosv, relv, layers, &o) != 0)
		return 2;
	if (pass_if.n && (band || cosv || relv))
		return db_cmd_usage_error(&cmd, "--pass-if excludes --band, --cos and --rel");
	if (pass_if.n && rules_pred(pass_if.v, pass_if.n, &o.pred, &err) < 0)
		return db_cmd_usage_error(&cmd, "--pass-if: %s", err.msg);
	if (good) {
		char *end;
		long g = strtol(good, &end, 10);
		if (!*good || *end || g < -1)
			return db_cmd_usage_error(&cmd, "--good takes a layer number, not '%s'", good);
		o.good_layer = g < 0 ? DB_GOOD_BEFORE : g;
	}
	db_compare_opts co = {0};
	if (db_cmp_args_apply(&cmd, &ca, &co) != 0)
		return 2;
	if (!autov) {
		/* The workbench's bisect takes none of these: refuse them rather
		 * than open it and drop them silently. */
		const char *given = o.run_cmd ? "--run" : layers ? "--layers" : o.stage ? "--stage"
		                  : o.phase ? "--phase" : o.pass ? "--pass" : band ? "--band"
		                  : cosv ? "--cos" : relv ? "--rel" : pass_if.n ? "--pass-if"
		                  : good ? "--good"
		                  : strcmp(format, "table") ? "--format" : NULL;
		if (given)
			return db_cmd_usage_error(&cmd, "%s works with --auto only (the headless "
			                          "bisect); the workbench's bisect (without --auto) "
			                          "takes no bisect options: there, b bisects, "
			                          ":probe STAGE chooses the probe, <C-r> rescans "
			                          "after you dump a layer", given);
		const char *script = getenv("DUMPBISECT_SCRIPT");     /* as the workbench */
		if (!(script && *script) && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
			return db_cmd_usage_error(&cmd, "not a terminal: use --auto for a headless "
			                          "bisect, or the workbench (dumpbisect [--session "
			                          "FILE] REF TARGET, then b)");
		return bcli_open_tui(&cmd, session, no_session, pos[0], pos[1], &ca);
	}

	db_session *s = NULL;
	db_compare *c = NULL;
	db_bisect_run *r = NULL;
	db_bisect_result res = {0};
	bool resumed = false;
	if (session && file_exists(session)) {
		if (db_session_load(session, &s, &err) < 0)
			goto fail;
		resumed = true;
		/* trees given on the command line override the session's */
		char *ref = pos[0] ? bcli_abspath(pos[0]) : NULL;
		char *tgt = pos[1] ? bcli_abspath(pos[1]) : NULL;
		if (ref) {
			free(s->ref);
			s->ref = ref;
		}
		if (tgt || one_tree) {
			free(s->target);
			s->target = tgt;
		}
		if (db_session_check_trees(s, &err) < 0)
			goto fail;
		if (!co.profile) {
			co.profile = s->profile;
			co.profile_from = DB_SESSION_PROFILE_WHY;
		}
	} else {
		/* a --session that does not exist yet is only a resume when no
		 * trees are given: say it is the session that is missing */
		if (!pos[0] && session)
			return db_cmd_error(&cmd, "%s: no such session file (give REF [TARGET] to start "
			                    "a new one there)", session);
		if (!pos[0])
			return db_cmd_usage_error(&cmd, "REF is missing (or --session FILE to resume)");
		if (session) {
			char *ra = bcli_abspath(pos[0]), *ta = pos[1] ? bcli_abspath(pos[1]) : NULL;
			s = db_session_new(ra, ta);
			free(ra);
			free(ta);
			if (!s) {
				db_err_set(&err, session, NULL, -1, "out of memory");
				goto fail;
			}
			if (!(s->path = strdup(session))) {
				db_err_set(&err, session, NULL, -1, "out of memory");
				goto fail;
			}
		}
	}
	const char *ref = s ? s->ref : pos[0], *tgt = s ? s->target : pos[1];
	if (co.slots && !tgt)   /* one tree: slot 0 against slot k */
		tgt = ref;
	if (s && ca.noise) {    /* kept in the session, as the trees */
		free(s->noise);
		if (!(s->noise = bcli_abspath(ca.noise))) {
			db_err_set(&err, NULL, NULL, -1, "out of memory");
			goto fail;
		}
	}
	if (s && s->noise)
		co.noise = s->noise;
	if (s && ca.slots) {
		free(s->slots);
		if (!(s->slots = strdup(ca.slots))) {
			db_err_set(&err, NULL, NULL, -1, "out of memory");
			goto fail;
		}
	}
	if (s && ca.align) {    /* --align: kept in the session, as --slots */
		free(s->align);
		if (!(s->align = strdup(ca.align))) {
			db_err_set(&err, NULL, NULL, -1, "out of memory");
			goto fail;
		}
	}
	if (s && s->align && !ca.align && db_align_mode_parse(s->align) >= 0)
		co.align = db_align_mode_parse(s->align);
	if (s && s->slots && !co.slots) {
		co.slots = atoi(s->slots);
		if (!tgt)
			tgt = ref;
	}
	if (db_compare_open(ref, tgt, &co, &c, &err) < 0)
		goto fail;
	/* no predicate given: the profile's pass_if rules, when it has some */
	if (!resumed && !band && !cosv && !relv && !pass_if.n && c->profile->n_pass_if &&
	    rules_pred((const char *const *)c->profile->pass_if, c->profile->n_pass_if, &o.pred,
	               &err) < 0) {
		char m[sizeof err.msg];
		snprintf(m, sizeof m, "%s", err.msg);
		db_err_set(&err, NULL, NULL, -1, "%s: pass_if: %.900s", c->profile->origin, m);
		goto fail;
	}
	if (resumed) {
		/* command-line choices override what the session recorded */
		/* another --phase / --pass goes to that pass's bisect (one per
		 * pass): the one there resumes, the one here is kept */
		if ((o.phase || o.pass) &&
		    db_session_switch_bisect(s, o.phase ? o.phase : s->phase,
		                             o.pass ? o.pass : s->pass, o.stage != NULL) < 0) {
			db_err_set(&err, NULL, NULL, -1, "out of memory");
			goto fail;
		}
		if (o.stage) { free(s->probe); s->probe = strdup(o.stage); }
		if (o.phase) { free(s->phase); s->phase = strdup(o.phase); }
		if (o.pass) { free(s->pass); s->pass = strdup(o.pass); }
		if (band || cosv || relv || pass_if.n)
			s->pred = o.pred;
		if (db_session_run_open(s, c, true, &r, &err) < 0)
			goto fail;
		if (o.run_cmd && !(r->run_cmd = strdup(o.run_cmd))) {
			db_err_set(&err, NULL, NULL, -1, "out of memory");
			goto fail;
		}
		r->o.run_cmd = r->run_cmd;
	} else if (db_bisect_run_open(c, &o, &r, &err) < 0) {
		goto fail;
	}
	save_ctx sc = {s, r, {0, 0}, false};
	if (s && (db_session_set_run(s, r, co.profile) < 0 || save_step(&r->sm, &sc, &err) < 0))
		goto fail;
	if (db_bisect_run_auto(r, save_step, &sc, &err) < 0) {
		db_err e2;      /* the steps so far are kept: --run aborted */
		if (sc.unsaved)
			db_session_save_bisect(s, NULL, &r->sm, &e2);
		goto fail;
	}
	/* layers the run could not judge: how to dump them */
	for (size_t i = 0; i < r->sm.n_steps; i++) {
		const db_bisect_step *st = &r->sm.steps[i];
		char l[32];
		if (st->auto_verdict == DB_V_SKIP && r->run_cmd)
			fprintf(stderr, "dumpbisect bisect: %s skipped: --run exited 125 (a deliberate skip)\n",
			        db_layer_label(st->layer, l, sizeof l));
		if (st->auto_verdict != DB_V_NONE)
			continue;
		char *hint = db_bisect_dump_hint(r, st->layer);
		fprintf(stderr, "dumpbisect bisect: %s is not dumped on both sides (skipped)%s%s\n",
		        db_layer_label(st->layer, l, sizeof l), hint ? "; dump it with: " : "",
		        db_esc(hint));
		free(hint);
	}
	if (db_bisect_analyze(r, &res, &err) < 0)
		goto fail;
	if (fmt == DB_FMT_JSON)
		db_bisect_result_json(stdout, &r->sm, &res);
	else
		db_bisect_result_text(stdout, &r->sm, &res);
	if (fflush(stdout) != 0) {
		db_err_set(&err, NULL, NULL, -1, "writing the result: %s", strerror(errno));
		goto fail;
	}
	rc = res.kind == DB_KIND_NONE ? 0 : 1;
	goto done;
fail:
	rc = db_cmd_error(&cmd, "%s", err.msg);
done:
	db_bisect_result_free(&res);
	db_bisect_run_free(r);
	db_compare_free(c);
	db_session_free(s);
	return rc;
}
