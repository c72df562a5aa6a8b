/* Entry point: a subcommand runs headless through the core library; no
 * subcommand opens the TUI. */
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__                /* defined by the libc headers above */
#include <malloc.h>
#endif
#include <sys/stat.h>

#include "commands.h"
#include "db_cmd.h"
#include "db_esc.h"
#include "tui.h"

/* argv[1] is meant as a command: no option, no path (no '/'), and nothing
 * of that name exists (a tree in the current directory may be called
 * "ref" or even "compare"... once it exists, it is the tree). */
static bool looks_like_command(const char *a)
{
	struct stat st;
	return a[0] != '-' && !strchr(a, '/') && stat(a, &st) != 0;
}

int main(int argc, char **argv)
{
	/* `replay --tui` and an interactive `bisect` open the workbench
	 * through this hook, so the core never links curses. */
	db_cmd_tui_hook = tui_main;
#ifdef __GLIBC__
	/* Blocks of 1 MiB and more are mapped, and unmapped when freed: glibc's
	 * moving threshold put the per-tree arrays of a 100k-file tree in the
	 * heap, where freed ones were not given back before the next ones
	 * came (peak RSS 267 -> 243 MiB there, issue 12). */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	/* The scan's threads each got an arena (8 x 64 MiB reserved, their
	 * high-water marks kept) while both sides scan; two arenas share the
	 * small blocks (issue 24: peak RSS at 10^6 files). */
	mallopt(M_ARENA_MAX, 2);
#endif
	if (argc < 2) {
		tui_usage(stderr);
		return 2;
	}
	const ui_command *c = ui_command_find(argv[1]);
	if (c)
		return c->run(argc - 1, argv + 1);
	if (looks_like_command(argv[1])) {
		const char *near = ui_command_suggest(argv[1]);
		if (near)
			fprintf(stderr, "dumpbisect: unknown command '%s' (did you mean '%s'?)\n",
			        db_esc(argv[1]), near);
		else
			fprintf(stderr, "dumpbisect: unknown command '%s' (and no file or directory "
			        "of that name)\n", db_esc(argv[1]));
		fputs("Try 'dumpbisect --help' for more information.\n", stderr);
		return 2;
	}
	return tui_main(argc, argv);
}
