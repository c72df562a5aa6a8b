/* Entry point: a subcommand runs headless through the core library; no
 * subcommand opens the TUI. */
#include <stdio.h>
#include <string.h>

#include "db_cmd.h"
#include "db_session.h"
#include "tui.h"

/* `replay --tui` and an interactive `bisect` open the workbench through
 * this hook, so the core never links curses. */
static int open_tui(const char *session, const char *ref, const char *target)
{
	char *argv[8];
	int argc = 0;
	argv[argc++] = "dumpbisect";
	if (session) {
		argv[argc++] = "--session";
		argv[argc++] = (char *)session;
	}
	if (ref)
		argv[argc++] = (char *)ref;
	if (ref && target)
		argv[argc++] = (char *)target;
	argv[argc] = NULL;
	return tui_main(argc, argv);
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"compare", db_cmd_compare, "compare REF TARGET: pair and measure every tensor"},
	{"ls", db_cmd_ls, "ls PATH: what a tree or file holds"},
	{"schema", db_cmd_schema, "schema REF TARGET: names, shapes, dtypes only"},
	{"bisect", db_cmd_bisect, "bisect REF TARGET: binary search over layers"},
	{"replay", db_cmd_replay, "replay SESSION: re-check a session's verdicts"},
	{"export", db_cmd_export, "export SESSION: Markdown, SVG, JSON and CSV report"},
};

static void usage(FILE *out)
{
	fputs("usage: dumpbisect [--profile P] [--filter RE] [--session FILE] [--notes DIR] REF [TARGET]\n"
	      "       dumpbisect COMMAND [ARGS] (COMMAND --help for more)\n\ncommands:\n", out);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
	db_tui_session_hook = open_tui;
	if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
		printf("dumpbisect %s\n", DB_VERSION);
		return 0;
	}
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return tui_main(argc, argv);
}
