/* Quantized weights grouped with their companions before pairing (private
 * to pair/ and measure/; the rules are the profile's, db_quant.h). */
#ifndef DB_COMPANIONS_H
#define DB_COMPANIONS_H
#include <stddef.h>

#include "db_compare.h"
#include "db_quant.h"

/* The dequantized weights of one set of pairs: for each, a copy of the
 * weight's item (logical shape, stage renamed by the rule's `as`, quant
 * set) and its group. Owned by db_compare.quant; freed with the pairs. */
typedef struct db_qset {
	db_item *items;
	db_qgroup *groups;
	size_t n;
	struct db_qset *next;   /* the other side's */
} db_qset;

/* Group side ix's items by profile p's quant rules. in/nin: the items to
 * pair (filtered); *out and *nout: the same with every weight that has its
 * companions replaced by its dequantized copy and every companion left
 * out (malloc'd; the caller frees it and in). Companions are looked up in
 * the whole index, by name (the entry key; the path without extension for
 * a file holding one tensor) within one side, phase, pass and rank. The
 * set is prepended to *sets. -1 on OOM. */
int db_companions_group(const db_profile *p, const db_index *ix, const db_item **in,
                        size_t nin, db_qset **sets, const db_item ***out, size_t *nout);
void db_qsets_free(db_qset *s);

#endif
