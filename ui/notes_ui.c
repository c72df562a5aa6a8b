/* Notes, marks and export from the TUI: each action takes
 * its numbers from what the user is looking at (seed 002 "Documentation
 * discipline"). */
#include "notes_ui.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/app.h"
#include "db_bisect.h"
#include "db_export.h"
#include "base/draw.h"
#include "db_notes.h"
#include "db_session.h"
#include "base/prompt.h"
#include "base/session_ui.h"

/* The session, made in memory on first use when there is no --session. */
static db_session *session(struct tui *t)
{
	if (!t->session)
		t->session = db_session_new(t->ref_path, t->tgt_path);
	return t->session;
}

/* path below dir: the part after "dir/", or NULL. */
static const char *below(const char *path, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;
	if (n == 0 || dir[0] != '/' || strncmp(path, dir, n))
		return NULL;
	if (n == 1)
		return path + 1;        /* dir is "/" */
	return path[n] == '/' && path[n + 1] ? path + n + 1 : NULL;
}

/* $PWD when it is the current directory (the user's name for it, through
 * symlinks), else NULL. */
static const char *logical_cwd(void)
{
	const char *pwd = getenv("PWD");
	struct stat a, b;
	if (!pwd || pwd[0] != '/' || stat(pwd, &a) < 0 || stat(".", &b) < 0 ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return NULL;
	return pwd;
}

/* A path for the status line, where prefix already takes some columns:
 * relative to the current directory when it is under it; else, when too
 * wide for the line, its middle elided so the file name stays whole
 * ("/home/u/lo…/notes/01_x.md"). Into buf; returns buf. */
static const char *msg_path(const char *path, const char *prefix, char *buf, size_t len)
{
	char cwd[PATH_MAX];
	const char *rel = below(path, logical_cwd());
	if (!rel && getcwd(cwd, sizeof cwd))
		rel = below(path, cwd);
	if (rel)
		path = rel;
	int room = COLS - draw_width(prefix);
	if (draw_width(path) <= room || room < 8) {
		snprintf(buf, len, "%s", path);
		return buf;
	}
	return draw_fit_mid(path, room, room * 2 / 3, buf, len);
}

static void note_write(struct tui *t, const char *title, void *arg)
{
	(void)arg;
	if (!title || !*title) {
		tui_msg(t, true, "note not written: no title");
		return;
	}
	/* Data: what the view shows (its own Markdown), then the selected pair. */
	char *data = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&data, &len);
	if (!f) {
		tui_msg(t, true, "out of memory");
		return;
	}
	struct view *v = tui_top(t);
	size_t sel = tui_selected_pair(t);
	if (v->ops->note_data) {
		v->ops->note_data(v, t, f);
		fputc('\n', f);
	}
	if (sel != DB_NO_PAIR) {
		char *md = db_md_cell(t->cmp, sel);
		if (md) {
			fputs(md, f);
			free(md);
		}
	}
	if (t->bisect && t->bisect->sm.n_steps && v->ops != &bisect_view) {
		char *md = db_md_bisect(&t->bisect->sm, NULL);
		if (md) {
			fprintf(f, "\nBisect:\n\n%s", md);
			free(md);
		}
	}
	fclose(f);
	char rk[64];
	if (t->rank_sel)
		snprintf(rk, sizeof rk, "rank %d", tui_rank(t));
	else
		snprintf(rk, sizeof rk, "all ranks (merged where sharded, else the worst)");
	/* Paths, profile, phase and pass are foreign text: code spans
	 * (db_esc_md_code), as everywhere in Markdown; the title as prose. */
	char *exp = NULL, *hyp = NULL;
	size_t elen = 0, hlen = 0;
	FILE *e = open_memstream(&exp, &elen), *h = open_memstream(&hyp, &hlen);
	if (e) {
		fputs("Compared ", e);
		db_esc_md_code(t->ref_path, e);
		fputs(" (reference) with ", e);
		db_esc_md_code(t->tgt_path ? t->tgt_path : t->ref_path, e);
		fputs(" (target), profile ", e);
		db_esc_md_code(t->cmp->profile ? t->cmp->profile->name : "?", e);
		fputs("; phase ", e);
		db_esc_md_code(tui_phase(t) && *tui_phase(t) ? tui_phase(t) : "-", e);
		fputs(", pass ", e);
		db_esc_md_code(tui_pass(t) && *tui_pass(t) ? tui_pass(t) : "-", e);
		fprintf(e, ", %s; dumpbisect %s view.", rk, v->ops->name);
		fclose(e);
	}
	if (h) {
		db_esc_md_text(title, h);
		fclose(h);
	}
	db_note_sections sec = {.hypothesis = hyp, .experiment = exp, .data = data};
	char *dir = tui_notes_dir(t), *path = NULL;
	int num = 0;
	db_err err = {{0}};
	if (!dir || db_notes_create(dir, title, &sec, &path, &num, &err) < 0) {
		tui_msg(t, true, "note not written: %s", dir ? err.msg : "out of memory");
	} else {
		/* the editor first: only a note it saved (or none was asked for)
		 * is called written; the file stays either way (its data) */
		char prefix[224], shown[PATH_MAX], why[128];
		int ed = tui_edit_file(t, path, why, sizeof why);
		if (ed < 0)
			snprintf(prefix, sizeof prefix, "note %02d left as its template ($EDITOR %s): ",
			         num, why);
		else
			snprintf(prefix, sizeof prefix, "wrote note %02d: ", num);
		tui_msg(t, ed < 0, "%s%s", prefix, msg_path(path, prefix, shown, sizeof shown));
		if (t->session) {
			db_session_add_note(t->session, path);
			tui_session_save(t);
		}
	}
	free(path);
	free(dir);
	free(data);
	free(exp);
	free(hyp);
}

void tui_note_new(struct tui *t, const char *title)
{
	if (title)
		note_write(t, title, NULL);
	else
		tui_prompt_open(t, "note title: ", note_write, NULL);
}

/* "[suspect|confirmed|refuted] text" on the selected pair. */
static void mark_write(struct tui *t, const char *args, void *arg)
{
	(void)arg;
	size_t p = tui_selected_pair(t);
	if (p == DB_NO_PAIR) {
		tui_msg(t, true, "nothing selected to mark");
		return;
	}
	char word[32] = "";
	const char *text = args;
	db_mark_status st = DB_MARK_SUSPECT;
	sscanf(args, "%31s", word);
	if (db_mark_status_parse(word, &st)) {
		text = args + strlen(word);
		while (*text == ' ')
			text++;
	}
	const db_pair *q = &t->cmp->pairs[p];
	db_session *s = session(t);
	/* made at rank "all", it is about every rank: not the one the cell
	 * happens to show (its worst) */
	bool all = !t->rank_sel || q->merged;
	/* on its place: the pair's phase and pass (drawn there only) */
	if (!s || db_session_add_mark_at(s, q->f.phase, q->f.pass, q->f.layer, q->f.stage,
	                                 all ? -1 : q->f.rank, st, text) < 0) {
		tui_msg(t, true, "out of memory");
		return;
	}
	char lab[300];
	if (all && q->f.layer >= 0)
		snprintf(lab, sizeof lab, "L%d %s (all ranks)", q->f.layer, q->f.stage);
	else if (all)
		snprintf(lab, sizeof lab, "%s (all ranks)", q->f.stage);
	else
		tui_pair_label(t, p, lab, sizeof lab);
	tui_msg(t, false, "marked %s %s%s", lab, db_mark_status_name(st),
	        t->session_path ? "" : " (not kept: no session)");
	tui_session_save(t);
}

void tui_mark(struct tui *t, const char *args)
{
	if (args && *args)
		mark_write(t, args, NULL);
	else
		tui_prompt_open(t, "mark [suspect|confirmed|refuted] text: ", mark_write, NULL);
}

void tui_export(struct tui *t, const char *dir)
{
	if (tui_computing(t)) {
		tui_msg(t, true, "export: wait until the scan is done");
		return;
	}
	db_session *s = session(t);
	char *def = NULL, why[PATH_MAX + 64] = "";
	db_err err = {{0}};
	if (!dir) {
		/* beside --session's file (the automatic one's is not the
		 * user's: ./report), never over another session's report */
		const char *sp = t->session_auto ? NULL : t->session_path;
		const char *slash = sp ? strrchr(sp, '/') : NULL;
		char base[PATH_MAX];
		snprintf(base, sizeof base, "%.*s", slash ? (int)(slash - sp) : 1, slash ? sp : ".");
		if (db_export_dir_for(s ? s->path : NULL, base, &def, why, sizeof why, &err) < 0) {
			tui_msg(t, true, "export: %s", err.msg);
			return;
		}
		dir = def;
	}
	char *notes = tui_notes_dir(t);
	/* a resumed session's bisect is in the report even when the bisect
	 * view was not opened in this run: its log as it is, not replayed */
	if (!t->bisect && s && s->n_steps)
		tui_bisect_ensure(t, false);
	/* what the screen shows, not built again: the bisect view's analysis
	 * and the heatmap's grid, its cells settled as a draw settles them */
	const db_bisect_result *res = tui_bisect_result(t);
	const db_bisect *b = t->bisect ? &t->bisect->sm : NULL;
	/* every bisect with steps is in it, the found one first: when that
	 * is another pass's than the screen's, the report centres on it */
	const db_session *which = NULL, *first = NULL;
	db_bisect_run *kr = NULL;
	db_bisect_result kres = {0};
	if (s && t->bisect)
		db_session_sync_bisect(s, &t->bisect->sm, &err);
	if (s && db_session_bisects(s, &first, 1) && first != s &&
	    db_export_pick_bisect(s, t->cmp, &kr, &kres, &which, &err) > 0) {
		b = &kr->sm;
		res = &kres;
	}
	tui_grid_worst(t);
	db_export_ctx x = {.s = s, .c = t->cmp, .b = b, .bisect_of = which,
	                   .res = res, .notes_dir = notes, .view = true,
	                   .phase = tui_phase(t), .pass = tui_pass(t), .rank = tui_rank(t),
	                   .grid = t->have_grid ? &t->grid : NULL};
	const char *done = "exported report.md, heatmap.svg, metrics.json, metrics.csv to ";
	char shown[PATH_MAX], msg[PATH_MAX + 200];
	if (t->n_variants)
		done = "exported report.md, heatmap.svg, metrics.json, metrics.csv, variants.md to ";
	if (!s || !dir || db_export_all(&x, dir, &err) < 0 ||
	    (t->n_variants && tui_variants_export(t, dir, &err) < 0)) {
		tui_msg(t, true, "export failed: %s", err.msg[0] ? err.msg : "out of memory");
	} else {
		/* another session's report/ was there: where this one went, first */
		if (why[0]) {
			const char *other = strrchr(why, '/') ? strrchr(why, '/') + 1 : why;
			snprintf(msg, sizeof msg, "report/ is %.100s's: exported to ", other);
			done = msg;
		}
		tui_msg(t, false, "%s%s", done, msg_path(dir, done, shown, sizeof shown));
	}
	db_bisect_result_free(&kres);
	db_bisect_run_free(kr);
	free(notes);
	free(def);
}
