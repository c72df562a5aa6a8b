/* Foreign text made safe for where it goes. Names and paths come from dump
 * files and trees written elsewhere: they are the attacker's text. Every
 * text-mode writer, error message and workbench string goes through
 * db_esc_char (one rule); Markdown and CSV add their own quoting on top. */
#ifndef DB_ESC_H
#define DB_ESC_H
#include <stddef.h>
#include <stdio.h>

/* Room for one escaped character plus NUL ("\u202e"). */
#define DB_ESC_CHAR_MAX 8

/* The one rule, one character at a time: the next character of s (n bytes
 * left, n >= 1) as terminal-safe text in out (NUL-terminated). C0 controls,
 * DEL and bytes that are not valid UTF-8 become "\xNN"; C1 controls
 * (U+0080..U+009F), bidi controls (U+061C, U+200E/F, U+202A..U+202E,
 * U+2066..U+2069) and line/paragraph separators become "\uNNNN"; anything
 * else is copied. Returns the bytes of s consumed (>= 1). The output holds
 * only printable ASCII and printable UTF-8, so escaping twice changes
 * nothing (a backslash is left as it is for that reason). */
size_t db_esc_char(const char *s, size_t n, char out[DB_ESC_CHAR_MAX]);

/* s is valid UTF-8 (shortest forms, no surrogates): what YAML and JSON
 * can hold as text. */
int db_utf8_valid(const char *s);

/* s escaped into dst (cap >= 4, always NUL-terminated). When the escaped
 * text does not fit, it is cut at a character boundary and ends in "...".
 * Returns the escaped length (without the cut). */
size_t db_esc_buf(char *dst, size_t cap, const char *s);

/* s escaped in one of 8 rotating per-thread buffers of DB_ESC_SHORT bytes
 * (longer names are cut with "..."), so up to 8 can appear in one printf.
 * The pointer stays valid until 8 more calls on the same thread. NULL -> "". */
#define DB_ESC_SHORT 2048
const char *db_esc(const char *s);

/* s escaped, written whole (no cut) to out. */
void db_esc_fputs(const char *s, FILE *out);

/* s as a Markdown code span: `s` delimited by a backtick run one longer
 * than the longest run inside, padded with spaces when s starts or ends
 * with a backtick; s is terminal-escaped first (no raw control or bidi
 * character; inside a code span no HTML is live). Empty s -> "(empty)". */
void db_esc_md_code(const char *s, FILE *out);
/* The same inside a GFM table cell: a | is written \| (GFM reads that before
 * the code span, so the cell does not split). */
void db_esc_md_cell(const char *s, FILE *out);
/* s as Markdown prose (summaries that quote names): escaped, with < and &
 * as entities (no tag, no character reference is live; a lone > is not
 * HTML), | [ ] backslash-escaped (no table cell split, no link or image)
 * and newlines as spaces. */
void db_esc_md_text(const char *s, FILE *out);

/* s as one CSV text field (RFC 4180): escaped, prefixed with ' when it
 * starts with = + - @ (a spreadsheet would read a formula; OWASP's advice),
 * and quoted, "" doubled, when it holds , or " or was prefixed. Numbers are
 * written as numbers, not through this. */
void db_esc_csv(const char *s, FILE *out);

#endif
