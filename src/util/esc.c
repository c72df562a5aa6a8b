#include "db_esc.h"

#include <stdint.h>
#include <string.h>

/* Decodes one UTF-8 character (shortest form, no surrogates, <= U+10FFFF);
 * returns its length, or 0 when s does not start with a valid one. */
static size_t utf8_dec(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c = s[0], min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xe0) == 0xc0) {
		len = 2, c &= 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3, c &= 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

int db_utf8_valid(const char *s)
{
	size_t n = strlen(s);
	uint32_t cp;
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_dec((const unsigned char *)s + i, n - i, &cp)))
			return 0;
	return 1;
}

/* Characters that reorder or break what the terminal shows around them. */
static int neutralise(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x2028 ||
	       c == 0x2029;
}

size_t db_esc_char(const char *s, size_t n, char out[DB_ESC_CHAR_MAX])
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c;
	size_t len = utf8_dec(u, n, &c);
	if (len == 0 || c < 0x20 || c == 0x7f) {
		out[0] = '\\', out[1] = 'x', out[2] = hex[u[0] >> 4], out[3] = hex[u[0] & 15];
		out[4] = '\0';
		return 1;
	}
	if (neutralise(c)) {
		out[0] = '\\', out[1] = 'u';
		for (int i = 0; i < 4; i++)
			out[2 + i] = hex[(c >> (12 - 4 * i)) & 15];
		out[6] = '\0';
		return len;
	}
	memcpy(out, s, len);
	out[len] = '\0';
	return len;
}

size_t db_esc_buf(char *dst, size_t cap, const char *s)
{
	size_t n = s ? strlen(s) : 0, o = 0, total = 0;
	char ch[DB_ESC_CHAR_MAX];
	for (size_t i = 0; i < n;)
		i += db_esc_char(s + i, n - i, ch), total += strlen(ch);
	/* Cut only when the whole does not fit, leaving room for "..." */
	size_t room = total + 1 <= cap ? cap - 1 : cap - 4;
	while (n > 0) {
		size_t k = db_esc_char(s, n, ch), l = strlen(ch);
		if (o + l > room)
			break;
		memcpy(dst + o, ch, l);
		o += l, s += k, n -= k;
	}
	if (total + 1 > cap) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
	return total;
}

const char *db_esc(const char *s)
{
	static _Thread_local char ring[8][DB_ESC_SHORT];
	static _Thread_local unsigned next;
	char *b = ring[next++ % 8];
	db_esc_buf(b, sizeof ring[0], s);
	return b;
}

void db_esc_fputs(const char *s, FILE *out)
{
	size_t n = s ? strlen(s) : 0;
	char ch[DB_ESC_CHAR_MAX];
	while (n > 0) {
		size_t k = db_esc_char(s, n, ch);
		fputs(ch, out);
		s += k, n -= k;
	}
}

static void md_code(const char *s, FILE *out, int cell)
{
	if (!s || !*s) {
		fputs("(empty)", out);
		return;
	}
	size_t run = 0, longest = 0;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	/* CommonMark: a span opens and closes with equal backtick runs, and
	 * one space at each end is stripped when both are there. */
	int pad = s[0] == '`' || s[strlen(s) - 1] == '`';
	for (size_t i = 0; i <= longest; i++)
		fputc('`', out);
	if (pad)
		fputc(' ', out);
	size_t n = strlen(s);
	char ch[DB_ESC_CHAR_MAX];
	while (n > 0) {
		size_t k = db_esc_char(s, n, ch);
		fputs(cell && ch[0] == '|' ? "\\|" : ch, out);
		s += k, n -= k;
	}
	if (pad)
		fputc(' ', out);
	for (size_t i = 0; i <= longest; i++)
		fputc('`', out);
}

void db_esc_md_code(const char *s, FILE *out)
{
	md_code(s, out, 0);
}

void db_esc_md_cell(const char *s, FILE *out)
{
	md_code(s, out, 1);
}

void db_esc_md_text(const char *s, FILE *out)
{
	size_t n = s ? strlen(s) : 0;
	char ch[DB_ESC_CHAR_MAX];
	while (n > 0) {
		size_t k = db_esc_char(s, n, ch);
		const char *o = ch;
		if (*s == '<')
			o = "&lt;";
		else if (*s == '&')
			o = "&amp;";
		else if (*s == '|')
			o = "\\|";
		else if (*s == '[')
			o = "\\[";       /* no [text](url) link or ![image] */
		else if (*s == ']')
			o = "\\]";
		else if (*s == '\n' || *s == '\r')
			o = " ";
		fputs(o, out);
		s += k, n -= k;
	}
}

void db_esc_csv(const char *s, FILE *out)
{
	if (!s)
		s = "";
	int formula = s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@';
	int quote = formula || strpbrk(s, ",\"") != NULL;
	if (quote)
		fputc('"', out);
	if (formula)
		fputc('\'', out);
	size_t n = strlen(s);
	char ch[DB_ESC_CHAR_MAX];
	while (n > 0) {
		size_t k = db_esc_char(s, n, ch);
		fputs(ch[0] == '"' ? "\"\"" : ch, out);
		s += k, n -= k;
	}
	if (quote)
		fputc('"', out);
}
