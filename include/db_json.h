/* Minimal JSON writing for the --format json outputs and exports. */
#ifndef DB_JSON_H
#define DB_JSON_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* s as a JSON string with quotes; NULL prints null. */
void db_json_str(FILE *out, const char *s);
/* %.17g; NaN and Inf print null (JSON has neither). */
void db_json_num(FILE *out, double v);
/* A field as JSON: "" -> null; pass: all digits -> a number. */
void db_json_field(FILE *out, const char *s, bool numeric_if_digits);
/* Writes an int array as JSON (null for ndim < 0). */
void db_json_shape(FILE *out, int ndim, const int64_t *shape);

#endif
