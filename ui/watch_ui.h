/* Live trees in the workbench (ui/watch_ui.c). */
#ifndef TUI_WATCH_UI_H
#define TUI_WATCH_UI_H
#include <stdbool.h>
#include "base/app.h"

/* Watch the reference and every target; later rescans leave out files
 * still being written. No watcher (t->watch NULL) when none can be set. */
void tui_watch_start(struct tui *t);
void tui_watch_stop(struct tui *t);
/* Look for changes (waiting up to wait_ms) and rescan when some came and
 * only the heatmap or the bisect is open (else when back there). True when
 * the screen changed. */
bool tui_watch_tick(struct tui *t, int wait_ms);
/* Opened from snapshots (db_compare_from_snapshots): when the check behind
 * the first frame finds a changed file, rescan (under the heatmap or the
 * bisect, else when back there) and say so. True when the screen changed. */
bool tui_verify_tick(struct tui *t);
/* Rescan now: views above the heatmap close (the bisect reopens). */
void tui_rescan(struct tui *t);

#endif
