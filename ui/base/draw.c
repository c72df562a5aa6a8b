/* Drawing helpers; see draw.h. */
#include "draw.h"

#include "db_cell.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

bool draw_color, draw_utf8;

static const struct {
	short fg, bg, fg256, bg256;
	attr_t attr;            /* kept without colour */
} scheme[C__COUNT] = {
	[C_OK] = {COLOR_BLACK, COLOR_GREEN, 16, 114, 0},
	[C_DRIFT] = {COLOR_BLACK, COLOR_YELLOW, 16, 228, 0},
	[C_ALGO] = {COLOR_BLACK, COLOR_YELLOW, 16, 208, A_BOLD},
	[C_BUG] = {COLOR_WHITE, COLOR_RED, 231, 160, A_BOLD},
	[C_SCRAMBLE] = {COLOR_WHITE, COLOR_MAGENTA, 231, 90, A_BOLD},
	[C_MISSING] = {COLOR_CYAN, -1, 45, -1, 0},
	[C_SHAPE] = {COLOR_MAGENTA, -1, 201, -1, A_BOLD},
	[C_ERROR] = {COLOR_RED, -1, 196, -1, A_BOLD},
	[C_PENDING] = {-1, -1, 244, -1, A_DIM},
	[C_TITLE] = {COLOR_BLACK, COLOR_CYAN, 16, 117, 0},
	[C_TAB] = {COLOR_BLACK, COLOR_WHITE, 16, 252, A_BOLD},
	[C_HILITE] = {COLOR_YELLOW, -1, 220, -1, A_BOLD},
	[C_MARK] = {COLOR_RED, -1, 196, -1, A_BOLD},
	[C_DIM] = {-1, -1, 244, -1, A_DIM},
	[C_LINE_COS] = {COLOR_CYAN, -1, 81, -1, 0},
	[C_LINE_REL] = {COLOR_MAGENTA, -1, 213, -1, 0},
	[C_GOOD] = {COLOR_GREEN, -1, 114, -1, 0},
};

void draw_init(bool color, bool utf8)
{
	draw_color = color;
	draw_utf8 = utf8;
	if (!color)
		return;
	bool rich = COLORS >= 256;
	for (int c = 1; c < C__COUNT; c++)
		init_pair((short)c, rich ? scheme[c].fg256 : scheme[c].fg,
		          rich ? scheme[c].bg256 : scheme[c].bg);
}

void draw_style(enum tui_color c, attr_t *attr, short *pair)
{
	*attr = c ? scheme[c].attr : A_NORMAL;
	*pair = draw_color ? (short)c : 0;
	/* Monochrome: the title bar and tabs still need to stand out. */
	if (!draw_color && (c == C_TITLE || c == C_TAB))
		*attr |= A_REVERSE;
	if (!draw_color && c >= C_OK && c <= C_SCRAMBLE)
		*attr &= ~(attr_t)A_BOLD;
}

/* Decode the next character of s in the current locale; unprintable or
 * invalid -> '?'. Returns the bytes consumed (>= 1) and the width in *cw. */
static size_t next_char(const char *s, wchar_t *wc, int *cw, mbstate_t *st)
{
	size_t n = mbrtowc(wc, s, MB_CUR_MAX, st);
	if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
		memset(st, 0, sizeof *st);
		*wc = L'?';
		*cw = 1;
		return 1;
	}
	int w = wcwidth(*wc);
	if (w < 0) {
		*wc = L'?';
		w = 1;
	}
	*cw = w;
	return n;
}

/* s escaped (db_esc_buf): in small when it fits, else malloc'd. Every
 * string drawn is foreign until shown otherwise (keys, stage names, paths,
 * messages), so text is escaped here, before its width is measured. The
 * caller frees the result when it is not small. */
static char *escaped(const char *s, char *small, size_t len)
{
	size_t n = db_esc_buf(small, len, s);
	if (n < len)
		return small;
	char *big = malloc(n + 1);
	if (!big)
		return small;   /* cut with "...", still safe */
	db_esc_buf(big, n + 1, s);
	return big;
}

int draw_width(const char *raw)
{
	char small[512];
	char *e = escaped(raw, small, sizeof small);
	const char *s = e;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	int w = 0;
	while (*s) {
		wchar_t wc;
		int cw;
		s += next_char(s, &wc, &cw, &st);
		w += cw;
	}
	if (e != small)
		free(e);
	return w;
}

void draw_heads(WINDOW *w, int y, int W, const struct col_head *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		draw_text(w, y, c[i].x, W - c[i].x, C_DIM, A_BOLD, c[i].name);
}

int draw_text(WINDOW *w, int y, int x, int maxw, enum tui_color c, attr_t extra,
              const char *raw)
{
	if (maxw <= 0 || y < 0 || y >= getmaxy(w) || x >= getmaxx(w))
		return 0;
	if (x + maxw > getmaxx(w))
		maxw = getmaxx(w) - x;
	attr_t a;
	short pair;
	draw_style(c, &a, &pair);
	wattr_set(w, a | extra, pair, NULL);
	wmove(w, y, x);
	char small[512];
	char *e = escaped(raw, small, sizeof small);
	const char *s = e;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	wchar_t buf[256];
	int used = 0, nb = 0;
	while (*s) {
		wchar_t wc;
		int cw;
		size_t n = next_char(s, &wc, &cw, &st);
		if (used + cw > maxw)
			break;
		s += n;
		if (cw == 0 && nb == 0 && used == 0)
			continue;       /* a combining mark with nothing to combine with */
		buf[nb++] = wc;
		used += cw;
		if (nb == (int)(sizeof buf / sizeof buf[0])) {
			waddnwstr(w, buf, nb);
			nb = 0;
		}
	}
	if (nb)
		waddnwstr(w, buf, nb);
	wattr_set(w, A_NORMAL, 0, NULL);
	if (e != small)
		free(e);
	return used;
}

int draw_textf(WINDOW *w, int y, int x, int maxw, enum tui_color c, attr_t extra,
               const char *fmt, ...)
{
	char small[512], *s = small;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof small) {
		s = malloc((size_t)n + 1);
		if (!s)
			return 0;
		va_start(ap, fmt);
		vsnprintf(s, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	int r = draw_text(w, y, x, maxw, c, extra, s);
	if (s != small)
		free(s);
	return r;
}

void draw_fill(WINDOW *w, int y, int x, int n, enum tui_color c, attr_t extra)
{
	attr_t a;
	short pair;
	if (x + n > getmaxx(w))
		n = getmaxx(w) - x;
	if (n <= 0)
		return;
	draw_style(c, &a, &pair);
	wattr_set(w, a | extra, pair, NULL);
	mvwhline(w, y, x, ' ', n);
	wattr_set(w, A_NORMAL, 0, NULL);
}

char *draw_fit(const char *raw, int width, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	buf[0] = '\0';
	char small[512];
	char *e = escaped(raw, small, sizeof small);
	const char *s = e;
	if (draw_width(s) <= width) {
		snprintf(buf, len, "%s", s);
		if (e != small)
			free(e);
		return buf;
	}
	const char *ell = G("…", "~");
	int room = width - 1;
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t o = 0;
	int used = 0;
	while (*s && room > 0) {
		wchar_t wc;
		int cw;
		size_t n = next_char(s, &wc, &cw, &st);
		if (used + cw > room || o + n + 4 >= len)
			break;
		memcpy(buf + o, s, n);
		o += n, s += n, used += cw;
	}
	if (width > 0)
		snprintf(buf + o, len - o, "%s", ell);
	else
		buf[o] = '\0';
	if (e != small)
		free(e);
	return buf;
}

/* Length of the escape (db_esc_buf's \xNN, \uNNNN) that starts at s, 0
 * when none: a cut never splits one. */
static size_t esc_len(const char *s)
{
	if (s[0] != '\\')
		return 0;
	return s[1] == 'x' ? 4 : s[1] == 'u' ? 6 : 0;
}

char *draw_fit_mid(const char *raw, int width, int tail, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	char small[512];
	char *e = escaped(raw, small, sizeof small);
	int w = draw_width(e);
	if (w <= width || width < 3) {
		draw_fit(raw, width, buf, len);
		if (e != small)
			free(e);
		return buf;
	}
	/* the end tells names apart ("….0", "…_q", "….o_proj"): two thirds */
	if (tail < 0 || tail > width - 2)
		tail = tail < 0 ? (width - 1) * 2 / 3 : width - 2;
	/* the tail: from the first character whose rest fits tail columns */
	const char *s = e, *t = e + strlen(e);
	mbstate_t st;
	memset(&st, 0, sizeof st);
	int left = w;
	while (*s && left > tail) {
		wchar_t wc;
		int cw;
		size_t n = next_char(s, &wc, &cw, &st);
		s += n, left -= cw;
	}
	t = s;
	for (size_t k = 1; k <= 5 && t - k >= e; k++)     /* not inside an escape */
		if (esc_len(t - k) > k) {
			/* the whole escape in the tail, else none of it */
			t = draw_width(t - k) <= width - 2 ? t - k : t - k + esc_len(t - k);
			break;
		}
	left = draw_width(t);
	/* the head in the columns left, then the ellipsis and the tail */
	int head_w = width - 1 - left;
	size_t o = 0;
	int used = 0;
	memset(&st, 0, sizeof st);
	for (const char *h = e; *h && h < t;) {
		wchar_t wc;
		int cw;
		size_t n = next_char(h, &wc, &cw, &st);
		if (used + cw > head_w || o + n + 1 >= len)
			break;
		memcpy(buf + o, h, n);
		o += n, h += n, used += cw;
	}
	buf[o] = '\0';
	for (size_t k = 1; k <= 5 && k <= o; k++)        /* not inside an escape */
		if (esc_len(buf + o - k) > k) {
			o -= k;
			break;
		}
	snprintf(buf + o, len - o, "%s%s", G("…", "~"), t);
	if (e != small)
		free(e);
	return buf;
}

/* Whether a cut label (head, then the ellipsis, then tail: escaped text)
 * could be another of the names shown: one that begins with head and ends
 * with tail (issue 34: "p…yernorm" four times read as one another). */
static bool reads_as_other(const char *head, size_t hn, const char *tail, const char *s,
                           const char *const *others, size_t n)
{
	size_t tn = strlen(tail);
	for (size_t i = 0; i < n; i++) {
		size_t sn = strlen(s);
		/* its own sub-stages ("s.sub") hold all of it: no cut tells them */
		if (!others[i] || !strcmp(others[i], s) ||
		    (!strncmp(others[i], s, sn) && others[i][sn] == '.'))
			continue;
		char small[512];
		char *o = escaped(others[i], small, sizeof small);
		size_t on = strlen(o);
		bool hit = on >= hn + tn && !strncmp(o, head, hn) && !strcmp(o + on - tn, tail);
		if (o != small)
			free(o);
		if (hit)
			return true;
	}
	return false;
}

/* buf ("head…tail" or s whole) reads as none of the others. */
static bool apart(const char *buf, const char *s, const char *const *others, size_t n)
{
	const char *dots = G("…", "~"), *cut = strstr(buf, dots);
	if (!cut)
		return true;
	return !reads_as_other(buf, (size_t)(cut - buf), cut + strlen(dots), s, others, n);
}

char *draw_fit_apart(const char *s, const char *const *others, size_t n, int width,
                     char *buf, size_t len)
{
	draw_fit_mid(s, width, -1, buf, len);
	if (width < 3 || !strstr(buf, G("…", "~")))
		return buf;
	/* a sub-stage beside its stage ("self_attention.core_attention" by
	 * "self_attention"): what follows the stage's name tells it */
	for (size_t i = 0; i < n; i++) {
		size_t on = others[i] ? strlen(others[i]) : 0;
		if (!on || strncmp(s, others[i], on) || s[on] != '.')
			continue;
		int sub = draw_width(s + on + 1);
		if (sub <= width - 2) {
			draw_fit_mid(s, width, sub, buf, len);
			if (apart(buf, s, others, n))
				return buf;
		}
	}
	draw_fit_mid(s, width, -1, buf, len);
	if (apart(buf, s, others, n))
		return buf;
	/* the default cut reads as a neighbour: keep the part that tells it
	 * apart instead, the end first (".0", "o_proj"), then the head
	 * ("pre_mlp_…" beside "post_attn_…" when both end in "layernorm") */
	int def = (width - 1) * 2 / 3;
	for (int k = 0; k <= width - 2; k++) {
		int tail = k <= def ? def - k : k;       /* def, def-1, …, 0, def+1, … */
		if (tail > width - 2)
			continue;
		draw_fit_mid(s, width, tail, buf, len);
		if (apart(buf, s, others, n))
			return buf;
	}
	return draw_fit_mid(s, width, width - 1, buf, len);  /* none tells: the end alone */
}

char *draw_fit_telling(const char *s, const char *const *others, size_t n, int width,
                       char *buf, size_t len)
{
	/* a sub-stage of a column shows its own part whole, with a head of
	 * its stage ("self…core_attention"), not "s…e_attention" */
	for (size_t i = 0; i < n; i++) {
		size_t on = others[i] ? strlen(others[i]) : 0;
		if (on && !strncmp(s, others[i], on) && s[on] == '.' &&
		    width < draw_width(s + on + 1) + 5)
			width = draw_width(s + on + 1) + 5;
	}
	for (int w = width < 3 ? 3 : width; ; w++) {
		draw_fit_apart(s, others, n, w, buf, len);
		if (!strstr(buf, G("…", "~")) || apart(buf, s, others, n) || w > 512)
			return buf;
	}
}

enum tui_color draw_band_color(db_band b)
{
	switch (b) {
	case DB_BAND_OK: return C_OK;
	case DB_BAND_DRIFT: return C_DRIFT;
	case DB_BAND_ALGO: return C_ALGO;
	case DB_BAND_BUG: return C_BUG;
	case DB_BAND_SCRAMBLE: case DB_BAND_INPUTS: return C_SCRAMBLE;
	default: return C_PENDING;
	}
}

const char *draw_band_glyph2(db_band b)
{
	switch (b) {
	case DB_BAND_OK: return G("✓ ", ". ");
	case DB_BAND_DRIFT: return G("~ ", "~ ");
	case DB_BAND_ALGO: return G("✗ ", "x ");
	case DB_BAND_BUG: return G("✗✗", "X ");
	case DB_BAND_SCRAMBLE: return G("‼ ", "# ");
	case DB_BAND_INPUTS: return G("≠ ", "! ");
	default: return "- ";
	}
}

const char *draw_band_glyph(db_band b)
{
	switch (b) {
	case DB_BAND_OK: return G("✓", ".");
	case DB_BAND_DRIFT: return "~";
	case DB_BAND_ALGO: return G("✗", "x");
	case DB_BAND_BUG: return G("✗✗", "X");
	case DB_BAND_SCRAMBLE: return G("‼", "#");
	case DB_BAND_INPUTS: return G("≠", "!");
	default: return "-";
	}
}

const char *draw_status_glyph(db_status s)
{
	switch (s) {
	case DB_ST_REF_ONLY: return G("◁", "<");
	case DB_ST_TARGET_ONLY: return G("▷", ">");
	case DB_ST_SHAPE_MISMATCH: return G("≠", "!");
	case DB_ST_ERROR: return G("‽", "E");
	case DB_ST_NOT_COMPARABLE: return G("⊘", "/");
	default: return " ";
	}
}

enum tui_color draw_status_color(db_status s)
{
	switch (s) {
	case DB_ST_REF_ONLY:
	case DB_ST_TARGET_ONLY: return C_MISSING;
	case DB_ST_SHAPE_MISMATCH: return C_SHAPE;
	case DB_ST_ERROR: return C_ERROR;
	default: return C_DEFAULT;
	}
}

/* The key sits beside the glyphs it explains, so a new band or status
 * cannot miss its entry. */
void draw_legend(WINDOW *w, int y, bool marks, bool bitwise)
{
	int W = getmaxx(w), x = 0;
	draw_fill(w, y, 0, W, C_DEFAULT, 0);
	for (db_band b = DB_BAND_OK; b <= DB_BAND_SCRAMBLE; b++) {
		x += draw_text(w, y, x, W - x, draw_band_color(b), 0, draw_band_glyph(b));
		x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, " %s  ", db_band_name(b));
	}
	static const struct {
		db_status s;
		const char *what;
	} st[] = {{DB_ST_REF_ONLY, "no target"}, {DB_ST_TARGET_ONLY, "no ref"},
	          {DB_ST_SHAPE_MISMATCH, "shape"}, {DB_ST_ERROR, "error"}};
	for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
		x += draw_text(w, y, x, W - x, draw_status_color(st[i].s), 0,
		               draw_status_glyph(st[i].s));
		x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, " %s  ", st[i].what);
	}
	if (bitwise) {  /* only where a cell can show it: the slots' verdict */
		x += draw_text(w, y, x, W - x, draw_band_color(DB_BAND_DRIFT), 0, G("≢", "#"));
		x += draw_text(w, y, x, W - x, C_DEFAULT, 0, " bits differ  ");
	}
	x += draw_text(w, y, x, W - x, C_MARK, A_BOLD, G("▸", "*"));
	x += draw_text(w, y, x, W - x, C_DEFAULT, 0, " 1st divergence  ");
	if (marks) {
		x += draw_text(w, y, x, W - x, C_HILITE, A_BOLD, G("◆", "+"));
		x += draw_text(w, y, x, W - x, C_DEFAULT, 0, " marked  ");
	}
}

bool draw_pair_done(const db_pair *p)
{
	return db_pair_done(p);
}

void fmt_cos(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "nan");
	else if (v < 0)
		snprintf(buf, len, "%.3f", v);
	else
		snprintf(buf, len, "%.4f", v);
}

void fmt_sci(double v, char *buf, size_t len, int width)
{
	if (isnan(v)) {
		snprintf(buf, len, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "inf" : "-inf");
		return;
	}
	if (v == 0) {
		snprintf(buf, len, "0");
		return;
	}
	char tmp[32];
	snprintf(tmp, sizeof tmp, "%.1e", v);
	char *e = strchr(tmp, 'e');
	int ex = e ? atoi(e + 1) : 0;
	if (e)
		*e = '\0';
	snprintf(buf, len, "%se%d", tmp, ex);
	if ((int)strlen(buf) > width) {
		snprintf(tmp, sizeof tmp, "%.0e", v);
		e = strchr(tmp, 'e');
		ex = e ? atoi(e + 1) : 0;
		if (e)
			*e = '\0';
		snprintf(buf, len, "%se%d", tmp, ex);
	}
}
