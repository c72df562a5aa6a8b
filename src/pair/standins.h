/* A file no reader could read stands in for the entries the other side's
 * file holds: see standins.c. */
#ifndef DB_STANDINS_H
#define DB_STANDINS_H
#include <stddef.h>
#include "db_compare.h"

/* In the item lists to pair, each file-level error item whose other side
 * has exactly one file of its phase, pass and rank (and layer) becomes one
 * error item per entry of that file (the same key and fields, this side's
 * file and error); the copies live in c->quant's sets, freed with the
 * pairs. -1 on OOM. */
int db_error_standins(db_compare *c, const db_item ***ri, size_t *nri, const db_item ***ti,
                      size_t *nti);

#endif
