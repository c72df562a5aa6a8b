/* The root-cause hint of a pair for the views' status lines (db_hints.h),
 * cached: a view redraws often and a hint may read both tensors. */
#ifndef DB_UI_HINT_H
#define DB_UI_HINT_H
#include <stddef.h>
#include "db_compare.h"

/* "sign_flip: target ≈ -ref", or NULL when the pair has none (or is not
 * computed yet). Borrowed: valid until the next call. */
const char *tui_pair_hint(const db_compare *c, size_t pair);
/* The kind name alone ("sign_flip") for list rows, NULL for none; cached
 * per pair once it is final. Static string. */
const char *tui_pair_hint_kind(const db_compare *c, size_t pair);

#endif
