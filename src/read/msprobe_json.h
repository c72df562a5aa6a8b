/* Ascend msprobe's dump.json (statistics, tensor and md5 tasks): one entry
 * per tensor an API or module call took or gave, holding its statistics
 * (db_tstat) and no data. */
#ifndef DB_MSPROBE_JSON_H
#define DB_MSPROBE_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_err.h"
#include "db_reader.h"

/* dump.json text: '{' first and msprobe's "task" key near the start. */
bool db_msprobe_sniff(const uint8_t *d, size_t n);
/* Fill f from d[0..n). construct.json beside f->path (when there is one)
 * places API calls in their module. -1 (err names the file and the JSON
 * path) when the file is not a dump.json at all. */
int db_read_msprobe(db_file *f, const uint8_t *d, size_t n, db_err *err);

#endif
