/* Inside pairing (private to compare.c and compare_merge.c): the growing
 * vector of pairs with their sort keys, and the steps both files take on a
 * pair. Not a public header. */
#ifndef DB_COMPARE_BUILD_H
#define DB_COMPARE_BUILD_H
#include <stdbool.h>
#include <stdint.h>

#include "compare_priv.h"
#include "pairkey.h"

typedef struct db_pvec {
	db_pair *v;
	size_t n, cap;
	int64_t *major, *sub;   /* sort keys */
	bool *dead;             /* consumed by a merged pair */
} db_pvec;

/* Room for cap pairs; -1 on OOM (pv unchanged). */
int db_pvec_grow(db_pvec *pv, size_t cap);
/* A new zeroed pair at the end of pv with sort keys (major, sub); NULL on
 * OOM. Pointers into pv stay good until the next add. */
db_pair *db_pvec_add(db_pvec *pv, int64_t major, int64_t sub);
/* it's shape and dtype as p's reference (ref) or target side. */
void db_pair_set_side(db_pair *p, const db_item *it, bool ref);
void db_pair_set_error(db_pair *p, const char *msg);
/* Status of a pair whose sides are set; OK means "to be computed". */
void db_pair_classify(db_pair *p);
/* Merged pairs of sharded stages, and the cells whose two sides have
 * different layouts (compare_merge.c); pairs_by_key maps each pair's
 * key (db_pkey_of) to its index in pv. */
int db_build_merged(db_compare *c, db_pvec *pv, const db_item **ri, size_t nri,
                    const db_item **ti, size_t nti, db_pkmap *pairs_by_key);

#endif
