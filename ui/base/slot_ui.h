/* The batch slot note of the heatmap's headline (db_slot.h), cached. */
#ifndef DB_UI_SLOT_H
#define DB_UI_SLOT_H
#include <stddef.h>
#include "db_compare.h"

/* The batch slot the comparison measures on (the first computed pair
 * that has one; pairs of one run share it) into buf; "" when none.
 * Returns buf. */
char *tui_slot_note(const db_compare *c, char *buf, size_t len);

#endif
