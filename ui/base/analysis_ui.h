/* The bisect's end analysis the workbench shows (t->analysis): made once
 * per state of the run and shared by the bisect view, the sub-stage view
 * (the culprit layer's walk) and the export, so they say the same. Here,
 * below the views, so any view may ask for it without calling another. */
#ifndef TUI_ANALYSIS_UI_H
#define TUI_ANALYSIS_UI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_bisect.h"

struct tui;

/* The end analysis (t->analysis) and the state of the run it was made
 * for: the view and the export share it. */
struct tui_analysis {
	db_bisect_result res;
	bool ok;
	unsigned long pairs_gen;
	uint64_t steps_hash;
	size_t n_steps, n_layers;
};

/* Free t->analysis (NULL after). */
void tui_analysis_drop(struct tui *t);

#endif
