/* Cached hint text of the pair under the cursor (hint_ui.h). */
#include "hint_ui.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

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

const char *tui_pair_hint_kind(const db_compare *c, size_t pair)
{
	/* per pair: a list shows many rows on every redraw. UNKNOWN until the
	 * hint is final: the pair computed, and for a pair with NaN/Inf every
	 * pair computed (nan_origin) */
	enum { UNKNOWN = -1 };
	static const db_compare *kc;
	static size_t kn;
	static signed char *kinds;
	if (!c || pair >= c->n_pairs)
		return NULL;
	if (c != kc || c->n_pairs != kn) {
		free(kinds);
		kinds = malloc(c->n_pairs);
		kc = kinds ? c : NULL;
		kn = kinds ? c->n_pairs : 0;
		for (size_t i = 0; i < kn; i++)
			kinds[i] = UNKNOWN;
	}
	const db_pair *p = &c->pairs[pair];
	db_hint h;
	if (!kinds || kinds[pair] == UNKNOWN) {
		if (atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire) != DB_PAIR_DONE)
			return NULL;
		db_pair_hint(c, p, &h);
		bool final = !(p->status == DB_ST_OK && p->m.nonfinite_mismatch) ||
		             atomic_load(&((db_compare *)c)->n_done) >= c->n_pairs;
		if (!kinds || !final)
			return h.kind != DB_HINT_NONE ? db_hint_kind_name(h.kind) : NULL;
		kinds[pair] = (signed char)h.kind;
	}
	return kinds[pair] != DB_HINT_NONE ? db_hint_kind_name((db_hint_kind)kinds[pair]) : NULL;
}
