/* The heatmap's headline (ui/views/view_heatmap.c), apart so that file
 * stays short: the phases, the first divergence of the selection and its
 * numbers, the batch slot measured on. */
#ifndef TUI_HEATMAP_HEAD_H
#define TUI_HEATMAP_HEAD_H
#include "base/app.h"

/* Draws the headline on line y of w (computing t's first divergence when
 * it is not known yet). */
void heatmap_draw_head(struct tui *t, WINDOW *w, int y);

#endif
