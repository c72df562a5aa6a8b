/* Helpers shared by the headless commands: option parsing, glyph choice,
 * pair labels and JSON pieces. Not a public header. */
#ifndef DB_CMD_UTIL_H
#define DB_CMD_UTIL_H
#include <stdbool.h>
#include <stdio.h>
#include "db_compare.h"

typedef struct db_opt {
	const char *name;       /* long name without "--" */
	char short_name;        /* 0: none */
	bool has_arg;
	const char **val;       /* has_arg: where the value goes */
	bool *flag;             /* !has_arg: set true when given */
} db_opt;

/* Parse argv[1..] ("--name v", "--name=v", "-x v", "--" ends options).
 * Positionals go to pos (at most max_pos). -1 with a message in msg on an
 * unknown option, a missing value or too many positionals. */
int db_opts_parse(int argc, char **argv, const db_opt *opts, size_t n_opts,
                  const char **pos, int max_pos, int *n_pos, char *msg, size_t msglen);
/* Strict positive int; -1 when s is not one. */
int db_parse_threads(const char *s);
/* The locale says UTF-8 (LC_ALL, LC_CTYPE, LANG). */
bool db_term_utf8(void);
/* "[2, 16, 64]" */
void db_fmt_shape(int ndim, const int64_t *shape, char *buf, size_t len);
/* Glyph of a pair: its band, or a status mark for pairs not computed. */
const char *db_pair_glyph(const db_pair *p, bool utf8);
/* "L3 attn_out" / "final_logits", with rank/pass/phase when set. */
void db_pair_label(const db_pair *p, char *buf, size_t len);
/* A field as JSON: "" -> null; pass: all digits -> a number. */
void db_json_field(FILE *out, const char *s, bool numeric_if_digits);
/* Writes an int array as JSON. */
void db_json_shape(FILE *out, int ndim, const int64_t *shape);

#endif
