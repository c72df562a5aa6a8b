/* The numbered notes: a list (number, title, file) and a preview of the
 * selected one; Enter opens it in $EDITOR, w writes a new one. */
#include "base/app.h"

#include <stdlib.h>
#include <string.h>

#include "db_notes.h"
#include "base/draw.h"
#include "base/session_ui.h"

struct notes {
	char *dir;
	db_note_entry *e;
	size_t n;
	struct list_nav nav;
	int page;
};

static void load(struct notes *s)
{
	db_notes_list_free(s->e, s->n);
	s->n = db_notes_list(s->dir, &s->e);
}

static int notes_open(struct view *v, struct tui *t)
{
	struct notes *s = v->priv;
	s->dir = tui_notes_dir(t);
	if (!s->dir)
		return -1;
	load(s);
	s->nav.cur = s->n ? (int)s->n - 1 : 0;  /* the newest */
	return 0;
}

static void notes_done(struct view *v, struct tui *t)
{
	struct notes *s = v->priv;
	db_notes_list_free(s->e, s->n);
	free(s->dir);
}

static void notes_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct notes *s = v->priv;
	int W = getmaxx(w);
	load(s);                        /* cheap: a directory listing */
	int x = draw_text(w, y0, 0, W, C_DEFAULT, A_BOLD, "Notes in ");
	x += draw_text(w, y0, x, W - x, C_DEFAULT, A_BOLD, s->dir);
	draw_textf(w, y0, x, W - x, C_DIM, 0, "  %zu note%s (w writes one, <Enter> opens)",
	           s->n, s->n == 1 ? "" : "s");
	if (!s->n) {
		draw_text(w, y0 + 2, 0, W, C_DIM, 0, "no notes yet");
		return;
	}
	int list_h = h / 3 < 3 ? 3 : h / 3;
	s->page = list_h;
	list_nav_fix(&s->nav, (int)s->n, s->page);
	for (int r = 0; r < list_h; r++) {
		size_t i = (size_t)(s->nav.top + r);
		if (i >= s->n)
			break;
		attr_t a = (int)i == s->nav.cur ? A_REVERSE : 0;
		draw_fill(w, y0 + 2 + r, 0, W, C_DEFAULT, a);
		draw_textf(w, y0 + 2 + r, 1, W - 1, C_DEFAULT, a, "%02d  %-40s %s", s->e[i].number,
		           s->e[i].title, s->e[i].name);
	}
	/* preview */
	int py = y0 + 3 + list_h;
	draw_fill(w, py - 1, 0, W, C_DEFAULT, 0);
	for (int x2 = 0; x2 < W; x2++)
		draw_text(w, py - 1, x2, 1, C_DIM, 0, G("─", "-"));
	FILE *f = fopen(s->e[s->nav.cur].path, "r");
	if (!f)
		return;
	char line[1024];
	for (int y = py; y < y0 + h && fgets(line, sizeof line, f); y++) {
		line[strcspn(line, "\r\n")] = '\0';
		for (char *c = line; *c; c++)
			if (*c == '\t')
				*c = ' ';
		draw_text(w, y, 0, W, line[0] == '#' ? C_HILITE : C_DEFAULT,
		          line[0] == '#' ? A_BOLD : 0, line);
	}
	fclose(f);
}

static bool notes_request(struct view *v, struct tui *t, enum tui_action a)
{
	struct notes *s = v->priv;
	if (list_nav_request(&s->nav, a, (int)s->n, s->page)) {
		t->dirty = true;
		return true;
	}
	if ((a == A_NOTE_OPEN || a == A_ENTER) && s->n) {
		char why[128];
		int ed = tui_edit_file(t, s->e[s->nav.cur].path, why, sizeof why);
		if (ed == 0)
			tui_msg(t, false, "%s (set $EDITOR to edit it here)", s->e[s->nav.cur].path);
		else if (ed < 0)        /* the folder is on the view's first line */
			tui_msg(t, true, "$EDITOR %s: %s is as it was", why, s->e[s->nav.cur].name);
		return true;
	}
	return false;
}

const struct view_ops notes_view = {
	.name = "notes",
	.keymap = KM_NOTES,
	.private_size = sizeof(struct notes),
	.open = notes_open,
	.draw = notes_draw,
	.request = notes_request,
	.done = notes_done,
};
