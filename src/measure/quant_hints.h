/* The hints of dequantized or transformed weights (db_hints.h's catalog,
 * measure/quant_hints.c). Private to measure/. */
#ifndef DB_QUANT_HINTS_H
#define DB_QUANT_HINTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "db_hints.h"

/* true when p is read dequantized or through a transform: h is then its
 * hint (or none), and the value hints, which read stored codes, must not
 * run. p diverges (the caller checked). */
bool db_quant_hint(const db_compare *c, const db_pair *p, db_hint *h);
/* The fields after "kind" of these hints, and their text. */
void db_quant_hint_json(FILE *out, const db_hint *h);
void db_quant_hint_text(const db_hint *h, bool ascii, char *buf, size_t len);

#endif
