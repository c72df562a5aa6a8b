/* dumpbisect replay SESSION: re-judge every logged step against the dumps
 * as they are now (or other trees) and say which verdicts still hold, and
 * whether the first bad layer moved. A step holds when the data gives the
 * same verdict as when it was logged (for a user override: the data's
 * verdict then and now agree, so the user's judgement still rests on the
 * same evidence). The judging is db_replay.h's, shared with the workbench. */
#include "db_cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_cli.h"
#include "db_bisect.h"
#include "db_esc.h"
#include "db_json.h"
#include "db_replay.h"
#include "db_session.h"

static void json_layer(FILE *f, int layer)
{
	if (layer == DB_LAYER_FINAL)
		fputs("\"final\"", f);
	else
		fprintf(f, "%d", layer);
}

static void json_first_bad(FILE *f, const db_bisect *b)
{
	if (b->phase == DB_BP_FOUND)
		json_layer(f, b->layers[b->first_bad]);
	else
		fputs("null", f);
}

/* The bisects of the session's other passes (db_session.h 'earlier', one
 * per phase and pass): each judged as the current one; *changed counts
 * theirs. */
static int replay_earlier(const db_session *s, db_compare *c, bool json, size_t *changed,
                          db_err *err)
{
	if (json)
		fputs(", \"earlier\": [", stdout);
	else
		printf("\nthe bisects of the other passes:\n");
	for (size_t i = 0; i < s->n_earlier; i++) {
		const db_session *e = s->earlier[i];
		db_replay rp;
		if (db_replay_session(e, c, &rp, err) < 0)
			return -1;
		size_t n = e->n_steps, ch = rp.n_changed + (rp.moved ? 1 : 0);
		*changed += ch;
		if (json) {
			fputs(i ? ", {\"phase\": " : "{\"phase\": ", stdout);
			db_json_str(stdout, e->phase ? e->phase : "");
			fputs(", \"pass\": ", stdout);
			db_json_str(stdout, e->pass ? e->pass : "");
			printf(", \"steps\": %zu, \"holding\": %zu, \"all_hold\": %s, \"first_bad_then\": ",
			       n, n - rp.n_changed, rp.n_changed ? "false" : "true");
			json_first_bad(stdout, &rp.then);
			fputs(", \"first_bad_now\": ", stdout);
			json_first_bad(stdout, &rp.fresh->sm);
			printf(", \"first_bad_moved\": %s}", rp.moved ? "true" : "false");
		} else {
			char b1[64], b2[64];
			printf("  %zu. phase %s pass %s: %zu of %zu verdicts hold; first bad layer: then %s, "
			       "now %s%s\n", i + 1, e->phase && *e->phase ? e->phase : "-",
			       e->pass && *e->pass ? e->pass : "-", n - rp.n_changed, n,
			       db_replay_first_bad(&rp.then, b1, sizeof b1),
			       db_replay_first_bad(&rp.fresh->sm, b2, sizeof b2),
			       rp.moved ? " (moved)" : "");
		}
		db_replay_free(&rp);
	}
	if (json)
		fputs("]", stdout);
	return 0;
}

int db_cmd_replay(int argc, char **argv)
{
	const char *ref = NULL, *tgt = NULL, *format = "table";
	bool tui = false;
	db_cmp_args ca = {0};
	const db_opt opts[] = {
		{"ref", 0, "DIR", &ref, NULL, "the reference tree instead of the session's"},
		{"target", 0, "DIR", &tgt, NULL, "the target tree instead of the session's (fixed dumps)"},
		DB_CMP_OPTS(ca, DB_PROFILE_SESSION_HELP),
		DB_NOISE_OPT(ca),
		{"format", 0, "F", &format, NULL, "table (default) or json"},
		{"tui", 0, NULL, NULL, &tui, "open the session in the workbench instead"},
	};
	const db_cmd cmd = {
		.name = "replay",
		.args = "SESSION [options]",
		.desc = "Re-judge a session's bisect steps against the trees as they are now.",
		.exit = "0 every verdict holds, 1 some verdict changed or the first bad layer moved, "
		        "2 usage error, or the session or its trees cannot be read.",
		.opts = opts,
		.n_opts = sizeof opts / sizeof *opts,
		.max_pos = 1,
	};
	const char *pos[1];
	int npos, rc = db_cmd_parse(&cmd, argc, argv, pos, &npos);
	if (rc >= 0)
		return rc;
	if (npos < 1)
		return db_cmd_usage_error(&cmd, "SESSION is missing");
	const char *file = pos[0];
	int fmt = db_cmd_format(&cmd, format, DB_FMT_BIT(DB_FMT_TABLE) | DB_FMT_BIT(DB_FMT_JSON));
	if (fmt < 0)
		return 2;
	db_compare_opts co = {0};
	if (db_cmp_args_apply(&cmd, &ca, &co) != 0)
		return 2;
	if (tui)
		return bcli_open_tui(&cmd, file, false, ref, tgt, &ca);
	db_err err = {{0}};
	db_session *s = NULL;
	db_compare *c = NULL;
	db_replay rp = {0};
	rc = 2;
	if (bcli_load_session(file, ref, tgt, &s, &err) < 0)
		goto fail;
	if (!co.profile) {
		co.profile = s->profile;
		co.profile_from = DB_SESSION_PROFILE_WHY;
	}
	if (!co.noise)
		co.noise = s->noise;    /* the session's noise tree, unless --noise */
	if (!co.slots && s->slots)
		co.slots = atoi(s->slots);      /* kept as the trees are */
	if (!ca.align && s->align && db_align_mode_parse(s->align) >= 0)
		co.align = db_align_mode_parse(s->align);
	if (db_compare_open(s->ref, s->target ? s->target : co.slots ? s->ref : NULL, &co, &c,
	                    &err) < 0)
		goto fail;
	if (db_replay_session(s, c, &rp, &err) < 0)
		goto fail;
	const db_replay_row *rows = rp.rows;
	const db_bisect *then = &rp.then, *now = &rp.fresh->sm;
	size_t changed = rp.n_changed;
	bool moved = rp.moved;
	char l[32], b1[64], b2[64];
	if (fmt == DB_FMT_JSON) {
		fputs("{\"session\": ", stdout);
		db_json_str(stdout, file);
		fputs(", \"steps\": [", stdout);
		for (size_t i = 0; i < s->n_steps; i++) {
			const db_replay_row *w = &rows[i];
			fputs(i ? ",\n  {\"layer\": " : "\n  {\"layer\": ", stdout);
			json_layer(stdout, w->then.layer);
			printf(", \"verdict\": \"%s\", \"by\": \"%s\", \"then\": {\"auto\": \"%s\", \"cos\": ",
			       db_verdict_name(w->then.verdict), w->then.by_user ? "user" : "auto",
			       db_verdict_name(w->then.auto_verdict));
			db_json_num(stdout, w->then.cos);
			fputs(", \"rel\": ", stdout);
			db_json_num(stdout, w->then.rel);
			printf("}, \"now\": {\"auto\": \"%s\", \"cos\": ", db_verdict_name(w->now.auto_verdict));
			db_json_num(stdout, w->now.dumped ? w->now.m.cos : NAN);
			fputs(", \"rel\": ", stdout);
			db_json_num(stdout, w->now.dumped ? w->now.m.rel : NAN);
			printf("}, \"holds\": %s}", w->holds ? "true" : "false");
		}
		fputs(s->n_steps ? "\n], " : "], ", stdout);
		printf("\"all_hold\": %s, \"first_bad_then\": ", changed ? "false" : "true");
		json_first_bad(stdout, then);
		fputs(", \"first_bad_now\": ", stdout);
		json_first_bad(stdout, now);
		printf(", \"first_bad_moved\": %s", moved ? "true" : "false");
		if (s->n_earlier && replay_earlier(s, c, true, &changed, &err) < 0)
			goto fail;
		fputs("}\n", stdout);
	} else {
		printf("replay of %s (%zu steps", db_esc(file), s->n_steps);
		if (s->pass && *s->pass)        /* the bisect of which pass (one per pass) */
			printf(" on %s%s%spass %s", s->phase && *s->phase ? "phase " : "",
			       s->phase && *s->phase ? s->phase : "", s->phase && *s->phase ? ", " : "",
			       s->pass);
		printf(") against\n  ref    %s\n", db_esc(s->ref));
		printf("  target %s\n\n", s->target ? db_esc(s->target) : "(same tree)");
		for (size_t i = 0; i < s->n_steps; i++) {
			const db_replay_row *w = &rows[i];
			printf("  %2zu. %-6s %-4s (%s)  then %-4s cos %-12.8f  now %-4s cos %-12.8f  %s\n",
			       i + 1, db_layer_label(w->then.layer, l, sizeof l),
			       db_verdict_name(w->then.verdict), w->then.by_user ? "user" : "auto",
			       db_verdict_name(w->then.auto_verdict), w->then.cos,
			       db_verdict_name(w->now.auto_verdict), w->now.dumped ? w->now.m.cos : NAN,
			       w->holds ? "holds" : "CHANGED");
		}
		printf("\n%zu of %zu verdicts hold\n", s->n_steps - changed, s->n_steps);
		printf("first bad layer: then %s, now %s%s\n", db_replay_first_bad(then, b1, sizeof b1),
		       db_replay_first_bad(now, b2, sizeof b2), moved ? " (moved)" : "");
		if (s->n_earlier && replay_earlier(s, c, false, &changed, &err) < 0)
			goto fail;
	}
	if (fflush(stdout) != 0) {
		db_err_set(&err, NULL, NULL, -1, "writing the result: %s", strerror(errno));
		goto fail;
	}
	rc = changed || moved ? 1 : 0;
	goto done;
fail:
	rc = db_cmd_error(&cmd, "%s", err.msg);
done:
	db_replay_free(&rp);
	db_compare_free(c);
	db_session_free(s);
	return rc;
}
