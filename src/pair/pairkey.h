/* Pairing keys as binary values: an item's (phase, pass, rank, layer,
 * stage, occurrence) -> size_t, open addressing. The names are interned
 * (db_ifields), so they compare and hash by pointer: no key string is
 * built per item (issue 24: formatting and hashing string keys was ~38 %
 * of a 10^6-file reopen's pairing). Not thread-safe; owned by its user. */
#ifndef DB_PAIRKEY_H
#define DB_PAIRKEY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "db_profile.h"

typedef struct db_pkey {
	const char *phase, *pass, *stage;       /* interned; "" is NULL */
	int rank, layer, occ, tag;              /* tag: a caller's own kind */
} db_pkey;

typedef struct db_pkmap {
	uint64_t *slots;        /* hash high 32 bits << 32 | entry index + 1; 0 empty */
	db_pkey *keys;          /* dense, in insertion order */
	size_t *vals;
	size_t cap, n, cap_keys;
} db_pkmap;

/* The key of fields f at occurrence occ (f's side and order are not in it). */
static inline db_pkey db_pkey_of(const db_ifields *f, int occ)
{
	return (db_pkey){f->phase[0] ? f->phase : NULL, f->pass[0] ? f->pass : NULL,
	                 f->stage[0] ? f->stage : NULL, f->rank, f->layer, occ, 0};
}

void db_pkmap_init(db_pkmap *m);
/* Room for n keys without regrowing (0; -1 on OOM). */
int db_pkmap_reserve(db_pkmap *m, size_t n);
void db_pkmap_free(db_pkmap *m);
/* The value of k, or NULL. */
size_t *db_pkmap_get(const db_pkmap *m, const db_pkey *k);
/* The same, trying first the entry after the one *hint (updated) found
 * last: a target tree lists its items in the reference's order, so most
 * lookups are one comparison, no hash and no random probe. */
size_t *db_pkmap_get_near(const db_pkmap *m, const db_pkey *k, size_t *hint);
/* Insert k with val when absent; the value slot (existing or new), NULL on
 * OOM. *added (may be NULL) tells which. */
size_t *db_pkmap_put(db_pkmap *m, const db_pkey *k, size_t val, bool *added);
/* The same with a hint: the entry found last (runs of one key), then the
 * one after it, as db_pkmap_get_near. */
size_t *db_pkmap_put_near(db_pkmap *m, const db_pkey *k, size_t val, bool *added, size_t *hint);

/* A set of names (interned pointers, as db_pkey's stage): a memo of one
 * name at each of 64 places in front of a db_pkmap, so that a name seen
 * before costs a multiply, a load and a compare. Asking every pair of 10^6
 * whether its stage is new was a tenth of a reopen's instructions as map
 * puts. */
typedef struct db_nameset {
	const char *memo[64];
	db_pkmap m;
} db_nameset;

static inline void db_nameset_init(db_nameset *s)
{
	memset(s->memo, 0, sizeof s->memo);
	db_pkmap_init(&s->m);
}

static inline void db_nameset_free(db_nameset *s)
{
	db_pkmap_free(&s->m);
}

/* 1 when name is new (now in the set), 0 when it was in, -1 on OOM. */
static inline int db_nameset_add(db_nameset *s, const char *name)
{
	size_t at = (size_t)((uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull >> 58);
	if (s->memo[at] == name)
		return 0;
	db_pkey k = {.stage = name[0] ? name : NULL};
	bool added;
	if (!db_pkmap_put(&s->m, &k, 0, &added))
		return -1;
	s->memo[at] = name;
	return added;
}

#endif
