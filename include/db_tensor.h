/* A zero-copy view of one tensor inside an open file (see db_reader.h). */
#ifndef DB_TENSOR_H
#define DB_TENSOR_H
#include <stdbool.h>
#include <stdint.h>
#include "db_dtype.h"

#define DB_MAX_DIMS 16

/* What a statistics-only dumper (Ascend msprobe) wrote instead of the
 * tensor: its Max, Min, Mean and Norm (L2) and, in md5 mode, a CRC-32 of
 * the bytes. has_* say which were given (integer tensors have no Mean and
 * Norm). */
typedef struct db_tstat {
	double max, min, mean, norm;
	bool has_max, has_min, has_mean, has_norm, has_crc;
	uint32_t crc;
	/* the dumper's name of the call that gave it (msprobe: its dump.json
	 * key, "Tensor.__add__.3.forward"), for its stack record; owned by the
	 * file, NULL when none */
	const char *call;
	/* tensor mode: the file holding the tensor itself, beside the dump
	 * under dump_tensor_data/ (msprobe's data_name, a plain file name);
	 * owned by whoever holds the tstat (the file, the index), NULL none */
	char *data;
} db_tstat;

typedef struct db_tensor {
	db_dtype dtype;
	int ndim;                       /* 0 = scalar (numel 1) */
	int64_t shape[DB_MAX_DIMS];
	int64_t stride[DB_MAX_DIMS];    /* in elements, >= 0; C order when contiguous */
	/* Address of logical element 0 (storage start + storage_offset*itemsize).
	 * Borrowed: valid while the db_file it came from is open. Every element
	 * reachable through shape/stride was bounds-checked by the reader. */
	const uint8_t *data;
	bool swap;                      /* stored big-endian */
	int64_t file_offset;            /* byte offset of data in the file; -1 if inflated */
	/* quantized per-tensor affine parameters (scale 0 = none) */
	double q_scale;
	int64_t q_zero;
	/* Set (and data NULL) when the file holds only statistics of the
	 * tensor; owned by the db_file. */
	const db_tstat *st;
} db_tensor;

int64_t db_tensor_numel(const db_tensor *t);
/* The element count of a shape into *n; false when a dim is negative or
 * the count overflows int64 (a reader's check of a declared shape). */
bool db_shape_numel(int ndim, const int64_t *shape, int64_t *n);
bool db_tensor_is_contiguous(const db_tensor *t);
/* Byte offset from t->data of the element with flat (C-order) index i. */
int64_t db_tensor_elem_offset(const db_tensor *t, int64_t i);
/* "[2, 16, 64]" into buf; returns buf. */
char *db_shape_str(const db_tensor *t, char *buf, size_t len);
bool db_shape_equal(const db_tensor *a, const db_tensor *b);
/* The first n elements of t as doubles into out, read under a guard
 * (db_bus.h): 0, or -1 when the file shrank under its mapping meanwhile
 * (*fault, may be NULL: the address). */
int db_tensor_to_f64(const db_tensor *t, double *out, int64_t n, const void **fault);
/* Set C-contiguous strides for the current shape. */
void db_tensor_set_contiguous(db_tensor *t);

#endif
