/* compare's CI gate: every pair judged by the --pass-if rules (or the
 * profile's pass_if), failures and skips let through by the allow-lists,
 * the JSONL stream, the exit status. Not a public header. */
#ifndef DB_GATE_H
#define DB_GATE_H
#include <stdbool.h>
#include <stdio.h>

#include "db_cmd.h"
#include "db_compare.h"
#include "db_rules.h"

typedef struct db_gate_cfg {
	const db_rules *rules;          /* borrowed; never NULL here */
	const db_optlist *allow_failed, *allow_skipped;  /* REGEXes, borrowed */
	const char *rules_from;         /* "--pass-if" or "profile NAME (pass_if)" */
	/* the allow-lists compiled (db_gate_check; owned, db_gate_free) */
	void *re_failed[DB_OPTLIST_MAX], *re_skipped[DB_OPTLIST_MAX];
} db_gate_cfg;

/* Compile the allow-lists' regexes into g and check that every pair that
 * will be measured has a rule: 0, or 2 after the message (a usage error).
 * db_gate_free(g) after, whatever it returned. */
int db_gate_check(const db_cmd *cmd, const db_compare *c, db_gate_cfg *g);
void db_gate_free(db_gate_cfg *g);
/* --format jsonl: measure c, writing one line per pair in execution order
 * as soon as it is measured (flushed), the replicated-rank findings, then
 * the summary line. Returns the exit status: 0 every pair passed or was
 * allowed, 1 one failed or was skipped unallowed, 2 an error. */
int db_gate_jsonl(const db_cmd *cmd, db_compare *c, const db_gate_cfg *g, FILE *out);
/* The table's gate section under compare's table (c measured); returns the
 * exit status as above. quiet: the status only (json, csv). */
int db_gate_text(const db_cmd *cmd, db_compare *c, const db_gate_cfg *g, FILE *out, bool quiet);

#endif
