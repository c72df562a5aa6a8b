/* The ":" commands: one table for the dispatch and the help screen's list
 * (and the man page's, checked by tests/t_manpage.sh); see cmdline.h. */
#include "cmdline.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/app.h"
#include "base/keys.h"
#include "notes_ui.h"
#include "base/script.h"
#include "db_noise.h"

typedef void (*cmd_fn)(struct tui *t, char *args);

static void cmd_save_display(struct tui *t, char *args)
{
	char err[512];
	if (!*args) {
		tui_msg(t, true, "save-display: which file?");
		return;
	}
	tui_draw(t);    /* the screen as the user sees it, without the prompt */
	if (script_save_display(stdscr, args, err, sizeof err) < 0)
		tui_msg(t, true, "save-display: %s", err);
}

static void cmd_save_colors(struct tui *t, char *args)
{
	char err[512];
	if (!*args) {
		tui_msg(t, true, "save-colors: which file?");
		return;
	}
	tui_draw(t);
	if (script_save_colors(stdscr, args, err, sizeof err) < 0)
		tui_msg(t, true, "save-colors: %s", err);
}

static void cmd_quit(struct tui *t, char *args)
{
	t->quit = true;
}

static void cmd_help(struct tui *t, char *args)
{
	t->action(t, A_HELP, true);     /* opens help even over help */
}

static void cmd_metric(struct tui *t, char *args)
{
	for (int m = 0; m < M__COUNT; m++)
		if (!strcmp(args, tui_metric_name((enum tui_metric)m))) {
			if (m == M_NOISE && !db_noise_root(t->cmp)) {
				tui_msg(t, true, "metric noise: no noise tree (dumpbisect --noise DIR ...)");
				return;
			}
			t->metric = (enum tui_metric)m;
			t->metric_chosen = true;
			return;
		}
	tui_msg(t, true, "metric: one of cos, rel, rel_diff, max_abs, noise (with --noise)");
}

static void cmd_phase(struct tui *t, char *args)
{
	for (size_t i = 0; i < t->cmp->n_phases; i++)
		if (!strcmp(t->cmp->phases[i], args)) {
			t->phase = i;
			tui_selection_changed(t);
			return;
		}
	tui_msg(t, true, "phase %s: not in these trees", args);
}

static void cmd_pass(struct tui *t, char *args)
{
	for (size_t i = 0; i < t->n_passes; i++)
		if (!strcmp(t->passes[i], args)) {
			t->pass = i;
			tui_selection_changed(t);
			return;
		}
	tui_msg(t, true, "pass %s: not in this phase", args);
}

static void cmd_rank(struct tui *t, char *args)
{
	/* "merged" and -1: the merged view of older versions, now part of all */
	if (!strcmp(args, "all") || !strcmp(args, "merged") || !strcmp(args, "-1") ||
	    !strcmp(args, "-")) {
		t->rank_sel = 0;
		tui_selection_changed(t);
		return;
	}
	char *end;
	long r = strtol(args, &end, 10);
	for (size_t i = 0; *args && !*end && i < t->n_ranks; i++)
		if (t->ranks[i] == r) {
			t->rank_sel = i + 1;
			tui_selection_changed(t);
			return;
		}
	tui_msg(t, true, "rank %s: not in these trees (all or a rank number)", args);
}

/* variant N (1-based, as the header counts) */
static void cmd_variant(struct tui *t, char *args)
{
	char *end;
	long k = strtol(args, &end, 10);
	if (!*args || *end || k < 1 || (size_t)k > t->n_variants) {
		tui_msg(t, true, "variant %s: 1 .. %zu (dumpbisect REF T1 T2 ... opens variants)",
		        args, t->n_variants);
		return;
	}
	tui_variant_select(t, (size_t)k - 1);
}

/* goto L7 [stage] | goto 7 [stage] | goto embed */
static void cmd_goto(struct tui *t, char *args)
{
	char *stage = strchr(args, ' ');
	if (stage)
		*stage++ = '\0';
	const char *lab = args;
	char buf[32];
	if (*args >= '0' && *args <= '9') {
		snprintf(buf, sizeof buf, "L%s", args);
		lab = buf;
	}
	for (size_t r = 0; t->have_grid && r < t->grid.n_rows; r++) {
		const db_grid_row *row = &t->grid.rows[r];
		if (strcmp(row->label, lab) && strcmp(row->label, args))
			continue;
		size_t c = 0;
		for (size_t k = 0; stage && row->layer >= 0 && k < t->grid.n_cols; k++)
			if (!strcmp(t->grid.cols[k], stage))
				c = k + 1;
		if (stage && row->layer >= 0 && !c) {
			tui_msg(t, true, "goto: no stage %s", stage);
			return;
		}
		size_t p = row->layer < 0 ? row->cells[0] : DB_NO_PAIR;
		if (row->layer >= 0) {
			/* the stage's cell, or the first cell of the row holding a pair */
			for (size_t k = c ? c - 1 : 0; k < t->grid.n_cols && p == DB_NO_PAIR; k++)
				p = row->cells[k];
		}
		if (p == DB_NO_PAIR) {
			tui_msg(t, true, "goto %s: the row is empty", args);
			return;
		}
		heatmap_goto_pair(t, p);
		return;
	}
	tui_msg(t, true, "goto: no row %s", args);
}

static void cmd_filter(struct tui *t, char *args)
{
	tui_filter_set(t, args);
}

static void cmd_transpose(struct tui *t, char *args)
{
	while (t->n_views > 1)
		tui_pop(t);
	t->views[0].ops->request(&t->views[0], t, A_TRANSPOSE);
}

static void cmd_probe(struct tui *t, char *args)
{
	for (size_t c = 0; t->have_grid && c < t->grid.n_cols; c++)
		if (!strcmp(t->grid.cols[c], args)) {
			snprintf(t->probe, sizeof t->probe, "%s", args);
			t->probe_given = true;
			t->dirty = true;
			return;
		}
	tui_msg(t, true, "probe %s: not a stage of this grid", args);
}

static void cmd_view(struct tui *t, char *args)
{
	static const struct {
		const char *name;
		enum tui_action a;
	} v[] = {
		{"heatmap", A_VIEW_HEATMAP}, {"stages", A_VIEW_STAGES}, {"ranks", A_VIEW_RANKS},
		{"tensor", A_VIEW_TENSOR}, {"curve", A_VIEW_CURVE}, {"bisect", A_VIEW_BISECT},
		{"notes", A_VIEW_NOTES}, {"variants", A_VIEW_VARIANTS},
		{"time", A_VIEW_TIME}, {"help", A_HELP},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		if (!strcmp(args, v[i].name)) {
			t->action(t, v[i].a, false);
			return;
		}
	tui_msg(t, true, "view: heatmap, stages, ranks, tensor, curve, bisect, notes, variants "
	        "or help");
}

static void cmd_bind(struct tui *t, char *args)
{
	char *act = strchr(args, ' ');
	if (act)
		*act++ = '\0';
	const char *k = args;
	int key = tui_key_parse(&k);
	enum tui_action a = act ? tui_action_from_name(act) : A_NONE;
	if (key < 0 || *k)
		tui_msg(t, true, "bind: bad key '%s'", args);
	else if (a == A_NONE)
		tui_msg(t, true, "bind: unknown action '%s'", act ? act : "");
	else
		tui_bind(key, a);
}

static void cmd_unbind(struct tui *t, char *args)
{
	const char *k = args;
	int key = tui_key_parse(&k);
	if (key < 0 || *k)
		tui_msg(t, true, "unbind: bad key '%s'", args);
	else
		tui_unbind(key);
}

static void cmd_note(struct tui *t, char *args)
{
	tui_note_new(t, *args ? args : NULL);
}

static void cmd_mark(struct tui *t, char *args)
{
	tui_mark(t, args);
}

static void cmd_export(struct tui *t, char *args)
{
	tui_export(t, *args ? args : NULL);
}

static void cmd_resize(struct tui *t, char *args)
{
	int c, l;
	if (sscanf(args, "%dx%d", &c, &l) != 2 && sscanf(args, "%d %d", &c, &l) != 2) {
		tui_msg(t, true, "resize: COLSxLINES");
		return;
	}
	if (c < 1 || l < 1 || c > 1000 || l > 1000) {
		tui_msg(t, true, "resize: out of range");
		return;
	}
	resize_term(l, c);
	t->dirty = true;
}

static const struct {
	const char *name, *args, *help;
	cmd_fn run;
} cmds[] = {
	{"save-display", "FILE", "write the screen as text to FILE", cmd_save_display},
	{"save-colors", "FILE", "write each cell's colour pair to FILE (tests)", cmd_save_colors},
	{"quit", "", "quit", cmd_quit},
	{"help", "", "the keys and these commands", cmd_help},
	{"metric", "NAME", "show cos, rel, rel_diff or max_abs", cmd_metric},
	{"phase", "NAME", "select a phase", cmd_phase},
	{"pass", "NAME", "select a pass / step / call", cmd_pass},
	{"rank", "N|all", "select a rank or all (merged or worst per cell)", cmd_rank},
	{"variant", "N", "show variant N (dumpbisect REF T1 T2 ...)", cmd_variant},
	{"goto", "LAYER [STAGE]", "move the heatmap cursor (L7, 7, embed)", cmd_goto},
	{"filter", "[REGEX]", "same as /; no regex clears", cmd_filter},
	{"transpose", "", "swap the heatmap's axes", cmd_transpose},
	{"probe", "STAGE", "probe stage of the curve and the bisect", cmd_probe},
	{"view", "NAME", "open a view by name", cmd_view},
	{"bind", "KEY ACTION", "bind a key for this run", cmd_bind},
	{"unbind", "KEY", "unbind a key for this run", cmd_unbind},
	{"note", "[TITLE]", "write a new numbered note", cmd_note},
	{"mark", "[suspect|confirmed|refuted] TEXT", "mark the selection", cmd_mark},
	{"export", "[DIR]", "export the report (Markdown, SVG, JSON, CSV)", cmd_export},
	{"resize", "COLSxLINES", "resize the virtual screen (scripts)", cmd_resize},
};

#define N_CMDS (sizeof cmds / sizeof cmds[0])

size_t tui_commands(const char *const **names, const char *const **args,
                    const char *const **help)
{
	static const char *n[N_CMDS], *a[N_CMDS], *h[N_CMDS];
	for (size_t i = 0; i < N_CMDS; i++)
		n[i] = cmds[i].name, a[i] = cmds[i].args, h[i] = cmds[i].help;
	*names = n, *args = a, *help = h;
	return N_CMDS;
}

void tui_command(struct tui *t, const char *line)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", line);
	char *s = buf;
	while (*s == ' ')
		s++;
	if (!*s)
		return;
	char *args = s + strcspn(s, " ");
	if (*args)
		*args++ = '\0';
	while (*args == ' ')
		args++;
	size_t n = strlen(args);
	while (n && args[n - 1] == ' ')
		args[--n] = '\0';
	int found = -1, hits = 0;
	for (size_t i = 0; i < N_CMDS; i++) {
		if (!strcmp(cmds[i].name, s)) {
			found = (int)i, hits = 1;
			break;
		}
		if (!strncmp(cmds[i].name, s, strlen(s)))
			found = (int)i, hits++;
	}
	if (hits == 1)
		cmds[found].run(t, args);
	else if (hits > 1)
		tui_msg(t, true, ":%s is ambiguous (:help lists the commands)", s);
	else
		tui_msg(t, true, "unknown command :%s (:help lists the commands)", s);
}
