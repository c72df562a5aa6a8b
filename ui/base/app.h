/* The workbench's state shared by the framework and the views: the
 * comparison, the selection (phase, pass, rank, metric), the grid built for
 * it, the view stack and the bottom line. One per process. */
#ifndef TUI_APP_H
#define TUI_APP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_compare.h"
#include "db_grid.h"
#include "db_grid_cache.h"
#include "view.h"

struct db_session;
struct db_bisect_run;
struct db_bisect_result;
struct tui_analysis;
struct db_replay;
struct db_watch;

/* M_NOISE: the pair's rel over its noise floor (--noise; see db_noise.h) */
enum tui_metric { M_COS, M_REL, M_REL_DIFF, M_MAX_ABS, M_NOISE, M__COUNT };

#define TUI_MAX_VIEWS 12

/* The bottom line's line editor (prompt.h). */
struct tui_prompt {
	bool active;
	char label[64];                 /* shown before the text (":", "/", "note title: ") */
	char buf[512];                  /* UTF-8 */
	size_t len;
	/* called with the text on Enter: runs the command, sets the filter,
	 * writes the note... */
	void (*done)(struct tui *t, const char *text, void *arg);
	void *arg;
};

struct tui {
	/* command line */
	const char *ref_path, *tgt_path, *profile_opt, *filter_opt;
	const char *session_path, *notes_dir;
	db_compare *cmp;                /* owned */
	struct db_session *session;     /* owned; in memory only with --no-session */
	/* session_path is this pair of trees' automatic session (no
	 * --session): written once it holds work (steps, marks, notes) or
	 * when it exists already; its notes are beside it, its report in
	 * ./report */
	bool session_auto, session_auto_on_disk;
	char notes_said[320];           /* "; moved 1 note beside the session ..." at
	                                   the open (adopt_notes), or "" */
	bool session_none;              /* --no-session: nothing is kept */
	bool quit_warned;               /* q said the work is not kept */
	struct db_bisect_run *bisect;   /* owned; made by the bisect view */
	struct tui_analysis *analysis;  /* owned: the bisect's end analysis
	                                   (tui_bisect_result), NULL none */
	struct db_replay *replay;       /* owned: the resumed session's steps
	                                   re-judged on these trees (replay
	                                   --tui); NULL once the bisect changes */
	bool replay_checked;            /* tui_bisect_replay ran (it runs once) */

	/* selection; phase/pass index into the arrays, rank_sel 0 = all ranks
	 * (DB_RANK_ANY: merged where sharded, else rank-less, else the worst
	 * rank, see tui_grid_worst), k > 0 = ranks[k-1] */
	size_t phase;
	char **passes;                  /* owned, for the current phase */
	size_t n_passes, pass;
	/* passes (and default_pass) are those of phase passes_phase of the
	 * pairs as they are: a rank change does not recompute them (two
	 * passes over every pair per key at 100k files, issue 12); rescans
	 * and variant switches clear passes_valid */
	bool passes_valid;
	size_t passes_phase;
	int *ranks;                     /* owned */
	size_t n_ranks, rank_sel;
	bool has_merged;                /* merged (unsharded) pairs exist */
	/* Variants (dumpbisect REF T1 T2 ...): one comparison per target, all
	 * owned here; cmp is variants[variant]. n_variants 0 with one target. */
	db_compare **variants;
	const char **variant_paths;     /* borrowed from argv */
	size_t n_variants, variant;
	struct db_watch *watch;         /* owned; NULL: not watching (--no-watch) */
	bool watch_pending;             /* changes seen, rescan when possible */
	int64_t watch_last_ms;          /* last rescan (monotonic) */
	bool verify_told;               /* said the check found changes (under a view) */
	enum tui_metric metric;
	bool metric_chosen;             /* by the user or the session: a tree of
	                                 * statistics only does not move it to rel */
	bool transposed;
	char probe[256];                /* probe stage (curve, bisect) */
	bool probe_given;               /* probe set by the user (:probe, the curve's
	                                 * [ ], the session), else the bisect chooses */

	db_grid grid;                   /* for the selection; owned */
	db_grid_cache *grid_cache;      /* owned; the index the rank keys build from
	                                 * (made on first use, follows rescans and
	                                 * variants by itself) */
	bool have_grid;
	unsigned grid_gen;              /* bumped at every rebuild or cell change */
	unsigned worst_gen;             /* grid_gen tui_grid_worst last saw */
	size_t worst_done;              /* n_done it last saw */
	bool worst_settled;             /* every cell it can change is final */
	long first_div;                 /* any rank: pair index, -1 none (valid when computed) */
	long first_div_sel;             /* the same within the selected rank */
	long first_beyond;              /* db_first_beyond_drift_of(first_div): where the
	                                   bug shows when first_div only drifts; -1 */
	long *phase_div;                /* per phase: first divergence, any rank (owned) */
	long *rank_div;                 /* per rank of ranks: first divergence; in
	                                   phase_div's block, after the phases */
	size_t n_diverge;               /* pairs that diverge (all selections) */
	const char *default_pass;       /* of the phase; borrowed from the pairs */
	/* first_div, phase_div and n_diverge were computed for these pairs,
	 * n_done, phase and pass: a rank key recomputes first_div_sel only
	 * (three passes over every pair less per key, issue 12) */
	const db_compare *div_cmp;
	unsigned long div_gen;
	size_t div_done, div_phase;
	char *div_pass;                 /* owned */
	bool first_div_known;
	/* the phase and pass the bisect's triage chose (ui/base/triage_ui.c)
	 * and why; triaged false until it ran */
	bool triaged;
	char triaged_phase[64], triaged_pass[64];
	char pass_why[384];
	/* the triaged pass is the first diverging one (tui_triaged_diverges),
	 * as of pairs_gen/n_done */
	bool triaged_div;
	unsigned long triaged_div_gen;
	size_t triaged_div_done;

	/* "/" filter on stage names: col_match[c] for the grid's columns */
	void *filter_re;                /* pcre2_code, owned */
	char filter_pat[256];
	bool *col_match;
	unsigned col_match_gen;

	struct view views[TUI_MAX_VIEWS];
	int n_views;

	char msg[512];
	bool msg_err;
	struct tui_prompt prompt;
	/* Set by the top (ui/tui.c): perform key action a as if its key was
	 * pressed, the top view first unless global, then the global actions.
	 * The ":" commands reach the global actions through it, not by calling
	 * up into tui.c. */
	void (*action)(struct tui *t, enum tui_action a, bool global);

	bool script, quit, dirty, too_small, mouse;
	int exit_code;
	/* the last session save failed (why): the run exits 1 and says so
	 * once the terminal is back, not only on a status line gone at exit */
	bool session_unsaved;
	char session_fail[1100];
};

/* Selection accessors: NULL when the layout has no phases / passes. */
const char *tui_phase(const struct tui *t);
const char *tui_pass(const struct tui *t);
int tui_rank(const struct tui *t);      /* DB_RANK_ANY for all ranks */
/* Rebuild passes, grid and first divergence after a selection change. */
void tui_selection_changed(struct tui *t);
/* After a successful rescan: the rank list again, the selection kept when
 * it still exists, the grid rebuilt and the new pairs computing. */
void tui_rescanned(struct tui *t);
/* Recompute the first divergence once the scan is done. */
void tui_update_first_div(struct tui *t);
/* Select a rank view that shows pair: the all-ranks view stays when the
 * pair is merged or rank-less or its cell there shows its rank, else the
 * pair's rank is selected. True when the selection changed. */
bool tui_select_rank_of(struct tui *t, size_t pair);
/* All-ranks view: a cell of a replicated stage (one pair per rank) shows
 * its worst rank (not ok, then the worst band, then the lowest cos) once
 * every rank of it is computed; until then the lowest rank. Cheap when
 * nothing changed; bumps grid_gen when a cell changes. */
void tui_grid_worst(struct tui *t);
/* What the all-ranks view shows in pair's cell ("worst of 2 ranks") into
 * buf; "" in a one-rank view or for merged and rank-less pairs. */
char *tui_cell_rank_note(const struct tui *t, size_t pair, char *buf, size_t len);
bool tui_computing(const struct tui *t);

/* Metric of a computed pair. */
double tui_metric_value(const db_pair *p, enum tui_metric m);
const char *tui_metric_name(enum tui_metric m);
/* What the heatmap's corner and the selector show ("× noise" for M_NOISE). */
const char *tui_metric_label(enum tui_metric m);
/* The metric after t's (M_NOISE only with a noise tree). */
enum tui_metric tui_metric_next(const struct tui *t);
/* The cell text of a pair for metric m: exactly 9 columns (2 glyph + 7
 * value), and its colour. */
void tui_cell_text(const db_pair *p, enum tui_metric m, char *buf, size_t len,
                   int *color);

/* Filter: true when no filter is set or s matches it. */
bool tui_filter_match(const struct tui *t, const char *s);
/* Set (pattern non-empty) or clear the filter; -1 with a message when the
 * regex does not compile or matches no stage. */
int tui_filter_set(struct tui *t, const char *pattern);
/* Column c of the grid passes the filter (itself or one of its sub-stages). */
bool tui_col_visible(struct tui *t, size_t c);

/* Bottom-line message (shown until the next key). */
void tui_msg(struct tui *t, bool err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The selection as one line at y: phase tabs, pass, rank (what "all"
 * shows), variant, metric and filter. */
void tui_draw_selection(struct tui *t, WINDOW *w, int y);
/* Two status lines about pair at y, y+1: names, shapes, dtypes; metrics.
 * note (may be NULL) follows the pair's label. */
void tui_draw_pair_status(struct tui *t, WINDOW *w, int y, size_t pair);
void tui_draw_pair_status_note(struct tui *t, WINDOW *w, int y, size_t pair,
                               const char *note);
/* "L7 attn.o_proj rank 1" style label of a pair into buf. */
char *tui_pair_label(const struct tui *t, size_t pair, char *buf, size_t len);
/* "[16, 64]" of an item (NULL: "-"). */
char *tui_item_shape(const db_item *it, char *buf, size_t len);
/* Absolute path of an item of side ref (true) or target. Caller frees. */
char *tui_item_path(const struct tui *t, const db_item *it, bool ref);

/* Make variant k the comparison every view shows (views above the
 * heatmap close, the bisect starts over: its pairs were the other's). */
void tui_variant_select(struct tui *t, size_t k);
/* variants.md (the probe per layer and variant) into an export's dir. */
int tui_variants_export(struct tui *t, const char *dir, db_err *err);
/* The first selection of a comparison: the first phase, all ranks, the
 * probe the bisect would choose. */
void tui_init_selection(struct tui *t);

/* The heatmap's cursor moved to pair (first divergence, search, curve). */
void heatmap_goto_pair(struct tui *t, size_t pair);
/* Bisect (ui/views/view_bisect.c). A resumed session's bisect re-judged against
 * the trees now (once): when verdicts changed, says so on the bottom line
 * and the bisect view shows then and now instead of the logged outcome. */
void tui_bisect_replay(struct tui *t);
/* The bisect run (t->bisect), opened once: from the session when it has
 * bisect settings, else from the selection. replay: also tui_bisect_replay
 * (the view does; the export takes the log as it is). -1 after a message. */
int tui_bisect_ensure(struct tui *t, bool replay);
/* The end analysis the bisect view shows (ui/base/analysis_ui.c), made
 * once per state of the run (its steps and pairs) and shared with the
 * export and the sub-stage view, so the report says
 * what the screen says. NULL without a run or when it failed (said on the
 * bottom line). Owned by t; valid until the next call or tui_bisect_close. */
const struct db_bisect_result *tui_bisect_result(struct tui *t);
/* Close the run with its replay and analysis (another variant, the end). */
void tui_bisect_close(struct tui *t);

#endif
