/* Calls only one side makes (profiles with pairing: calls, as msprobe's):
 * after the alignment (pair/call_align.c) they are one-sided pairs in
 * their place, and a run of them between two paired calls of one layer
 * reads as one finding: "target calls Functional.gelu where the reference
 * calls Functional.silu". Compare's text and JSON, the bisect's analysis
 * and the sub-stage view say it the same way, from here. */
#ifndef DB_CALLS_H
#define DB_CALLS_H
#include <stdbool.h>
#include <stddef.h>

#include "db_compare.h"

/* When pair i of c is a call only one side makes (c's profile pairs by
 * calls): the finding of its run into buf (cut to len, NUL-terminated),
 * *first = the run's first pair (so that a list names each run once) and
 * true; false otherwise. */
bool db_call_finding(const db_compare *c, size_t i, char *buf, size_t len, size_t *first);

/* Where a pair's call is, for a list of findings: "pass 0 rank 1 L4"
 * (the parts the pair has; "model" for a model-level one). */
void db_call_where(const db_pair *p, char *buf, size_t len);

/* The Python frame that made pair p's call on each side ("FILE:LINE, in
 * FUNC: CODE"), from the dumper's stack record (msprobe's stack.json beside
 * dump.json); "" for a side without one. Reads the files: call it off the
 * input thread, or once. true when either side has one. */
bool db_call_frames(const db_compare *c, const db_pair *p, char *ref, char *tgt, size_t len);

#endif
