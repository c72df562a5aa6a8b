/* dumpbisect bisect REF [TARGET] --auto: the whole layer bisect headless,
 * auto verdicts, optional --run to produce missing dumps, the session
 * saved after every step. */
#include "db_cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bisect_cli.h"
#include "db_bisect.h"
#include "db_session.h"

static void usage(FILE *out)
{
	fputs("usage: dumpbisect bisect REF [TARGET] --auto [options]\n"
	      "  --auto             judge every step by the predicate (headless)\n"
	      "  --stage S          probe stage (default: the profile's, e.g. hidden_out)\n"
	      "  --profile P        profile name or file (default: auto-detect)\n"
	      "  --phase PH         phase to bisect (default: first that diverges)\n"
	      "  --pass PASS        pass (default: the profile's selection)\n"
	      "  --band B           bad = worse than band B (ok, drift, algo, bug)\n"
	      "  --cos X            bad when cos < X     --rel Y  bad when rel > Y\n"
	      "  --good L           layer known good (default: the input)\n"
	      "  --layers N         candidates are layers 0..N-1 (default: as dumped)\n"
	      "  --run CMD          produce missing dumps: sh -c CMD with {layer} and\n"
	      "                     $DUMPBISECT_LAYER; exit 125 = skip, other non-zero aborts\n"
	      "  --session FILE     create or resume a session (saved after every step)\n"
	      "  --ref DIR, --target DIR  the trees (override a resumed session's)\n"
	      "  --format text|json\n"
	      "exit: 0 nothing bad, 1 a bad layer or drift past the band, 2 error\n", out);
}

typedef struct save_ctx {
	db_session *s;
	const db_bisect_run *r;
} save_ctx;

static int save_step(const db_bisect *b, void *ctx, db_err *err)
{
	save_ctx *x = ctx;
	if (!x->s)
		return 0;
	if (db_session_sync_bisect(x->s, b, err) < 0)
		return -1;
	return db_session_save(x->s, NULL, err);
}

static bool file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

int db_cmd_bisect(int argc, char **argv)
{
	const char *pos[2] = {NULL, NULL}, *profile = NULL, *session = NULL,
	           *format = "text", *band = NULL, *cosv = NULL, *relv = NULL,
	           *good = NULL, *layers = NULL, *v;
	bool autov = false;
	int npos = 0, rc = 2;
	db_err err = {{0}};
	db_bisect_opts o;
	db_bisect_opts_default(&o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		v = NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--auto")) {
			autov = true;
			continue;
		} else if (bcli_opt(argc, argv, &i, "--stage", &v)) { o.stage = v;
		} else if (bcli_opt(argc, argv, &i, "--profile", &v)) { profile = v;
		} else if (bcli_opt(argc, argv, &i, "--phase", &v)) { o.phase = v;
		} else if (bcli_opt(argc, argv, &i, "--pass", &v)) { o.pass = v;
		} else if (bcli_opt(argc, argv, &i, "--band", &v)) { band = v;
		} else if (bcli_opt(argc, argv, &i, "--cos", &v)) { cosv = v;
		} else if (bcli_opt(argc, argv, &i, "--rel", &v)) { relv = v;
		} else if (bcli_opt(argc, argv, &i, "--good", &v)) { good = v;
		} else if (bcli_opt(argc, argv, &i, "--layers", &v)) { layers = v;
		} else if (bcli_opt(argc, argv, &i, "--run", &v)) { o.run_cmd = v;
		} else if (bcli_opt(argc, argv, &i, "--session", &v)) { session = v;
		} else if (bcli_opt(argc, argv, &i, "--ref", &v)) { pos[0] = v;
		} else if (bcli_opt(argc, argv, &i, "--target", &v)) { pos[1] = v;
		} else if (bcli_opt(argc, argv, &i, "--format", &v)) { format = v;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "dumpbisect bisect: unknown option %s\n", a);
			usage(stderr);
			return 2;
		} else if (npos < 2) {
			pos[npos++] = a;
			continue;
		} else {
			fprintf(stderr, "dumpbisect bisect: too many arguments: %s\n", a);
			return 2;
		}
		if (!v) {
			fprintf(stderr, "dumpbisect bisect: %s needs a value\n", a);
			return 2;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json")) {
		fprintf(stderr, "dumpbisect bisect: --format is text or json\n");
		return 2;
	}
	if (band && (cosv || relv)) {
		fprintf(stderr, "dumpbisect bisect: --band and --cos/--rel exclude each other\n");
		return 2;
	}
	char pred[128];
	if (band)
		snprintf(pred, sizeof pred, "band:%s", band);
	else if (cosv || relv)
		snprintf(pred, sizeof pred, "%s%s%s%s%s", cosv ? "cos<" : "", cosv ? cosv : "",
		         cosv && relv ? "," : "", relv ? "rel>" : "", relv ? relv : "");
	if ((band || cosv || relv) && db_predicate_parse(pred, &o.pred, &err) < 0) {
		fprintf(stderr, "dumpbisect bisect: %s\n", err.msg);
		return 2;
	}
	if (good) {
		char *end;
		long g = strtol(good, &end, 10);
		if (*end || g < -1) {
			fprintf(stderr, "dumpbisect bisect: --good takes a layer number\n");
			return 2;
		}
		o.good_layer = g < 0 ? DB_GOOD_BEFORE : g;
	}
	if (layers) {
		char *end;
		long n = strtol(layers, &end, 10);
		if (*end || n <= 0 || n > 1000000) {
			fprintf(stderr, "dumpbisect bisect: --layers takes a positive count\n");
			return 2;
		}
		o.n_layers = (int)n;
	}
	if (!autov) {
		if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
			fprintf(stderr, "dumpbisect bisect: not a terminal: use --auto for a headless "
			        "bisect, or the TUI (dumpbisect [--session FILE] REF TARGET, then b)\n");
			return 2;
		}
		if (db_tui_session_hook)
			return db_tui_session_hook(session, pos[0], pos[1]);
		fprintf(stderr, "dumpbisect bisect: interactive bisect runs in the TUI: "
		        "dumpbisect [--session FILE] REF TARGET; or use --auto\n");
		return 2;
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
		if (tgt || (ref && !pos[1])) {
			free(s->target);
			s->target = tgt;
		}
		if (db_session_check_trees(s, &err) < 0)
			goto fail;
		if (!profile)
			profile = s->profile;
	} else {
		if (!pos[0]) {
			fprintf(stderr, "dumpbisect bisect: need REF [TARGET]\n");
			usage(stderr);
			return 2;
		}
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
	if (bcli_open_compare(ref, tgt, profile, &c, &err) < 0)
		goto fail;
	if (resumed) {
		/* command-line choices override what the session recorded */
		if (o.stage) { free(s->probe); s->probe = strdup(o.stage); }
		if (o.phase) { free(s->phase); s->phase = strdup(o.phase); }
		if (o.pass) { free(s->pass); s->pass = strdup(o.pass); }
		if (band || cosv || relv)
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
	if (s && (db_session_set_run(s, r, profile) < 0 ||
	          db_session_sync_bisect(s, &r->sm, &err) < 0 ||
	          db_session_save(s, NULL, &err) < 0))
		goto fail;
	save_ctx sc = {s, r};
	if (db_bisect_run_auto(r, save_step, &sc, &err) < 0)
		goto fail;
	/* layers the run could not judge: how to dump them */
	for (size_t i = 0; i < r->sm.n_steps; i++) {
		const db_bisect_step *st = &r->sm.steps[i];
		if (st->auto_verdict != DB_V_NONE)
			continue;
		char *hint = db_bisect_dump_hint(r, st->layer);
		char l[32];
		fprintf(stderr, "dumpbisect bisect: %s is not dumped on both sides (skipped)%s%s\n",
		        db_layer_label(st->layer, l, sizeof l), hint ? "; dump it with: " : "",
		        hint ? hint : "");
		free(hint);
	}
	if (db_bisect_analyze(r, &res, &err) < 0)
		goto fail;
	if (!strcmp(format, "json"))
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
	fprintf(stderr, "dumpbisect bisect: %s\n", err.msg);
	rc = 2;
done:
	db_bisect_result_free(&res);
	db_bisect_run_free(r);
	db_compare_free(c);
	db_session_free(s);
	return rc;
}
