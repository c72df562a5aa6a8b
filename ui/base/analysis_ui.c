/* The bisect's end analysis, cached per state of the run; see
 * analysis_ui.h and tui_bisect_result (app.h). */
#include "analysis_ui.h"

#include <stdlib.h>

#include "app.h"

void tui_analysis_drop(struct tui *t)
{
	if (!t->analysis)
		return;
	if (t->analysis->ok)
		db_bisect_result_free(&t->analysis->res);
	free(t->analysis);
	t->analysis = NULL;
}

/* The steps' layers and verdicts: an undo and another verdict leave
 * n_steps as it was, not the analysis. */
static uint64_t steps_hash(const db_bisect *sm)
{
	uint64_t h = UINT64_C(14695981039346656037);    /* FNV-1a */
	for (size_t i = 0; i < sm->n_steps; i++) {
		h = (h ^ (uint32_t)sm->steps[i].layer) * UINT64_C(1099511628211);
		h = (h ^ (uint32_t)sm->steps[i].verdict) * UINT64_C(1099511628211);
	}
	return h;
}

const db_bisect_result *tui_bisect_result(struct tui *t)
{
	if (!t->bisect)
		return NULL;
	const db_bisect *sm = &t->bisect->sm;
	struct tui_analysis *a = t->analysis;
	uint64_t sh = steps_hash(sm);
	if (a && a->ok && a->pairs_gen == t->cmp->pairs_gen && a->n_steps == sm->n_steps &&
	    a->n_layers == sm->n_layers && a->steps_hash == sh)
		return &a->res;
	tui_analysis_drop(t);
	if (!(a = calloc(1, sizeof *a))) {
		tui_msg(t, true, "bisect analysis: out of memory");
		return NULL;
	}
	db_err err = {{0}};
	a->ok = db_bisect_analyze(t->bisect, &a->res, &err) == 0;
	a->pairs_gen = t->cmp->pairs_gen;
	a->n_steps = sm->n_steps;
	a->n_layers = sm->n_layers;
	a->steps_hash = sh;
	t->analysis = a;
	if (!a->ok)
		tui_msg(t, true, "bisect analysis: %s", err.msg);
	return a->ok ? &a->res : NULL;
}

