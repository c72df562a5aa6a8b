/* Cached hint text of the pair under the cursor (hint_ui.h). */
#include "hint_ui.h"

#include <stdatomic.h>
#include <stdbool.h>

#include "db_hints.h"
#include "draw.h"

typedef struct hint_key {
	const db_compare *c;
	size_t pair, n_pairs;   /* n_pairs: a rescan rebuilds the pairs */
	int state;              /* no hint until the pair is computed */
	size_t n_done;          /* pairs with NaN/Inf only: nan_origin looks at
	                           the earlier pairs, which may still be computing */
} hint_key;

const char *tui_pair_hint(const db_compare *c, size_t pair)
{
	/* one entry: the status line shows one pair, redrawn often, and a
	 * hint may read both tensors */
	static hint_key last;
	static bool valid;
	static char text[256];
	if (!c || pair >= c->n_pairs)
		return NULL;
	const db_pair *p = &c->pairs[pair];
	hint_key k = {c, pair, c->n_pairs,
	              atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire), 0};
	if (k.state == DB_PAIR_DONE && p->status == DB_ST_OK && p->m.nonfinite_mismatch)
		k.n_done = atomic_load(&((db_compare *)c)->n_done);
	if (!valid || k.c != last.c || k.pair != last.pair || k.n_pairs != last.n_pairs ||
	    k.state != last.state || k.n_done != last.n_done) {
		db_hint h;
		db_pair_hint(c, p, &h);
		db_hint_text(&h, !draw_utf8, text, sizeof text);
		last = k;
		valid = true;
	}
	return text[0] ? text : NULL;
}
