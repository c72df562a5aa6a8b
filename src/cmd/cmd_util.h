/* Helpers shared by the headless commands (the option parser and the
 * --help layout are in db_cmd.h): glyph choice and pair labels; the
 * text and JSON pieces they share with the reports are in util/. Not a public header. */
#ifndef DB_CMD_UTIL_H
#define DB_CMD_UTIL_H
#include <stdbool.h>
#include <stdio.h>
#include "db_cmd.h"
#include "db_compare.h"
#include "db_json.h"
#include "util/text.h"

/* Applies a's options and opens the comparison of pos[0] with pos[1]
 * (when npos > 1): 0 and *out (caller frees with db_compare_free), or the
 * exit code after the message. */
int db_cmd_open_compare(const db_cmd *c, const db_cmp_args *a, const char *const *pos, int npos,
                        db_compare **out);
/* Strict positive int; -1 when s is not one. */
int db_parse_threads(const char *s);
/* Glyph of a pair: its band, or a status mark for pairs not computed. */
const char *db_pair_glyph(const db_pair *p, bool utf8);
/* "L3 attn_out" / "final_logits", with rank/pass/phase when set; escaped
 * for a terminal (db_esc_buf), as the names come from the dumps. */
void db_pair_label(const db_pair *p, char *buf, size_t len);
/* The same, but "every rank (of 2)" for one rank's pair when every
 * rank of its cell diverges: the culprit is not that rank. */
void db_pair_label_cell(const db_compare *c, const db_pair *p, char *buf, size_t len);

#endif
