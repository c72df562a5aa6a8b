#include "json_parse.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "db_bus.h"

/* Every node, string and array of one document lives in an arena freed at
 * once: a million-tensor header was ten million mallocs, and freeing them
 * took as long as parsing. */
typedef struct jp_block {
	struct jp_block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
} jp_block;

typedef struct jp_doc {
	jp_block *blocks;
	db_jp root;
} jp_doc;

/* A member on the scratch stack, until its object closes. */
typedef struct jp_key {
	char *k;
	size_t len, pos;
} jp_key;

typedef struct jp_state {
	const unsigned char *s;
	size_t len, i;
	size_t err_pos;
	const char *err_msg;
	bool py;        /* NaN, Infinity, -Infinity as Python's json writes them */
	jp_doc *doc;
	/* the items (and keys) of the open arrays and objects, innermost on
	 * top; each is copied to the arena, exactly sized, when it closes */
	db_jp *sv;
	size_t sv_n, sv_cap;
	jp_key *sk;
	size_t sk_n, sk_cap;
	/* the parsed form's cap (0: none): arena bytes plus the open items */
	size_t max, used;
	bool over;
	size_t over_pos;
} jp_state;

/* n more bytes of parsed form would pass the cap: noted (the caller's
 * "out of memory" becomes "over its cap" at the end). */
static bool jp_over(jp_state *st, size_t n)
{
	if (!st->max || st->used + n + st->sv_n * sizeof(db_jp) <= st->max)
		return false;
	if (!st->over)
		st->over_pos = st->i;
	st->over = true;
	return true;
}

static int jp_fail(jp_state *st, size_t pos, const char *msg)
{
	st->err_pos = pos;
	st->err_msg = msg;
	return -1;
}

static void *jp_alloc(jp_state *st, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (jp_over(st, n))
		return NULL;
	st->used += n;
	jp_block *b = st->doc->blocks;
	if (!b || b->cap - b->used < n) {
		size_t cap = b ? b->cap * 2 : (size_t)16 << 10;
		if (cap > ((size_t)4 << 20))
			cap = (size_t)4 << 20;
		if (cap < n)
			cap = n;
		jp_block *nb = malloc(sizeof *nb + cap);
		if (!nb)
			return NULL;
		nb->next = b;
		nb->used = 0;
		nb->cap = cap;
		st->doc->blocks = b = nb;
	}
	void *p = b->data + b->used;
	b->used += n;
	return p;
}

static int jp_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, nc * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

static void jp_ws(jp_state *st)
{
	while (st->i < st->len) {
		unsigned char c = st->s[st->i];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		st->i++;
	}
}

static int jp_value(jp_state *st, db_jp *v, int depth);

/* Appends code point cp as UTF-8 to buf (room for 4 bytes guaranteed). */
static size_t jp_put_utf8(char *buf, uint32_t cp)
{
	unsigned char *b = (unsigned char *)buf;
	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (unsigned char)(0xC0 | (cp >> 6));
		b[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (unsigned char)(0xE0 | (cp >> 12));
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	b[0] = (unsigned char)(0xF0 | (cp >> 18));
	b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
	b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
	b[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when invalid
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t jp_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t need;
	uint32_t lo = 0x80, hi = 0xBF;  /* allowed range of the second byte */
	if (c >= 0xC2 && c <= 0xDF)
		need = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		need = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if (n < need || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k < need; k++)
		if ((s[k] & 0xC0) != 0x80)
			return 0;
	return need;
}

static int jp_hex4(jp_state *st, size_t at, uint32_t *out)
{
	if (st->len - at < 4)
		return jp_fail(st, at, "truncated \\u escape");
	uint32_t v = 0;
	for (size_t k = 0; k < 4; k++) {
		unsigned char c = st->s[at + k];
		int d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return jp_fail(st, at + k, "bad hex digit in \\u escape");
		v = v * 16 + (uint32_t)d;
	}
	*out = v;
	return 0;
}

/* Parses a string starting at the opening quote; *out is in the arena. */
static int jp_string(jp_state *st, char **out, size_t *out_len)
{
	size_t start = st->i++;
	/* The decoded form is never longer than the source text. */
	size_t end = st->i;
	while (end < st->len && st->s[end] != '"') {
		if (st->s[end] == '\\')
			end++;
		end++;
	}
	if (end >= st->len)
		return jp_fail(st, start, "unterminated string");
	char *buf = jp_alloc(st, end - st->i + 4);
	if (!buf)
		return jp_fail(st, start, "out of memory");
	size_t n = 0;
	while (st->s[st->i] != '"') {
		unsigned char c = st->s[st->i];
		if (c < 0x20)
			return jp_fail(st, st->i, "control character in string");
		if (c != '\\') {
			size_t k = jp_utf8_len(st->s + st->i, st->len - st->i);
			if (!k)
				return jp_fail(st, st->i, "invalid UTF-8 in string");
			memcpy(buf + n, st->s + st->i, k);
			n += k;
			st->i += k;
			continue;
		}
		size_t esc = st->i++;
		c = st->s[st->i++];
		switch (c) {
		case '"': buf[n++] = '"'; break;
		case '\\': buf[n++] = '\\'; break;
		case '/': buf[n++] = '/'; break;
		case 'b': buf[n++] = '\b'; break;
		case 'f': buf[n++] = '\f'; break;
		case 'n': buf[n++] = '\n'; break;
		case 'r': buf[n++] = '\r'; break;
		case 't': buf[n++] = '\t'; break;
		case 'u': {
			uint32_t cp, lo;
			if (jp_hex4(st, st->i, &cp))
				return -1;
			st->i += 4;
			if (cp >= 0xDC00 && cp <= 0xDFFF)
				return jp_fail(st, esc, "lone low surrogate in \\u escape");
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (st->len - st->i < 2 || st->s[st->i] != '\\' || st->s[st->i + 1] != 'u')
					return jp_fail(st, esc, "lone high surrogate in \\u escape");
				if (jp_hex4(st, st->i + 2, &lo))
					return -1;
				if (lo < 0xDC00 || lo > 0xDFFF)
					return jp_fail(st, esc, "bad surrogate pair in \\u escape");
				st->i += 6;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			}
			n += jp_put_utf8(buf + n, cp);
			break;
		}
		default:
			return jp_fail(st, esc, "bad escape in string");
		}
	}
	st->i++;        /* closing quote */
	buf[n] = '\0';
	*out = buf;
	*out_len = n;
	return 0;
}

static int jp_number(jp_state *st, db_jp *v)
{
	size_t start = st->i, i = st->i;
	const unsigned char *s = st->s;
	bool plain = true;
	if (i < st->len && s[i] == '-') {
		plain = false;
		i++;
	}
	if (i >= st->len || s[i] < '0' || s[i] > '9')
		return jp_fail(st, start, "bad number");
	if (s[i] == '0') {
		i++;
		if (i < st->len && s[i] >= '0' && s[i] <= '9')
			return jp_fail(st, start, "leading zero in number");
	} else
		while (i < st->len && s[i] >= '0' && s[i] <= '9')
			i++;
	if (i < st->len && s[i] == '.') {
		plain = false;
		i++;
		if (i >= st->len || s[i] < '0' || s[i] > '9')
			return jp_fail(st, i, "digit expected after '.'");
		while (i < st->len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < st->len && (s[i] == 'e' || s[i] == 'E')) {
		plain = false;
		i++;
		if (i < st->len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= st->len || s[i] < '0' || s[i] > '9')
			return jp_fail(st, i, "digit expected in exponent");
		while (i < st->len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i - start >= 512)
		return jp_fail(st, start, "number too long");
	v->type = DB_JP_NUM;
	v->is_uint = false;
	if (plain) {
		uint64_t u = 0;
		bool ok = true;
		for (size_t k = start; k < i; k++) {
			unsigned d = (unsigned)(s[k] - '0');
			if (u > (UINT64_MAX - d) / 10) {
				ok = false;
				break;
			}
			u = u * 10 + d;
		}
		v->is_uint = ok;
		v->u = ok ? u : 0;
	}
	if (v->is_uint) {
		v->num = (double)v->u;  /* rounds to nearest, as strtod does */
	} else {
		char tmp[512];
		memcpy(tmp, s + start, i - start);
		tmp[i - start] = '\0';
		v->num = strtod(tmp, NULL);
	}
	st->i = i;
	return 0;
}

static int jp_literal(jp_state *st, const char *word)
{
	size_t n = strlen(word);
	if (st->len - st->i < n || memcmp(st->s + st->i, word, n) != 0)
		return jp_fail(st, st->i, "unexpected character");
	st->i += n;
	return 0;
}

/* Push v onto the scratch stack of items. */
static int jp_push(jp_state *st, const db_jp *v)
{
	if (jp_over(st, sizeof *v) ||
	    jp_grow((void **)&st->sv, &st->sv_cap, st->sv_n + 1, sizeof *st->sv))
		return jp_fail(st, st->i, "out of memory");
	st->sv[st->sv_n++] = *v;
	return 0;
}

/* Move the items above base on the scratch stack into v, exactly sized. */
static int jp_close_items(jp_state *st, db_jp *v, size_t base)
{
	v->n = st->sv_n - base;
	if (v->n && !(v->items = jp_alloc(st, v->n * sizeof *v->items)))
		return jp_fail(st, v->pos, "out of memory");
	if (v->n)
		memcpy(v->items, st->sv + base, v->n * sizeof *v->items);
	st->sv_n = base;
	return 0;
}

static int jp_array(jp_state *st, db_jp *v, int depth)
{
	size_t base = st->sv_n;
	v->type = DB_JP_ARR;
	st->i++;
	jp_ws(st);
	if (st->i < st->len && st->s[st->i] == ']') {
		st->i++;
		return 0;
	}
	for (;;) {
		db_jp it;
		memset(&it, 0, sizeof it);
		if (jp_value(st, &it, depth + 1) || jp_push(st, &it))
			return -1;
		jp_ws(st);
		if (st->i >= st->len)
			return jp_fail(st, st->i, "unterminated array");
		if (st->s[st->i] == ']') {
			st->i++;
			return jp_close_items(st, v, base);
		}
		if (st->s[st->i] != ',')
			return jp_fail(st, st->i, "',' or ']' expected");
		st->i++;
	}
}

static int jp_keycmp(const void *a, const void *b)
{
	const jp_key *x = a, *y = b;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	int c = memcmp(x->k, y->k, x->len);
	if (c)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static bool jp_key_eq(const jp_key *a, const jp_key *b)
{
	return a->len == b->len && memcmp(a->k, b->k, a->len) == 0;
}

/* Keys k[0..n) (text order) hold no duplicate. A few are compared pairwise;
 * many are sorted (a copy: O(n log n) for headers with a million tensors).
 * The error points at the later of the first duplicate pair found. */
static int jp_check_dups(jp_state *st, const jp_key *k, size_t n)
{
	if (n < 2)
		return 0;
	if (n <= 8) {
		for (size_t a = 1; a < n; a++)
			for (size_t b = 0; b < a; b++)
				if (jp_key_eq(&k[a], &k[b]))
					return jp_fail(st, k[a].pos, "duplicate key in object");
		return 0;
	}
	jp_key *r = malloc(n * sizeof *r);
	if (!r)
		return jp_fail(st, k[0].pos, "out of memory");
	memcpy(r, k, n * sizeof *r);
	qsort(r, n, sizeof *r, jp_keycmp);
	for (size_t a = 1; a < n; a++)
		if (jp_key_eq(&r[a], &r[a - 1])) {
			size_t pos = r[a].pos;
			free(r);
			return jp_fail(st, pos, "duplicate key in object");
		}
	free(r);
	return 0;
}

/* Close object v: its members are above (ibase, kbase) on the stacks. */
static int jp_close_object(jp_state *st, db_jp *v, size_t ibase, size_t kbase)
{
	size_t n = st->sk_n - kbase;
	const jp_key *k = st->sk + kbase;
	if (jp_check_dups(st, k, n))
		return -1;
	if (n && (!(v->keys = jp_alloc(st, n * sizeof *v->keys)) ||
	          !(v->key_len = jp_alloc(st, n * sizeof *v->key_len)) ||
	          !(v->key_pos = jp_alloc(st, n * sizeof *v->key_pos))))
		return jp_fail(st, v->pos, "out of memory");
	for (size_t j = 0; j < n; j++) {
		v->keys[j] = k[j].k;
		v->key_len[j] = k[j].len;
		v->key_pos[j] = k[j].pos;
	}
	st->sk_n = kbase;
	return jp_close_items(st, v, ibase);
}

static int jp_object(jp_state *st, db_jp *v, int depth)
{
	size_t ibase = st->sv_n, kbase = st->sk_n;
	v->type = DB_JP_OBJ;
	st->i++;
	jp_ws(st);
	if (st->i < st->len && st->s[st->i] == '}') {
		st->i++;
		return 0;
	}
	for (;;) {
		if (st->i >= st->len || st->s[st->i] != '"')
			return jp_fail(st, st->i, "string key expected");
		jp_key key = { NULL, 0, st->i };
		if (jp_string(st, &key.k, &key.len))
			return -1;
		if (jp_grow((void **)&st->sk, &st->sk_cap, st->sk_n + 1, sizeof *st->sk))
			return jp_fail(st, st->i, "out of memory");
		st->sk[st->sk_n++] = key;
		jp_ws(st);
		if (st->i >= st->len || st->s[st->i] != ':')
			return jp_fail(st, st->i, "':' expected");
		st->i++;
		db_jp it;
		memset(&it, 0, sizeof it);
		if (jp_value(st, &it, depth + 1) || jp_push(st, &it))
			return -1;
		jp_ws(st);
		if (st->i >= st->len)
			return jp_fail(st, st->i, "unterminated object");
		if (st->s[st->i] == '}') {
			st->i++;
			return jp_close_object(st, v, ibase, kbase);
		}
		if (st->s[st->i] != ',')
			return jp_fail(st, st->i, "',' or '}' expected");
		st->i++;
		jp_ws(st);
	}
}

static int jp_value(jp_state *st, db_jp *v, int depth)
{
	if (depth > DB_JP_MAX_DEPTH)
		return jp_fail(st, st->i, "nesting too deep");
	jp_ws(st);
	if (st->i >= st->len)
		return jp_fail(st, st->i, "value expected");
	v->pos = st->i;
	switch (st->s[st->i]) {
	case '{': return jp_object(st, v, depth);
	case '[': return jp_array(st, v, depth);
	case '"':
		v->type = DB_JP_STR;
		return jp_string(st, &v->str, &v->len);
	case 't':
		v->type = DB_JP_BOOL;
		v->b = true;
		return jp_literal(st, "true");
	case 'f':
		v->type = DB_JP_BOOL;
		return jp_literal(st, "false");
	case 'n':
		v->type = DB_JP_NULL;
		return jp_literal(st, "null");
	default:
		if (st->py) {
			static const struct { const char *w; double v; } py[] = {
				{"NaN", NAN}, {"Infinity", INFINITY}, {"-Infinity", -INFINITY}};
			for (size_t k = 0; k < 3; k++) {
				size_t n = strlen(py[k].w);
				if (st->len - st->i >= n && !memcmp(st->s + st->i, py[k].w, n)) {
					v->type = DB_JP_NUM;
					v->num = py[k].v;
					st->i += n;
					return 0;
				}
			}
		}
		return jp_number(st, v);
	}
}

static void jp_doc_free(jp_doc *d)
{
	for (jp_block *b = d->blocks, *nx; b; b = nx) {
		nx = b->next;
		free(b);
	}
	free(d);
}

void db_jp_free(db_jp *v)
{
	if (v)
		jp_doc_free((jp_doc *)(void *)((char *)v - offsetof(jp_doc, root)));
}

int db_jp_parse(const char *text, size_t len, db_jp **out, size_t *err_pos,
                const char **err_msg)
{
	return db_jp_parse_py(text, len, false, out, err_pos, err_msg);
}

/* A fault in a mapped text (db_bus.h) jumps out of the parse: the state
 * and its document are on the heap, held by the guard until the end. */
static void parse_abandon(void *arg)
{
	jp_state *st = arg;
	free(st->sv);
	free(st->sk);
	if (st->doc)
		jp_doc_free(st->doc);
	free(st);
}

/* One value from text[start..len); whole: nothing but blanks after it. */
static int parse_from(const char *text, size_t len, bool py, size_t start, bool whole,
                      size_t max, db_jp **out, size_t *end, size_t *err_pos,
                      const char **err_msg)
{
	jp_state *st = calloc(1, sizeof *st);
	jp_doc *d = st ? calloc(1, sizeof *d) : NULL;
	if (!d) {
		free(st);
		*out = NULL;
		if (err_pos)
			*err_pos = start;
		if (err_msg)
			*err_msg = "out of memory";
		return -1;
	}
	st->s = (const unsigned char *)text;
	st->len = len;
	st->i = start;
	st->py = py;
	st->max = max;
	st->doc = d;
	int held = db_bus_hold(parse_abandon, st);
	int rc = jp_value(st, &d->root, 0);
	if (rc == 0) {
		jp_ws(st);
		if (whole && st->i != len)
			rc = jp_fail(st, st->i, "trailing characters after JSON value");
	}
	db_bus_drop(held);
	if (rc && st->over) {
		st->err_pos = st->over_pos;
		st->err_msg = "parsed form over its cap";
	}
	if (rc) {
		*out = NULL;
		if (err_pos)
			*err_pos = st->err_pos;
		if (err_msg)
			*err_msg = st->err_msg;
	} else {
		if (end)
			*end = st->i;
		*out = &d->root;
		st->doc = NULL;         /* the caller's now */
	}
	parse_abandon(st);
	return rc ? -1 : 0;
}

int db_jp_parse_py(const char *text, size_t len, bool py, db_jp **out, size_t *err_pos,
                   const char **err_msg)
{
	return parse_from(text, len, py, 0, true, 0, out, NULL, err_pos, err_msg);
}

int db_jp_parse_at(const char *text, size_t len, bool py, size_t start, db_jp **out,
                   size_t *end, size_t *err_pos, const char **err_msg)
{
	return parse_from(text, len, py, start, false, 0, out, end, err_pos, err_msg);
}

int db_jp_parse_at_max(const char *text, size_t len, bool py, size_t start, size_t max,
                       db_jp **out, size_t *end, size_t *err_pos, const char **err_msg)
{
	return parse_from(text, len, py, start, false, max, out, end, err_pos, err_msg);
}

const db_jp *db_jp_get(const db_jp *obj, const char *key)
{
	if (!obj || obj->type != DB_JP_OBJ)
		return NULL;
	size_t kl = strlen(key);
	for (size_t k = 0; k < obj->n; k++)
		if (obj->key_len[k] == kl && memcmp(obj->keys[k], key, kl) == 0)
			return &obj->items[k];
	return NULL;
}
