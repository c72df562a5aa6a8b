/* The allowlist of names a pickle may refer to (formats.md §2-4), and
 * their resolution into DB_PK_GLOBAL values. Nothing is imported. */
#include "pickle_allow.h"

#include <stdio.h>
#include <string.h>

typedef struct gdef {
	const char *full;       /* module.name */
	db_pk_global kind;
	db_dtype dt;
	unsigned char isz;
	bool untyped;
} gdef;

static const gdef allowed[] = {
	{"torch._utils._rebuild_tensor", DB_PKG_REBUILD_TENSOR, 0, 0, 0},
	{"torch._utils._rebuild_tensor_v2", DB_PKG_REBUILD_TENSOR_V2, 0, 0, 0},
	{"torch._utils._rebuild_tensor_v3", DB_PKG_REBUILD_TENSOR_V3, 0, 0, 0},
	{"torch._utils._rebuild_parameter", DB_PKG_REBUILD_PARAMETER, 0, 0, 0},
	{"torch._utils._rebuild_parameter_with_state", DB_PKG_REBUILD_PARAMETER_WITH_STATE, 0, 0, 0},
	{"torch._utils._rebuild_qtensor", DB_PKG_REBUILD_QTENSOR, 0, 0, 0},
	{"torch._utils._rebuild_sparse_tensor", DB_PKG_REBUILD_SPARSE, 0, 0, 0},
	{"torch._utils._rebuild_sparse_csr_tensor", DB_PKG_REBUILD_SPARSE_CSR, 0, 0, 0},
	{"torch._utils._rebuild_meta_tensor_no_storage", DB_PKG_REBUILD_UNSUPPORTED, 0, 0, 0},
	{"torch._utils._rebuild_nested_tensor", DB_PKG_REBUILD_UNSUPPORTED, 0, 0, 0},
	{"torch._utils._rebuild_wrapper_subclass", DB_PKG_REBUILD_UNSUPPORTED, 0, 0, 0},
	{"torch._tensor._rebuild_from_type_v2", DB_PKG_REBUILD_FROM_TYPE_V2, 0, 0, 0},
	{"collections.OrderedDict", DB_PKG_ORDERED_DICT, 0, 0, 0},
	{"_codecs.encode", DB_PKG_CODECS_ENCODE, 0, 0, 0},
	{"torch.Size", DB_PKG_TORCH_SIZE, 0, 0, 0},
	{"torch.serialization._get_layout", DB_PKG_GET_LAYOUT, 0, 0, 0},
	{"torch.Tensor", DB_PKG_TENSOR_CLASS, 0, 0, 0},
	{"torch.nn.parameter.Parameter", DB_PKG_TENSOR_CLASS, 0, 0, 0},
	/* storage classes (formats.md §2 table) */
	{"torch.DoubleStorage", DB_PKG_STORAGE_CLASS, DB_DT_F64, 8, 0},
	{"torch.FloatStorage", DB_PKG_STORAGE_CLASS, DB_DT_F32, 4, 0},
	{"torch.HalfStorage", DB_PKG_STORAGE_CLASS, DB_DT_F16, 2, 0},
	{"torch.BFloat16Storage", DB_PKG_STORAGE_CLASS, DB_DT_BF16, 2, 0},
	{"torch.LongStorage", DB_PKG_STORAGE_CLASS, DB_DT_I64, 8, 0},
	{"torch.IntStorage", DB_PKG_STORAGE_CLASS, DB_DT_I32, 4, 0},
	{"torch.ShortStorage", DB_PKG_STORAGE_CLASS, DB_DT_I16, 2, 0},
	{"torch.CharStorage", DB_PKG_STORAGE_CLASS, DB_DT_I8, 1, 0},
	{"torch.ByteStorage", DB_PKG_STORAGE_CLASS, DB_DT_U8, 1, 0},
	{"torch.BoolStorage", DB_PKG_STORAGE_CLASS, DB_DT_BOOL, 1, 0},
	{"torch.ComplexDoubleStorage", DB_PKG_STORAGE_CLASS, DB_DT_C128, 16, 0},
	{"torch.ComplexFloatStorage", DB_PKG_STORAGE_CLASS, DB_DT_C64, 8, 0},
	{"torch.QInt8Storage", DB_PKG_STORAGE_CLASS, DB_DT_QINT8, 1, 0},
	{"torch.QUInt8Storage", DB_PKG_STORAGE_CLASS, DB_DT_QUINT8, 1, 0},
	{"torch.QInt32Storage", DB_PKG_STORAGE_CLASS, DB_DT_QINT32, 4, 0},
	{"torch.QUInt4x2Storage", DB_PKG_STORAGE_CLASS, DB_DT_QUINT4X2, 1, 0},
	{"torch.QUInt2x4Storage", DB_PKG_STORAGE_CLASS, DB_DT_QUINT2X4, 1, 0},
	/* torch >= 2.1 defines a storage class per new dtype too, and files
	 * whose pickle names one in a v2 persistent id exist (other writers,
	 * and the fixtures torch 1.13 cannot write otherwise) */
	{"torch.Float8_e4m3fnStorage", DB_PKG_STORAGE_CLASS, DB_DT_F8_E4M3FN, 1, 0},
	{"torch.Float8_e5m2Storage", DB_PKG_STORAGE_CLASS, DB_DT_F8_E5M2, 1, 0},
	{"torch.Float8_e4m3fnuzStorage", DB_PKG_STORAGE_CLASS, DB_DT_F8_E4M3FNUZ, 1, 0},
	{"torch.Float8_e5m2fnuzStorage", DB_PKG_STORAGE_CLASS, DB_DT_F8_E5M2FNUZ, 1, 0},
	{"torch.Float8_e8m0fnuStorage", DB_PKG_STORAGE_CLASS, DB_DT_F8_E8M0FNU, 1, 0},
	{"torch.Float4_e2m1fn_x2Storage", DB_PKG_STORAGE_CLASS, DB_DT_F4_E2M1FN_X2, 1, 0},
	{"torch.storage.UntypedStorage", DB_PKG_STORAGE_CLASS, DB_DT_U8, 1, 1},
	{"torch.UntypedStorage", DB_PKG_STORAGE_CLASS, DB_DT_U8, 1, 1},
	{"torch.storage._UntypedStorage", DB_PKG_STORAGE_CLASS, DB_DT_U8, 1, 1},
	/* dtypes, pickled by their canonical name */
	{"torch.float64", DB_PKG_DTYPE, DB_DT_F64, 8, 0},
	{"torch.float32", DB_PKG_DTYPE, DB_DT_F32, 4, 0},
	{"torch.float16", DB_PKG_DTYPE, DB_DT_F16, 2, 0},
	{"torch.bfloat16", DB_PKG_DTYPE, DB_DT_BF16, 2, 0},
	{"torch.float8_e4m3fn", DB_PKG_DTYPE, DB_DT_F8_E4M3FN, 1, 0},
	{"torch.float8_e5m2", DB_PKG_DTYPE, DB_DT_F8_E5M2, 1, 0},
	{"torch.float8_e4m3fnuz", DB_PKG_DTYPE, DB_DT_F8_E4M3FNUZ, 1, 0},
	{"torch.float8_e5m2fnuz", DB_PKG_DTYPE, DB_DT_F8_E5M2FNUZ, 1, 0},
	{"torch.float8_e8m0fnu", DB_PKG_DTYPE, DB_DT_F8_E8M0FNU, 1, 0},
	{"torch.int8", DB_PKG_DTYPE, DB_DT_I8, 1, 0},
	{"torch.int16", DB_PKG_DTYPE, DB_DT_I16, 2, 0},
	{"torch.int32", DB_PKG_DTYPE, DB_DT_I32, 4, 0},
	{"torch.int64", DB_PKG_DTYPE, DB_DT_I64, 8, 0},
	{"torch.uint8", DB_PKG_DTYPE, DB_DT_U8, 1, 0},
	{"torch.uint16", DB_PKG_DTYPE, DB_DT_U16, 2, 0},
	{"torch.uint32", DB_PKG_DTYPE, DB_DT_U32, 4, 0},
	{"torch.uint64", DB_PKG_DTYPE, DB_DT_U64, 8, 0},
	{"torch.bool", DB_PKG_DTYPE, DB_DT_BOOL, 1, 0},
	{"torch.complex64", DB_PKG_DTYPE, DB_DT_C64, 8, 0},
	{"torch.complex128", DB_PKG_DTYPE, DB_DT_C128, 16, 0},
	{"torch.qint8", DB_PKG_DTYPE, DB_DT_QINT8, 1, 0},
	{"torch.quint8", DB_PKG_DTYPE, DB_DT_QUINT8, 1, 0},
	{"torch.qint32", DB_PKG_DTYPE, DB_DT_QINT32, 4, 0},
	{"torch.quint4x2", DB_PKG_DTYPE, DB_DT_QUINT4X2, 1, 0},
	{"torch.quint2x4", DB_PKG_DTYPE, DB_DT_QUINT2X4, 1, 0},
	{"torch.float4_e2m1fn_x2", DB_PKG_DTYPE, DB_DT_F4_E2M1FN_X2, 1, 0},
	/* torch has these; we list such tensors with an entry error */
	{"torch.complex32", DB_PKG_DTYPE, DB_DT_UNKNOWN, 0, 0},
	{"torch.bits8", DB_PKG_DTYPE, DB_DT_UNKNOWN, 0, 0},
	{"torch.bits16", DB_PKG_DTYPE, DB_DT_UNKNOWN, 0, 0},
	{"torch.bits1x8", DB_PKG_DTYPE, DB_DT_UNKNOWN, 0, 0},
	{"torch.bits2x4", DB_PKG_DTYPE, DB_DT_UNKNOWN, 0, 0},
	{"torch.bits4x2", DB_PKG_DTYPE, DB_DT_UNKNOWN, 0, 0},
	/* qschemes; isz 1 marks the per-channel ones */
	{"torch.per_tensor_affine", DB_PKG_QSCHEME, 0, 0, 0},
	{"torch.per_tensor_symmetric", DB_PKG_QSCHEME, 0, 0, 0},
	{"torch.per_channel_affine", DB_PKG_QSCHEME, 0, 1, 0},
	{"torch.per_channel_symmetric", DB_PKG_QSCHEME, 0, 1, 0},
	{"torch.per_channel_affine_float_qparams", DB_PKG_QSCHEME, 0, 1, 0},
};

static const gdef *scan_global(const char *mod, const char *name)
{
	size_t ml = strlen(mod);
	if (strchr(name, '.'))
		return NULL; /* "torch" + "_utils.x" must not match "torch._utils" + "x" */
	for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
		const char *f = allowed[i].full;
		if (!strncmp(f, mod, ml) && f[ml] == '.' && !strcmp(f + ml + 1, name))
			return &allowed[i];
	}
	return NULL;
}

/* The last allowed names this thread looked up: a dump's files name the
 * same three or four globals each (issue 24: the scan of the whole list
 * was ~900 instructions a file at 10^6 files). Only hits are kept, and
 * the list is constant, so an entry never goes stale. */
#define SEEN_GLOBALS 4
static _Thread_local struct {
	char mod[64], name[64];
	const gdef *g;
} seen_g[SEEN_GLOBALS];
static _Thread_local unsigned seen_next;

static const gdef *find_global(const char *mod, const char *name)
{
	for (unsigned i = 0; i < SEEN_GLOBALS; i++)
		if (seen_g[i].g && !strcmp(seen_g[i].mod, mod) && !strcmp(seen_g[i].name, name))
			return seen_g[i].g;
	const gdef *g = scan_global(mod, name);
	if (g && strlen(mod) < sizeof seen_g[0].mod && strlen(name) < sizeof seen_g[0].name) {
		unsigned k = seen_next++ % SEEN_GLOBALS;
		strcpy(seen_g[k].mod, mod);
		strcpy(seen_g[k].name, name);
		seen_g[k].g = g;
	}
	return g;
}

/* Python 2 names, mapped as torch does before its check (messages only:
 * none of them is allowed). */
static const char *py3_module(const char *m)
{
	if (!strcmp(m, "__builtin__"))
		return "builtins";
	if (!strcmp(m, "copy_reg"))
		return "copyreg";
	return m;
}

const char *db_pk_shown_name(const char *mod, const char *name, char *buf, size_t len)
{
	char cm[200], cn[200];
	snprintf(buf, len, "%s.%s", db_pk_clean(py3_module(mod), cm, sizeof cm),
	         db_pk_clean(name, cn, sizeof cn));
	return buf;
}

db_pk_val *db_pk_resolve(db_pk *vm, size_t at, const char *op, const char *mod, const char *name)
{
	const gdef *g = find_global(mod, name);
	if (!g) {
		char shown[DB_PK_NAME_BUF];
		return db_pk_fail_null(vm, at, "%s %s is not allowed (nothing in a file is executed)",
		                       op, db_pk_shown_name(mod, name, shown, sizeof shown));
	}
	db_pk_val *v = db_pk_mk(vm, DB_PK_GLOBAL, at);
	if (!v)
		return NULL;
	v->u.g.kind = g->kind;
	v->u.g.dtype = g->dt;
	v->u.g.itemsize = g->isz;
	v->u.g.untyped = g->untyped;
	v->u.g.name = g->full;
	return v;
}
