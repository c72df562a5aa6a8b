/* Readers for safetensors, NumPy .npy and .npz, called by the format
 * dispatcher in reader.c once the magic bytes are known.
 *
 * Each takes the db_file being built (f->path names the file in messages)
 * and the whole file p[0..n), which must outlive f (it is the mmap). Tensors
 * point into p, or for deflated .npz members into buffers f owns. Returns 0
 * with entries appended to f (an entry that could not be read carries its own
 * err and the others are good), or -1 with err set when the file is refused as
 * a whole; f may then hold partial entries and is freed by the caller. */
#ifndef DB_ST_NPY_H
#define DB_ST_NPY_H
#include <stddef.h>
#include <stdint.h>
#include "db_err.h"
#include "db_reader.h"

int db_read_safetensors(db_file *f, const uint8_t *p, size_t n, db_err *err);
int db_read_npy(db_file *f, const uint8_t *p, size_t n, db_err *err);
int db_read_npz(db_file *f, const uint8_t *p, size_t n, db_err *err);

/* Parse one .npy image p[0..n) into t (zero-copy: t->data points into p;
 * t->file_offset = base + offset of the data in p, or -1 when base < 0).
 * name/key are only used in messages. 0, or -1 with err set. Shared by the
 * .npy and .npz readers. */
int db_npy_parse(const uint8_t *p, size_t n, const char *name, const char *key,
                 int64_t base, db_tensor *t, db_err *err);

#endif
