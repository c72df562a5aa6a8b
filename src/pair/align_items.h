/* Token alignment across batching, the pairing side (align_items.c): the
 * plan compare/align_tokens.c found (one side's passes concatenated along
 * tokens are the other side's one pass), and the copies of the whole pass's
 * items it gives pairing, one per step pass, so that the join on (phase,
 * pass, rank, layer, stage) and the merging of shards work unchanged. Not a
 * public header. */
#ifndef DB_ALIGN_ITEMS_H
#define DB_ALIGN_ITEMS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_compare.h"

/* One pass of the stepping side: its token rows are rows start..start+len-1
 * of the whole pass. */
typedef struct db_align_step {
	const char *pass;       /* interned (the stepping side's item's f.pass) */
	int64_t start, len;
} db_align_step;

/* One phase aligned: the whole pass and the passes that add up to it. */
typedef struct db_align_group {
	const char *phase, *whole_pass;         /* interned */
	int64_t n_tokens;
	db_align_step *steps;   /* in pass order (owned) */
	size_t n_steps;
	bool exact;             /* the steps hold every row of the whole pass (else
	                           a prefix: a trainer's micro-batch has the last
	                           response token and padding the engine never ran) */
} db_align_group;

/* A copy of an item of the whole pass standing for step k of group g. */
typedef struct db_align_vitem {
	db_item it;             /* the item, f.pass the step's, seq moved after
	                           step k-1's; path and key borrowed */
	const db_align_group *g;
	size_t k;
} db_align_vitem;

typedef struct db_align {
	int whole;              /* 1 the reference holds the whole passes, 2 the target */
	db_align_group *g;      /* owned */
	size_t n_g;
	db_align_vitem *v;      /* owned; built by db_align_items */
	size_t n_v;
} db_align;

/* The whole side's collected items with each whole pass's items replaced by
 * their copies, one per step (c->align; a no-op without one, or for the
 * stepping side). *items is reallocated. -1 on OOM. */
int db_align_items(db_compare *c, bool ref, const db_item ***items, size_t *n);
/* After pairing: a pair with a copied item is measured on its step's rows
 * of the whole tensor (a slot along the token dim), compared as it is (not
 * per token, the last step: both saw every token), or not comparable with
 * the reason. */
void db_align_settle(db_compare *c);
/* The copy it is, or NULL for an index item. */
const db_align_vitem *db_align_vitem_of(const db_compare *c, const db_item *it);
void db_align_free(db_align *a);

#endif
