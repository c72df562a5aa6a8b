/* The binary's commands: dispatch table, usage list, "did you mean". */
#include "commands.h"

#include <string.h>

#include "db_cmd.h"

static const ui_command commands[] = {
	{"compare", db_cmd_compare, "REF [TARGET]", "pair and measure every tensor"},
	{"ls", db_cmd_ls, "PATH", "what a tree or a file holds (or: the profiles)"},
	{"schema", db_cmd_schema, "REF [TARGET]", "names, shapes, dtypes only"},
	{"bisect", db_cmd_bisect, "REF [TARGET]", "binary search over layers"},
	{"replay", db_cmd_replay, "SESSION", "re-check a session's verdicts"},
	{"export", db_cmd_export, "SESSION", "Markdown, SVG, JSON and CSV report"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

const ui_command *ui_command_find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* Optimal string alignment distance: insertions, deletions, substitutions
 * and swaps of two neighbours ("comapre") each count one. Short words only. */
static int edits(const char *a, const char *b)
{
	enum { MAX = 32 };
	size_t n = strlen(a), m = strlen(b);
	if (n >= MAX || m >= MAX)
		return MAX;
	int d[MAX][MAX];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[n][m];
}

const char *ui_command_suggest(const char *word)
{
	const char *best = NULL;
	int best_d = 3;         /* at most two edits */
	size_t wl = strlen(word);
	for (size_t i = 0; i < N_COMMANDS; i++) {
		const char *c = commands[i].name;
		/* "comp", "exp": a prefix of one command only */
		int d = wl >= 2 && !strncmp(c, word, wl) ? 1 : edits(word, c);
		/* two edits of a two-letter word ("ls") could be anything */
		if (d >= (int)strlen(c))
			continue;
		if (d < best_d) {
			best_d = d;
			best = c;
		}
	}
	return best;
}

void ui_commands_usage(FILE *out)
{
	fputs("commands (dumpbisect COMMAND --help for each):\n", out);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-8s %-13s %s\n", commands[i].name, commands[i].args,
		        commands[i].summary);
}
