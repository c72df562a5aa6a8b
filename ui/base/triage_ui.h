/* Where the workbench opens and where `f` goes (ui/base/triage_ui.c): the
 * phase and pass the bisect's own triage chooses (db_bisect_triage), so the
 * first screen, `f` and `b` look at the same pass the headless bisect
 * names, and say which and why. */
#ifndef TUI_TRIAGE_UI_H
#define TUI_TRIAGE_UI_H
#include <stdbool.h>
#include <stddef.h>

struct tui;

/* Select the triaged phase and pass (the rank is left to the caller); the
 * why goes to t->pass_why and, prefixed by lead (NULL: none), to the
 * bottom line. True when the selection changed. */
bool tui_select_triaged(struct tui *t, const char *lead);
/* Around long core work on the UI thread (the triage, a bisect's open):
 * its progress is drawn and `q` or Ctrl-C stop it (db_yield.h). */
void tui_yield_begin(struct tui *t);
void tui_yield_end(void);
/* The selected phase and pass are the ones the triage chose. */
bool tui_on_triaged(const struct tui *t);
/* The triaged pass is the first diverging pass (db_pass_first_diverging,
 * the rule of compare's "first diverging pass:"): false while the pairs
 * are computed (it cannot be backed yet) and when nothing diverges. */
bool tui_triaged_diverges(struct tui *t);

#endif
