/* Cached hint text of the pair under the cursor (hint_ui.h). */
#include "hint_ui.h"

#include <stdatomic.h>

#include "db_hints.h"
#include "draw.h"

const char *tui_pair_hint(const db_compare *c, size_t pair)
{
	/* one entry: the status line shows one pair; a pair's hint changes
	 * only while pairs are still being computed (nan_origin looks at the
	 * earlier ones), so the count of computed pairs is part of the key */
	static const db_compare *cc;
	static size_t cpair = (size_t)-1, cdone;
	static char text[256];
	if (!c || pair >= c->n_pairs)
		return NULL;
	size_t done = atomic_load(&((db_compare *)c)->n_done);
	if (c != cc || pair != cpair || done != cdone) {
		db_hint h;
		db_pair_hint(c, &c->pairs[pair], &h);
		db_hint_text(&h, !draw_utf8, text, sizeof text);
		cc = c;
		cpair = pair;
		cdone = done;
	}
	return text[0] ? text : NULL;
}
