/* A bisect session on disk (YAML, libyaml): both tree paths, the profile,
 * the probe and predicate, every step, marks, notes created and the TUI's
 * view state. Saved after every step with db_atomic_write. A file that does
 * not parse is an error with file:line:column — never silently reset.
 *
 * Format (version 2; a version 1 file is read and migrated, see below):
 *   dumpbisect_session: 2
 *   ref: /abs/ref            target: /abs/target
 *   profile: sglang-v1       (omitted = auto-detect)
 *   noise: /abs/noise        (omitted = none; --noise, db_noise.h)
 *   slots: "4"               (omitted = none; --slots, one tree's batch slots)
 *   align: tokens            (omitted = auto; --align, token alignment)
 *   phase: prefill  pass: "0"  probe: hidden_out  predicate: band:ok
 *   good: -1                 (start good layer; -1 = before the first)
 *   layers: [0, 1, 2, ...]   (candidates; 2147483647 = final)
 *   created: 1700000000  updated: 1700000123
 *   steps:
 *     - {layer: 4, verdict: bad, by: auto, auto: bad, cos: 0.5, rel: 0.9,
 *        band: bug, time: 1700000001}
 *   marks:
 *     - {phase: "", pass: "3", layer: 4, stage: attn.o_proj, rank: 1,
 *        status: confirmed, text: "sign flip", time: 1700000050}
 *   notes: [notes/01_first_look.md]
 *   view: {cursor: "4,2", rank: "-1"}   (free-form string map)
 *   earlier:                 (omitted = none)
 *     - {phase: ..., pass: "2", probe: ..., predicate: ..., good: -1,
 *        layers: [...], steps: [...]}   (the bisects of the other passes)
 *
 * A bisect belongs to its (phase, pass): the top-level one is the pass
 * the user works on, `earlier` keeps one for each other (phase, pass) that
 * has steps; going back to a pass resumes its bisect
 * (db_session_switch_bisect). Version 1 files differ in two ways, and are
 * migrated when read: their marks carry no phase and pass (each is placed
 * on the pass of a bisect in the file that found its layer, else on the
 * pass the session was on; a mark that cannot be placed stays on every
 * pass), and `earlier` may hold several bisects of one pass (the last is
 * the one a return to that pass resumes; none is dropped).
 *
 * Several writers (the workbench, the bisect verbs, bisect --auto) may share
 * one file. Each save takes the session lock (an flock on the directory the
 * file is renamed in), reads the file again and, when another writer changed
 * it since this session read or wrote it, merges the two (db_session_save)
 * instead of writing over it: a verdict is never dropped silently.
 */
#ifndef DB_SESSION_H
#define DB_SESSION_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_bisect.h"
#include "db_err.h"

/* The "why" of a profile taken from a session (db_compare_opts.profile_from):
 * not --profile, whether or not it was auto-detected back then. */
#define DB_SESSION_PROFILE_WHY "recorded in the session"

typedef enum db_mark_status {
	DB_MARK_SUSPECT = 0, DB_MARK_CONFIRMED, DB_MARK_REFUTED
} db_mark_status;

const char *db_mark_status_name(db_mark_status s); /* "suspect", ... */
bool db_mark_status_parse(const char *s, db_mark_status *out);

/* A finding on a cell, sub-stage or rank. Strings owned by the session. */
typedef struct db_mark {
	char *phase, *pass;     /* where it was made ("" = none); NULL = not
	                         * known (an unplaced version 1 mark): every pass */
	int layer;              /* -1: model-level */
	char *stage;            /* top-level stage or full sub-stage name; NULL = whole row */
	int rank;               /* -1: merged / all ranks */
	db_mark_status status;
	char *text;             /* one line */
	int64_t time;
} db_mark;

typedef struct db_kv {
	char *key, *value;      /* owned */
} db_kv;

/* Everything owned by the session (db_session_free). */
typedef struct db_session {
	char *path;             /* file it was loaded from / saved to; NULL new */
	char *ref, *target;     /* tree paths (absolute when created by us) */
	char *profile;          /* NULL = auto-detect */
	char *noise;            /* --noise tree; NULL = none */
	char *slots;            /* --slots N ("4"): target is the ref tree; NULL = none */
	char *align;            /* --align HOW ("tokens", "passes"); NULL = auto */
	char *phase, *pass;     /* NULL = defaults */
	char *probe;            /* NULL = profile default */
	db_predicate pred;
	long good;              /* start good layer, DB_GOOD_BEFORE */
	int *layers;            /* bisect candidates; may be empty (not started) */
	size_t n_layers;
	db_bisect_step *steps;
	size_t n_steps;
	db_mark *marks;
	size_t n_marks;
	char **notes;           /* note files, as given to db_session_add_note */
	size_t n_notes;
	db_kv *view;            /* free-form view state (TUI) */
	size_t n_view;
	/* bisects begun before this one on another phase or pass, oldest
	 * first (owned): each holds only phase, pass, probe, predicate, good,
	 * layers and steps; replay judges them too */
	struct db_session **earlier;
	size_t n_earlier;
	int64_t created, updated;
	/* private to src/session: the file's text as this session last read
	 * or wrote it (the merge base; NULL = none yet), and the session lock
	 * held since db_session_load_locked (locked false: none; a zeroed
	 * session holds none) */
	char *base;
	size_t base_len;
	bool locked;
	int lock_fd;
} db_session;

/* New empty session (predicate default, good DB_GOOD_BEFORE, created now).
 * ref/target copied (may be NULL). NULL on OOM. */
db_session *db_session_new(const char *ref, const char *target);
void db_session_free(db_session *s);

/* Load path. -1 with err "path:line:col: what" on unreadable or corrupt
 * files (line/col 1-based, from libyaml or the offending node). */
int db_session_load(const char *path, db_session **out, db_err *err);
/* Load path (or, when it does not exist and create is true, a new empty
 * session named path) with the session lock held until db_session_free:
 * a read-modify-write that no other writer interleaves with. */
int db_session_load_locked(const char *path, bool create, db_session **out,
                           db_err *err);
/* Parse text (origin names it in errors). */
int db_session_parse(const char *text, size_t len, const char *origin,
                     db_session **out, db_err *err);
/* Save atomically to path (NULL = s->path); sets s->path and s->updated.
 * Under the session lock, the file is read again first: when another
 * writer changed it since s read or wrote it, s becomes the three-way merge
 * of the base, the file and s (steps: each side's undos and new verdicts,
 * theirs first; marks: each side's additions and removals; notes: the
 * union; setup and view: the side that changed them), and that is written.
 * Returns 0 saved, 1 saved after such a merge, -1 with err when it could
 * not be saved (a file that no longer parses, both sides set the bisect up
 * anew, a merged step that is no candidate): then nothing is written and
 * s is unchanged. */
int db_session_save(db_session *s, const char *path, db_err *err);
/* Sync b into s, save, and after a merge put the merged steps back into
 * b (db_session_to_bisect): what a writer that keeps a bisect open uses.
 * Returns as db_session_save. */
int db_session_save_bisect(db_session *s, const char *path, db_bisect *b,
                           db_err *err);
/* The YAML text (malloc'd, NUL-terminated) or NULL on OOM. */
char *db_session_dump(const db_session *s, size_t *len);

/* Copy the candidates and the steps of b into s (replacing them). */
int db_session_sync_bisect(db_session *s, const db_bisect *b, db_err *err);
/* Init b from s's candidates, good bound and steps (steps on layers that
 * are no longer candidates are an error naming the step). */
int db_session_to_bisect(const db_session *s, db_bisect *b, db_err *err);

/* A bisect run over c with the session's probe, phase, pass, predicate
 * and good bound; with_steps resumes its candidates and steps (else the
 * session's candidates with no steps; a session without candidates gets
 * the ones the trees show). Free with db_bisect_run_free. */
int db_session_run_open(const db_session *s, db_compare *c, bool with_steps,
                        db_bisect_run **out, db_err *err);
/* Record r's probe, phase, pass, predicate and the profile (NULL = the
 * comparison's) in s; then db_session_sync_bisect for the steps. */
int db_session_set_run(db_session *s, const db_bisect_run *r, const char *profile);

/* Keep s's bisect (phase, pass, probe, predicate, good, candidates,
 * steps) at the end of s->earlier when it has steps, then clear its
 * candidates, steps, phase and pass (and the probe unless keep_probe) for
 * a new bisect. -1 on OOM (s unchanged). */
int db_session_archive_bisect(db_session *s, bool keep_probe);
/* The kept bisect of (phase, pass) in s->earlier (the last one; NULL and
 * "" are one phase/pass), or -1. */
long db_session_find_bisect(const db_session *s, const char *phase, const char *pass);
/* Make (phase, pass) the session's current bisect: the current one is
 * kept (db_session_archive_bisect), then the one kept for (phase, pass),
 * if any, comes back as the current one (its probe, predicate, good bound,
 * candidates and steps) and leaves s->earlier. Returns 1 resumed, 0 none
 * kept there (a new bisect: phase and pass cleared as by archive), -1 on
 * OOM. Nothing happens (0) when the current bisect is already there. */
int db_session_switch_bisect(db_session *s, const char *phase, const char *pass,
                             bool keep_probe);
/* s's bisects that have steps, the found one first (then the current
 * one, then the others as kept): n pointers into s (s itself and
 * s->earlier[i]; borrowed) into out, at most cap. */
size_t db_session_bisects(const db_session *s, const db_session **out, size_t cap);

/* Append a mark on phase/pass (NULL: every pass) (strings copied).
 * Returns its index or -1 on OOM. */
long db_session_add_mark_at(db_session *s, const char *phase, const char *pass, int layer,
                            const char *stage, int rank, db_mark_status st,
                            const char *text);
/* The same on every pass (phase and pass NULL). */
long db_session_add_mark(db_session *s, int layer, const char *stage,
                         int rank, db_mark_status st, const char *text);
bool db_session_remove_mark(db_session *s, size_t i);
/* Marks on (layer, stage) — stage NULL matches row marks — on any pass;
 * returns the first match index or -1. */
long db_session_find_mark(const db_session *s, int layer, const char *stage);
/* The first mark drawn on a place, or -1: its phase and pass (a mark of
 * unknown pass is on every pass), its layer, its stage (NULL = the row
 * marks; with substages, a mark on "stage.sub" too) and its rank (rank < 0:
 * the place shows every rank, so a mark of any rank is on it; else a mark
 * of that rank or of all ranks). */
long db_session_mark_at(const db_session *s, const char *phase, const char *pass, int layer,
                        const char *stage, int rank, bool substages);
int db_session_add_note(db_session *s, const char *note_path);
/* View state: set copies (value NULL removes); get borrows or NULL. */
int db_session_view_set(db_session *s, const char *key, const char *value);
const char *db_session_view_get(const db_session *s, const char *key);

/* Check that both trees exist. -1 with err like "session.yaml: reference
 * tree /old/ref is gone (moved?); give --ref DIR / --target DIR". */
int db_session_check_trees(const db_session *s, db_err *err);

#endif
