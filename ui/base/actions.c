/* Tables generated from TUI_ACTIONS; see actions.h. */
#include "actions.h"

#include <ctype.h>
#include <string.h>

/* "MOVE_UP" -> "move-up" at compile time is not possible in C; the names are
 * lowered once on first use instead (names[] below). */
#define ACTION_(id, km, keys, help) [A_##id] = {#id, KM_##km, keys, help},
static const struct tui_action_info raw[A__COUNT] = {
	TUI_ACTIONS(ACTION_)
};
#undef ACTION_

const char *const tui_keymap_names[KM__COUNT] = {
#define KM_(id, name, title) name,
	TUI_KEYMAPS(KM_)
#undef KM_
};

const char *const tui_keymap_titles[KM__COUNT] = {
#define KM_(id, name, title) title,
	TUI_KEYMAPS(KM_)
#undef KM_
};

/* Lower-case dashed names ("move-up"), made once from the ids. */
static char names[A__COUNT][32];
static struct tui_action_info table[A__COUNT];

const struct tui_action_info *tui_action(enum tui_action a)
{
	if (!table[1].name) {
		for (int i = 1; i < A__COUNT; i++) {
			size_t n = 0;
			for (const char *s = raw[i].name; *s && n + 1 < sizeof names[i]; s++)
				names[i][n++] = *s == '_' ? '-' : (char)tolower((unsigned char)*s);
			names[i][n] = '\0';
			table[i] = raw[i];
			table[i].name = names[i];
		}
	}
	return &table[a];
}

enum tui_action tui_action_from_name(const char *name)
{
	for (int a = 1; a < A__COUNT; a++) {
		const char *x = tui_action((enum tui_action)a)->name, *y = name;
		while (*x && *y) {
			char cy = *y == '_' ? '-' : (char)tolower((unsigned char)*y);
			if (*x != cy)
				break;
			x++, y++;
		}
		if (!*x && !*y)
			return (enum tui_action)a;
	}
	return A_NONE;
}

/* roff-escape a key list "<Up> k" into "<Up>, k". */
static void put_keys(FILE *out, const char *keys)
{
	int first = 1;
	for (const char *s = keys; *s;) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (!first)
			fputs(", ", out);
		first = 0;
		fputs("\\fB", out);
		for (; *s && *s != ' '; s++) {
			if (*s == '\\')
				fputs("\\e", out);
			else if (*s == '-')
				fputs("\\-", out);
			else
				fputc(*s, out);
		}
		fputs("\\fR", out);
	}
}

void tui_actions_man(FILE *out)
{
	for (int km = 0; km < KM__COUNT; km++) {
		fprintf(out, ".SS %s\n", tui_keymap_titles[km]);
		for (int a = 1; a < A__COUNT; a++) {
			if (tui_action((enum tui_action)a)->keymap != (enum tui_keymap)km)
				continue;
			fputs(".TP\n", out);
			put_keys(out, tui_action((enum tui_action)a)->keys);
			fputc('\n', out);
			fprintf(out, "%s (action \\fB", tui_action((enum tui_action)a)->help);
			for (const char *s = tui_action((enum tui_action)a)->name; *s; s++)
				fputs(*s == '-' ? "\\-" : (char[]){*s, 0}, out);
			fputs("\\fR).\n", out);
		}
	}
}
