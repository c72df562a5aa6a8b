#include "pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VALUES (1u << 24)   /* values alive in one vm */
#define MAX_LONG_BYTES 1024     /* LONG4 payload */
#define MAX_LINE 512            /* GLOBAL module/name lines */

struct db_pk {
	const char *fname, *entry;
	bool legacy;
	/* current run */
	db_err *err;
	int64_t base;
	const uint8_t *d;
	size_t n, pos;
	/* every value, freed together */
	db_pk_val **all;
	size_t n_all, cap_all;
	db_pk_val **stack;
	size_t sp, cap_stack;
	size_t *marks;
	size_t n_marks, cap_marks;
	db_pk_val **memo;
	size_t cap_memo, n_memo;
	db_pk_val **storages;
	size_t n_storages, cap_storages;
	db_pk_val none, yes, no;
};

/* ---- allowlist --------------------------------------------------------- */

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
	/* torch has these; we list such tensors with an entry error */
	{"torch.complex32", DB_PKG_DTYPE, DB_DT_UNKNOWN, 0, 0},
	{"torch.float4_e2m1fn_x2", DB_PKG_DTYPE, DB_DT_UNKNOWN, 0, 0},
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

static const gdef *find_global(const char *mod, const char *name)
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

/* ---- vm plumbing ------------------------------------------------------- */

static const char *op_name(uint8_t op)
{
	switch (op) {
	case 'i': return "INST";
	case 'o': return "OBJ";
	case 0x82: return "EXT1";
	case 0x83: return "EXT2";
	case 0x84: return "EXT4";
	case 'P': return "PERSID";
	case 0x81: return "NEWOBJ";
	case 0x92: return "NEWOBJ_EX";
	case 'a': return "APPEND";
	case 'e': return "APPENDS";
	case 's': return "SETITEM";
	case 'u': return "SETITEMS";
	case 'R': return "REDUCE";
	case 'b': return "BUILD";
	case 'Q': return "BINPERSID";
	case 0x90: return "ADDITEMS";
	default: return "opcode";
	}
}

/* A file-supplied name made safe for a terminal: control bytes become '?',
 * cut to fit buf. Returns buf. */
static const char *clean(const char *in, char *buf, size_t len)
{
	size_t i = 0;
	for (; in[i] && i + 1 < len; i++)
		buf[i] = (uint8_t)in[i] < 0x20 || in[i] == 0x7f ? '?' : in[i];
	buf[i] = '\0';
	return buf;
}

static const char *type_name(const db_pk_val *v)
{
	static const char *names[] = {"None", "bool", "int", "int", "float", "str", "bytes",
	                              "tuple", "list", "dict", "set", "global", "storage",
	                              "tensor", "object"};
	return names[v->type];
}

static int fail(db_pk *vm, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(db_pk *vm, size_t at, const char *fmt, ...)
{
	char buf[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return db_err_set(vm->err, vm->fname, vm->entry, vm->base + (int64_t)at, "%s", buf);
}

static int grow(void **p, size_t *cap, size_t need, size_t elsz)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 8;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, nc * elsz);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

static db_pk_val *mk(db_pk *vm, db_pk_type t, size_t at)
{
	if (vm->n_all >= MAX_VALUES) {
		fail(vm, at, "pickle makes more than %u values (cap)", MAX_VALUES);
		return NULL;
	}
	if (grow((void **)&vm->all, &vm->cap_all, vm->n_all + 1, sizeof *vm->all)) {
		fail(vm, at, "out of memory");
		return NULL;
	}
	db_pk_val *v = calloc(1, sizeof *v);
	if (!v) {
		fail(vm, at, "out of memory");
		return NULL;
	}
	v->type = t;
	v->off = vm->base + (int64_t)at;
	vm->all[vm->n_all++] = v;
	return v;
}

static db_pk_val *mk_bytes(db_pk *vm, db_pk_type t, size_t at, const void *s, size_t len)
{
	db_pk_val *v = mk(vm, t, at);
	if (!v)
		return NULL;
	if (!(v->u.str.s = malloc(len + 1))) {
		fail(vm, at, "out of memory");
		return NULL;
	}
	memcpy(v->u.str.s, s, len);
	v->u.str.s[len] = '\0';
	v->u.str.len = len;
	return v;
}

static size_t mark_base(const db_pk *vm)
{
	return vm->n_marks ? vm->marks[vm->n_marks - 1] : 0;
}

static int push(db_pk *vm, size_t at, db_pk_val *v)
{
	if (!v)
		return -1;
	if (vm->sp >= DB_PK_MAX_STACK)
		return fail(vm, at, "pickle stack deeper than %u values (cap)", DB_PK_MAX_STACK);
	if (grow((void **)&vm->stack, &vm->cap_stack, vm->sp + 1, sizeof *vm->stack))
		return fail(vm, at, "out of memory");
	vm->stack[vm->sp++] = v;
	return 0;
}

static db_pk_val *pop(db_pk *vm, size_t at, const char *op)
{
	if (vm->sp <= mark_base(vm)) {
		fail(vm, at, "%s on an empty stack (malformed pickle)", op);
		return NULL;
	}
	return vm->stack[--vm->sp];
}

static db_pk_val *top(db_pk *vm, size_t at, const char *op)
{
	if (vm->sp <= mark_base(vm)) {
		fail(vm, at, "%s on an empty stack (malformed pickle)", op);
		return NULL;
	}
	return vm->stack[vm->sp - 1];
}

/* Items pushed since the last MARK: *first = index in stack, *cnt. Pops the mark. */
static int pop_mark(db_pk *vm, size_t at, const char *op, size_t *first, size_t *cnt)
{
	if (!vm->n_marks)
		return fail(vm, at, "%s without a MARK (malformed pickle)", op);
	*first = vm->marks[--vm->n_marks];
	*cnt = vm->sp - *first;
	return 0;
}

/* The container a MARK-ed batch (APPENDS, SETITEMS ...) goes into: the
 * value just below the items, after pop_mark returned first. */
static db_pk_val *below(db_pk *vm, size_t at, const char *op, size_t first)
{
	if (first <= mark_base(vm)) {
		fail(vm, at, "%s with no container below its MARK (malformed pickle)", op);
		return NULL;
	}
	return vm->stack[first - 1];
}

static int need(db_pk *vm, size_t at, size_t k, const char *what)
{
	if (vm->n - vm->pos < k)
		return fail(vm, at, "pickle truncated inside %s (needs %zu more bytes, %zu left)", what, k,
		            vm->n - vm->pos);
	return 0;
}

static uint64_t rd_le(const uint8_t *p, int k)
{
	uint64_t v = 0;
	for (int i = k - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int update_depth(db_pk *vm, size_t at, db_pk_val *c, const db_pk_val *child)
{
	if (child->depth + 1 > c->depth)
		c->depth = child->depth + 1;
	if (c->depth > DB_PK_MAX_DEPTH)
		return fail(vm, at, "containers nested deeper than %d levels (cap)", DB_PK_MAX_DEPTH);
	return 0;
}

static int seq_add(db_pk *vm, size_t at, db_pk_val *c, db_pk_val *item)
{
	if (c->u.seq.n >= DB_PK_MAX_ITEMS)
		return fail(vm, at, "container holds more than %u items (cap)", DB_PK_MAX_ITEMS);
	if (grow((void **)&c->u.seq.v, &c->u.seq.cap, c->u.seq.n + 1, sizeof *c->u.seq.v))
		return fail(vm, at, "out of memory");
	c->u.seq.v[c->u.seq.n++] = item;
	return update_depth(vm, at, c, item);
}

static int dict_set(db_pk *vm, size_t at, db_pk_val *d, db_pk_val *k, db_pk_val *v)
{
	if (d->u.dict.n >= DB_PK_MAX_ITEMS)
		return fail(vm, at, "dict holds more than %u items (cap)", DB_PK_MAX_ITEMS);
	size_t cap = d->u.dict.cap;
	if (grow((void **)&d->u.dict.k, &cap, d->u.dict.n + 1, sizeof *d->u.dict.k))
		return fail(vm, at, "out of memory");
	cap = d->u.dict.cap;
	if (grow((void **)&d->u.dict.v, &cap, d->u.dict.n + 1, sizeof *d->u.dict.v))
		return fail(vm, at, "out of memory");
	d->u.dict.cap = cap;
	d->u.dict.k[d->u.dict.n] = k;
	d->u.dict.v[d->u.dict.n++] = v;
	if (update_depth(vm, at, d, k))
		return -1;
	return update_depth(vm, at, d, v);
}

/* A new TUPLE/LIST/SET from stack[first..first+cnt). */
static db_pk_val *mk_seq(db_pk *vm, size_t at, db_pk_type t, size_t first, size_t cnt)
{
	db_pk_val *c = mk(vm, t, at);
	if (!c)
		return NULL;
	for (size_t i = 0; i < cnt; i++)
		if (seq_add(vm, at, c, vm->stack[first + i]))
			return NULL;
	return c;
}

/* ---- REDUCE: the only "calls", on allowlisted names ------------------- */

static bool is_int(const db_pk_val *v) { return v->type == DB_PK_INT; }

static bool as_double(const db_pk_val *v, double *d)
{
	if (v->type == DB_PK_FLOAT)
		*d = v->u.f;
	else if (v->type == DB_PK_INT)
		*d = (double)v->u.i;
	else
		return false;
	return true;
}

static int int_tuple(db_pk *vm, size_t at, const char *fn, const char *what,
                     const db_pk_val *v, int64_t *out, int *nd)
{
	if (v->type != DB_PK_TUPLE)
		return fail(vm, at, "%s: %s must be a tuple, not %s", fn, what, type_name(v));
	if (v->u.seq.n > DB_MAX_DIMS)
		return fail(vm, at, "%s: %zu dimensions (at most %d supported)", fn, v->u.seq.n, DB_MAX_DIMS);
	for (size_t i = 0; i < v->u.seq.n; i++) {
		const db_pk_val *x = v->u.seq.v[i];
		if (!is_int(x))
			return fail(vm, at, "%s: %s[%zu] must be an int, not %s", fn, what, i, type_name(x));
		if (x->u.i < 0)
			return fail(vm, at, "%s: %s[%zu] = %lld is negative", fn, what, i, (long long)x->u.i);
		out[i] = x->u.i;
	}
	*nd = (int)v->u.seq.n;
	return 0;
}

static db_pk_val *mk_tensor(db_pk *vm, size_t at)
{
	db_pk_val *v = mk(vm, DB_PK_TENSOR, at);
	if (!v)
		return NULL;
	if (!(v->u.tensor = calloc(1, sizeof *v->u.tensor))) {
		fail(vm, at, "out of memory");
		return NULL;
	}
	return v;
}

/* storage, offset, size, stride: the four leading arguments of every
 * strided rebuild function. */
static db_pk_val *rebuild_strided(db_pk *vm, size_t at, const char *fn, db_pk_val **a)
{
	if (a[0]->type != DB_PK_STORAGE) {
		fail(vm, at, "%s: argument 1 must be a storage (persistent id), not %s", fn, type_name(a[0]));
		return NULL;
	}
	if (!is_int(a[1]) || a[1]->u.i < 0) {
		fail(vm, at, "%s: storage offset must be a non-negative int", fn);
		return NULL;
	}
	db_pk_val *v = mk_tensor(vm, at);
	if (!v)
		return NULL;
	db_pk_tensor *t = v->u.tensor;
	int nd_stride;
	if (int_tuple(vm, at, fn, "size", a[2], t->shape, &t->ndim) ||
	    int_tuple(vm, at, fn, "stride", a[3], t->stride, &nd_stride))
		return NULL;
	if (nd_stride != t->ndim) {
		fail(vm, at, "%s: size has %d dimensions but stride has %d", fn, t->ndim, nd_stride);
		return NULL;
	}
	t->storage = a[0];
	t->offset = a[1]->u.i;
	t->dtype = a[0]->u.storage.dtype;
	t->itemsize = a[0]->u.storage.itemsize;
	return v;
}

static db_pk_val *call(db_pk *vm, size_t at, const db_pk_val *fnv, const db_pk_val *args, int depth);

static db_pk_val *call_global(db_pk *vm, size_t at, const db_pk_val *fnv, const db_pk_val *args,
                              int depth)
{
	const char *fn = fnv->u.g.name;
	db_pk_val **a = args->u.seq.v;
	size_t n = args->u.seq.n;
	db_pk_val *v;
	switch (fnv->u.g.kind) {
	case DB_PKG_REBUILD_TENSOR:
	case DB_PKG_REBUILD_TENSOR_V2:
	case DB_PKG_REBUILD_TENSOR_V3: {
		size_t lo = fnv->u.g.kind == DB_PKG_REBUILD_TENSOR ? 4
		            : fnv->u.g.kind == DB_PKG_REBUILD_TENSOR_V2 ? 6 : 7;
		if (n < lo || n > lo + 1) {
			fail(vm, at, "%s takes %zu or %zu arguments, got %zu", fn, lo, lo + 1, n);
			return NULL;
		}
		if (!(v = rebuild_strided(vm, at, fn, a)))
			return NULL;
		if (fnv->u.g.kind == DB_PKG_REBUILD_TENSOR_V3) {
			const db_pk_val *dt = a[6];
			if (dt->type != DB_PK_GLOBAL || dt->u.g.kind != DB_PKG_DTYPE) {
				fail(vm, at, "%s: argument 7 must be a torch dtype, not %s", fn, type_name(dt));
				return NULL;
			}
			v->u.tensor->dtype = dt->u.g.dtype;
			v->u.tensor->itemsize = dt->u.g.itemsize;
			if (!dt->u.g.itemsize)
				snprintf(v->u.tensor->unsupported, sizeof v->u.tensor->unsupported,
				         "dtype %s is not supported", dt->u.g.name);
		}
		return v;
	}
	case DB_PKG_REBUILD_QTENSOR: {
		if (n != 7) {
			fail(vm, at, "%s takes 7 arguments, got %zu", fn, n);
			return NULL;
		}
		if (!(v = rebuild_strided(vm, at, fn, a)))
			return NULL;
		const db_pk_val *q = a[4];
		if (q->type != DB_PK_TUPLE || q->u.seq.n < 1 || q->u.seq.v[0]->type != DB_PK_GLOBAL ||
		    q->u.seq.v[0]->u.g.kind != DB_PKG_QSCHEME) {
			fail(vm, at, "%s: quantizer parameters must be a tuple starting with a qscheme", fn);
			return NULL;
		}
		db_pk_tensor *t = v->u.tensor;
		if (q->u.seq.v[0]->u.g.itemsize) {
			t->q_per_channel = true; /* listed; scales live in other tensors */
		} else {
			double s;
			if (q->u.seq.n != 3 || !as_double(q->u.seq.v[1], &s) || !is_int(q->u.seq.v[2])) {
				fail(vm, at, "%s: per-tensor qparams must be (qscheme, scale, zero_point)", fn);
				return NULL;
			}
			t->q_scale = s;
			t->q_zero = q->u.seq.v[2]->u.i;
		}
		return v;
	}
	case DB_PKG_REBUILD_PARAMETER:
	case DB_PKG_REBUILD_PARAMETER_WITH_STATE:
		if (n < 1 || a[0]->type != DB_PK_TENSOR) {
			fail(vm, at, "%s: argument 1 must be a tensor", fn);
			return NULL;
		}
		return a[0];
	case DB_PKG_REBUILD_SPARSE:
	case DB_PKG_REBUILD_SPARSE_CSR:
	case DB_PKG_REBUILD_UNSUPPORTED: {
		if (!(v = mk_tensor(vm, at)))
			return NULL;
		db_pk_tensor *t = v->u.tensor;
		bool sparse = fnv->u.g.kind != DB_PKG_REBUILD_UNSUPPORTED;
		if (sparse)
			snprintf(t->unsupported, sizeof t->unsupported, "sparse tensors are not supported");
		else /* name the kind: meta / nested / wrapper subclass */
			snprintf(t->unsupported, sizeof t->unsupported, "tensors rebuilt by %s are not supported",
			         strrchr(fn, '.') + 1);
		/* Best effort to list dtype and shape: (layout, (idx.., values, size)). */
		if (sparse && n == 2 && a[1]->type == DB_PK_TUPLE && a[1]->u.seq.n >= 3) {
			db_pk_val **s = a[1]->u.seq.v;
			size_t sn = a[1]->u.seq.n;
			if (s[sn - 2]->type == DB_PK_TENSOR)
				t->dtype = s[sn - 2]->u.tensor->dtype;
			int nd;
			int64_t shp[DB_MAX_DIMS];
			db_err *keep = vm->err;
			db_err scratch;
			vm->err = &scratch;
			if (!int_tuple(vm, at, fn, "size", s[sn - 1], shp, &nd)) {
				t->ndim = nd;
				memcpy(t->shape, shp, sizeof shp);
			}
			vm->err = keep;
		}
		return v;
	}
	case DB_PKG_REBUILD_FROM_TYPE_V2:
		/* (func, new_type, args, state): a tensor subclass or one with
		 * attributes; we keep the plain tensor func(*args) builds. */
		if (n != 4 || a[1]->type != DB_PK_GLOBAL || a[1]->u.g.kind != DB_PKG_TENSOR_CLASS ||
		    a[2]->type != DB_PK_TUPLE || depth > 0) {
			fail(vm, at, "%s: only (rebuild function, torch.Tensor or Parameter, args, state) is allowed", fn);
			return NULL;
		}
		v = call(vm, at, a[0], a[2], depth + 1);
		if (v && v->type != DB_PK_TENSOR) {
			fail(vm, at, "%s: the inner call did not build a tensor", fn);
			return NULL;
		}
		return v;
	case DB_PKG_ORDERED_DICT:
		if (n != 0) {
			fail(vm, at, "%s: only OrderedDict() with no arguments is allowed", fn);
			return NULL;
		}
		return mk(vm, DB_PK_DICT, at);
	case DB_PKG_CODECS_ENCODE: {
		if (n != 2 || a[0]->type != DB_PK_STR || a[1]->type != DB_PK_STR) {
			fail(vm, at, "%s: expected (str, encoding)", fn);
			return NULL;
		}
		const char *enc = a[1]->u.str.s;
		const uint8_t *s = (const uint8_t *)a[0]->u.str.s;
		size_t sl = a[0]->u.str.len;
		if (!strcmp(enc, "utf-8") || !strcmp(enc, "utf8"))
			return mk_bytes(vm, DB_PK_BYTES, at, s, sl);
		if (strcmp(enc, "latin1") && strcmp(enc, "latin-1") && strcmp(enc, "iso-8859-1")) {
			char c[41];
			fail(vm, at, "%s: encoding '%s' is not supported", fn, clean(enc, c, sizeof c));
			return NULL;
		}
		/* protocol 2 stores bytes as their latin-1 decoding in UTF-8 */
		if (!(v = mk_bytes(vm, DB_PK_BYTES, at, s, sl)))
			return NULL;
		size_t o = 0;
		for (size_t i = 0; i < sl; i++) {
			if (s[i] < 0x80) {
				v->u.str.s[o++] = (char)s[i];
			} else if ((s[i] & 0xFE) == 0xC2 && i + 1 < sl && (s[i + 1] & 0xC0) == 0x80) {
				v->u.str.s[o++] = (char)(((s[i] & 0x1F) << 6) | (s[i + 1] & 0x3F));
				i++;
			} else {
				fail(vm, at, "%s: string is not encodable as latin-1", fn);
				return NULL;
			}
		}
		v->u.str.s[o] = '\0';
		v->u.str.len = o;
		return v;
	}
	case DB_PKG_TORCH_SIZE: {
		int64_t tmp[DB_MAX_DIMS];
		int nd;
		if (n != 1) {
			fail(vm, at, "%s takes 1 argument, got %zu", fn, n);
			return NULL;
		}
		return int_tuple(vm, at, fn, "argument", a[0], tmp, &nd) ? NULL : a[0];
	}
	case DB_PKG_GET_LAYOUT:
		if (n != 1 || a[0]->type != DB_PK_STR) {
			fail(vm, at, "%s: expected a layout name", fn);
			return NULL;
		}
		return mk(vm, DB_PK_OPAQUE, at);
	default:
		fail(vm, at, "REDUCE of %s is not allowed (not a function we rebuild)", fn);
		return NULL;
	}
}

static db_pk_val *call(db_pk *vm, size_t at, const db_pk_val *fnv, const db_pk_val *args, int depth)
{
	if (fnv->type != DB_PK_GLOBAL) {
		fail(vm, at, "REDUCE: the callable is a %s, not an allowed function", type_name(fnv));
		return NULL;
	}
	if (args->type != DB_PK_TUPLE) {
		fail(vm, at, "REDUCE of %s: arguments must be a tuple, not %s", fnv->u.g.name, type_name(args));
		return NULL;
	}
	return call_global(vm, at, fnv, args, depth);
}

/* ---- persistent ids: ('storage', class, key, location, numel[, view]) -- */

static db_pk_val *persistent_load(db_pk *vm, size_t at, const db_pk_val *pid)
{
	if (pid->type != DB_PK_TUPLE || pid->u.seq.n < 1 || pid->u.seq.v[0]->type != DB_PK_STR) {
		fail(vm, at, "BINPERSID: persistent id must be a ('storage', ...) tuple, not %s", type_name(pid));
		return NULL;
	}
	db_pk_val **a = pid->u.seq.v;
	size_t n = pid->u.seq.n;
	if (strcmp(a[0]->u.str.s, "storage")) {
		char c[41];
		fail(vm, at, "BINPERSID: persistent id ('%s', ...) is refused; only 'storage' ids are read",
		     clean(a[0]->u.str.s, c, sizeof c));
		return NULL;
	}
	/* torch unpacks exactly 5 fields (zip) or 6 (legacy, with view metadata) */
	if (n != (vm->legacy ? 6u : 5u)) {
		fail(vm, at, "BINPERSID: storage id has %zu fields (expected %d in the %s format)", n,
		     vm->legacy ? 6 : 5, vm->legacy ? "legacy" : "zip");
		return NULL;
	}
	if (a[1]->type != DB_PK_GLOBAL || a[1]->u.g.kind != DB_PKG_STORAGE_CLASS) {
		fail(vm, at, "BINPERSID: field 2 must be a storage class, not %s", type_name(a[1]));
		return NULL;
	}
	char keybuf[32];
	const char *key;
	if (a[2]->type == DB_PK_STR) {
		key = a[2]->u.str.s;
		bool bad = strlen(key) != a[2]->u.str.len || strchr(key, '/') || !*key ||
		           a[2]->u.str.len > 256;
		for (const char *q = key; *q && !bad; q++)
			bad = (uint8_t)*q < 0x20 || *q == 0x7f;
		if (bad) {
			fail(vm, at, "BINPERSID: storage key is empty, too long, or contains '/' or control bytes");
			return NULL;
		}
	} else if (is_int(a[2])) {
		snprintf(keybuf, sizeof keybuf, "%lld", (long long)a[2]->u.i);
		key = keybuf;
	} else {
		fail(vm, at, "BINPERSID: storage key must be a str, not %s", type_name(a[2]));
		return NULL;
	}
	if (!is_int(a[4]) || a[4]->u.i < 0) {
		fail(vm, at, "BINPERSID: storage size must be a non-negative int");
		return NULL;
	}
	if (n == 6 && a[5]->type != DB_PK_NONE) {
		fail(vm, at, "BINPERSID: legacy storage views (view metadata) are not supported");
		return NULL;
	}
	db_pk_val *v = mk(vm, DB_PK_STORAGE, at);
	if (!v)
		return NULL;
	char *k = strdup(key);
	if (!k) {
		fail(vm, at, "out of memory");
		return NULL;
	}
	v->u.storage.key = k;
	v->u.storage.dtype = a[1]->u.g.dtype;
	v->u.storage.itemsize = a[1]->u.g.itemsize;
	v->u.storage.numel = (uint64_t)a[4]->u.i;
	v->u.storage.untyped = a[1]->u.g.untyped;
	if (grow((void **)&vm->storages, &vm->cap_storages, vm->n_storages + 1, sizeof *vm->storages)) {
		fail(vm, at, "out of memory");
		return NULL;
	}
	vm->storages[vm->n_storages++] = v;
	return v;
}

/* ---- GLOBAL ------------------------------------------------------------ */

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

static db_pk_val *resolve(db_pk *vm, size_t at, const char *op, const char *mod, const char *name)
{
	const gdef *g = find_global(mod, name);
	if (!g) {
		char cm[200], cn[200];
		fail(vm, at, "%s %s.%s is not allowed (nothing in a file is executed)", op,
		     clean(py3_module(mod), cm, sizeof cm), clean(name, cn, sizeof cn));
		return NULL;
	}
	db_pk_val *v = mk(vm, DB_PK_GLOBAL, at);
	if (!v)
		return NULL;
	v->u.g.kind = g->kind;
	v->u.g.dtype = g->dt;
	v->u.g.itemsize = g->isz;
	v->u.g.untyped = g->untyped;
	v->u.g.name = g->full;
	return v;
}

static int read_line(db_pk *vm, size_t at, char *buf, const char *op)
{
	const uint8_t *s = vm->d + vm->pos;
	size_t left = vm->n - vm->pos;
	const uint8_t *nl = memchr(s, '\n', left < MAX_LINE ? left : MAX_LINE);
	if (!nl)
		return fail(vm, at, "%s: module/name line missing or longer than %d bytes", op, MAX_LINE - 1);
	size_t l = (size_t)(nl - s);
	memcpy(buf, s, l);
	buf[l] = '\0';
	if (strlen(buf) != l)
		return fail(vm, at, "%s: NUL byte in module/name", op);
	vm->pos += l + 1;
	return 0;
}

/* ---- memo -------------------------------------------------------------- */

static int memo_put(db_pk *vm, size_t at, uint64_t idx)
{
	db_pk_val *v = top(vm, at, "memo put");
	if (!v)
		return -1;
	if (idx >= DB_PK_MAX_MEMO)
		return fail(vm, at, "memo index %llu exceeds the cap of %u", (unsigned long long)idx,
		            DB_PK_MAX_MEMO);
	if (idx >= vm->cap_memo) {
		size_t old = vm->cap_memo;
		if (grow((void **)&vm->memo, &vm->cap_memo, idx + 1, sizeof *vm->memo))
			return fail(vm, at, "out of memory");
		memset(vm->memo + old, 0, (vm->cap_memo - old) * sizeof *vm->memo);
	}
	if (!vm->memo[idx])
		vm->n_memo++;
	vm->memo[idx] = v;
	return 0;
}

static int memo_get(db_pk *vm, size_t at, uint64_t idx)
{
	if (idx >= vm->cap_memo || !vm->memo[idx])
		return fail(vm, at, "memo slot %llu read before it was written", (unsigned long long)idx);
	return push(vm, at, vm->memo[idx]);
}

/* ---- the loop ---------------------------------------------------------- */

static db_pk_val *mk_int(db_pk *vm, size_t at, int64_t i)
{
	db_pk_val *v = mk(vm, DB_PK_INT, at);
	if (v)
		v->u.i = i;
	return v;
}

/* LONG1/LONG4 payload: little-endian two's complement. */
static db_pk_val *mk_long(db_pk *vm, size_t at, const uint8_t *p, size_t k)
{
	if (k > 8)
		return mk_bytes(vm, DB_PK_BIGINT, at, p, k);
	uint64_t u = k ? rd_le(p, (int)k) : 0;
	if (k && k < 8 && (p[k - 1] & 0x80))
		u |= ~0ull << (8 * k);
	return mk_int(vm, at, (int64_t)u);
}

static int op_string(db_pk *vm, size_t at, int lenbytes, db_pk_type t, const char *what)
{
	if (need(vm, at, (size_t)lenbytes, what))
		return -1;
	uint64_t l = rd_le(vm->d + vm->pos, lenbytes);
	vm->pos += (size_t)lenbytes;
	if (l > DB_PK_MAX_STR)
		return fail(vm, at, "%s of %llu bytes exceeds the cap", what, (unsigned long long)l);
	if (need(vm, at, (size_t)l, what))
		return -1;
	db_pk_val *v = mk_bytes(vm, t, at, vm->d + vm->pos, (size_t)l);
	vm->pos += (size_t)l;
	return push(vm, at, v);
}

static int refuse(db_pk *vm, size_t at, uint8_t op)
{
	char mod[MAX_LINE], name[MAX_LINE];
	switch (op) {
	case 'i':
		if (!read_line(vm, at, mod, "INST") && !read_line(vm, at, name, "INST")) {
			char cm[200], cn[200];
			return fail(vm, at, "INST %s.%s is refused: opcode INST imports and calls a class "
			            "(nothing in a file is executed)", clean(py3_module(mod), cm, sizeof cm),
			            clean(name, cn, sizeof cn));
		}
		return -1;
	case 0x81:
	case 0x92: {
		size_t k = op == 0x81 ? 2 : 3;
		const db_pk_val *cls = vm->sp >= k + mark_base(vm) ? vm->stack[vm->sp - k] : NULL;
		if (cls && cls->type == DB_PK_GLOBAL)
			return fail(vm, at, "%s of %s is refused: it instantiates a class "
			            "(nothing in a file is executed)", op_name(op), cls->u.g.name);
		return fail(vm, at, "opcode %s is refused: it instantiates a class "
		            "(nothing in a file is executed)", op_name(op));
	}
	case 'o':
		return fail(vm, at, "opcode OBJ is refused: it instantiates a class (nothing in a file is executed)");
	case 'P':
		return fail(vm, at, "opcode PERSID (text persistent id) is refused; torch writes BINPERSID");
	default:
		return fail(vm, at, "opcode %s is refused: it loads objects from the extension registry",
		            op_name(op));
	}
}

static int step(db_pk *vm, size_t at, uint8_t op, db_pk_val **out)
{
	const uint8_t *d = vm->d;
	db_pk_val *v, *k, *c;
	size_t first = 0, cnt = 0;
	switch (op) {
	case 0x80: /* PROTO */
		if (need(vm, at, 1, "PROTO"))
			return -1;
		if (d[vm->pos] > 5)
			return fail(vm, at, "unsupported pickle protocol %u", d[vm->pos]);
		vm->pos++;
		return 0;
	case 0x95: /* FRAME: framing is only a read-ahead hint */
		if (need(vm, at, 8, "FRAME"))
			return -1;
		vm->pos += 8;
		return 0;
	case '(':
		if (vm->n_marks >= DB_PK_MAX_MARKS)
			return fail(vm, at, "more than %u nested MARKs (cap)", DB_PK_MAX_MARKS);
		if (grow((void **)&vm->marks, &vm->cap_marks, vm->n_marks + 1, sizeof *vm->marks))
			return fail(vm, at, "out of memory");
		vm->marks[vm->n_marks++] = vm->sp;
		return 0;
	case '.':
		if (!(v = pop(vm, at, "STOP")))
			return -1;
		*out = v;
		return 1;
	case '0': /* POP: like Python, pops a mark when nothing is above it */
		if (vm->sp > mark_base(vm)) {
			vm->sp--;
			return 0;
		}
		/* fall through */
	case '1': /* POP_MARK */
		if (pop_mark(vm, at, "POP_MARK", &first, &cnt))
			return -1;
		vm->sp = first;
		return 0;
	case '2': /* DUP */
		return (v = top(vm, at, "DUP")) ? push(vm, at, v) : -1;
	case 'N':
		return push(vm, at, &vm->none);
	case 0x88:
		return push(vm, at, &vm->yes);
	case 0x89:
		return push(vm, at, &vm->no);
	case 'J':
		if (need(vm, at, 4, "BININT"))
			return -1;
		v = mk_int(vm, at, (int32_t)(uint32_t)rd_le(d + vm->pos, 4));
		vm->pos += 4;
		return push(vm, at, v);
	case 'K':
		if (need(vm, at, 1, "BININT1"))
			return -1;
		return push(vm, at, mk_int(vm, at, d[vm->pos++]));
	case 'M':
		if (need(vm, at, 2, "BININT2"))
			return -1;
		v = mk_int(vm, at, (int64_t)rd_le(d + vm->pos, 2));
		vm->pos += 2;
		return push(vm, at, v);
	case 0x8a: /* LONG1 */
	case 0x8b: { /* LONG4 */
		int lb = op == 0x8a ? 1 : 4;
		if (need(vm, at, (size_t)lb, "LONG"))
			return -1;
		uint64_t l = rd_le(d + vm->pos, lb);
		vm->pos += (size_t)lb;
		if (l > MAX_LONG_BYTES)
			return fail(vm, at, "LONG4 of %llu bytes exceeds the cap of %d", (unsigned long long)l,
			            MAX_LONG_BYTES);
		if (need(vm, at, (size_t)l, "LONG"))
			return -1;
		v = mk_long(vm, at, d + vm->pos, (size_t)l);
		vm->pos += (size_t)l;
		return push(vm, at, v);
	}
	case 'G': { /* BINFLOAT: big-endian IEEE double */
		if (need(vm, at, 8, "BINFLOAT"))
			return -1;
		uint64_t u = 0;
		for (int i = 0; i < 8; i++)
			u = u << 8 | d[vm->pos + (size_t)i];
		vm->pos += 8;
		if (!(v = mk(vm, DB_PK_FLOAT, at)))
			return -1;
		memcpy(&v->u.f, &u, sizeof u);
		return push(vm, at, v);
	}
	case 'X': return op_string(vm, at, 4, DB_PK_STR, "BINUNICODE");
	case 0x8c: return op_string(vm, at, 1, DB_PK_STR, "SHORT_BINUNICODE");
	case 0x8d: return op_string(vm, at, 8, DB_PK_STR, "BINUNICODE8");
	case 'T':
		if (need(vm, at, 4, "BINSTRING"))
			return -1;
		if (d[vm->pos + 3] & 0x80)
			return fail(vm, at, "BINSTRING with a negative length");
		return op_string(vm, at, 4, DB_PK_STR, "BINSTRING");
	case 'U': return op_string(vm, at, 1, DB_PK_STR, "SHORT_BINSTRING");
	case 'B': return op_string(vm, at, 4, DB_PK_BYTES, "BINBYTES");
	case 'C': return op_string(vm, at, 1, DB_PK_BYTES, "SHORT_BINBYTES");
	case 0x8e: return op_string(vm, at, 8, DB_PK_BYTES, "BINBYTES8");
	case ')':
		return push(vm, at, mk(vm, DB_PK_TUPLE, at));
	case ']':
		return push(vm, at, mk(vm, DB_PK_LIST, at));
	case '}':
		return push(vm, at, mk(vm, DB_PK_DICT, at));
	case 0x8f:
		return push(vm, at, mk(vm, DB_PK_SET, at));
	case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
		cnt = (size_t)(op - 0x84);
		if (vm->sp < mark_base(vm) + cnt)
			return fail(vm, at, "TUPLE%zu with fewer than %zu values on the stack", cnt, cnt);
		first = vm->sp - cnt;
		if (!(v = mk_seq(vm, at, DB_PK_TUPLE, first, cnt)))
			return -1;
		vm->sp = first;
		return push(vm, at, v);
	}
	case 't': case 'l': case 0x91: /* TUPLE, LIST, FROZENSET from MARK */
		if (pop_mark(vm, at, op == 't' ? "TUPLE" : op == 'l' ? "LIST" : "FROZENSET", &first, &cnt))
			return -1;
		if (!(v = mk_seq(vm, at, op == 't' ? DB_PK_TUPLE : op == 'l' ? DB_PK_LIST : DB_PK_SET,
		                 first, cnt)))
			return -1;
		vm->sp = first;
		return push(vm, at, v);
	case 'd': /* DICT from MARK */
		if (pop_mark(vm, at, "DICT", &first, &cnt))
			return -1;
		if (cnt % 2)
			return fail(vm, at, "DICT with an odd number of items");
		if (!(v = mk(vm, DB_PK_DICT, at)))
			return -1;
		for (size_t i = 0; i < cnt; i += 2)
			if (dict_set(vm, at, v, vm->stack[first + i], vm->stack[first + i + 1]))
				return -1;
		vm->sp = first;
		return push(vm, at, v);
	case 'a': /* APPEND */
		if (!(v = pop(vm, at, "APPEND")) || !(c = top(vm, at, "APPEND")))
			return -1;
		if (c->type != DB_PK_LIST)
			return fail(vm, at, "APPEND to a %s is refused (only lists)", type_name(c));
		return seq_add(vm, at, c, v);
	case 'e': case 0x90: /* APPENDS, ADDITEMS */
		if (pop_mark(vm, at, op_name(op), &first, &cnt) || !(c = below(vm, at, op_name(op), first)))
			return -1;
		if (op == 'e' && c->type != DB_PK_LIST)
			return fail(vm, at, "APPENDS to a %s is refused (only lists)", type_name(c));
		if (op == 0x90 && c->type != DB_PK_SET)
			return fail(vm, at, "ADDITEMS to a %s is refused (only sets)", type_name(c));
		for (size_t i = 0; i < cnt; i++)
			if (seq_add(vm, at, c, vm->stack[first + i]))
				return -1;
		vm->sp = first;
		return 0;
	case 's': /* SETITEM */
		if (!(v = pop(vm, at, "SETITEM")) || !(k = pop(vm, at, "SETITEM")) ||
		    !(c = top(vm, at, "SETITEM")))
			return -1;
		if (c->type != DB_PK_DICT)
			return fail(vm, at, "SETITEM on a %s is refused (only dicts)", type_name(c));
		return dict_set(vm, at, c, k, v);
	case 'u': /* SETITEMS */
		if (pop_mark(vm, at, "SETITEMS", &first, &cnt) || !(c = below(vm, at, "SETITEMS", first)))
			return -1;
		if (c->type != DB_PK_DICT)
			return fail(vm, at, "SETITEMS on a %s is refused (only dicts)", type_name(c));
		if (cnt % 2)
			return fail(vm, at, "SETITEMS with an odd number of items");
		for (size_t i = 0; i < cnt; i += 2)
			if (dict_set(vm, at, c, vm->stack[first + i], vm->stack[first + i + 1]))
				return -1;
		vm->sp = first;
		return 0;
	case 'c': { /* GLOBAL */
		char mod[MAX_LINE], name[MAX_LINE];
		if (read_line(vm, at, mod, "GLOBAL") || read_line(vm, at, name, "GLOBAL"))
			return -1;
		return push(vm, at, resolve(vm, at, "GLOBAL", mod, name));
	}
	case 0x93: /* STACK_GLOBAL: the strings are checked now, wherever they came from */
		if (!(v = pop(vm, at, "STACK_GLOBAL")) || !(k = pop(vm, at, "STACK_GLOBAL")))
			return -1;
		if (v->type != DB_PK_STR || k->type != DB_PK_STR)
			return fail(vm, at, "STACK_GLOBAL needs two strings, got %s and %s", type_name(k),
			            type_name(v));
		if (strlen(k->u.str.s) != k->u.str.len || strlen(v->u.str.s) != v->u.str.len)
			return fail(vm, at, "STACK_GLOBAL: NUL byte in module/name");
		return push(vm, at, resolve(vm, at, "STACK_GLOBAL", k->u.str.s, v->u.str.s));
	case 'R': /* REDUCE */
		if (!(v = pop(vm, at, "REDUCE")) || !(c = pop(vm, at, "REDUCE")))
			return -1;
		return push(vm, at, call(vm, at, c, v, 0));
	case 'b': /* BUILD: only the state of dicts (OrderedDict _metadata) and tensors, ignored */
		if (!(v = pop(vm, at, "BUILD")) || !(c = top(vm, at, "BUILD")))
			return -1;
		if (c->type != DB_PK_DICT && c->type != DB_PK_TENSOR)
			return fail(vm, at, "BUILD on a %s is refused (only OrderedDict and tensors)", type_name(c));
		return 0;
	case 'Q': /* BINPERSID */
		if (!(v = pop(vm, at, "BINPERSID")))
			return -1;
		return push(vm, at, persistent_load(vm, at, v));
	case 'h':
		if (need(vm, at, 1, "BINGET"))
			return -1;
		return memo_get(vm, at, d[vm->pos++]);
	case 'j':
		if (need(vm, at, 4, "LONG_BINGET"))
			return -1;
		vm->pos += 4;
		return memo_get(vm, at, rd_le(d + vm->pos - 4, 4));
	case 'q':
		if (need(vm, at, 1, "BINPUT"))
			return -1;
		return memo_put(vm, at, d[vm->pos++]);
	case 'r':
		if (need(vm, at, 4, "LONG_BINPUT"))
			return -1;
		vm->pos += 4;
		return memo_put(vm, at, rd_le(d + vm->pos - 4, 4));
	case 0x94: /* MEMOIZE */
		return memo_put(vm, at, vm->n_memo);
	case 'i': case 'o': case 0x82: case 0x83: case 0x84: case 'P': case 0x81: case 0x92:
		return refuse(vm, at, op);
	default:
		if (op >= 0x20 && op < 0x7f)
			return fail(vm, at, "unsupported pickle opcode '%c' (0x%02x)", op, op);
		return fail(vm, at, "unsupported pickle opcode 0x%02x", op);
	}
}

int db_pk_run(db_pk *vm, const uint8_t *data, size_t len, int64_t base, db_pk_val **out,
              size_t *used, db_err *err)
{
	vm->d = data;
	vm->n = len;
	vm->pos = 0;
	vm->base = base;
	vm->err = err;
	vm->sp = 0;
	vm->n_marks = 0;
	if (vm->memo)
		memset(vm->memo, 0, vm->cap_memo * sizeof *vm->memo);
	vm->n_memo = 0;
	*out = NULL;
	for (;;) {
		if (vm->pos >= vm->n)
			return fail(vm, vm->pos, "pickle truncated: no STOP opcode");
		size_t at = vm->pos;
		int rc = step(vm, at, data[vm->pos++], out);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			if (used)
				*used = vm->pos;
			return 0;
		}
	}
}

db_pk *db_pk_new(const char *fname, const char *entry, bool legacy)
{
	db_pk *vm = calloc(1, sizeof *vm);
	if (!vm)
		return NULL;
	vm->fname = fname;
	vm->entry = entry;
	vm->legacy = legacy;
	vm->none.type = DB_PK_NONE;
	vm->yes.type = vm->no.type = DB_PK_BOOL;
	vm->yes.u.b = true;
	vm->none.off = vm->yes.off = vm->no.off = -1;
	return vm;
}

void db_pk_free(db_pk *vm)
{
	if (!vm)
		return;
	for (size_t i = 0; i < vm->n_all; i++) {
		db_pk_val *v = vm->all[i];
		switch (v->type) {
		case DB_PK_STR: case DB_PK_BYTES: case DB_PK_BIGINT:
			free(v->u.str.s);
			break;
		case DB_PK_TUPLE: case DB_PK_LIST: case DB_PK_SET:
			free(v->u.seq.v);
			break;
		case DB_PK_DICT:
			free(v->u.dict.k);
			free(v->u.dict.v);
			break;
		case DB_PK_STORAGE:
			free((char *)(uintptr_t)v->u.storage.key);
			break;
		case DB_PK_TENSOR:
			free(v->u.tensor);
			break;
		default:
			break;
		}
		free(v);
	}
	free(vm->all);
	free(vm->stack);
	free(vm->marks);
	free(vm->memo);
	free(vm->storages);
	free(vm);
}

void db_pk_set_entry(db_pk *vm, const char *entry)
{
	vm->entry = entry;
}

db_pk_val *const *db_pk_storages(const db_pk *vm, size_t *n)
{
	*n = vm->n_storages;
	return vm->storages;
}
