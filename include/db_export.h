/* Export of a session (dumpbisect export, the TUI's `e`): into out_dir,
 * the four written as one (db_export_all: all staged, then renamed, report.md
 * last, all of one generation),
 *   report.md     seed 000's report outline: summary, divergence point,
 *                 severity, bisect log, marks, notes index
 *   heatmap.svg   layer × stage cells coloured by band, cos in each cell,
 *                 marks outlined (report.md has the same cells as a table)
 *   metrics.json  every pair, same pair schema as `compare --format json`
 *   metrics.csv   the same, one row per pair */
#ifndef DB_EXPORT_H
#define DB_EXPORT_H
#include <stdio.h>
#include "db_bisect.h"
#include "db_compare.h"
#include "db_grid.h"
#include "db_session.h"

/* Everything the report needs; all borrowed. res/b may be NULL (no bisect
 * yet); notes_dir NULL = db_notes_dir_for(s->path). c must be run (all
 * pairs computed). */
typedef struct db_export_ctx {
	const db_session *s;
	db_compare *c;
	const db_bisect *b;
	const db_bisect_result *res;
	const char *notes_dir;
	/* The session bisect (s itself or one of s->earlier) that b and res
	 * are of; NULL = s's current one. report.md shows it first, then every
	 * other bisect of s that has steps (db_session_bisects). */
	const db_session *bisect_of;
	/* The heatmap's selection. view true: phase/pass/rank below (the
	 * workbench passes what its screen shows); false: the session's saved
	 * view, else its bisect phase and pass, all ranks. The cells are
	 * chosen as the screen chooses them (db_cell.h). */
	bool view;
	const char *phase, *pass;   /* NULL = first phase / profile's pass */
	int rank;                   /* DB_RANK_ANY = all ranks, else one rank */
	/* The heatmap as the screen draws it (its cells chosen, borrowed):
	 * used as is, never built again. NULL: built from the selection above
	 * (db_export_grid), as the headless export does. */
	const db_grid *grid;
	/* db_export_all's stamp of this export ("20261127T091954Z-3f2a1b7c"),
	 * in report.md, heatmap.svg and metrics.json; NULL = none */
	const char *generation;
	/* The folder report.md goes to (db_export_all sets it): its links to
	 * the notes are relative to it. NULL: the current directory. */
	const char *out_dir;
} db_export_ctx;

/* Write the four files into out_dir (created), as one: each is written and
 * fsynced to a temp file first, and only when all four are, renamed over
 * the old ones, report.md last. A write that fails (a full disk) leaves the
 * previous export whole; -1 with err naming the file and the call. All four
 * carry one generation stamp (report.md's says which heatmap.svg and
 * metrics.json belong to it; metrics.csv, which has no room for it, is
 * renamed with metrics.json). */
int db_export_all(const db_export_ctx *x, const char *out_dir, db_err *err);

/* The parts, to a stream (tests, TUI). Return 0 or -1 on write error. */
int db_export_report_md(FILE *f, const db_export_ctx *x);
/* g: x->grid or the grid of db_export_grid (cells already chosen). */
int db_export_svg(FILE *f, const db_compare *c, const db_grid *g,
                  const db_session *s);
/* The heatmap grid of x's selection, its cells chosen as on the screen
 * (built, even when x->grid is set). -1 on OOM. */
int db_export_grid(const db_export_ctx *x, db_grid *g);
/* Every pair of c (computed) as JSON / CSV: the one implementation behind
 * metrics.json, metrics.csv and `compare --format json|csv`. */
int db_export_metrics_json(FILE *f, const db_compare *c);
/* Its ", first_divergence, first_divergent_phase, first_beyond_drift"
 * members (indices into c->pairs or null), also in compare's variants. */
void db_export_divergence_json(FILE *f, const db_compare *c);
/* With several passes: one line per pass (its first divergence, and the
 * first beyond drift) and "first diverging pass: N" (db_passes.h); the
 * JSON keys ", \"passes\": [...], \"first_diverging_pass\"" the same.
 * Nothing with one pass. Over computed pairs. */
void db_passes_text(FILE *out, const db_compare *c);
void db_passes_json(FILE *out, const db_compare *c);
/* --slots (c->n_slots): each pass split or skipped, and why; the JSON key
 * ", \"slots\": {...}". Nothing without --slots. */
void db_slots_text(FILE *out, const db_compare *c);
void db_slots_json(FILE *out, const db_compare *c);
/* Token alignment (c->align_whole, align_note): compare's header line;
 * nothing when no alignment was tried. */
void db_align_text(FILE *out, const db_compare *c);
/* report.md's "- aligned by token: HOW; the culprit's first bad token: T"
 * line (T < 0: not known); nothing without alignment. */
void db_align_md(FILE *out, const db_compare *c, long long token);
/* "  first bad token: 14 of the aligned sequence (target pass 3, ...)"
 * for pair i, the first divergence (beyond: the first beyond drift);
 * nothing when i < 0 or the pair has no token rows (db_token.h). */
void db_token_text(FILE *out, const db_compare *c, long i, bool beyond);
/* ", \"alignment\": {...}, \"first_divergence_token\": {token, pass, row,
 * rows, dim, severity, rel, target_pass, target_row} | null,
 * \"first_beyond_drift_token\": ..." */
void db_align_json(FILE *out, const db_compare *c, long fd, long fb);
/* Pair i's first bad token inside a first-divergence object (beyond: as
 * judged beyond drift): ", \"token\": T, \"target_pass\": P, \"target_row\":
 * R" (the target's own pass and row holding it: with token alignment the
 * whole pass's row when the target is the one pass), nulls when unknown. */
void db_token_fields_json(FILE *out, const db_compare *c, long i, bool beyond);
int db_export_metrics_csv(FILE *f, const db_compare *c);
/* What c's verdicts were judged by: the JSON key ("slots_bitwise",
 * "noise", "bit_identical", "bands") and a sentence for report.md and the
 * SVG (the noise run's path, k, the floors; the regime; the slots). */
const char *db_judged_by_key(const db_compare *c);
char *db_judged_by_text(const db_compare *c, char *buf, size_t len);
/* The same, only the pairs keep says true of (NULL: every pair). */
int db_export_metrics_csv_where(FILE *f, const db_compare *c, bool (*keep)(const db_pair *));
/* report.md's intra-layer walk of the culprit layer (the core's walk rows,
 * never judged again): every stage with the error it receives and leaves,
 * amplification, SQNR and role, a stage that could not be compared in its
 * place with its reason, and "at or before" when such stages precede the
 * culprit. Nothing when r has no walk. */
void db_export_walk_md(FILE *f, const db_bisect_result *r);
/* The default export folder of the session file session (NULL: none)
 * in base_dir (NULL = "."): base_dir/report, unless that holds the report
 * of another session (its report.md names it): then
 * base_dir/report-<session's name>, and note gets the other session's
 * path ("" otherwise). *out malloc'd. -1 with err naming
 * the other session when that is another's too, or when a session-less
 * export would write over a session's report: never overwritten. */
int db_export_dir_for(const char *session, const char *base_dir, char **out, char *note,
                      size_t note_len, db_err *err);
/* The bisect an export centres on: the first of db_session_bisects (the
 * found one first), its run opened over c and analysed into *res.
 * Returns 1 (*run, *which set; free the run and res), 0 when s has no
 * bisect with steps, -1 with err. */
int db_export_pick_bisect(const db_session *s, db_compare *c, db_bisect_run **run,
                          db_bisect_result *res, const db_session **which, db_err *err);
/* report.md's bisect log (every bisect of the session that has steps,
 * x->b first) and marks table (phase, pass, layer, stage, rank, status,
 * text); metrics.json's ", \"marks\": [...], \"bisects\": [...]". */
void db_export_bisects_md(FILE *f, const db_export_ctx *x);
void db_export_marks_md(FILE *f, const db_session *s);
void db_export_record_json(FILE *f, const db_export_ctx *x);
/* One pair as a JSON object (the compare --format json pair schema). */
void db_export_pair_json(FILE *f, const db_compare *c, const db_pair *p);

#endif
