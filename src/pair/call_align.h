/* Pairing by calls (the profile's pairing: calls): inside each layer of a
 * pass and rank, the reference's and the target's entries, in execution
 * order, are aligned by name and shape as a diff aligns lines, so that a
 * call one side makes and the other does not (GELU for SiLU, a missing
 * add) pairs nothing instead of shifting every later call of that API.
 * Private to pairing (compare.c). */
#ifndef DB_CALL_ALIGN_H
#define DB_CALL_ALIGN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db_index.h"

/* Largest reference x target entries of one group aligned by a table;
 * a bigger group is aligned in linear space (Hirschberg), in time that
 * still grows as their product: all groups together spend at most
 * DB_ALIGN_BUDGET cells (~2 x the product each, a few seconds), and a
 * group past it pairs by names, which db_align_fallback tells. */
#define DB_ALIGN_CELLS ((size_t)1 << 22)
#define DB_ALIGN_BUDGET ((uint64_t)1 << 32)

/* The groups left to pair by names, their entries, and the largest one's
 * reference x target calls. */
typedef struct db_align_fallback {
	size_t groups, calls;
	size_t ref_calls, tgt_calls;
} db_align_fallback;

/* For ri[0..nri) and ti[0..nti) (each in execution order): tmatch[t] =
 * the index in ri of the entry target entry t pairs with, or -1 when it
 * pairs nothing (a call only the target makes); aligned[t] / ref_aligned[r]
 * tell whether the entry's group was aligned at all (false: pair by names,
 * as without calls). ref_aligned may be NULL; fb (may be NULL) says which
 * groups were past the budget. 0, or -1 on OOM. */
int db_align_calls(const db_item *const *ri, size_t nri, const db_item *const *ti, size_t nti,
                   long *tmatch, bool *aligned, bool *ref_aligned, db_align_fallback *fb);

/* Room for a call's name (a stage is at most 255 bytes). */
#define DB_CALL_NAME_MAX 256

/* stage without its call counters ("a.Tensor.__add__#1.0" -> "a.Tensor.__add__.0"). */
void db_call_name(const char *stage, char *buf, size_t len);

#endif
