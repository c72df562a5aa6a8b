/* Replay of a session's bisect against the trees as they are now (other
 * trees, fixed dumps): which logged verdicts still hold, and where a fresh
 * auto bisect over the same candidates puts the first bad layer. One
 * implementation behind `dumpbisect replay` and the workbench
 * (`replay --tui`), so both say the same.
 *
 * A step holds when the data gives the same auto verdict as when it was
 * logged (for a user override: the evidence it rested on is unchanged). */
#ifndef DB_REPLAY_H
#define DB_REPLAY_H
#include <stdbool.h>
#include <stddef.h>
#include "db_bisect.h"
#include "db_compare.h"
#include "db_session.h"

typedef struct db_replay_row {
	db_bisect_step then;            /* the logged step (a copy) */
	db_probe now;
	bool holds;
} db_replay_row;

typedef struct db_replay {
	db_replay_row *rows;            /* one per logged step */
	size_t n_rows, n_changed;
	db_bisect then;                 /* the logged state */
	db_bisect_run *fresh;           /* auto bisect over the trees now */
	bool moved;                     /* the outcome differs from then */
} db_replay;

/* Replays s (with steps) over c. -1 with err (session, OOM). */
int db_replay_session(const db_session *s, db_compare *c, db_replay *out, db_err *err);
void db_replay_free(db_replay *rp);
/* Something changed: a verdict no longer holds or the outcome moved. */
bool db_replay_changed(const db_replay *rp);
/* "L7", or "none (no-bad)" when b found no first bad layer. */
const char *db_replay_first_bad(const db_bisect *b, char *buf, size_t len);

#endif
