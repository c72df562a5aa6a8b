#include "yaml_err.h"

#include <stdio.h>

static int at(db_err *err, const char *origin, const yaml_mark_t *mark, const char *fmt,
              va_list ap) __attribute__((format(printf, 4, 0)));

static int at(db_err *err, const char *origin, const yaml_mark_t *mark, const char *fmt,
              va_list ap)
{
	char msg[768];
	vsnprintf(msg, sizeof msg, fmt, ap);
	size_t line = mark ? mark->line + 1 : 1, col = mark ? mark->column + 1 : 1;
	return db_err_set(err, NULL, NULL, -1, "%s:%zu:%zu: %s", origin, line, col, msg);
}

int db_yaml_err_at(db_err *err, const char *origin, const yaml_mark_t *mark,
                   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	at(err, origin, mark, fmt, ap);
	va_end(ap);
	return -1;
}

int db_yaml_verr(db_err *err, const char *origin, const yaml_node_t *node,
                 const char *fmt, va_list ap)
{
	return at(err, origin, node ? &node->start_mark : NULL, fmt, ap);
}
