/* The replicated-rank check of the CI gate (compare/replicas.c): where a
 * side's dump says a tensor is replicated across its ranks (SGLang dumper
 * v2 meta dims with an "AXIS:replicated" comment and no sharded dim, e.g.
 * "t h # tp:replicated") or the profile's `replicated:` regexes name its
 * stage, every rank of that side must hold the same values as its lowest
 * rank: max |a - b| <= atol (SGLang's comparator uses 1e-6). A rank that
 * differs is a finding named with its ranks. */
#ifndef DB_REPLICAS_H
#define DB_REPLICAS_H
#include <stdbool.h>
#include <stddef.h>

#include "db_compare.h"
#include "db_err.h"

#define DB_REPLICA_ATOL 1e-6

typedef struct db_replica {
	const char *side;       /* "ref" or "target" (static) */
	const db_item *base, *other;    /* the lowest rank, the rank compared */
	bool passed;
	double max_abs;         /* NaN: not measured (see why) */
	char why[256];          /* "" passed; else what differs */
	char by[192];           /* "dims 't h # tp:replicated'" or "profile ..." */
} db_replica;

/* Check both sides of c (items, not pairs: a replica is checked in its
 * own tree). *out (malloc'd, caller frees; NULL when none) gets one record
 * per rank compared. -1 with err only when out of memory; a tensor that
 * cannot be read is a failed record saying why. */
int db_replicas_check(const db_compare *c, double atol, db_replica **out, size_t *n,
                      db_err *err);

#endif
