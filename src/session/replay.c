/* Replay of a session against the trees now; see db_replay.h. */
#include "db_replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *db_replay_first_bad(const db_bisect *b, char *buf, size_t len)
{
	if (b->phase == DB_BP_FOUND)
		return db_layer_label(b->layers[b->first_bad], buf, len);
	snprintf(buf, len, "none (%s)", db_bisect_phase_name(b->phase));
	return buf;
}

void db_replay_free(db_replay *rp)
{
	free(rp->rows);
	db_bisect_free(&rp->then);
	db_bisect_run_free(rp->fresh);
	memset(rp, 0, sizeof *rp);
}

bool db_replay_changed(const db_replay *rp)
{
	return rp->n_changed || rp->moved;
}

int db_replay_session(const db_session *s, db_compare *c, db_replay *rp, db_err *err)
{
	memset(rp, 0, sizeof *rp);
	if (db_session_to_bisect(s, &rp->then, err) < 0)
		return -1;
	/* the same candidates as the session, no steps: probes, then a fresh
	 * auto bisect (probing does not depend on the state) */
	if (db_session_run_open(s, c, false, &rp->fresh, err) < 0)
		goto fail;
	if (!(rp->rows = calloc(s->n_steps + 1, sizeof *rp->rows))) {
		db_err_set(err, NULL, NULL, -1, "out of memory");
		goto fail;
	}
	rp->n_rows = s->n_steps;
	for (size_t i = 0; i < s->n_steps; i++) {
		db_replay_row *w = &rp->rows[i];
		w->then = s->steps[i];
		db_bisect_probe(rp->fresh, s->steps[i].layer, &w->now);
		w->holds = w->now.auto_verdict == s->steps[i].auto_verdict;
		rp->n_changed += !w->holds;
	}
	if (db_bisect_run_auto(rp->fresh, NULL, NULL, err) < 0)
		goto fail;
	const db_bisect *now = &rp->fresh->sm;
	/* a search left unfinished moved nowhere: its steps, when they hold,
	 * are the start of the search done now */
	rp->moved = db_bisect_done(&rp->then) && !(rp->then.phase == now->phase &&
	              (rp->then.phase != DB_BP_FOUND ||
	               rp->then.layers[rp->then.first_bad] == now->layers[now->first_bad]));
	return 0;
fail:
	db_replay_free(rp);
	return -1;
}
