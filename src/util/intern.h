/* Interned strings: one copy per distinct string for the process's life.
 * The names an index keeps (side, phase, pass, stage) repeat across a
 * million items; each item holds a pointer to the one copy (issue 24: a
 * 256-byte stage array per item and per pair was half of the memory). */
#ifndef DB_INTERN_H
#define DB_INTERN_H
#include <stddef.h>

/* The one copy of s (s[0..len)), never freed, safe from any thread;
 * NULL on OOM. Equal strings give the same pointer. "" is a static. */
const char *db_intern_n(const char *s, size_t len);
const char *db_intern(const char *s);
/* Distinct strings and their bytes so far (for the bench and tests). */
void db_intern_stats(size_t *n_strings, size_t *n_bytes);

#endif
