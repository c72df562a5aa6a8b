/* "ORIGIN:LINE:COL: message" errors of the YAML readers (profiles,
 * sessions), from libyaml's 0-based marks printed 1-based. Private. */
#ifndef DB_YAML_ERR_H
#define DB_YAML_ERR_H
#include <stdarg.h>
#include <yaml.h>

#include "db_err.h"

/* At mark (NULL: 1:1). Returns -1 like db_err_set. */
int db_yaml_err_at(db_err *err, const char *origin, const yaml_mark_t *mark,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* At where node starts (NULL: 1:1); for the readers' own variadic wrappers. */
int db_yaml_verr(db_err *err, const char *origin, const yaml_node_t *node,
                 const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

#endif
