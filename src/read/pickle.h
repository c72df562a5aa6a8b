/* A restricted pickle VM for torch.save payloads (formats.md §2-4).
 * Nothing is imported or called: GLOBAL/STACK_GLOBAL resolve only names on
 * a fixed allowlist (tensor rebuild functions, storage classes, dtypes,
 * qschemes, OrderedDict, _codecs.encode, torch.Size) and REDUCE "calls"
 * only those, by building plain values. INST/OBJ/EXT*, text PERSID and
 * NEWOBJ(_EX) are refused. Sizes, depth, memo and stack are capped.
 * Every error names the file, the pickle entry and the opcode's file offset. */
#ifndef DB_PICKLE_H
#define DB_PICKLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_dtype.h"
#include "db_err.h"
#include "db_tensor.h"

#define DB_PK_MAX_DEPTH  100        /* container nesting */
#define DB_PK_MAX_STACK  (1u << 20) /* values on the stack */
#define DB_PK_MAX_MARKS  (1u << 16) /* open MARKs */
#define DB_PK_MAX_MEMO   (1u << 22) /* memo slots */
#define DB_PK_MAX_ITEMS  (1u << 24) /* items in one container */
#define DB_PK_MAX_STR    (1u << 30) /* bytes in one str/bytes */

typedef enum db_pk_type {
	DB_PK_NONE, DB_PK_BOOL, DB_PK_INT, DB_PK_BIGINT, DB_PK_FLOAT, DB_PK_STR,
	DB_PK_BYTES, DB_PK_TUPLE, DB_PK_LIST, DB_PK_DICT, DB_PK_SET,
	DB_PK_GLOBAL,   /* an allowlisted name (see db_pk_global) */
	DB_PK_STORAGE,  /* a storage reference from a persistent id */
	DB_PK_TENSOR,
	DB_PK_OPAQUE    /* harmless result we do not model (a layout, ...) */
} db_pk_type;

typedef enum db_pk_global {
	DB_PKG_REBUILD_TENSOR, DB_PKG_REBUILD_TENSOR_V2, DB_PKG_REBUILD_TENSOR_V3,
	DB_PKG_REBUILD_PARAMETER, DB_PKG_REBUILD_PARAMETER_WITH_STATE,
	DB_PKG_REBUILD_QTENSOR, DB_PKG_REBUILD_SPARSE, DB_PKG_REBUILD_SPARSE_CSR,
	DB_PKG_REBUILD_UNSUPPORTED, /* meta/nested/wrapper-subclass tensors */
	DB_PKG_REBUILD_FROM_TYPE_V2,
	DB_PKG_ORDERED_DICT, DB_PKG_CODECS_ENCODE, DB_PKG_TORCH_SIZE, DB_PKG_GET_LAYOUT,
	DB_PKG_STORAGE_CLASS,       /* torch.FloatStorage, torch.storage.UntypedStorage, ... */
	DB_PKG_DTYPE,               /* torch.float32, ... */
	DB_PKG_QSCHEME,             /* torch.per_tensor_affine, ... */
	DB_PKG_TENSOR_CLASS         /* torch.Tensor, torch.nn.parameter.Parameter */
} db_pk_global;

typedef struct db_pk_val db_pk_val;

typedef struct db_pk_storage {
	const char *key;        /* record name: data/<key> or the legacy key; NUL-terminated */
	db_dtype dtype;         /* element type of the storage class (U8 for untyped) */
	size_t itemsize;
	uint64_t numel;         /* elements of dtype, as the persistent id declares */
	bool untyped;
} db_pk_storage;

typedef struct db_pk_tensor {
	db_pk_val *storage;     /* a DB_PK_STORAGE value */
	db_dtype dtype;         /* element type of the tensor */
	size_t itemsize;
	int64_t offset;         /* storage offset, in elements of dtype */
	int ndim;
	int64_t shape[DB_MAX_DIMS];
	int64_t stride[DB_MAX_DIMS];
	double q_scale;         /* per-tensor affine quantization; 0 = none */
	int64_t q_zero;
	bool q_per_channel;
	/* Non-empty: this tensor cannot be read (sparse, meta, unknown dtype);
	 * the reason becomes an entry error instead of refusing the file. */
	char unsupported[96];
} db_pk_tensor;

struct db_pk_val {
	db_pk_type type;
	int depth;              /* nesting depth of containers below this value */
	int64_t off;            /* file offset of the opcode that made it */
	union {
		bool b;
		int64_t i;
		double f;
		struct { char *s; size_t len; } str;      /* STR (UTF-8), BYTES, BIGINT (LE bytes) */
		struct { db_pk_val **v; size_t n, cap; } seq; /* TUPLE, LIST, SET */
		struct { db_pk_val **k, **v; size_t n, cap; } dict;
		struct {
			db_pk_global kind;
			db_dtype dtype; /* STORAGE_CLASS / DTYPE; UNKNOWN if torch has it and we do not */
			size_t itemsize;
			bool untyped;
			const char *name;   /* "module.name", static */
		} g;
		db_pk_storage storage;
		db_pk_tensor *tensor;                      /* owned by the vm */
	} u;
};

typedef struct db_pk db_pk;

/* A VM whose values live until db_pk_free. fname and entry are borrowed,
 * used in messages. legacy: persistent ids have the 6 fields of the
 * pre-1.6 format. NULL on OOM. */
db_pk *db_pk_new(const char *fname, const char *entry, bool legacy);
void db_pk_free(db_pk *vm);
/* Name used as the entry in later messages (borrowed). */
void db_pk_set_entry(db_pk *vm, const char *entry);

/* Run one pickle in data[0..len), up to and including STOP. base = file
 * offset of data[0] (for messages). On success *out is the result (owned by
 * vm) and *used the bytes consumed. Stack and memo are reset per run; values
 * from earlier runs stay valid. 0, or -1 with err set. */
int db_pk_run(db_pk *vm, const uint8_t *data, size_t len, int64_t base,
              db_pk_val **out, size_t *used, db_err *err);

/* Every storage value made so far, in creation order (borrowed). */
db_pk_val *const *db_pk_storages(const db_pk *vm, size_t *n);

#endif
