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

/* to_file as a path relative to the folder from_dir ("../notes/01_x.md"),
 * both resolved first (realpath: they must exist), so a link written into
 * a file in from_dir opens to_file. NULL when either cannot be resolved;
 * caller frees. */
char *db_rel_path(const char *from_dir, const char *to_file);

#endif
