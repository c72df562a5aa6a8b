/* The workbench, the top of ui/: options, terminal setup, the one input
 * loop (keys, script, resize, mouse, background progress) and the global
 * actions, which it lends to the modules below through t->action. The
 * frame and the view stack are ui/view.c's. */
#include "tui.h"

#include <curses.h>
#include <errno.h>
#include <limits.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/app.h"
#include "cmdline.h"
#include "commands.h"
#include "db_cmd.h"
#include "db_esc.h"
#include "db_reader.h"
#include "db_session.h"
#include "db_variants.h"
#include "base/draw.h"
#include "base/keys.h"
#include "notes_ui.h"
#include "base/prompt.h"
#include "base/script.h"
#include "base/session_ui.h"
#include "base/signals.h"
#include "base/triage_ui.h"
#include "watch_ui.h"

static struct timespec t_start;
static FILE *timing;
static SCREEN *screen;

static double cpu_ms(void)
{
	struct timespec b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	return (double)b.tv_sec * 1e3 + (double)b.tv_nsec / 1e6;
}

static double ms_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

/* ---- actions ---- */

static void cycle(size_t *i, size_t n, int dir)
{
	if (n)
		*i = (*i + n + (size_t)(dir > 0 ? 1 : n - 1)) % n;
}

/* What the ":" and "/" prompts do with their line on Enter. */
static void command_done(struct tui *t, const char *text, void *arg)
{
	(void)arg;
	tui_command(t, text);
}

static void filter_done(struct tui *t, const char *text, void *arg)
{
	(void)arg;
	tui_filter_set(t, text);
}

static void global_action(struct tui *t, enum tui_action a)
{
	size_t p;
	switch (a) {
	case A_VIEW_CLOSE:
		if (t->n_views <= 1 && t->session_none && !t->quit_warned && t->session &&
		    ((t->bisect && t->bisect->sm.n_steps) || t->session->n_marks)) {
			t->quit_warned = true;  /* the one loss a quit would make */
			tui_msg(t, true, "the bisect and marks end here (no session): q again "
			        "quits, e exports a report first");
		} else if (t->n_views <= 1)
			t->quit = true;
		else
			tui_pop(t);
		break;
	case A_VIEW_BACK: tui_pop(t); break;
	case A_QUIT: t->quit = true; break;
	case A_HELP: tui_push(t, &help_view, DB_NO_PAIR); break;
	case A_PROMPT: tui_prompt_open(t, ":", command_done, NULL); break;
	case A_SEARCH: tui_prompt_open(t, "/", filter_done, NULL); break;
	case A_REDRAW: clearok(curscr, TRUE); break;
	case A_VIEW_HEATMAP:
		while (t->n_views > 1)
			tui_pop(t);
		break;
	case A_SEARCH_NEXT: case A_SEARCH_PREV: case A_FIRST_DIVERGENCE: case A_TRANSPOSE:
		while (t->n_views > 1)
			tui_pop(t);
		t->views[0].ops->request(&t->views[0], t, a);
		break;
	case A_VIEW_STAGES: case A_VIEW_RANKS: case A_VIEW_TENSOR:
		p = tui_selected_pair(t);
		if (p == DB_NO_PAIR)
			tui_msg(t, true, "no tensor selected");
		else
			tui_push(t, a == A_VIEW_STAGES ? &stages_view
			            : a == A_VIEW_RANKS ? &ranks_view : &tensor_view, p);
		break;
	case A_VIEW_CURVE: tui_push(t, &curve_view, tui_selected_pair(t)); break;
	case A_VIEW_BISECT: tui_push(t, &bisect_view, DB_NO_PAIR); break;
	case A_VIEW_NOTES: tui_push(t, &notes_view, DB_NO_PAIR); break;
	case A_VIEW_TIME: tui_push(t, &time_view, DB_NO_PAIR); break;
	case A_NOTE_NEW: tui_note_new(t, NULL); break;
	case A_MARK: tui_mark(t, ""); break;
	case A_EXPORT: tui_export(t, NULL); break;
	case A_PHASE_NEXT: case A_PHASE_PREV:
		if (t->cmp->n_phases < 2) {
			tui_msg(t, false, "only one phase in these trees");
			break;
		}
		cycle(&t->phase, t->cmp->n_phases, a == A_PHASE_NEXT ? 1 : -1);
		tui_selection_changed(t);
		break;
	case A_PASS_NEXT: case A_PASS_PREV:
		if (t->n_passes < 2) {
			tui_msg(t, false, "only one pass in this phase");
			break;
		}
		cycle(&t->pass, t->n_passes, a == A_PASS_NEXT ? 1 : -1);
		tui_selection_changed(t);
		break;
	case A_RANK_NEXT: case A_RANK_PREV:
		if (!t->n_ranks) {
			tui_msg(t, false, "no ranks in these trees");
			break;
		}
		cycle(&t->rank_sel, t->n_ranks + 1, a == A_RANK_NEXT ? 1 : -1);
		tui_selection_changed(t);
		break;
	case A_VARIANT_NEXT: case A_VARIANT_PREV:
		if (t->n_variants < 2) {
			tui_msg(t, false, "one target: dumpbisect REF T1 T2 ... opens variants");
			break;
		}
		tui_variant_select(t, (t->variant + (a == A_VARIANT_NEXT ? 1 : t->n_variants - 1)) %
		                          t->n_variants);
		break;
	case A_VIEW_VARIANTS:
		if (t->n_variants < 2)
			tui_msg(t, false, "one target: dumpbisect REF T1 T2 ... opens variants");
		else
			tui_push(t, &variants_view, DB_NO_PAIR);
		break;
	case A_METRIC_TOGGLE: t->metric = t->metric == M_COS ? M_REL : M_COS; break;
	case A_METRIC_NEXT: t->metric = tui_metric_next(t); break;
	default: {
		const struct tui_action_info *ai = tui_action(a);
		tui_msg(t, false, "%s: not available in the %s view", ai->name,
		        tui_top(t)->ops->name);
		break;
	}
	}
	t->dirty = true;
}

/* t->action: the top view first (unless global), then the global actions. */
static void run_action(struct tui *t, enum tui_action a, bool global)
{
	struct view *v = tui_top(t);
	if (global || !v->ops->request || !v->ops->request(v, t, a))
		global_action(t, a);
	t->dirty = true;
}

static void handle_key(struct tui *t, int key)
{
	t->dirty = true;
	if (tui_prompt_key(t, key))
		return;
	struct view *v = tui_top(t);
	enum tui_action a = tui_key_action(v->ops->keymap, key);
	/* A message stays until the next key, except the one opening the
	 * command line (so :save-display can capture it). */
	if (a != A_PROMPT)
		t->msg[0] = '\0';
	if (a == A_NONE) {
		char name[32];
		tui_msg(t, false, "%s is not bound (? lists the keys)",
		        tui_key_name(key, name, sizeof name));
		return;
	}
	if (t->too_small && a != A_QUIT && a != A_VIEW_CLOSE && a != A_PROMPT &&
	    a != A_VIEW_BACK)
		return;
	run_action(t, a, false);
}

/* ---- the loop ---- */

/* Opened from snapshots: the watch and the check of every file start once
 * the first frame is up (watching first, so no change falls between). */
static bool start_after_frame;
static bool cli_no_watch;

static void after_first_frame(struct tui *t)
{
	if (!start_after_frame)
		return;
	if (!cli_no_watch)
		tui_watch_start(t);
	db_compare_verify_start(t->cmp);
}

/* Once the first scan is done, the workbench moves to the pass the
 * bisect's triage names, unless a selection was chosen first (a key, a
 * session's view state or its bisect's pass). */
static bool opened_on_triaged, key_before_open;

static void open_on_triaged(struct tui *t)
{
	if (opened_on_triaged)
		return;
	opened_on_triaged = true;
	if (key_before_open || t->n_views > 1 ||
	    (t->session && (db_session_view_get(t->session, "pass") || t->session->pass ||
	                    t->session->phase)))
		return;
	tui_select_triaged(t, "opened on ");
}

static bool views_busy(struct tui *t)
{
	for (int i = 0; i < t->n_views; i++)
		if (t->views[i].ops->busy && t->views[i].ops->busy(&t->views[i]))
			return true;
	return false;
}

static void loop(struct tui *t)
{
	bool shown_fin = false, shown_busy = false, first = true, was_checking = false;
	size_t shown_done = (size_t)-1;
	struct timespec last_draw = {0, 0}, key_t0;
	double key_cpu0 = 0;
	bool key_pending = false;
	char key_name[32] = "";
	for (;;) {
		if (tui_watch_tick(t, 0) || tui_verify_tick(t))
			t->dirty = true;
		bool checking = db_compare_verify_state(t->cmp) == DB_VERIFY_PENDING;
		if (was_checking && !checking && timing)
			fprintf(timing, "verify_ms %.3f\n", ms_since(&t_start));
		was_checking = checking;
		bool fin = !tui_computing(t), busy = views_busy(t) || checking;
		size_t done = atomic_load(&t->cmp->n_done);
		if (fin && !shown_fin) {
			open_on_triaged(t);
			tui_update_first_div(t);
			if (timing)
				fprintf(timing, "scan_done_ms %.3f\n", ms_since(&t_start));
		}
		if (fin != shown_fin || busy != shown_busy ||
		    (done != shown_done && ms_since(&last_draw) > 50))
			t->dirty = true;
		if (t->dirty) {
			tui_draw(t);
			clock_gettime(CLOCK_MONOTONIC, &last_draw);
			shown_fin = fin, shown_busy = busy, shown_done = done;
			if (first && timing)
				fprintf(timing, "first_frame_ms %.3f\n", ms_since(&t_start));
			if (first)
				after_first_frame(t);
			first = false;
			if (key_pending && timing)
				fprintf(timing, "key %s %.3f %.3f\n", key_name, ms_since(&key_t0),
				        cpu_ms() - key_cpu0);
			key_pending = false;
		}
		if (t->quit || tui_signal_pending())
			break;
		int key;
		if (script_active()) {
			int ready = fin && !busy ? script_ready() : 0;
			if (ready == 2)         /* files the test wrote before: seen first */
				t->dirty |= tui_watch_tick(t, 300);
			if (ready != 1) {
				napms(1);
				continue;
			}
			key = script_next();
			if (key < 0)
				break;
		} else {
			timeout(!fin || busy ? 100 : t->watch ? 200 : -1);
			wint_t ch;
			int r = get_wch(&ch);
			if (r == ERR)
				continue;
			if (r == KEY_CODE_YES && ch == KEY_RESIZE) {
				t->dirty = true;
				continue;
			}
			if (r == KEY_CODE_YES && ch == KEY_MOUSE) {
				MEVENT ev;
				struct view *v = tui_top(t);
				if (getmouse(&ev) == OK && v->ops->click && !t->too_small)
					v->ops->click(v, t, ev.y, ev.x);
				continue;
			}
			key = tui_key_from_curses((int)ch, r == KEY_CODE_YES);
		}
		clock_gettime(CLOCK_MONOTONIC, &key_t0);
		key_cpu0 = cpu_ms();
		key_pending = true;
		tui_key_name(key, key_name, sizeof key_name);
		key_before_open |= !opened_on_triaged;
		handle_key(t, key);
	}
}

/* ---- setup ---- */

/* The workbench's options: one table for the parsing and the usage. */
static db_cmp_args cli_cmp;
static const char *cli_session, *cli_notes, *cli_ref, *cli_tgt;
static bool cli_no_mouse, cli_keys_man, cli_no_session;
static const db_opt cli_opts[] = {
	DB_CMP_OPTS(cli_cmp, "profile name or YAML file (default: auto-detect;\n"
	                     "the session's when resuming)"),
	DB_NOISE_OPT(cli_cmp),
	DB_SLOTS_OPT(cli_cmp),
	{"session", 0, "FILE", &cli_session, NULL, "create or resume a session file (default: the\n"
	 "trees' own, kept under $XDG_STATE_HOME/dumpbisect)"},
	{"no-session", 0, NULL, NULL, &cli_no_session, "keep no session: marks and the bisect\n"
	 "end with the run"},
	{"ref", 0, "DIR", &cli_ref, NULL, "the reference tree (instead of the session's)"},
	{"target", 0, "DIR", &cli_tgt, NULL, "the target tree (instead of the session's)"},
	{"notes", 0, "DIR", &cli_notes, NULL, "notes folder (default: notes/ beside the session)"},
	{"no-mouse", 0, NULL, NULL, &cli_no_mouse, "do not ask the terminal for mouse clicks"},
	{"no-watch", 0, NULL, NULL, &cli_no_watch, "do not watch the trees for new files"},
	{"slot", 0, "[SIDE:]DIM:START:LEN", &cli_cmp.slot, NULL,
	 "the batch slot by hand (as compare --slot)"},
	{"keys-man", 0, NULL, NULL, &cli_keys_man, "print the key list as man-page text"},
};
static const db_cmd cli = {
	.name = NULL,
	.args = "[options] REF [TARGET...]\n"
	        "       dumpbisect [options] --session FILE\n"
	        "       dumpbisect COMMAND [ARGS]",
	.desc = "The workbench: heatmap, sub-stages, ranks, tensors, bisect and notes.",
	.exit = "0 after quitting, 2 usage error, trees that cannot be opened or no "
	        "terminal (headless: the compare and bisect commands), 3 a "
	        "scripted run (DUMPBISECT_SCRIPT) that hung past its watchdog.",
	.opts = cli_opts,
	.n_opts = sizeof cli_opts / sizeof *cli_opts,
	.max_pos = DB_MAX_VARIANTS + 1,
	.more = ui_commands_usage,
};

void tui_usage(FILE *out)
{
	db_cmd_usage(&cli, out);
}

/* What endwin would send, for the crash handler (which cannot call it). */
static const char *reset_sequence(bool mouse)
{
	static char buf[256];
	static const char *const caps[] = {"sgr0", "cnorm", "rmkx", "rmcup"};
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		if (i == 3 && mouse)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "\033[?1000l");
		const char *c = tigetstr(caps[i]);
		if (c && c != (char *)-1 && strlen(c) < sizeof buf - n - 1)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", c);
	}
	return buf;
}

static int start_curses(struct tui *t, bool utf8)
{
	if (t->script) {
		/* Tests: no tty needed; size from LINES/COLUMNS (tig's approach). */
		FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
		const char *term = getenv("TERM");
		if (!out || !in ||
		    !(screen = newterm(term && *term ? term : "xterm", out, in))) {
			fprintf(stderr, "dumpbisect: cannot set up the terminal %s\n",
			        term ? term : "");
			return -1;
		}
	} else if (!(screen = newterm(NULL, stdout, stdin))) {
		fprintf(stderr, "dumpbisect: cannot set up the terminal (TERM=%s)\n",
		        getenv("TERM") ? getenv("TERM") : "");
		return -1;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	const char *nc = getenv("NO_COLOR");
	bool color = has_colors() && !(nc && *nc);
	if (color) {
		start_color();
		use_default_colors();
	}
	draw_init(color, utf8);
	if (t->mouse && !t->script)
		mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED, NULL);
	if (t->script)
		tui_signals_terminal(-1, NULL);
	else
		tui_signals_terminal(fileno(stdout), reset_sequence(t->mouse));
	return 0;
}

int tui_main(int argc, char **argv)
{
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	struct tui tui;
	struct tui *t = &tui;
	memset(t, 0, sizeof *t);
	t->action = run_action;
	/* Options of `bisect --auto` given to the workbench: say where they
	 * belong instead of a bare "unknown option". */
	static const char *const headless[][2] = {
		{"--run", " CMD"}, {"--layers", " N"}, {"--auto", ""}, {"--stage", " S"},
		{"--band", " B"}, {"--good", " L"}, {"--cos", " X"}, {"--rel", " Y"},
	};
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		for (size_t k = 0; k < sizeof headless / sizeof *headless; k++) {
			const char *o = headless[k][0];
			size_t n = strlen(o);
			if (!strncmp(argv[i], o, n) && (!argv[i][n] || argv[i][n] == '='))
				return db_cmd_usage_error(&cli, "%s is an option of the headless bisect "
				                          "(dumpbisect bisect REF TARGET --auto%s%s%s); "
				                          "the workbench takes none: b bisects, <C-r> "
				                          "rescans after you dump a layer", o,
				                          strcmp(o, "--auto") ? " " : "",
				                          strcmp(o, "--auto") ? o : "", headless[k][1]);
		}
	const char *pos[DB_MAX_VARIANTS + 1] = {NULL, NULL};
	int npos, rc = db_cmd_parse(&cli, argc, argv, pos, &npos);
	if (rc >= 0)
		return rc;
	if (cli_keys_man) {
		tui_actions_man(stdout);
		return 0;
	}
	db_compare_opts co = {0};
	if (db_cmp_args_apply(&cli, &cli_cmp, &co) != 0)
		return 2;
	/* No terminal (a pipe, a batch job): refuse before the trees are
	 * opened, never draw into a file or wait for keys that cannot come.
	 * Scripted runs (tests) need none. */
	const char *script_env = getenv("DUMPBISECT_SCRIPT");
	if (!(script_env && *script_env) && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		return db_cmd_usage_error(&cli, "not a terminal: the workbench needs one; without, "
		                          "use dumpbisect compare REF TARGET or dumpbisect bisect "
		                          "REF TARGET --auto");
	t->profile_opt = cli_cmp.profile;
	t->filter_opt = cli_cmp.filter;
	t->session_path = cli_session;
	t->notes_dir = cli_notes;
	t->mouse = !cli_no_mouse;
	if (cli_session && cli_no_session)
		return db_cmd_usage_error(&cli, "--session and --no-session: give one");
	/* No --session: the trees' automatic session (no work lost on q) */
	static char auto_path[PATH_MAX];
	char auto_msg[sizeof t->msg] = "";
	t->session_none = cli_no_session;
	if (!cli_session && !cli_no_session && (cli_ref || pos[0])) {
		const char *tg[DB_MAX_VARIANTS];
		size_t ntg = 0;
		if (cli_ref || cli_tgt)
			tg[ntg++] = cli_tgt;
		else
			for (int i = 1; i < npos; i++)
				tg[ntg++] = pos[i];
		char *ap = tui_session_auto_path(cli_ref ? cli_ref : pos[0], tg, ntg);
		if (ap && strlen(ap) < sizeof auto_path) {
			strcpy(auto_path, ap);
			t->session_path = auto_path;
			t->session_auto = true;
		}
		free(ap);
	}
	db_err err = {{0}};
	if (t->session_path) {
		struct stat sst;        /* stat, not open: a FIFO would block */
		if (stat(t->session_path, &sst) == 0) {
			if (db_session_load(t->session_path, &t->session, &err) < 0 && t->session_auto) {
				/* never reset: it stays as it is, this run keeps nothing */
				snprintf(auto_msg, sizeof auto_msg, "not reopened (kept as it is): %.400s",
				         err.msg);
				t->session_path = NULL;
				t->session_auto = false;
				t->session_none = true;
			} else if (!t->session) {
				fprintf(stderr, "dumpbisect: %s\n", err.msg);
				return 2;
			} else if (t->session_auto) {
				t->session_auto_on_disk = true;
			}
		} else if (errno != ENOENT && t->session_auto) {
			snprintf(auto_msg, sizeof auto_msg, "no session kept: %.300s: %s",
			         t->session_path, strerror(errno));
			t->session_path = NULL;
			t->session_auto = false;
			t->session_none = true;
		} else if (errno != ENOENT) {
			fprintf(stderr, "dumpbisect: %s: %s\n", db_esc(t->session_path), strerror(errno));
			return 2;
		}
	}
	/* Trees: --ref/--target, else the positionals, else the session's. The
	 * session file keeps its own trees: these are for this run. */
	const char *ref = cli_ref ? cli_ref : pos[0], *tgt = cli_tgt ? cli_tgt : pos[1];
	t->ref_path = ref ? ref : t->session ? t->session->ref : NULL;
	t->tgt_path = tgt ? tgt : t->session ? t->session->target : NULL;
	bool profile_from_session = !t->profile_opt && t->session && t->session->profile;
	if (profile_from_session)
		t->profile_opt = t->session->profile;
	if (!t->ref_path && t->session_path && !t->session) {
		fprintf(stderr, "dumpbisect: %s: no such session file (give REF [TARGET] to start "
		        "a new one there)\n", db_esc(t->session_path));
		return 2;
	}
	if (!t->ref_path) {
		db_session_free(t->session);
		return db_cmd_usage_error(&cli, "REF is missing (or --session FILE to resume)");
	}
	if (t->session && !ref) {
		/* The session's trees must still be there ("moved?"). */
		db_session chk = *t->session;
		if (tgt)
			chk.target = NULL;
		if (db_session_check_trees(&chk, &err) < 0) {
			fprintf(stderr, "dumpbisect: %s\n", err.msg);
			db_session_free(t->session);
			return 2;
		}
	}
	/* --noise, --slots and --align are kept in the session, as the trees are */
	tui_session_opts(t, &cli_cmp, &co);
	if (co.slots && (!tgt || !strcmp(tgt, t->ref_path)))
		t->tgt_path = t->ref_path;      /* one tree: slot 0 against slot k */
	if (t->session_path && !t->session) {
		/* Absolute paths: the session may be resumed from elsewhere. */
		char ra[PATH_MAX], ta[PATH_MAX];
		bool rok = realpath(t->ref_path, ra), tok = t->tgt_path && realpath(t->tgt_path, ta);
		t->session = db_session_new(rok ? ra : t->ref_path,
		                            tok ? ta : t->tgt_path);
		if (t->session && t->profile_opt)
			t->session->profile = strdup(t->profile_opt);
		if (t->session && cli_cmp.noise) {
			char na[PATH_MAX];
			t->session->noise = strdup(realpath(cli_cmp.noise, na) ? na : cli_cmp.noise);
		}
		if (t->session && cli_cmp.slots)
			t->session->slots = strdup(cli_cmp.slots);
		if (t->session && cli_cmp.align)
			t->session->align = strdup(cli_cmp.align);
	}

	setlocale(LC_ALL, "");
	bool utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	const char *tf = getenv("DUMPBISECT_TIMING");
	if (tf && *tf)
		timing = fopen(tf, "a");

	co.profile = t->profile_opt;
	if (profile_from_session)
		co.profile_from = DB_SESSION_PROFILE_WHY;
	if (npos > 2 && !cli_ref && !cli_tgt) {
		/* variants: every target against the reference, the first shown */
		db_variants vs;
		if (db_variants_open(t->ref_path, pos + 1, (size_t)npos - 1, &co, &vs, &err) < 0) {
			fprintf(stderr, "dumpbisect: %s\n", err.msg);
			db_session_free(t->session);
			return 2;
		}
		t->variants = vs.v;
		t->n_variants = vs.n;
		t->variant_paths = pos + 1;
		t->cmp = vs.v[0];
	} else {
		co.verify_later = true;         /* see src/compare/compare_reopen.c */
		if (db_compare_open(t->ref_path, t->tgt_path, &co, &t->cmp, &err) < 0) {
			fprintf(stderr, "dumpbisect: %s\n", err.msg);
			db_session_free(t->session);
			return 2;
		}
	}
	start_after_frame = db_compare_from_snapshots(t->cmp);
	if (timing)
		fprintf(timing, "open_ms %.3f\nopen_from %s\nfiles_opened %zu\n", ms_since(&t_start),
		        start_after_frame ? "snapshots" : "listing", db_files_opened());
	/* from here on Ctrl-C ends the workbench the normal way; before, a
	 * long open is simply killed */
	tui_signals_install();

	tui_bind_defaults();
	char kerr[512] = "", kpath[1024];
	int kbad = tui_keymap_path(kpath, sizeof kpath)
	               ? tui_keymap_load(kpath, kerr, sizeof kerr) : 0;

	const char *sp = getenv("DUMPBISECT_SCRIPT");
	rc = 0;
	if (sp && *sp) {
		char serr[512];
		if (script_open(sp, serr, sizeof serr) < 0) {
			fprintf(stderr, "dumpbisect: %s\n", db_esc(serr));
			rc = 2;
			goto out_cmp;
		}
		t->script = true;
	}
	if (start_curses(t, utf8) < 0) {
		rc = 2;
		goto out_cmp;
	}
	tui_init_selection(t);
	tui_view_state_restore(t);
	tui_push(t, &heatmap_view, DB_NO_PAIR);
	if (kbad)
		tui_msg(t, true, "%s%s", kerr,
		        kbad > 1 ? " (and more; defaults kept)" : " (defaults kept)");
	else if (auto_msg[0])
		tui_msg(t, true, "these trees' session %s", auto_msg);
	else if (t->session_auto_on_disk)
		tui_session_say(t, false, "reopened these trees' session ", t->notes_said);
	if (!kbad)
		tui_bisect_replay(t);   /* a resumed session on changed dumps */
	db_compare_start(t->cmp);
	if (!cli_no_watch && !start_after_frame)
		tui_watch_start(t);
	loop(t);
	tui_watch_stop(t);
	db_compare_stop(t->cmp);
	tui_view_state_save(t);

	while (t->n_views > 1)
		tui_pop(t);
	if (t->n_views) {
		struct view *v = &t->views[0];
		if (v->ops->done)
			v->ops->done(v, t);
		free(v->priv);
	}
	endwin();
	tui_signals_terminal(-1, NULL);     /* given back already */
	delscreen(screen);
	rc = tui_session_exit(t, t->exit_code);
	/* the metrics cache is saved when the workers are joined, at the end:
	 * a save that failed is said once the terminal is back (the numbers
	 * shown were right; they are computed again next time) */
	if (t->cmp->cache_err[0])
		fprintf(stderr, "dumpbisect: metrics cache not saved: %s (the numbers were right; "
		        "they are computed again next time)\n", db_esc(t->cmp->cache_err));
out_cmp:
	script_free();
	tui_bindings_free();
	if (t->have_grid)
		db_grid_free(&t->grid);
	db_grid_cache_free(t->grid_cache);
	for (size_t i = 0; i < t->n_passes; i++)
		free(t->passes[i]);
	free(t->passes);
	free(t->ranks);
	if (t->filter_re)
		tui_filter_set(t, NULL);
	free(t->col_match);
	free(t->phase_div);
	free(t->div_pass);
	tui_bisect_close(t);
	if (t->n_variants) {
		db_variants vs = {t->variants, t->n_variants};
		db_variants_free(&vs);
	} else {
		db_compare_free(t->cmp);
	}
	db_session_free(t->session);
	if (timing)
		fclose(timing);
	int sig = tui_signal_pending();
	if (sig)
		tui_signals_exit(sig);
	return rc;
}
