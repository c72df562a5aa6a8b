/* One interface for every view (tig's struct view_ops): the framework keeps
 * a stack of views, allocates each one's private state (private_size bytes,
 * zeroed), gives it the body of the screen to draw and the actions it did
 * not resolve globally (ui/view.c). One file per view: ui/view_<name>.c. */
#ifndef TUI_VIEW_H
#define TUI_VIEW_H
#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "actions.h"

struct tui;
struct view;

struct view_ops {
	const char *name;               /* "heatmap": title bar and help */
	enum tui_keymap keymap;         /* looked up before GENERIC */
	size_t private_size;
	/* Set up v->priv for v->pair; -1 with a message (tui_msg) to refuse. */
	int (*open)(struct view *v, struct tui *t);
	/* Draw lines y .. y+h-1 of w (full width). */
	void (*draw)(struct view *v, struct tui *t, WINDOW *w, int y, int h);
	/* true when the view handled a; otherwise the framework does. */
	bool (*request)(struct view *v, struct tui *t, enum tui_action a);
	/* Free what priv owns (the framework frees priv itself). */
	void (*done)(struct view *v, struct tui *t);
	/* Optional: still loading (script mode waits for it). */
	bool (*busy)(struct view *v);
	/* Optional: the pair under the cursor, for s/a/i/m/w; DB_NO_PAIR none. */
	size_t (*selected)(struct view *v, struct tui *t);
	/* Optional: a mouse click at (y, x) of the screen. */
	void (*click)(struct view *v, struct tui *t, int y, int x);
	/* Optional: what the view shows, as Markdown, for a note's Data. */
	void (*note_data)(struct view *v, struct tui *t, FILE *out);
};

struct view {
	const struct view_ops *ops;
	void *priv;                     /* owned by the framework */
	size_t pair;                    /* the pair the view is about, or DB_NO_PAIR */
	int height;                     /* body lines at the last draw */
};

extern const struct view_ops heatmap_view, stages_view, ranks_view, tensor_view,
	curve_view, help_view, bisect_view, notes_view, variants_view,
	time_view;

/* The stack (ui/view.c). tui_push opens ops about pair; -1 when the view
 * refused. */
int tui_push(struct tui *t, const struct view_ops *ops, size_t pair);
void tui_pop(struct tui *t);
struct view *tui_top(struct tui *t);
/* The pair the user has selected in the top view (or the one below). */
size_t tui_selected_pair(struct tui *t);
/* Draw the whole screen now: title bar, the top view's body, the bottom
 * line (a message, the scan's progress, or the prompt). The main loop
 * does it when t->dirty. */
void tui_draw(struct tui *t);

/* A scrolling list cursor for list-like views. */
struct list_nav {
	int cur, top;
};
/* Apply a movement action to a list of n rows shown in page rows; false
 * when a is not a movement. */
bool list_nav_request(struct list_nav *nav, enum tui_action a, int n, int page);
/* Clamp cur and scroll top so cur is visible. */
void list_nav_fix(struct list_nav *nav, int n, int page);

#endif
