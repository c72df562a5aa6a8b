/* Drawing helpers shared by the views: text clipped by display width
 * (wcwidth, never bytes), the colour scheme with its monochrome fallback,
 * glyphs in UTF-8 or ASCII, and compact number formats. */
#ifndef TUI_DRAW_H
#define TUI_DRAW_H
#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include "db_compare.h"
#include "db_esc.h"
#include "db_metrics.h"

enum tui_color {
	C_DEFAULT = 0,
	C_OK, C_DRIFT, C_ALGO, C_BUG, C_SCRAMBLE,       /* cell backgrounds by band */
	C_MISSING, C_SHAPE, C_ERROR, C_PENDING,
	C_TITLE, C_TAB, C_HILITE, C_MARK, C_DIM, C_LINE_COS, C_LINE_REL, C_GOOD,
	C__COUNT
};

/* Set once at start: colours on (has_colors and NO_COLOR unset/empty) and
 * UTF-8 glyphs (the locale's codeset is UTF-8). */
extern bool draw_color, draw_utf8;
void draw_init(bool color, bool utf8);

/* Attributes for c; without colour, only the attribute part remains
 * (bold/dim/reverse) so severity still reads from the glyphs. */
void draw_style(enum tui_color c, attr_t *attr, short *pair);
/* utf8 when draw_utf8, else ascii. */
static inline const char *G(const char *utf8, const char *ascii)
{
	return draw_utf8 ? utf8 : ascii;
}

/* Every string drawn or measured here is first escaped by db_esc_buf (the
 * rule of the headless commands: controls and invalid bytes as \xNN, bidi
 * controls as \uNNNN), since keys, stage names, paths and messages come
 * from the dumps; widths are those of the escaped text.
 * Display width of s as drawn (unprintables left count one column, '?'). */
int draw_width(const char *s);
/* Write s at (y, x) using at most maxw columns; a wide character that would
 * straddle the limit is left out. Returns the columns written. */
int draw_text(WINDOW *w, int y, int x, int maxw, enum tui_color c, attr_t extra,
              const char *s);
int draw_textf(WINDOW *w, int y, int x, int maxw, enum tui_color c, attr_t extra,
               const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* A table's header row: each name at its column x (out to width W),
 * dim and bold, as every list view heads its columns. */
struct col_head {
	int x;
	const char *name;
};
void draw_heads(WINDOW *w, int y, int W, const struct col_head *c, size_t n);
/* Fill n columns with blanks in style c. */
void draw_fill(WINDOW *w, int y, int x, int n, enum tui_color c, attr_t extra);
/* s escaped and cut to at most width columns, ending with an ellipsis when
 * cut, into buf (UTF-8). Returns buf. */
char *draw_fit(const char *s, int width, char *buf, size_t len);
/* The same, cut in the middle so the end stays ("logits_pr…sor.1",
 * "~/.local/…/session.yaml"): the last tail columns (< 0: two thirds) after
 * the ellipsis. Every name cut for the screen goes through one of these. */
char *draw_fit_mid(const char *s, int width, int tail, char *buf, size_t len);
/* draw_fit_mid for one of the names shown side by side (others, n of
 * them, may hold s and NULLs): when its cut would read as another's, the
 * end alone ("…qkv_proj" beside "…n.o_proj"). */
char *draw_fit_apart(const char *s, const char *const *others, size_t n, int width,
                     char *buf, size_t len);
/* draw_fit_apart in width columns, or in more when a cut in width would
 * still read as one of the others ("se…ion" beside "self_attention"): as
 * few as keep the part that tells s apart (issue 34). */
char *draw_fit_telling(const char *s, const char *const *others, size_t n, int width,
                       char *buf, size_t len);

/* Band / status presentation. */
enum tui_color draw_band_color(db_band b);
/* One cell's glyph, always 2 columns wide (padded). */
const char *draw_band_glyph2(db_band b);
/* The glyph without padding (1 or 2 columns). */
const char *draw_band_glyph(db_band b);
/* Glyph and color of a non-ok status (missing side, shape, error). */
const char *draw_status_glyph(db_status s);
enum tui_color draw_status_color(db_status s);
bool draw_pair_done(const db_pair *p);
/* The key to the glyphs on line y: every band, the statuses, the first
 * divergence marker and, when marks, the mark. */
void draw_legend(WINDOW *w, int y, bool marks, bool bitwise);

/* Numbers: cos fixed ("0.9999", "-0.123"); others compact scientific
 * ("1.2e-3", "0"). width: the maximum columns (>= 5). */
void fmt_cos(double v, char *buf, size_t len);
void fmt_sci(double v, char *buf, size_t len, int width);

#endif
