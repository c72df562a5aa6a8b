/* dumpbisect export SESSION [--out DIR]: report.md, heatmap.svg,
 * metrics.json and metrics.csv of a session, each written atomically. */
#include "db_cmd.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_cli.h"
#include "db_esc.h"
#include "db_export.h"
#include "db_notes.h"
#include "db_session.h"

int db_cmd_export(int argc, char **argv)
{
	const char *out = NULL, *ref = NULL, *tgt = NULL, *notes = NULL;
	db_cmp_args ca = {0};
	const db_opt opts[] = {
		{"out", 0, "DIR", &out, NULL, "the report folder (default: report/ beside the session)"},
		{"ref", 0, "DIR", &ref, NULL, "the reference tree instead of the session's"},
		{"target", 0, "DIR", &tgt, NULL, "the target tree instead of the session's"},
		{"notes", 0, "DIR", &notes, NULL, "the notes to list (default: notes/ beside the session)"},
		DB_CMP_OPTS(ca, DB_PROFILE_SESSION_HELP),
		DB_NOISE_OPT(ca),
	};
	const db_cmd cmd = {
		.name = "export",
		.args = "SESSION [options]",
		.desc = "Write report.md, heatmap.svg, metrics.json and metrics.csv of a session.",
		.exit = "0 the report was written, 2 usage error, or the session, its trees or the "
		        "report folder cannot be read or written.",
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
	db_compare_opts co = {0};
	if (db_cmp_args_apply(&cmd, &ca, &co) != 0)
		return 2;
	db_err err = {{0}};
	db_session *s = NULL;
	db_compare *c = NULL;
	db_bisect_run *r = NULL;
	db_bisect_result res = {0};
	char *outdir = NULL;
	rc = 2;
	bool have_res = false;
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
	db_compare_run(c);
	/* every bisect with steps is in the report, the found one first */
	const db_session *which = NULL;
	int picked = db_export_pick_bisect(s, c, &r, &res, &which, &err);
	if (picked < 0 || (!picked && db_session_run_open(s, c, true, &r, &err) < 0))
		goto fail;
	have_res = picked > 0;
	char why[PATH_MAX + 64] = "";
	if (out) {
		outdir = strdup(out);
	} else {
		/* report/ beside the session, unless another session's is there */
		char *copy = strdup(file);
		int drc = copy ? db_export_dir_for(file, dirname(copy), &outdir, why, sizeof why,
		                                   &err) : 0;
		free(copy);
		if (drc < 0)
			goto fail;
	}
	if (!outdir) {
		db_err_set(&err, NULL, NULL, -1, "out of memory");
		goto fail;
	}
	/* notes: beside the session (those a session-less workbench wrote
	 * in the folder it ran in are brought there first) */
	char said[2 * PATH_MAX];
	if (!notes && db_notes_adopt(s, NULL, said, sizeof said) >= 0 && said[0])
		fprintf(stderr, "dumpbisect export: %s\n", said);
	db_export_ctx x = {.s = s, .c = c, .b = &r->sm, .res = have_res ? &res : NULL,
	                   .notes_dir = notes, .bisect_of = which};
	if (db_export_all(&x, outdir, &err) < 0)
		goto fail;
	if (why[0])
		fprintf(stderr, "dumpbisect export: report/ holds the report of session %s: this "
		        "one goes to %s\n", why, db_esc(outdir));
	const char *o = db_esc(outdir);
	printf("%s/report.md\n%s/heatmap.svg\n%s/metrics.json\n%s/metrics.csv\n", o, o, o, o);
	rc = 0;
	goto done;
fail:
	rc = db_cmd_error(&cmd, "%s", err.msg);
done:
	free(outdir);
	db_bisect_result_free(&res);
	db_bisect_run_free(r);
	db_compare_free(c);
	db_session_free(s);
	return rc;
}
