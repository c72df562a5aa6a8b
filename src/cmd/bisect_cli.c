/* Shared plumbing of the bisect, replay and export commands. */
#include "bisect_cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_cmd.h"

char *bcli_abspath(const char *path)
{
	char buf[PATH_MAX];
	if (path && realpath(path, buf))
		return strdup(buf);
	return path ? strdup(path) : NULL;
}

int bcli_load_session(const char *file, const char *ref, const char *target, db_session **out,
                      db_err *err)
{
	if (db_session_load(file, out, err) < 0)
		return -1;
	db_session *s = *out;
	if (ref) {
		free(s->ref);
		s->ref = bcli_abspath(ref);
	}
	if (target) {
		free(s->target);
		s->target = bcli_abspath(target);
	}
	return db_session_check_trees(s, err) < 0 ? -1 : 0;
}

int bcli_open_tui(const db_cmd *c, const char *session, bool no_session, const char *ref,
                  const char *target, const db_cmp_args *a)
{
	if (!db_cmd_tui_hook)
		return db_cmd_error(c, "the workbench is not linked in: run "
		                    "dumpbisect --session FILE [REF [TARGET]]");
	char *argv[20];
	int n = 0;
	argv[n++] = "dumpbisect";
	const struct { const char *opt, *val; } with[] = {
		{"--session", session}, {"--ref", ref}, {"--target", target},
		{"--profile", a->profile}, {"--filter", a->filter}, {"--threads", a->threads},
	};
	for (size_t i = 0; i < sizeof with / sizeof *with; i++)
		if (with[i].val) {
			argv[n++] = (char *)with[i].opt;
			argv[n++] = (char *)with[i].val;
		}
	if (no_session)
		argv[n++] = "--no-session";
	if (a->no_cache)
		argv[n++] = "--no-cache";
	if (a->follow_links)
		argv[n++] = "--follow-links";
	argv[n] = NULL;
	return db_cmd_tui_hook(n, argv);
}

int bcli_predicate_opts(const db_cmd *c, const char *band, const char *cosv, const char *relv,
                        const char *layers, db_bisect_opts *o)
{
	if (band && (cosv || relv))
		return db_cmd_usage_error(c, "--band and --cos/--rel exclude each other");
	char pred[128];
	db_err err = {{0}};
	if (band)
		snprintf(pred, sizeof pred, "band:%s", band);
	else if (cosv || relv)
		snprintf(pred, sizeof pred, "%s%s%s%s%s", cosv ? "cos<" : "", cosv ? cosv : "",
		         cosv && relv ? "," : "", relv ? "rel>" : "", relv ? relv : "");
	if ((band || cosv || relv) && db_predicate_parse(pred, &o->pred, &err) < 0)
		return db_cmd_usage_error(c, "%s", err.msg);
	if (layers) {
		char *end;
		long n = strtol(layers, &end, 10);
		if (!*layers || *end || n <= 0 || n > 1000000)
			return db_cmd_usage_error(c, "--layers takes a positive count, not '%s'", layers);
		o->n_layers = (int)n;
	}
	return 0;
}
