/* compare --watch (src/cmd/cmd_compare_watch.c). Not a public header. */
#ifndef DB_CMD_COMPARE_WATCH_H
#define DB_CMD_COMPARE_WATCH_H
#include <stdbool.h>
#include "cmd_util.h"

/* Compare ref with tgt (NULL: one folder), then print the summary again
 * whenever files arriving change it, for timeout_s seconds (<= 0: until
 * SIGINT/SIGTERM). json: one JSON object per summary. Exit code as
 * compare's, for the last summary. */
int db_compare_watch(const db_cmd *cmd, const db_cmp_args *ca, const char *ref,
                     const char *tgt, bool json, double timeout_s);

#endif
