/* The CI gate's pass/fail rules (compare --pass-if, a profile's pass_if:,
 * bisect's predicate). A rule is "EXPR" or "REGEX: EXPR": the first rule
 * whose PCRE2 REGEX is found in a pair's stage name (util/re.c's bounds)
 * judges the pair; a plain EXPR matches every stage. EXPR is a boolean over
 * the pair's metrics (db_metrics.h): rel, cos, max_abs, mean_abs, rel_l2,
 * rel_diff, byte_equal, and the same after the wider side is cast to the
 * narrower dtype, downcast_rel ... downcast_byte_equal (equal to the plain
 * ones when both sides hold one dtype); comparisons < <= > >= == != of a
 * metric and a number, joined by and / or / not and parentheses. A
 * comparison with a NaN metric (cos of a zero tensor, byte_equal across
 * dtypes) is false. Format: man 1 dumpbisect, THE CI GATE. */
#ifndef DB_RULES_H
#define DB_RULES_H
#include <stdbool.h>
#include <stddef.h>

#include "db_compare.h"
#include "db_err.h"

/* The metrics a rule may name, in the order of db_rules_values. */
#define DB_RULE_METRICS(X) \
	X(rel) X(cos) X(max_abs) X(mean_abs) X(rel_l2) X(rel_diff) X(byte_equal)
enum {
#define DB_RULE_M(n) DB_RM_##n,
	DB_RULE_METRICS(DB_RULE_M)
#undef DB_RULE_M
	DB_RM_N,                /* plain metrics; downcast_<m> = DB_RM_N + m */
	DB_RULE_NVARS = 2 * DB_RM_N
};

typedef struct db_rules db_rules;       /* opaque: db_rules_new / db_rules_free */

db_rules *db_rules_new(void);           /* NULL: out of memory */
void db_rules_free(db_rules *r);        /* NULL is fine */
/* Append one rule ("EXPR" or "REGEX: EXPR"; the REGEX is everything before
 * the last ':', blanks around it trimmed). -1 with err naming the rule and
 * the 1-based column of a syntax error ("rule 'attn: rel <': column 11:
 * expected a number"), or the regex's own error. */
int db_rules_add(db_rules *r, const char *text, db_err *err);
size_t db_rules_count(const db_rules *r);
/* Rule i's text as given (borrowed, lives with r). */
const char *db_rules_text(const db_rules *r, size_t i);
/* A plain EXPR rule (no REGEX) is among them: every stage has a rule. */
bool db_rules_catch_all(const db_rules *r);

/* One parsed EXPR alone (the unit tests; "REGEX:" not allowed): its value
 * over v[DB_RULE_NVARS]. -1 with err on a syntax error. */
int db_rules_eval_expr(const char *expr, const double *v, bool *out, db_err *err);

/* The values a rule sees for a measured pair p (status ok): v[DB_RULE_NVARS]. */
void db_rules_values(const db_pair *p, double *v);

typedef enum db_gate {
	DB_GATE_PASSED = 0,
	DB_GATE_FAILED,         /* a rule said no, or the pair is an error or
	                           a shape mismatch */
	DB_GATE_SKIPPED,        /* ref only, target only, not comparable */
	DB_GATE_NO_RULE         /* measured, but no rule's REGEX is in its stage */
} db_gate;

const char *db_gate_name(db_gate g);   /* "passed" "failed" "skipped" "no_rule" */

/* Judge a finished pair: *rule = the rule that judged it (-1: none, for
 * skipped, no_rule and errors). -1 with err when a REGEX hits its bound
 * (an error, never "no match"). Thread-safe. */
int db_rules_judge(const db_rules *r, const db_pair *p, db_gate *gate, int *rule, db_err *err);

/* The rules as one text (each rule on a line of its own), the predicate's
 * form in a session file: written into buf, always NUL-terminated; false
 * when it did not fit. */
bool db_rules_str(const db_rules *r, char *buf, size_t len);
/* Rules parsed from that text (one a line), kept for the process's life
 * and shared: the same text gives the same rules. NULL with err. */
const db_rules *db_rules_intern(const char *text, db_err *err);

#endif
