/* `?`: every action with its current keys (from the action table and the
 * live bindings, so it cannot drift) and the ":" commands. */
#include "base/app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "base/draw.h"
#include "base/keys.h"

struct help_line {
	char *text;
	bool title;
};

struct help {
	struct help_line *lines;
	size_t n, cap;
	struct list_nav nav;            /* cur = top line shown */
	int page;
};

static void add(struct help *h, bool title, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(struct help *h, bool title, const char *fmt, ...)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct help_line *nl = realloc(h->lines, cap * sizeof *nl);
		if (!nl)
			return;
		h->lines = nl, h->cap = cap;
	}
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	h->lines[h->n].text = strdup(buf);
	h->lines[h->n].title = title;
	if (h->lines[h->n].text)
		h->n++;
}

static int help_open(struct view *v, struct tui *t)
{
	struct help *h = v->priv;
	for (int km = 0; km < KM__COUNT; km++) {
		add(h, true, "%s", tui_keymap_titles[km]);
		for (int a = 1; a < A__COUNT; a++) {
			const struct tui_action_info *ai = tui_action((enum tui_action)a);
			if (ai->keymap != (enum tui_keymap)km)
				continue;
			int keys[8];
			size_t nk = tui_action_keys((enum tui_action)a, keys, 8);
			char ks[128] = "", name[32];
			size_t o = 0;
			for (size_t i = 0; i < nk && o < sizeof ks; i++)
				o += (size_t)snprintf(ks + o, sizeof ks - o, "%s%s", i ? " " : "",
				                      tui_key_name(keys[i], name, sizeof name));
			add(h, false, "  %-22s %-22s %s", nk ? ks : "(unbound)", ai->name, ai->help);
		}
		add(h, false, "%s", "");
	}
	const char *const *names, *const *args, *const *help;
	size_t n = tui_commands(&names, &args, &help);
	add(h, true, "Commands (:)");
	for (size_t i = 0; i < n; i++) {
		char c[128];
		snprintf(c, sizeof c, ":%s %s", names[i], args[i]);
		add(h, false, "  %-45s %s", c, help[i]);
	}
	add(h, false, "%s", "");
	add(h, true, "Keymap file");
	add(h, false, "  $XDG_CONFIG_HOME/dumpbisect/keys: lines \"bind KEY ACTION\", \"unbind KEY\"");
	return 0;
}

static void help_done(struct view *v, struct tui *t)
{
	struct help *h = v->priv;
	for (size_t i = 0; i < h->n; i++)
		free(h->lines[i].text);
	free(h->lines);
}

static void help_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int hgt)
{
	struct help *h = v->priv;
	int W = getmaxx(w);
	/* the last line says there is more and how to get to it */
	bool more = (int)h->n > hgt;
	if (more)
		hgt--;
	h->page = hgt;
	/* nav.cur is the first line shown */
	int maxtop = (int)h->n - hgt > 0 ? (int)h->n - hgt : 0;
	if (h->nav.cur > maxtop)
		h->nav.cur = maxtop;
	if (h->nav.cur < 0)
		h->nav.cur = 0;
	for (int r = 0; r < hgt; r++) {
		size_t i = (size_t)(h->nav.cur + r);
		if (i >= h->n)
			break;
		draw_text(w, y0 + r, 0, W, h->lines[i].title ? C_HILITE : C_DEFAULT,
		          h->lines[i].title ? A_BOLD : 0, h->lines[i].text);
	}
	if (more) {
		int last = h->nav.cur + hgt < (int)h->n ? h->nav.cur + hgt : (int)h->n;
		draw_textf(w, y0 + hgt, 0, W, C_DIM, A_REVERSE, " lines %d-%d of %zu: it scrolls "
		           "(<Down> <PgDown> <Space>, g G); ? or q closes ", h->nav.cur + 1, last, h->n);
	}
}

static bool help_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct help *h = v->priv;
	int page = h->page > 1 ? h->page - 1 : 1;
	switch (a) {
	case A_MOVE_UP: h->nav.cur--; break;
	case A_MOVE_DOWN: h->nav.cur++; break;
	case A_PAGE_UP: h->nav.cur -= page; break;
	case A_PAGE_DOWN: h->nav.cur += page; break;
	case A_MOVE_FIRST: case A_MOVE_HOME: h->nav.cur = 0; break;
	case A_MOVE_LAST: case A_MOVE_END: h->nav.cur = (int)h->n; break;
	case A_HELP: tui_pop(t); break;
	default: return false;
	}
	t->dirty = true;
	return true;
}

const struct view_ops help_view = {
	.name = "help",
	.keymap = KM_GENERIC,
	.private_size = sizeof(struct help),
	.open = help_open,
	.draw = help_draw,
	.request = help_request,
	.done = help_done,
};
