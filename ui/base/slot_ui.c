#include "base/slot_ui.h"

#include <stdatomic.h>
#include <stdint.h>

#include "base/draw.h"
#include "db_slot.h"

/* The pair is found again only when the pairs or their progress moved: a
 * pass over every pair on every draw was a millisecond a key at 10^6
 * files (issue 24). One comparison is drawn at a time. */
char *tui_slot_note(const db_compare *c, char *buf, size_t len)
{
	static const db_compare *kc;
	static unsigned long kgen;
	static size_t kdone = SIZE_MAX, at = SIZE_MAX;
	size_t done = atomic_load(&((db_compare *)c)->n_done);
	if (kc != c || kgen != c->pairs_gen || kdone != done) {
		kc = c, kgen = c->pairs_gen, kdone = done, at = SIZE_MAX;
		for (size_t i = 0; i < c->n_pairs && at == SIZE_MAX; i++)
			if (c->pairs[i].slot.side && draw_pair_done(&c->pairs[i]) &&
			    c->pairs[i].slot.side != DB_SLOT_IN_TREE)  /* --slots: the label says */
				at = i;
	}
	buf[0] = 0;
	if (at < c->n_pairs)
		db_slot_str(&c->pairs[at], buf, len);
	return buf;
}
