/* The line editor of the bottom line; see prompt.h. */
#include "prompt.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "draw.h"
#include "keys.h"

void tui_prompt_open(struct tui *t, const char *label,
                     void (*done)(struct tui *t, const char *text, void *arg), void *arg)
{
	struct tui_prompt *p = &t->prompt;
	memset(p, 0, sizeof *p);
	p->active = true;
	snprintf(p->label, sizeof p->label, "%s", label);
	p->done = done;
	p->arg = arg;
	t->dirty = true;
}

static void append_utf8(struct tui_prompt *p, int cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80)
		u[0] = (char)cp, n = 1;
	else if (cp < 0x800)
		u[0] = (char)(0xc0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
	else if (cp < 0x10000)
		u[0] = (char)(0xe0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
		u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
	else
		u[0] = (char)(0xf0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f)),
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
	if (p->len + n < sizeof p->buf) {
		memcpy(p->buf + p->len, u, n);
		p->len += n;
		p->buf[p->len] = '\0';
	}
}

bool tui_prompt_key(struct tui *t, int key)
{
	struct tui_prompt *p = &t->prompt;
	if (!p->active)
		return false;
	t->dirty = true;
	if (key == TUI_KEY_ENTER) {
		char text[sizeof p->buf];
		memcpy(text, p->buf, sizeof text);
		void (*done)(struct tui *, const char *, void *) = p->done;
		void *arg = p->arg;
		p->active = false;
		done(t, text, arg);
		return true;
	}
	if (key == TUI_KEY_ESC || key == ('c' & 0x1f) || key == ('g' & 0x1f)) {
		p->active = false;
		return true;
	}
	if (key == TUI_KEY_FN(KEY_BACKSPACE)) {
		if (!p->len) {
			p->active = false;
			return true;
		}
		do
			p->len--;
		while (p->len && ((unsigned char)p->buf[p->len] & 0xc0) == 0x80);
		p->buf[p->len] = '\0';
		return true;
	}
	if (key == ('u' & 0x1f)) {
		p->len = 0;
		p->buf[0] = '\0';
		return true;
	}
	if (key == ('w' & 0x1f)) {
		while (p->len && p->buf[p->len - 1] == ' ')
			p->len--;
		while (p->len && p->buf[p->len - 1] != ' ')
			p->len--;
		p->buf[p->len] = '\0';
		return true;
	}
	if (key == TUI_KEY_TAB)
		key = ' ';
	if (key >= 32 && key != 127 && key < TUI_KEY_FN(0))
		append_utf8(p, key);
	return true;
}

void tui_prompt_draw(struct tui *t, WINDOW *w, int y)
{
	struct tui_prompt *p = &t->prompt;
	int W = getmaxx(w);
	draw_fill(w, y, 0, W, C_DEFAULT, 0);
	int x = draw_text(w, y, 0, W, C_DEFAULT, A_BOLD, p->label);
	/* Show the tail when the text is wider than the line. */
	const char *s = p->buf;
	while (*s && draw_width(s) > W - x - 1) {
		s++;
		while (((unsigned char)*s & 0xc0) == 0x80)
			s++;
	}
	x += draw_text(w, y, x, W - x, C_DEFAULT, 0, s);
	wmove(w, y, x < W ? x : W - 1);
}
