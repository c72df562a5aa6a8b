/* Minimal JSON writing for the --format json outputs and exports. */
#ifndef DB_JSON_H
#define DB_JSON_H
#include <stdio.h>

/* s as a JSON string with quotes; NULL prints null. */
void db_json_str(FILE *out, const char *s);
/* %.17g; NaN and Inf print null (JSON has neither). */
void db_json_num(FILE *out, double v);

#endif
