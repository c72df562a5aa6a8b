/* Small text helpers shared by the commands, the reports and the bisect's
 * text output (below all of them, so none includes another's header). */
#ifndef DB_TEXT_H
#define DB_TEXT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The locale says UTF-8 (LC_ALL, LC_CTYPE, LANG). */
bool db_term_utf8(void);
/* "[2, 16, 64]" */
void db_fmt_shape(int ndim, const int64_t *shape, char *buf, size_t len);

#endif
