/* Internal API shared by the format readers (pt.c, safetensors.c, npy.c,
 * npz.c) and the dispatcher in reader.c: how a reader appends entries to the
 * db_file it is building and hands it buffers to free. */
#ifndef DB_READER_IMPL_H
#define DB_READER_IMPL_H
#include <stddef.h>
#include <stdint.h>
#include "db_err.h"
#include "db_reader.h"

/* Append a zeroed entry with a copy of key (t.file_offset = -1). Returns the
 * entry, valid until the next append, or NULL on OOM. */
db_entry *db_file_add_entry(db_file *f, const char *key);

/* Append an entry that could not be read; msg (a full message naming file,
 * entry and offset, as db_err_set builds it) is copied into entry->err.
 * The other entries of the file stay good. 0, or -1 on OOM (err set). */
int db_file_add_entry_error(db_file *f, const char *key, const db_err *msg, db_err *err);

/* f takes ownership of the malloc'd buffer p and frees it in db_file_close.
 * 0, or -1 on OOM; p is then freed already. */
int db_file_own(db_file *f, void *p);

/* Take n bytes of the process's inflate budget for f (from the caller's
 * prepaid bytes first), before inflating them: 0 taken (f->inflate_held
 * grows), -1 n is more than the whole budget, -2 busy and f's opener may
 * not wait (f->opt->need set). */
int db_file_take_inflate(db_file *f, uint64_t n);
/* Give back n of what f took (members that did not need it after all). */
void db_file_give_inflate(db_file *f, uint64_t n);

/* Magic-byte classification of data[0..size) (also used by tests). */
db_format db_detect_format(const uint8_t *data, size_t size);

#endif
