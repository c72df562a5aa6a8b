/* Scripted keys, watchdog, :save-display; see script.h. */
#include "script.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <wchar.h>

#include "keys.h"

static int *keys;
static size_t n_keys, pos;
/* @wait-file: before key at, PATH must exist */
static struct wait {
	size_t at;
	char *path;
	bool seen;
} *waits;
static size_t n_waits;
static bool active;
static unsigned watchdog = 30;

static void on_alarm(int sig)
{
	static const char msg[] = "dumpbisect: script watchdog expired (DUMPBISECT_WATCHDOG)\n";
	(void)sig;
	ssize_t r = write(2, msg, sizeof msg - 1);
	(void)r;
	_exit(3);
}

static int push(int k)
{
	static size_t cap;
	if (n_keys == cap || !keys) { /* cap survives script_free */
		size_t nc = keys ? cap * 2 : 256;
		int *nk = realloc(keys, nc * sizeof *nk);
		if (!nk)
			return -1;
		keys = nk, cap = nc;
	}
	keys[n_keys++] = k;
	return 0;
}

int script_open(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (!strncmp(line, "@wait-file ", 11)) {
			struct wait *nw = realloc(waits, (n_waits + 1) * sizeof *nw);
			if (!nw || !(nw[n_waits].path = strdup(line + 11))) {
				waits = nw ? nw : waits;
				snprintf(err, errlen, "out of memory");
				free(line);
				fclose(f);
				return -1;
			}
			waits = nw;
			waits[n_waits].at = n_keys;
			waits[n_waits++].seen = false;
			continue;
		}
		const char *s = line, *bad = NULL;
		while (*s) {
			const char *at = s;
			int k = tui_key_parse(&s);
			if (k < 0) {
				bad = at;
				break;
			}
			push(k);
		}
		if (bad) {
			snprintf(err, errlen, "%s:%d: bad key at '%.20s'", path, lineno, bad);
			free(line);
			fclose(f);
			return -1;
		}
		size_t len = strlen(line);
		bool ends_enter = len >= 7 && !strcasecmp(line + len - 7, "<Enter>");
		if ((line[0] == ':' || line[0] == '/') && !ends_enter)
			push(TUI_KEY_ENTER);
	}
	free(line);
	fclose(f);
	const char *wd = getenv("DUMPBISECT_WATCHDOG");
	if (wd && *wd)
		watchdog = (unsigned)strtoul(wd, NULL, 10);
	signal(SIGALRM, on_alarm);
	alarm(watchdog);
	active = true;
	return 0;
}

bool script_active(void)
{
	return active;
}

int script_ready(void)
{
	for (size_t i = 0; i < n_waits; i++) {
		struct wait *w = &waits[i];
		if (w->at != pos || w->seen)
			continue;
		if (access(w->path, F_OK) != 0)
			return 0;
		w->seen = true;
		return 2;
	}
	return 1;
}

int script_peek(void)
{
	return pos < n_keys ? keys[pos] : -1;
}

int script_next(void)
{
	if (pos >= n_keys)
		return -1;
	alarm(watchdog);
	return keys[pos++];
}

void script_free(void)
{
	alarm(0);
	free(keys);
	keys = NULL;
	n_keys = pos = 0;
	for (size_t i = 0; i < n_waits; i++)
		free(waits[i].path);
	free(waits);
	waits = NULL;
	n_waits = 0;
	active = false;
}

int script_save_display(WINDOW *w, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int H = getmaxy(w), W = getmaxx(w);
	cchar_t *cells = calloc((size_t)W + 1, sizeof *cells);
	char *out = malloc(((size_t)W + 1) * (MB_CUR_MAX * (CCHARW_MAX + 1)) + 1);
	if (!cells || !out) {
		free(cells);
		free(out);
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int y = 0; y < H; y++) {
		int n = mvwin_wchnstr(w, y, 0, cells, W);
		size_t o = 0;
		mbstate_t st;
		memset(&st, 0, sizeof st);
		/* win_wchnstr leaves out the continuation cells of wide characters. */
		for (int x = 0; n != ERR && x < W; x++) {
			wchar_t wch[CCHARW_MAX + 1];
			attr_t a;
			short pair;
			if (getcchar(&cells[x], wch, &a, &pair, NULL) == ERR)
				break;
			if (!wch[0])
				break;
			for (int i = 0; wch[i]; i++) {
				size_t k = wcrtomb(out + o, wch[i], &st);
				if (k == (size_t)-1) {
					out[o] = '?';
					k = 1;
					memset(&st, 0, sizeof st);
				}
				o += k;
			}
		}
		while (o > 0 && out[o - 1] == ' ')
			o--;
		fwrite(out, 1, o, f);
		fputc('\n', f);
	}
	free(cells);
	free(out);
	if (fclose(f) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int script_save_colors(WINDOW *w, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int H = getmaxy(w), W = getmaxx(w);
	cchar_t *cells = calloc((size_t)W + 1, sizeof *cells);
	if (!cells) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int y = 0; y < H; y++) {
		if (mvwin_wchnstr(w, y, 0, cells, W) == ERR)
			continue;
		for (int x = 0; x < W; x++) {
			wchar_t wch[CCHARW_MAX + 1];
			attr_t a;
			short pair;
			if (getcchar(&cells[x], wch, &a, &pair, NULL) == ERR || !wch[0])
				break;
			fputc(pair <= 0 ? '.' : pair <= 26 ? 'a' + pair - 1 : '+', f);
		}
		fputc('\n', f);
	}
	free(cells);
	return fclose(f) == 0 ? 0 : -1;
}
