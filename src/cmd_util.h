/* Helpers shared by the headless commands (the option parser and the
 * --help layout are in db_cmd.h): glyph choice, pair labels and JSON
 * pieces. Not a public header. */
#ifndef DB_CMD_UTIL_H
#define DB_CMD_UTIL_H
#include <stdbool.h>
#include <stdio.h>
#include "db_cmd.h"
#include "db_compare.h"

/* Applies a's options and opens the comparison of pos[0] with pos[1]
 * (when npos > 1): 0 and *out (caller frees with db_compare_free), or the
 * exit code after the message. */
int db_cmd_open_compare(const db_cmd *c, const db_cmp_args *a, const char *const *pos, int npos,
                        db_compare **out);
/* Strict positive int; -1 when s is not one. */
int db_parse_threads(const char *s);
/* The locale says UTF-8 (LC_ALL, LC_CTYPE, LANG). */
bool db_term_utf8(void);
/* "[2, 16, 64]" */
void db_fmt_shape(int ndim, const int64_t *shape, char *buf, size_t len);
/* Glyph of a pair: its band, or a status mark for pairs not computed. */
const char *db_pair_glyph(const db_pair *p, bool utf8);
/* "L3 attn_out" / "final_logits", with rank/pass/phase when set; escaped
 * for a terminal (db_esc_buf), as the names come from the dumps. */
void db_pair_label(const db_pair *p, char *buf, size_t len);
/* A field as JSON: "" -> null; pass: all digits -> a number. */
void db_json_field(FILE *out, const char *s, bool numeric_if_digits);
/* Writes an int array as JSON. */
void db_json_shape(FILE *out, int ndim, const int64_t *shape);

#endif
