/* Numbered notes (seed 002 "Documentation discipline"): notes/NN_<slug>.md,
 * NN = one more than the highest existing "NN_" prefix (two digits or more),
 * created with O_EXCL so nothing is ever overwritten (a concurrent creator
 * that wins the number makes us take the next one). Sections: Hypothesis,
 * Experiment, Data, Conclusion, Next step. Data is Markdown the caller
 * builds from real numbers with the db_md_* helpers below. */
#ifndef DB_NOTES_H
#define DB_NOTES_H
#include <stddef.h>
#include "db_bisect.h"
#include "db_compare.h"
#include "db_err.h"

/* Section bodies; NULL or "" leaves a placeholder line ("_to fill_"). */
typedef struct db_note_sections {
	const char *hypothesis, *experiment, *data, *conclusion, *next_step;
} db_note_sections;

/* Create dir (mkdir -p, 0755) and the note. *out_path (caller frees) gets
 * "dir/NN_slug.md"; *out_number its NN (either may be NULL). -1 with err
 * (unwritable dir, too many retries) — never a crash, never an overwrite. */
int db_notes_create(const char *dir, const char *title,
                    const db_note_sections *sec, char **out_path,
                    int *out_number, db_err *err);

/* mkdir -p dir (0755); -1 with err, also when dir is no directory. */
int db_notes_mkdir(const char *dir, db_err *err);
/* Notes live beside their session. The notes session s lists that are not
 * in dir (NULL = db_notes_dir_for(s->path)) — written by a workbench
 * without --session into notes/ of the folder it ran in, before this
 * rule — are moved there when found (a path relative to the current
 * folder), never over another file (a name taken: the next number), a
 * symbolic link left where each was; s then lists them by their new
 * path (the caller saves it). msg (may be NULL) gets a sentence on what
 * moved and what the session lists but is not found from here ("" when
 * nothing to say). Returns how many moved, -1 on OOM. */
struct db_session;
int db_notes_adopt(struct db_session *s, const char *dir, char *msg, size_t len);
/* The next free number in dir (1 when empty or missing). */
int db_notes_next_number(const char *dir);
/* "Sign flip in o_proj!" -> "sign_flip_in_o_proj" (ascii lower, [a-z0-9_],
 * at most 48 chars, "note" when empty). Caller frees. */
char *db_notes_slug(const char *title);
/* Notes dir: "<dir of session>/notes", or "./notes" when session is NULL.
 * Caller frees. */
char *db_notes_dir_for(const char *session_path);

typedef struct db_note_entry {
	int number;
	char *name;             /* "03_sign_flip.md" (owned) */
	char *path;             /* dir/name (owned) */
	char *title;            /* first "# " line less its "NN — ", or the name (owned) */
} db_note_entry;

/* Notes in dir (regular files "NN_*.md"; a FIFO or anything else of that
 * name is left out, never opened), sorted by number then name. Returns the
 * count; *out is an array the caller frees with db_notes_list_free. A
 * missing dir is 0 notes. */
size_t db_notes_list(const char *dir, db_note_entry **out);
void db_notes_list_free(db_note_entry *e, size_t n);

/* Markdown renderers for the Data section (malloc'd, caller frees; NULL on
 * OOM). Numbers are the pairs' current metrics (computed if pending). */
char *db_md_cell(db_compare *c, size_t pair);       /* one pair's fields + metrics */
char *db_md_substages(db_compare *c, size_t pair);  /* table: sub-stage, cos, rel, band, step drop */
char *db_md_ranks(db_compare *c, size_t pair);      /* table: rank, cos, rel, band */
/* range, probes left, history; res (NULL = none) gives the verdict the
 * analysis reached, which the state alone does not know (a "found" search
 * whose layer does not stand out is accumulated drift) */
char *db_md_bisect(const db_bisect *b, const db_bisect_result *res);

#endif
