/* torch.save readers: the zip container (torch >= 1.6) and the legacy
 * five-pickle stream (pre-1.6 / _use_new_zipfile_serialization=False).
 * Tensors point into the file (zero-copy, strides kept); dict payloads are
 * flattened into entries (nested keys joined with '.', list/tuple items by
 * index, a single plain tensor has key ""). */
#ifndef DB_PT_H
#define DB_PT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_err.h"
#include "db_reader.h"
#include "zip.h"

/* z: the already-opened zip over f->map (borrowed). 0 with entries appended
 * to f, or -1 with err set when the file is refused as a whole. */
int db_read_pt_zip(db_file *f, const db_zip *z, db_err *err);
/* p[0..n) = the whole file (must outlive f). Same contract. */
int db_read_pt_legacy(db_file *f, const uint8_t *p, size_t n, db_err *err);
/* True when p starts with PROTO (optionally FRAME) and the legacy magic. */
bool db_pt_is_legacy(const uint8_t *p, size_t n);

#endif
