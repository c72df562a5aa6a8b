/* msprobe's stack.json: the Python stack of every call it dumped, grouped
 * ({"0": [[call names...], ["File F, line L, in FUNC, \n CODE", ...]]}). */
#ifndef DB_MSPROBE_STACK_H
#define DB_MSPROBE_STACK_H
#include <stddef.h>

/* The frame that made call (a dump.json key) of the dump.json at
 * dump_path, from the stack.json beside it: the innermost frame outside
 * torch and msprobe, as "FILE:LINE, in FUNC: CODE" into buf (cut to len).
 * 0 when found, -1 when there is no stack.json, it is not msprobe's (too
 * big, not JSON) or it does not name the call. */
int db_msprobe_frame(const char *dump_path, const char *call, char *buf, size_t len);

#endif
