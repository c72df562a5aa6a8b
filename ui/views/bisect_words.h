/* Words of the bisect view (ui/views/view_bisect.c), apart so that file
 * stays short: the predicate as a sentence, the verdict keys. */
#ifndef TUI_BISECT_WORDS_H
#define TUI_BISECT_WORDS_H
#include <stddef.h>
#include "db_bisect.h"

/* "its probe leaves the ok band", "cos < 0.99 or rel > 0.01" into buf. */
const char *tui_bisect_pred_words(const db_predicate *p, char *buf, size_t len);
/* "+ good<sep>- bad<sep>= skip" with the keys bound now, into buf. */
const char *tui_bisect_verdict_keys(char *buf, size_t len, const char *sep);

#endif
