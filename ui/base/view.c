/* The framework behind view.h: the stack of views, the frame drawn around
 * the top one (title bar, its body, the bottom line) and the list cursor
 * shared by list-like views. */
#include "view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "draw.h"
#include "prompt.h"

#define MIN_COLS 60
#define MIN_LINES 15

/* ---- the stack ---- */

int tui_push(struct tui *t, const struct view_ops *ops, size_t pair)
{
	if (t->n_views == TUI_MAX_VIEWS) {
		tui_msg(t, true, "too many views open; q closes one");
		return -1;
	}
	struct view *v = &t->views[t->n_views];
	memset(v, 0, sizeof *v);
	v->ops = ops;
	v->pair = pair;
	v->priv = calloc(1, ops->private_size ? ops->private_size : 1);
	if (!v->priv) {
		tui_msg(t, true, "out of memory");
		return -1;
	}
	t->n_views++;
	if (ops->open && ops->open(v, t) < 0) {
		t->n_views--;
		if (ops->done)
			ops->done(v, t);
		free(v->priv);
		v->priv = NULL;
		return -1;
	}
	t->dirty = true;
	return 0;
}

void tui_pop(struct tui *t)
{
	if (t->n_views <= 1)
		return;
	struct view *v = &t->views[--t->n_views];
	if (v->ops->done)
		v->ops->done(v, t);
	free(v->priv);
	v->priv = NULL;
	t->dirty = true;
}

struct view *tui_top(struct tui *t)
{
	return t->n_views ? &t->views[t->n_views - 1] : NULL;
}

size_t tui_selected_pair(struct tui *t)
{
	for (int i = t->n_views - 1; i >= 0; i--) {
		struct view *v = &t->views[i];
		if (v->ops->selected)
			return v->ops->selected(v, t);
	}
	return DB_NO_PAIR;
}

/* ---- the frame ---- */

static double ms_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

static void draw_title(struct tui *t)
{
	int W = COLS;
	draw_fill(stdscr, 0, 0, W, C_TITLE, 0);
	const char *view = tui_top(t)->ops->name;
	int vw = draw_width(view) + 2;
	int room = W - vw - 1;          /* keep a blank before the view name */
	int x = draw_text(stdscr, 0, 0, room, C_TITLE, A_BOLD, " dumpbisect ");
	x += draw_textf(stdscr, 0, x, room - x, C_TITLE, 0, " %s %s %s", t->cmp->ref_root,
	                G("⇄", "<>"), t->cmp->tgt_root ? t->cmp->tgt_root : "(same tree)");
	draw_textf(stdscr, 0, x, room - x, C_TITLE, 0, "  profile %s",
	           t->cmp->profile && t->cmp->profile->name ? t->cmp->profile->name : "?");
	draw_textf(stdscr, 0, W - vw, vw, C_TITLE, A_BOLD, "%s ", view);
}

static void draw_bottom(struct tui *t)
{
	int y = LINES - 1, W = COLS;
	if (t->prompt.active) {
		tui_prompt_draw(t, stdscr, y);
		return;
	}
	draw_fill(stdscr, y, 0, W, C_DEFAULT, 0);
	if (t->msg[0]) {
		draw_text(stdscr, y, 0, W, t->msg_err ? C_ERROR : C_DEFAULT, 0, t->msg);
		return;
	}
	size_t done = atomic_load(&t->cmp->n_done), n = t->cmp->n_pairs;
	if (tui_computing(t)) {
		static struct timespec t0;
		static bool started;
		if (!started) {
			clock_gettime(CLOCK_MONOTONIC, &t0);
			started = true;
		}
		double el = ms_since(&t0) / 1e3;
		int pct = n ? (int)(100.0 * (double)done / (double)n) : 100;
		int bw = W / 4 > 10 ? W / 4 : 10, fill = bw * pct / 100;
		int x = draw_text(stdscr, y, 0, W, C_DEFAULT, 0, "computing ");
		for (int i = 0; i < bw && x < W; i++)
			x += draw_text(stdscr, y, x, 1, i < fill ? C_GOOD : C_DIM, 0,
			               i < fill ? G("█", "#") : G("░", "-"));
		char eta[32] = "";
		if (done > 0 && done < n)
			snprintf(eta, sizeof eta, "  ETA %.0fs", el * (double)(n - done) / (double)done);
		draw_textf(stdscr, y, x, W - x, C_DEFAULT, 0, " %3d%%  %zu/%zu pairs%s  (q quits)", pct,
		           done, n, eta);
		return;
	}
	if (!t->first_div_known)
		tui_update_first_div(t);
	size_t bad = t->n_diverge;
	int x = draw_text(stdscr, y, 0, W, C_DIM, 0,
	                  "? help  : command  / filter  <Enter> open  f first divergence  q quit");
	char right[96];
	/* from the last open's snapshots, the files not checked yet: say so */
	bool unchecked = db_compare_verify_state(t->cmp) == DB_VERIFY_PENDING;
	snprintf(right, sizeof right, "%zu pairs, %zu diverge%s", n, bad,
	         unchecked ? " (checking files)" : "");
	int rw = draw_width(right);
	if (W - rw > x + 1)
		draw_text(stdscr, y, W - rw, rw, bad ? C_MARK : C_GOOD, 0, right);
}

static void draw_too_small(void)
{
	erase();
	char a[96], b[64];
	snprintf(a, sizeof a, "terminal too small: %dx%d", COLS, LINES);
	snprintf(b, sizeof b, "needs %dx%d; q quits", MIN_COLS, MIN_LINES);
	int y = LINES / 2 - 1;
	draw_text(stdscr, y < 0 ? 0 : y, 0, COLS, C_ERROR, A_BOLD, a);
	draw_text(stdscr, y + 1 < LINES ? y + 1 : LINES - 1, 0, COLS, C_DEFAULT, 0, b);
}

void tui_draw(struct tui *t)
{
	curs_set(0);
	tui_grid_worst(t);              /* cells settle as ranks get computed */
	t->too_small = COLS < MIN_COLS || LINES < MIN_LINES;
	if (t->too_small) {
		draw_too_small();
	} else {
		erase();
		draw_title(t);
		struct view *v = tui_top(t);
		v->height = LINES - 2;
		v->ops->draw(v, t, stdscr, 1, LINES - 2);
		draw_bottom(t);
		if (t->prompt.active && !t->script)
			curs_set(1);
	}
	wnoutrefresh(stdscr);
	doupdate();
	t->dirty = false;
}

/* ---- list navigation ---- */

void list_nav_fix(struct list_nav *nav, int n, int page)
{
	if (page < 1)
		page = 1;
	if (nav->cur >= n)
		nav->cur = n - 1;
	if (nav->cur < 0)
		nav->cur = 0;
	if (nav->top > nav->cur)
		nav->top = nav->cur;
	if (nav->cur >= nav->top + page)
		nav->top = nav->cur - page + 1;
	if (nav->top > n - page)
		nav->top = n - page;
	if (nav->top < 0)
		nav->top = 0;
}

bool list_nav_request(struct list_nav *nav, enum tui_action a, int n, int page)
{
	switch (a) {
	case A_MOVE_UP: nav->cur--; break;
	case A_MOVE_DOWN: nav->cur++; break;
	case A_PAGE_UP: nav->cur -= page > 1 ? page - 1 : 1; break;
	case A_PAGE_DOWN: nav->cur += page > 1 ? page - 1 : 1; break;
	case A_MOVE_FIRST: case A_MOVE_HOME: nav->cur = 0; break;
	case A_MOVE_LAST: case A_MOVE_END: nav->cur = n - 1; break;
	default: return false;
	}
	list_nav_fix(nav, n, page);
	return true;
}
