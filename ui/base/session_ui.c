/* The session file from the workbench, the view state it keeps, the notes
 * directory and the $EDITOR hand-over; see session_ui.h. */
#include "session_ui.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"
#include "db_bisect.h"
#include "db_notes.h"
#include "db_session.h"
#include "signals.h"

char *tui_notes_dir(const struct tui *t)
{
	if (t->notes_dir)
		return strdup(t->notes_dir);
	return db_notes_dir_for(t->session_path);
}

void tui_session_save(struct tui *t)
{
	if (!t->session || !t->session_path)
		return;
	db_err err = {{0}};
	if (t->bisect)
		db_session_sync_bisect(t->session, &t->bisect->sm, &err);
	if (db_session_save(t->session, t->session_path, &err) < 0)
		tui_msg(t, true, "session not saved: %s", err.msg);
}

/* The session keeps the view state: selection, metric, axes, probe,
 * filter and the heatmap cursor's pair. */
void tui_view_state_save(struct tui *t)
{
	if (!t->session || !t->session_path)
		return;
	db_session *s = t->session;
	char buf[64];
	db_session_view_set(s, "phase", tui_phase(t));
	db_session_view_set(s, "pass", tui_pass(t));
	snprintf(buf, sizeof buf, "%d", tui_rank(t));
	db_session_view_set(s, "rank", t->rank_sel ? buf : "all");
	db_session_view_set(s, "metric", tui_metric_name(t->metric));
	db_session_view_set(s, "transposed", t->transposed ? "1" : "0");
	if (t->probe_given)
		db_session_view_set(s, "probe", t->probe);
	db_session_view_set(s, "filter", t->filter_pat[0] ? t->filter_pat : NULL);
	tui_session_save(t);
}

void tui_view_state_restore(struct tui *t)
{
	if (!t->session)
		return;
	const db_session *s = t->session;
	const char *v;
	if ((v = db_session_view_get(s, "phase")))
		for (size_t i = 0; i < t->cmp->n_phases; i++)
			if (!strcmp(t->cmp->phases[i], v))
				t->phase = i;
	if ((v = db_session_view_get(s, "rank"))) {
		/* "all"; older sessions wrote -1 for the merged view */
		int r = strcmp(v, "all") ? atoi(v) : -1;
		t->rank_sel = r < 0 ? 0 : t->rank_sel;
		for (size_t k = 0; r >= 0 && k < t->n_ranks; k++)
			if (t->ranks[k] == r)
				t->rank_sel = k + 1;
	}
	tui_selection_changed(t);
	if ((v = db_session_view_get(s, "pass"))) {
		for (size_t i = 0; i < t->n_passes; i++)
			if (!strcmp(t->passes[i], v) && i != t->pass) {
				t->pass = i;
				tui_selection_changed(t);
			}
	}
	if ((v = db_session_view_get(s, "metric")))
		for (int m = 0; m < M__COUNT; m++)
			if (!strcmp(v, tui_metric_name((enum tui_metric)m)))
				t->metric = (enum tui_metric)m;
	if ((v = db_session_view_get(s, "transposed")))
		t->transposed = !strcmp(v, "1");
	if ((v = db_session_view_get(s, "probe"))) {
		snprintf(t->probe, sizeof t->probe, "%s", v);
		t->probe_given = true;
	}
	/* a filter that cannot be restored (it hits the regex limit) says why */
	if ((v = db_session_view_get(s, "filter")) && tui_filter_set(t, v) != 0)
		return;
	t->msg[0] = '\0';
}

bool tui_edit_file(struct tui *t, const char *path)
{
	const char *ed = getenv("EDITOR");
	if (!ed || !*ed || t->script)
		return false;
	def_prog_mode();
	endwin();
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "$EDITOR \"$1\"", "sh", path, (char *)NULL);
		_exit(127);
	}
	int st;
	tui_signals_hold(true);
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	tui_signals_hold(false);
	reset_prog_mode();
	clearok(curscr, TRUE);
	t->dirty = true;
	return true;
}
