/* Live trees in the workbench: the trees are watched (db_watch) and
 * rescanned when files arrive, so new cells fill in and the first
 * divergence and an open bisect follow without a key. Files still being
 * written are left out until they read (settle window). */
#include "watch_ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db_bisect.h"
#include "db_watch.h"

/* A refused file younger than this is taken as still being written. */
enum { SETTLE_MS = 2000, SETTLE_RETRY_MS = 500 };

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tui_watch_start(struct tui *t)
{
	size_t n = 0;
	const char *roots[2 * 33];
	roots[n++] = t->cmp->ref_root;
	if (t->n_variants)
		for (size_t k = 0; k < t->n_variants && n < sizeof roots / sizeof *roots; k++)
			roots[n++] = t->variants[k]->tgt_root;
	else
		roots[n++] = t->cmp->tgt_root;
	db_err err = {{0}};
	struct db_watch *w;
	/* one comparison: its listing's directories, no second read of the
	 * trees (variants: each lists its own, so read them here) */
	size_t nd = 0;
	const char *const *dirs = t->n_variants ? NULL : db_compare_dirs(t->cmp, &nd);
	if (db_watch_open_dirs(roots, n, dirs, nd, &w, &err) == 0)
		t->watch = w;
	/* from now on a rescan leaves unfinished files out: the first scan
	 * reported what was there as it always did */
	for (size_t k = 0; k < (t->n_variants ? t->n_variants : 1); k++)
		db_compare_set_settle(t->n_variants ? t->variants[k] : t->cmp, SETTLE_MS);
}

void tui_watch_stop(struct tui *t)
{
	db_watch_free(t->watch);
	t->watch = NULL;
}

/* The views that survive a rescan: the heatmap and the bisect (whose pair
 * indices are looked up again); the others hold indices of the old pairs. */
static bool rescan_safe(struct tui *t)
{
	for (int i = 1; i < t->n_views; i++)
		if (t->views[i].ops != &bisect_view)
			return false;
	return true;
}

void tui_rescan(struct tui *t)
{
	bool bisect_open = t->n_views > 1;
	while (t->n_views > 1)
		tui_pop(t);
	db_err err = {{0}};
	size_t before = t->cmp->n_pairs;
	int rc = t->bisect ? db_bisect_rescan(t->bisect, &err) : db_compare_rescan(t->cmp, &err);
	t->passes_valid = false;        /* the pairs may have changed */
	if (rc < 0) {
		tui_msg(t, true, "rescan: %s", err.msg);
	} else {
		/* the message of a rescan that failed (a tree emptied) is stale
		 * once one succeeds: replaced, not left until a key */
		bool failed_before = t->msg_err && !strncmp(t->msg, "rescan: ", 8);
		tui_rescanned(t);
		size_t s = db_compare_settling(t->cmp);
		if (t->cmp->n_pairs != before || s || failed_before) {
			char more[64] = "";     /* s == 0 said nothing (it printed "0") */
			if (s)
				snprintf(more, sizeof more, ", %zu file(s) still being written", s);
			tui_msg(t, false, "trees changed: %zu pairs%s", t->cmp->n_pairs, more);
		}
	}
	if (bisect_open)
		tui_push(t, &bisect_view, DB_NO_PAIR);
	t->dirty = true;
}

bool tui_verify_tick(struct tui *t)
{
	if (db_compare_verify_state(t->cmp) != DB_VERIFY_CHANGED)
		return false;
	if (!rescan_safe(t)) {
		if (t->verify_told)
			return false;
		t->verify_told = true;
		tui_msg(t, false, "files changed since the last open: the heatmap shows them "
		        "when you are back");
		return true;
	}
	t->verify_told = false;
	tui_rescan(t);          /* clears the state */
	if (!t->msg_err)
		tui_msg(t, false, "files changed since the last open: rescanned, %zu pairs",
		        t->cmp->n_pairs);
	return true;
}

bool tui_watch_tick(struct tui *t, int wait_ms)
{
	if (!t->watch)
		return false;
	bool changed = db_watch_changed(t->watch, wait_ms) == 1;
	t->watch_pending |= changed;
	/* unfinished files: read again until they read or age into errors */
	if (!t->watch_pending && db_compare_settling(t->cmp) &&
	    now_ms() - t->watch_last_ms >= SETTLE_RETRY_MS)
		t->watch_pending = true;
	if (!t->watch_pending)
		return false;
	if (!rescan_safe(t)) {
		/* not under a view the user is reading: done when back */
		if (changed)
			tui_msg(t, false, "trees changed: the heatmap shows them when you are back");
		return changed;
	}
	t->watch_pending = false;
	t->watch_last_ms = now_ms();
	tui_rescan(t);
	return true;
}
