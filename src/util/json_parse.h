/* A small strict JSON parser (RFC 8259) for file headers we must not trust
 * (the safetensors header). Input is bounded in size and nesting depth;
 * strings must be valid UTF-8; no comments, no trailing commas, no leading
 * zeros, no duplicate object keys. Every value keeps its byte position in
 * the text so errors can point at the bad spot. */
#ifndef DB_JSON_PARSE_H
#define DB_JSON_PARSE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DB_JP_MAX_DEPTH 64

typedef enum db_jp_type {
	DB_JP_NULL, DB_JP_BOOL, DB_JP_NUM, DB_JP_STR, DB_JP_ARR, DB_JP_OBJ
} db_jp_type;

typedef struct db_jp db_jp;
struct db_jp {
	db_jp_type type;
	size_t pos;             /* byte offset of the value's first char in the text */
	bool b;                 /* BOOL */
	/* NUM: is_uint when the token is a plain non-negative integer that fits
	 * in u64 (no fraction, no exponent); then u holds it exactly. */
	bool is_uint;
	uint64_t u;
	double num;
	/* STR: decoded bytes, NUL-terminated; len excludes the NUL (the string
	 * may itself hold "\u0000", so check len against strlen when it matters). */
	char *str;
	size_t len;
	/* ARR/OBJ: n items in text order. OBJ: keys[i] (decoded, NUL-terminated,
	 * key_len[i] bytes) names items[i], key_pos[i] is the key's position. */
	size_t n;
	db_jp *items;
	char **keys;
	size_t *key_len;
	size_t *key_pos;
};

/* Parse exactly one JSON value from text[0..len), allowing whitespace around
 * it. On success returns 0 and *out (free with db_jp_free). On failure
 * returns -1, *err_pos = byte offset of the problem, *err_msg = a static
 * description. */
int db_jp_parse(const char *text, size_t len, db_jp **out, size_t *err_pos,
                const char **err_msg);
/* py: also NaN, Infinity and -Infinity, which Python's json module writes
 * for non-finite floats (msprobe's dump.json). */
int db_jp_parse_py(const char *text, size_t len, bool py, db_jp **out, size_t *err_pos,
                   const char **err_msg);
/* Streaming: the one value that starts at text[start] (after blanks); *end
 * = the offset after it and the blanks that follow. Positions count from
 * text, so a reader can parse a big document member by member and free each. */
int db_jp_parse_at(const char *text, size_t len, bool py, size_t start, db_jp **out,
                   size_t *end, size_t *err_pos, const char **err_msg);
/* The same with the parsed form capped at max bytes (its nodes, strings
 * and open items; about 20 times the text for small objects): past it,
 * -1 with "parsed form over its cap" at the byte where it was met. */
int db_jp_parse_at_max(const char *text, size_t len, bool py, size_t start, size_t max,
                       db_jp **out, size_t *end, size_t *err_pos, const char **err_msg);
void db_jp_free(db_jp *v);
/* Member of an object by key (exact bytes), or NULL. */
const db_jp *db_jp_get(const db_jp *obj, const char *key);

#endif
