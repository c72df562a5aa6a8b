/* dumpbisect export SESSION [--out DIR]: report.md, heatmap.svg,
 * metrics.json and metrics.csv of a session, each written atomically. */
#include "db_cmd.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_cli.h"
#include "db_export.h"
#include "db_session.h"

static void usage(FILE *out)
{
	fputs("usage: dumpbisect export SESSION [--out DIR] [--ref DIR] [--target DIR] [--notes DIR]\n"
	      "  writes report.md, heatmap.svg, metrics.json, metrics.csv into DIR\n"
	      "  (default: report/ beside the session file)\n", out);
}

int db_cmd_export(int argc, char **argv)
{
	const char *file = NULL, *out = NULL, *ref = NULL, *tgt = NULL, *notes = NULL, *v;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		v = NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (bcli_opt(argc, argv, &i, "--out", &v)) { out = v;
		} else if (bcli_opt(argc, argv, &i, "--ref", &v)) { ref = v;
		} else if (bcli_opt(argc, argv, &i, "--target", &v)) { tgt = v;
		} else if (bcli_opt(argc, argv, &i, "--notes", &v)) { notes = v;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "dumpbisect export: unknown option %s\n", a);
			usage(stderr);
			return 2;
		} else if (!file) {
			file = a;
			continue;
		} else {
			fprintf(stderr, "dumpbisect export: too many arguments: %s\n", a);
			return 2;
		}
		if (!v) {
			fprintf(stderr, "dumpbisect export: %s needs a value\n", a);
			return 2;
		}
	}
	if (!file) {
		usage(stderr);
		return 2;
	}
	db_err err = {{0}};
	db_session *s = NULL;
	db_compare *c = NULL;
	db_bisect_run *r = NULL;
	db_bisect_result res = {0};
	char *outdir = NULL;
	int rc = 2;
	bool have_res = false;
	if (db_session_load(file, &s, &err) < 0)
		goto fail;
	if (ref) {
		free(s->ref);
		s->ref = bcli_abspath(ref);
	}
	if (tgt) {
		free(s->target);
		s->target = bcli_abspath(tgt);
	}
	if (db_session_check_trees(s, &err) < 0)
		goto fail;
	if (bcli_open_compare(s->ref, s->target, s->profile, &c, &err) < 0)
		goto fail;
	db_compare_run(c);
	if (db_session_run_open(s, c, true, &r, &err) < 0)
		goto fail;
	if (s->n_steps) {
		if (db_bisect_analyze(r, &res, &err) < 0)
			goto fail;
		have_res = true;
	}
	if (out) {
		outdir = strdup(out);
	} else {
		char *copy = strdup(file);
		if (copy) {
			const char *d = dirname(copy);
			size_t n = strlen(d) + 8;
			if ((outdir = malloc(n)))
				snprintf(outdir, n, "%s/report", d);
			free(copy);
		}
	}
	if (!outdir) {
		db_err_set(&err, NULL, NULL, -1, "out of memory");
		goto fail;
	}
	db_export_ctx x = {s, c, &r->sm, have_res ? &res : NULL, notes};
	if (db_export_all(&x, outdir, &err) < 0)
		goto fail;
	printf("%s/report.md\n%s/heatmap.svg\n%s/metrics.json\n%s/metrics.csv\n", outdir, outdir,
	       outdir, outdir);
	rc = 0;
	goto done;
fail:
	fprintf(stderr, "dumpbisect export: %s\n", err.msg);
	rc = 2;
done:
	free(outdir);
	db_bisect_result_free(&res);
	db_bisect_run_free(r);
	db_compare_free(c);
	db_session_free(s);
	return rc;
}
