/* The session file from the workbench, the view state it keeps, the notes
 * directory and the $EDITOR hand-over; see session_ui.h. */
#include "session_ui.h"

#include <curses.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"
#include "draw.h"
#include "db_bisect.h"
#include "db_cmd.h"
#include "db_compare.h"
#include "db_esc.h"
#include "db_notes.h"
#include "db_session.h"
#include "signals.h"

char *tui_notes_dir(const struct tui *t)
{
	if (t->notes_dir)
		return strdup(t->notes_dir);
	/* beside the session, the automatic one too (its folder under
	 * $XDG_STATE_HOME): found again from any folder (issue 34) */
	return db_notes_dir_for(t->session_path);
}

/* Notes the session lists outside its notes folder (a workbench without
 * --session wrote them into ./notes before issue 34) are brought beside
 * it, and the bottom line says so; --notes DIR wins: nothing moves. */
static void adopt_notes(struct tui *t)
{
	char said[sizeof t->msg];
	if (t->notes_dir || !t->session || !t->session_path || !t->session->n_notes)
		return;
	int moved = db_notes_adopt(t->session, NULL, said, sizeof said);
	if (said[0])
		tui_msg(t, moved < 0, "%s", said);
	/* the automatic session's "reopened" line comes after: it says it too */
	snprintf(t->notes_said, sizeof t->notes_said, "%s%.300s", said[0] ? "; " : "", said);
	if (moved > 0)
		tui_session_save(t);
}

/* A file name's part from a tree's path: its last two components (the
 * run and its side: "h_noise_v1-target"), letters, digits, '.', '_'. */
static void name_part(const char *path, char *out, size_t len)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	const char *from = buf;
	int slashes = 0;
	for (size_t i = n; i > 0; i--)
		if (buf[i - 1] == '/' && ++slashes == 2) {
			from = buf + i;
			break;
		}
	size_t k = 0;
	for (const char *c = from; *c && k + 1 < len && k < 40; c++)
		out[k++] = (*c == '/' || *c == '-') ? '-' :
		           ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		            (*c >= '0' && *c <= '9') || *c == '.' || *c == '_') ? *c : '_';
	out[k] = '\0';
}

char *tui_session_auto_path(const char *ref, const char *const *targets, size_t n)
{
	const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char base[PATH_MAX];
	if (x && x[0] == '/')           /* the spec: relative ones are ignored */
		snprintf(base, sizeof base, "%s/dumpbisect/sessions", x);
	else if (home && home[0] == '/')
		snprintf(base, sizeof base, "%s/.local/state/dumpbisect/sessions", home);
	else
		return NULL;
	uint64_t h = UINT64_C(14695981039346656037);    /* FNV-1a */
	char abs[PATH_MAX], name[64] = "";
	for (size_t i = 0; i <= n; i++) {
		const char *p = i ? targets[i - 1] : ref;
		if (!p)
			continue;
		const char *a = realpath(p, abs) ? abs : p;
		for (const char *c = a; ; c++) {
			h = (h ^ (unsigned char)*c) * UINT64_C(1099511628211);
			if (!*c)
				break;          /* the NUL separates the trees */
		}
		if (i == 0)
			name_part(a, name, sizeof name);
	}
	size_t len = strlen(base) + strlen(name) + 48;
	char *out = malloc(len);
	if (out)
		snprintf(out, len, "%s/%s-%016llx/session.yaml", base, name,
		         (unsigned long long)h);
	return out;
}

void tui_session_say(struct tui *t, bool err, const char *before, const char *after)
{
	const char *home = getenv("HOME"), *path = t->session_path;
	char tilde[PATH_MAX], shown[PATH_MAX];
	size_t n = home ? strlen(home) : 0;
	if (!path)
		return;
	if (n > 1 && !strncmp(path, home, n) && path[n] == '/')
		snprintf(tilde, sizeof tilde, "~%s", path + n);
	else
		snprintf(tilde, sizeof tilde, "%s", path);
	int room = COLS - draw_width(before) - draw_width(after);
	draw_fit_mid(tilde, room < 24 ? 24 : room, -1, shown, sizeof shown);
	tui_msg(t, err, "%s%s%s", before, shown, after);
}

void tui_session_opts(const struct tui *t, const db_cmp_args *cli, db_compare_opts *co)
{
	const db_session *s = t->session;
	if (!s)
		return;
	if (!co->noise && s->noise)
		co->noise = s->noise;
	if (!co->slots && s->slots)
		co->slots = atoi(s->slots);
	if (!cli->align && s->align && db_align_mode_parse(s->align) >= 0)
		co->align = db_align_mode_parse(s->align);
}

bool tui_session_has_work(const struct tui *t)
{
	const db_session *s = t->session;
	if (!s)
		return false;
	size_t steps = t->bisect ? t->bisect->sm.n_steps : s->n_steps;
	return steps || s->n_marks || s->n_notes;
}

/* mkdir -p of path's folder. */
static int make_parents(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s", path);
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -1;
		*q = '/';
	}
	return 0;
}

void tui_session_save(struct tui *t)
{
	if (!t->session || !t->session_path)
		return;
	/* the automatic session: not a file per pair of trees merely looked
	 * at, only once there is work to keep */
	bool first = t->session_auto && !t->session_auto_on_disk;
	if (first && !tui_session_has_work(t))
		return;
	db_err err = {{0}};
	if (first && make_parents(t->session_path) < 0) {
		snprintf(t->session_fail, sizeof t->session_fail, "%.900s: %s", t->session_path,
		         strerror(errno));
		t->session_unsaved = true;
		tui_msg(t, true, "session not saved: %s", t->session_fail);
		return;
	}
	int rc = t->bisect ? db_session_save_bisect(t->session, t->session_path, &t->bisect->sm, &err)
	                   : db_session_save(t->session, t->session_path, &err);
	t->session_unsaved = rc < 0;
	if (rc < 0) {
		snprintf(t->session_fail, sizeof t->session_fail, "%s", err.msg);
		tui_msg(t, true, "session not saved: %s", err.msg);
		return;
	}
	if (rc == 1)
		tui_msg(t, false, "session: merged with verdicts another dumpbisect saved meanwhile");
	if (first) {
		/* say once where the work is kept, after what was just done */
		char before[sizeof t->msg + 16];
		snprintf(before, sizeof before, "%.400s%skept in ", t->msg, t->msg[0] ? "; " : "");
		t->session_auto_on_disk = true;
		tui_session_say(t, t->msg_err, before, "");
	}
}

int tui_session_exit(const struct tui *t, int rc)
{
	if (!t->session_unsaved)
		return rc;
	fprintf(stderr, "dumpbisect: session not saved: %s\n", db_esc(t->session_fail));
	return rc ? rc : 1;
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
	/* without view state (a headless session), the bisect's own selection */
	if ((v = db_session_view_get(s, "phase")) || (v = s->phase))
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
	if ((v = db_session_view_get(s, "pass")) || (v = s->pass)) {
		for (size_t i = 0; i < t->n_passes; i++)
			if (!strcmp(t->passes[i], v) && i != t->pass) {
				t->pass = i;
				tui_selection_changed(t);
			}
	}
	if ((v = db_session_view_get(s, "metric")))
		for (int m = 0; m < M__COUNT; m++)
			if (!strcmp(v, tui_metric_name((enum tui_metric)m))) {
				t->metric = (enum tui_metric)m;
				t->metric_chosen = true;
			}
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
	adopt_notes(t);
}

int tui_edit_file(struct tui *t, const char *path, char *why, size_t len)
{
	const char *ed = getenv("EDITOR");
	if (!ed || !*ed)
		return 0;
	size_t n = strlen(ed) + 8;
	char *cmd = malloc(n);
	if (!cmd) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	snprintf(cmd, n, "%s \"$@\"", ed);
	def_prog_mode();
	endwin();
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, ed, path, (char *)NULL);
		_exit(127);
	}
	int st = 0, e = errno;
	tui_signals_hold(true);
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	tui_signals_hold(false);
	reset_prog_mode();
	clearok(curscr, TRUE);
	t->dirty = true;
	free(cmd);
	if (pid < 0)
		snprintf(why, len, "cannot start it: %s", strerror(e));
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 1;
	else if (WIFEXITED(st))
		snprintf(why, len, WEXITSTATUS(st) == 127 ? "not found (exit status 127)"
		         : "exited with status %d", WEXITSTATUS(st));
	else
		snprintf(why, len, "ended by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return -1;
}
