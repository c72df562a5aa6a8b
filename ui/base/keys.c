/* Key names, bindings and the keymap file; see keys.h. */
#include "keys.h"

#include <curses.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Canonical name first: tui_key_name returns the first match. */
static const struct {
	const char *name;
	int key;
} named[] = {
	{"Enter", TUI_KEY_ENTER}, {"Return", TUI_KEY_ENTER}, {"CR", TUI_KEY_ENTER},
	{"Esc", TUI_KEY_ESC}, {"Escape", TUI_KEY_ESC},
	{"Tab", TUI_KEY_TAB},
	{"S-Tab", TUI_KEY_FN(KEY_BTAB)}, {"BackTab", TUI_KEY_FN(KEY_BTAB)},
	{"Space", ' '},
	{"Backspace", TUI_KEY_FN(KEY_BACKSPACE)}, {"BS", TUI_KEY_FN(KEY_BACKSPACE)},
	{"Up", TUI_KEY_FN(KEY_UP)}, {"Down", TUI_KEY_FN(KEY_DOWN)},
	{"Left", TUI_KEY_FN(KEY_LEFT)}, {"Right", TUI_KEY_FN(KEY_RIGHT)},
	{"PgUp", TUI_KEY_FN(KEY_PPAGE)}, {"PageUp", TUI_KEY_FN(KEY_PPAGE)},
	{"PgDown", TUI_KEY_FN(KEY_NPAGE)}, {"PageDown", TUI_KEY_FN(KEY_NPAGE)},
	{"PgDn", TUI_KEY_FN(KEY_NPAGE)},
	{"Home", TUI_KEY_FN(KEY_HOME)}, {"End", TUI_KEY_FN(KEY_END)},
	{"Del", TUI_KEY_FN(KEY_DC)}, {"Delete", TUI_KEY_FN(KEY_DC)},
	{"Ins", TUI_KEY_FN(KEY_IC)}, {"Insert", TUI_KEY_FN(KEY_IC)},
	{"LT", '<'},
};

int tui_key_from_curses(int ch, bool is_fn)
{
	if (is_fn) {
		if (ch == KEY_ENTER)
			return TUI_KEY_ENTER;
		return TUI_KEY_FN(ch);
	}
	if (ch == '\r')
		return TUI_KEY_ENTER;
	if (ch == 127 || ch == 8)
		return TUI_KEY_FN(KEY_BACKSPACE);
	return ch;
}

/* Decode one UTF-8 sequence; -1 when invalid. */
static int utf8_decode(const char **s)
{
	const unsigned char *p = (const unsigned char *)*s;
	int cp, n;
	if (p[0] < 0x80)
		cp = p[0], n = 0;
	else if ((p[0] & 0xe0) == 0xc0)
		cp = p[0] & 0x1f, n = 1;
	else if ((p[0] & 0xf0) == 0xe0)
		cp = p[0] & 0x0f, n = 2;
	else if ((p[0] & 0xf8) == 0xf0)
		cp = p[0] & 0x07, n = 3;
	else
		return -1;
	for (int i = 1; i <= n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* overlong forms, NUL and beyond Unicode are not keys */
	static const int min_cp[4] = {1, 0x80, 0x800, 0x10000};
	if (cp < min_cp[n] || cp > 0x10ffff)
		return -1;
	*s += n + 1;
	return cp;
}

int tui_key_parse(const char **s)
{
	const char *p = *s;
	if (!*p)
		return -1;
	if (*p == '<') {
		const char *end = strchr(p + 1, '>');
		size_t n = end ? (size_t)(end - p - 1) : 0;
		if (end && n > 0 && n < 32 && !memchr(p + 1, '<', n)) {
			char name[32];
			memcpy(name, p + 1, n);
			name[n] = '\0';
			for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
				if (!strcasecmp(name, named[i].name)) {
					*s = end + 1;
					return named[i].key;
				}
			/* <C-a>..<C-z> and the caret-notation rest: <C-\> <C-]> <C-^> <C-_> */
			if ((name[0] == 'C' || name[0] == 'c') && name[1] == '-' && name[2] && !name[3] &&
			    (isalpha((unsigned char)name[2]) || strchr("\\]^_", name[2]))) {
				*s = end + 1;
				return toupper((unsigned char)name[2]) & 0x1f;
			}
			if ((name[0] == 'F' || name[0] == 'f') && isdigit((unsigned char)name[1])) {
				int f = atoi(name + 1);
				if (f >= 1 && f <= 63 && strspn(name + 1, "0123456789") == n - 1) {
					*s = end + 1;
					return TUI_KEY_FN(KEY_F(f));
				}
			}
			return -1;      /* "<Foo>" looks like a name: refuse it */
		}
		*s = p + 1;
		return '<';
	}
	return utf8_decode(s);
}

int tui_keys_parse(const char *s, int *out, int max, const char **bad)
{
	int n = 0;
	while (*s) {
		const char *at = s;
		int k = tui_key_parse(&s);
		if (k < 0) {
			if (bad)
				*bad = at;
			return -1;
		}
		if (n < max)
			out[n++] = k;
	}
	return n;
}

const char *tui_key_name(int key, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (named[i].key == key) {
			snprintf(buf, len, "<%s>", named[i].name);
			return buf;
		}
	if (key >= TUI_KEY_FN(KEY_F(1)) && key <= TUI_KEY_FN(KEY_F(63)))
		snprintf(buf, len, "<F%d>", key - TUI_KEY_FN(KEY_F0));
	else if (key >= 1 && key <= 26)
		snprintf(buf, len, "<C-%c>", 'a' + key - 1);
	else if (key >= 28 && key < 32)
		snprintf(buf, len, "<C-%c>", '@' + key);
	else if (key >= TUI_KEY_FN(0))
		snprintf(buf, len, "<Key%d>", key - TUI_KEY_FN(0));
	else if (key < 0x80)
		snprintf(buf, len, "%c", key);
	else {
		/* encode UTF-8 */
		char u[5] = {0};
		if (key < 0x800)
			u[0] = (char)(0xc0 | (key >> 6)), u[1] = (char)(0x80 | (key & 0x3f));
		else if (key < 0x10000)
			u[0] = (char)(0xe0 | (key >> 12)), u[1] = (char)(0x80 | ((key >> 6) & 0x3f)),
			u[2] = (char)(0x80 | (key & 0x3f));
		else
			u[0] = (char)(0xf0 | (key >> 18)), u[1] = (char)(0x80 | ((key >> 12) & 0x3f)),
			u[2] = (char)(0x80 | ((key >> 6) & 0x3f)), u[3] = (char)(0x80 | (key & 0x3f));
		snprintf(buf, len, "%s", u);
	}
	return buf;
}

/* ---- bindings ---- */

struct binding {
	enum tui_keymap km;
	int key;
	enum tui_action action;
};

static struct binding *binds;
static size_t n_binds, cap_binds;

void tui_bind(int key, enum tui_action a)
{
	enum tui_keymap km = tui_action(a)->keymap;
	for (size_t i = 0; i < n_binds; i++)
		if (binds[i].km == km && binds[i].key == key) {
			binds[i].action = a;
			return;
		}
	if (n_binds == cap_binds) {
		size_t cap = cap_binds ? cap_binds * 2 : 128;
		struct binding *nb = realloc(binds, cap * sizeof *nb);
		if (!nb)
			return;
		binds = nb, cap_binds = cap;
	}
	binds[n_binds++] = (struct binding){km, key, a};
}

void tui_unbind(int key)
{
	size_t j = 0;
	for (size_t i = 0; i < n_binds; i++)
		if (binds[i].key != key)
			binds[j++] = binds[i];
	n_binds = j;
}

void tui_bind_defaults(void)
{
	n_binds = 0;
	for (int a = 1; a < A__COUNT; a++) {
		const char *s = tui_action((enum tui_action)a)->keys;
		while (*s) {
			if (*s == ' ') {
				s++;
				continue;
			}
			int k = tui_key_parse(&s);
			if (k < 0)
				break;          /* cannot happen: the table is checked by a test */
			tui_bind(k, (enum tui_action)a);
		}
	}
}

enum tui_action tui_key_action(enum tui_keymap km, int key)
{
	enum tui_action generic = A_NONE;
	for (size_t i = 0; i < n_binds; i++) {
		if (binds[i].key != key)
			continue;
		if (binds[i].km == km)
			return binds[i].action;
		if (binds[i].km == KM_GENERIC)
			generic = binds[i].action;
	}
	return generic;
}

size_t tui_action_keys(enum tui_action a, int *keys, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < n_binds && n < max; i++)
		if (binds[i].action == a)
			keys[n++] = binds[i].key;
	return n;
}

void tui_bindings_free(void)
{
	free(binds);
	binds = NULL;
	n_binds = cap_binds = 0;
}

/* ---- keymap file ---- */

static char *next_word(char **p)
{
	char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	char *w = s;
	while (*s && *s != ' ' && *s != '\t')
		s++;
	if (*s)
		*s++ = '\0';
	*p = s;
	return w;
}

int tui_keymap_load(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return 1;
	}
	char line[1024];
	int lineno = 0, bad = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		char *p = line, *why = NULL, whybuf[256];
		char *cmd = next_word(&p);
		if (!cmd || cmd[0] == '#')
			continue;
		char *key = next_word(&p);
		char *act = key ? next_word(&p) : NULL;
		char *extra = act ? next_word(&p) : NULL;
		const char *k = key;
		int code = key ? tui_key_parse(&k) : -1;
		if (strcmp(cmd, "bind") && strcmp(cmd, "unbind")) {
			snprintf(whybuf, sizeof whybuf, "unknown command '%s' (bind, unbind)", cmd);
			why = whybuf;
		} else if (!key) {
			why = "missing key";
		} else if (code < 0 || *k) {
			snprintf(whybuf, sizeof whybuf, "bad key '%s'", key);
			why = whybuf;
		} else if (!strcmp(cmd, "unbind")) {
			if (act && act[0] != '#') {
				snprintf(whybuf, sizeof whybuf, "unexpected '%s' after the key", act);
				why = whybuf;
			} else {
				tui_unbind(code);
			}
		} else if (!act) {
			why = "missing action";
		} else if (extra && extra[0] != '#') {
			snprintf(whybuf, sizeof whybuf, "unexpected '%s' after the action", extra);
			why = whybuf;
		} else {
			enum tui_action a = tui_action_from_name(act);
			if (a == A_NONE) {
				snprintf(whybuf, sizeof whybuf, "unknown action '%s'", act);
				why = whybuf;
			} else {
				tui_bind(code, a);
			}
		}
		if (why && bad++ == 0)
			snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
	}
	if (ferror(f) && bad++ == 0)
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
	fclose(f);
	return bad;
}

const char *tui_keymap_path(char *buf, size_t len)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	/* The XDG spec: a relative path is invalid and ignored (as profiles do). */
	if (x && x[0] == '/')
		snprintf(buf, len, "%s/dumpbisect/keys", x);
	else if (h && *h)
		snprintf(buf, len, "%s/.config/dumpbisect/keys", h);
	else
		return NULL;
	return buf;
}
