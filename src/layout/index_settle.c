/* Files still being written: while dumps arrive, a file the reader refuses
 * may only be unfinished (a zip's directory is written last). Such items
 * are left out of the index until the file is older than the settle window;
 * a later rescan reads them again. */
#include "index_priv.h"

#include <stdlib.h>

size_t db_index_drop_settling(db_index *ix, int64_t cutoff_ns)
{
	size_t o = 0, dropped = 0;
	for (size_t i = 0; i < ix->n_items; i++) {
		db_item *it = &ix->items[i];
		if (it->err && it->mtime_ns > cutoff_ns) {
			/* a whole refused file is one item with key "" */
			if (ix->n_refused && it->key && !*it->key)
				ix->n_refused--;
			if (!db_index_owns_str(ix, it->path))
				free(it->path);
			if (!db_index_owns_str(ix, it->key))
				free(it->key);
			free(it->err);
			dropped++;
			continue;
		}
		ix->items[o++] = *it;
	}
	ix->n_items = o;
	return dropped;
}
