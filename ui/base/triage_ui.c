/* The triaged phase and pass in the workbench; see triage_ui.h. */
#include "triage_ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "db_bisect.h"
#include "db_passes.h"
#include "db_yield.h"
#include "draw.h"
#include "script.h"
#include "signals.h"

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* The hook of long work on the UI thread: its progress on the bottom line
 * and `q` or Ctrl-C stop it, within 50 ms. Another key waits its turn. A
 * script's next key is taken when it is `q` (keys come in order there). */
static bool ui_yield(void *ctx, const char *what, size_t done, size_t total)
{
	struct tui *t = ctx;
	if (tui_signal_pending())
		return true;
	if (script_active()) {
		if (script_ready() == 1 && script_peek() == 'q') {
			script_next();
			return true;
		}
		return false;
	}
	/* the bottom line only: a view being opened (b's bisect) is on the
	 * stack before its state is (tui_push), so no full redraw here */
	tui_msg(t, false, "%s: %zu of %zu (q stops)", what, done, total);
	if (!t->too_small && LINES > 0) {
		draw_fill(stdscr, LINES - 1, 0, COLS, C_DEFAULT, 0);
		draw_text(stdscr, LINES - 1, 0, COLS, C_DEFAULT, 0, t->msg);
		wnoutrefresh(stdscr);
		doupdate();
	}
	timeout(0);
	wint_t ch;
	int r = get_wch(&ch);
	if (r == ERR)
		return false;
	if (r == OK && (ch == 'q' || ch == 3))
		return true;
	if (r == KEY_CODE_YES)  /* another key: the loop reads it after */
		ungetch((int)ch);
	else
		unget_wch(ch);
	return false;
}

void tui_yield_begin(struct tui *t)
{
	db_yield_set(ui_yield, t, script_active() ? 0 : 50);
}

void tui_yield_end(void)
{
	db_yield_set(NULL, NULL, 0);
}

bool tui_select_triaged(struct tui *t, const char *lead)
{
	char *ph = NULL, *pa = NULL, why[384];
	db_err err = {{0}};
	tui_yield_begin(t);
	int rc = db_bisect_triage(t->cmp, NULL, &ph, &pa, why, sizeof why, &err);
	bool stopped = db_yield_stopped();
	tui_yield_end();
	if (rc < 0) {
		t->pass_why[0] = '\0';
		t->triaged = false;
		if (stopped)
			tui_msg(t, false, "%s; the pass shown is the profile's (f triages again)",
			        err.msg);
		return false;
	}
	bool changed = false;
	for (size_t i = 0; ph && i < t->cmp->n_phases; i++)
		if (!strcmp(t->cmp->phases[i], ph) && i != t->phase) {
			t->phase = i;
			changed = true;
		}
	if (changed)
		tui_selection_changed(t);       /* the phase's passes */
	for (size_t i = 0; pa && i < t->n_passes; i++)
		if (!strcmp(t->passes[i], pa) && i != t->pass) {
			t->pass = i;
			changed = true;
			tui_selection_changed(t);
		}
	snprintf(t->triaged_phase, sizeof t->triaged_phase, "%s", ph ? ph : "");
	snprintf(t->triaged_pass, sizeof t->triaged_pass, "%s", pa ? pa : "");
	snprintf(t->pass_why, sizeof t->pass_why, "%s", why);
	t->triaged = true;
	if (lead) {
		char sel[160] = "";
		size_t o = 0;
		if (ph && t->cmp->n_phases > 1)
			o += (size_t)snprintf(sel + o, sizeof sel - o, "phase %s", ph);
		if (pa && t->n_passes > 1)
			snprintf(sel + o, sizeof sel - o, "%spass %s", o ? ", " : "", pa);
		if (sel[0] || why[0])
			tui_msg(t, false, "%s%s%s%s", lead, sel, why[0] ? ": " : "", why);
	}
	free(ph);
	free(pa);
	return changed;
}

bool tui_on_triaged(const struct tui *t)
{
	return t->triaged && same(tui_phase(t), t->triaged_phase) &&
	       same(tui_pass(t), t->triaged_pass);
}

bool tui_triaged_diverges(struct tui *t)
{
	if (!t->triaged || tui_computing(t))
		return false;
	/* once per set of computed pairs: a scan of every pair */
	size_t done = t->cmp->n_done;
	if (t->triaged_div_gen == t->cmp->pairs_gen + 1 && t->triaged_div_done == done)
		return t->triaged_div;
	db_pass_line *v = NULL;
	size_t n = db_pass_lines(t->cmp, &v);
	long k = db_pass_first_diverging(t->cmp, v, n);
	t->triaged_div = k >= 0 && same(v[k].phase, t->triaged_phase) &&
	                 same(v[k].pass, t->triaged_pass);
	free(v);
	t->triaged_div_gen = t->cmp->pairs_gen + 1;
	t->triaged_div_done = done;
	return t->triaged_div;
}
