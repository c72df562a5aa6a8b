/* The only "calls" a pickle can make: REDUCE of an allowlisted rebuild
 * function builds a plain value (a tensor description, a dict, bytes ...),
 * and BINPERSID turns a storage id into a storage reference. */
#include "pickle_rebuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		return db_pk_fail(vm, at, "%s: %s must be a tuple, not %s",
		                  fn, what, db_pk_type_name(v));
	if (v->u.seq.n > DB_MAX_DIMS)
		return db_pk_fail(vm, at, "%s: %zu dimensions (at most %d supported)",
		                  fn, v->u.seq.n, DB_MAX_DIMS);
	for (size_t i = 0; i < v->u.seq.n; i++) {
		const db_pk_val *x = v->u.seq.v[i];
		if (!is_int(x))
			return db_pk_fail(vm, at, "%s: %s[%zu] must be an int, not %s",
			                  fn, what, i, db_pk_type_name(x));
		if (x->u.i < 0)
			return db_pk_fail(vm, at, "%s: %s[%zu] = %lld is negative",
			                  fn, what, i, (long long)x->u.i);
		out[i] = x->u.i;
	}
	*nd = (int)v->u.seq.n;
	return 0;
}

static db_pk_val *mk_tensor(db_pk *vm, size_t at)
{
	db_pk_val *v = db_pk_mk(vm, DB_PK_TENSOR, at);
	if (!v)
		return NULL;
	if (!(v->u.tensor = db_pk_alloc(vm, sizeof *v->u.tensor)))
		return db_pk_fail_null(vm, at, "out of memory");
	return v;
}

/* storage, offset, size, stride: the four leading arguments of every
 * strided rebuild function. */
static db_pk_val *rebuild_strided(db_pk *vm, size_t at, const char *fn, db_pk_val **a)
{
	if (a[0]->type != DB_PK_STORAGE)
		return db_pk_fail_null(vm, at, "%s: argument 1 must be a storage (persistent id), "
		                       "not %s", fn, db_pk_type_name(a[0]));
	if (!is_int(a[1]) || a[1]->u.i < 0)
		return db_pk_fail_null(vm, at, "%s: storage offset must be a non-negative int", fn);
	db_pk_val *v = mk_tensor(vm, at);
	if (!v)
		return NULL;
	db_pk_tensor *t = v->u.tensor;
	int nd_stride;
	if (int_tuple(vm, at, fn, "size", a[2], t->shape, &t->ndim) ||
	    int_tuple(vm, at, fn, "stride", a[3], t->stride, &nd_stride))
		return NULL;
	if (nd_stride != t->ndim)
		return db_pk_fail_null(vm, at, "%s: size has %d dimensions but stride has %d",
		                       fn, t->ndim, nd_stride);
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
		if (n < lo || n > lo + 1)
			return db_pk_fail_null(vm, at, "%s takes %zu or %zu arguments, got %zu",
			                       fn, lo, lo + 1, n);
		if (!(v = rebuild_strided(vm, at, fn, a)))
			return NULL;
		if (fnv->u.g.kind == DB_PKG_REBUILD_TENSOR_V3) {
			const db_pk_val *dt = a[6];
			if (dt->type != DB_PK_GLOBAL || dt->u.g.kind != DB_PKG_DTYPE)
				return db_pk_fail_null(vm, at, "%s: argument 7 must be a torch "
				                       "dtype, not %s", fn, db_pk_type_name(dt));
			v->u.tensor->dtype = dt->u.g.dtype;
			v->u.tensor->itemsize = dt->u.g.itemsize;
			if (!dt->u.g.itemsize)
				snprintf(v->u.tensor->unsupported, sizeof v->u.tensor->unsupported,
				         "dtype %s is not supported", dt->u.g.name);
		}
		return v;
	}
	case DB_PKG_REBUILD_QTENSOR: {
		if (n != 7)
			return db_pk_fail_null(vm, at, "%s takes 7 arguments, got %zu", fn, n);
		if (!(v = rebuild_strided(vm, at, fn, a)))
			return NULL;
		const db_pk_val *q = a[4];
		if (q->type != DB_PK_TUPLE || q->u.seq.n < 1 || q->u.seq.v[0]->type != DB_PK_GLOBAL ||
		    q->u.seq.v[0]->u.g.kind != DB_PKG_QSCHEME)
			return db_pk_fail_null(vm, at, "%s: quantizer parameters must be a tuple "
			                       "starting with a qscheme", fn);
		db_pk_tensor *t = v->u.tensor;
		if (q->u.seq.v[0]->u.g.itemsize) {
			t->q_per_channel = true; /* listed; scales live in other tensors */
		} else {
			double s;
			if (q->u.seq.n != 3 || !as_double(q->u.seq.v[1], &s) || !is_int(q->u.seq.v[2]))
				return db_pk_fail_null(vm, at, "%s: per-tensor qparams must be "
				                       "(qscheme, scale, zero_point)", fn);
			t->q_scale = s;
			t->q_zero = q->u.seq.v[2]->u.i;
		}
		return v;
	}
	case DB_PKG_REBUILD_PARAMETER:
	case DB_PKG_REBUILD_PARAMETER_WITH_STATE:
		if (n < 1 || a[0]->type != DB_PK_TENSOR)
			return db_pk_fail_null(vm, at, "%s: argument 1 must be a tensor", fn);
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
		    a[2]->type != DB_PK_TUPLE || depth > 0)
			return db_pk_fail_null(vm, at, "%s: only (rebuild function, torch.Tensor "
			                       "or Parameter, args, state) is allowed", fn);
		v = call(vm, at, a[0], a[2], depth + 1);
		if (v && v->type != DB_PK_TENSOR)
			return db_pk_fail_null(vm, at, "%s: the inner call did not build a tensor",
			                       fn);
		return v;
	case DB_PKG_ORDERED_DICT:
		if (n != 0)
			return db_pk_fail_null(vm, at, "%s: only OrderedDict() with no arguments "
			                       "is allowed", fn);
		return db_pk_mk(vm, DB_PK_DICT, at);
	case DB_PKG_CODECS_ENCODE: {
		if (n != 2 || a[0]->type != DB_PK_STR || a[1]->type != DB_PK_STR)
			return db_pk_fail_null(vm, at, "%s: expected (str, encoding)", fn);
		const char *enc = a[1]->u.str.s;
		const uint8_t *s = (const uint8_t *)a[0]->u.str.s;
		size_t sl = a[0]->u.str.len;
		if (!strcmp(enc, "utf-8") || !strcmp(enc, "utf8"))
			return db_pk_mk_bytes(vm, DB_PK_BYTES, at, s, sl);
		if (strcmp(enc, "latin1") && strcmp(enc, "latin-1") && strcmp(enc, "iso-8859-1")) {
			char c[41];
			return db_pk_fail_null(vm, at, "%s: encoding '%s' is not supported",
			                       fn, db_pk_clean(enc, c, sizeof c));
		}
		/* protocol 2 stores bytes as their latin-1 decoding in UTF-8 */
		if (!(v = db_pk_mk_bytes(vm, DB_PK_BYTES, at, s, sl)))
			return NULL;
		size_t o = 0;
		for (size_t i = 0; i < sl; i++) {
			if (s[i] < 0x80) {
				v->u.str.s[o++] = (char)s[i];
			} else if ((s[i] & 0xFE) == 0xC2 && i + 1 < sl && (s[i + 1] & 0xC0) == 0x80) {
				v->u.str.s[o++] = (char)(((s[i] & 0x1F) << 6) | (s[i + 1] & 0x3F));
				i++;
			} else {
					return db_pk_fail_null(vm, at, "%s: string is not encodable as latin-1",
				                       fn);
			}
		}
		v->u.str.s[o] = '\0';
		v->u.str.len = o;
		return v;
	}
	case DB_PKG_TORCH_SIZE: {
		int64_t tmp[DB_MAX_DIMS];
		int nd;
		if (n != 1)
			return db_pk_fail_null(vm, at, "%s takes 1 argument, got %zu", fn, n);
		return int_tuple(vm, at, fn, "argument", a[0], tmp, &nd) ? NULL : a[0];
	}
	case DB_PKG_GET_LAYOUT:
		if (n != 1 || a[0]->type != DB_PK_STR)
			return db_pk_fail_null(vm, at, "%s: expected a layout name", fn);
		return db_pk_mk(vm, DB_PK_OPAQUE, at);
	default:
		return db_pk_fail_null(vm, at, "REDUCE of %s is not allowed "
		                       "(not a function we rebuild)", fn);
	}
}

static db_pk_val *call(db_pk *vm, size_t at, const db_pk_val *fnv, const db_pk_val *args, int depth)
{
	if (fnv->type != DB_PK_GLOBAL)
		return db_pk_fail_null(vm, at, "REDUCE: the callable is a %s, "
		                       "not an allowed function", db_pk_type_name(fnv));
	if (args->type != DB_PK_TUPLE)
		return db_pk_fail_null(vm, at, "REDUCE of %s: arguments must be a tuple, not %s",
		                       fnv->u.g.name, db_pk_type_name(args));
	return call_global(vm, at, fnv, args, depth);
}

db_pk_val *db_pk_reduce(db_pk *vm, size_t at, const db_pk_val *fn, const db_pk_val *args)
{
	return call(vm, at, fn, args, 0);
}

/* A persistent id: ('storage', class, key, location, numel[, view]). */
db_pk_val *db_pk_persistent_load(db_pk *vm, size_t at, const db_pk_val *pid)
{
	if (pid->type != DB_PK_TUPLE || pid->u.seq.n < 1 || pid->u.seq.v[0]->type != DB_PK_STR)
		return db_pk_fail_null(vm, at, "BINPERSID: persistent id must be a "
		                       "('storage', ...) tuple, not %s", db_pk_type_name(pid));
	db_pk_val **a = pid->u.seq.v;
	size_t n = pid->u.seq.n;
	if (strcmp(a[0]->u.str.s, "storage")) {
		char c[41];
		return db_pk_fail_null(vm, at, "BINPERSID: persistent id ('%s', ...) is refused; "
		                       "only 'storage' ids are read",
		                       db_pk_clean(a[0]->u.str.s, c, sizeof c));
	}
	/* torch unpacks exactly 5 fields (zip) or 6 (legacy, with view metadata) */
	if (n != (vm->legacy ? 6u : 5u))
		return db_pk_fail_null(vm, at, "BINPERSID: storage id has %zu fields "
		                       "(expected %d in the %s format)", n, vm->legacy ? 6 : 5,
		                       vm->legacy ? "legacy" : "zip");
	if (a[1]->type != DB_PK_GLOBAL || a[1]->u.g.kind != DB_PKG_STORAGE_CLASS)
		return db_pk_fail_null(vm, at, "BINPERSID: field 2 must be a storage class, not %s",
		                       db_pk_type_name(a[1]));
	char keybuf[32];
	const char *key;
	if (a[2]->type == DB_PK_STR) {
		key = a[2]->u.str.s;
		bool bad = strlen(key) != a[2]->u.str.len || strchr(key, '/') || !*key ||
		           a[2]->u.str.len > 256;
		for (const char *q = key; *q && !bad; q++)
			bad = (uint8_t)*q < 0x20 || *q == 0x7f;
		if (bad)
			return db_pk_fail_null(vm, at, "BINPERSID: storage key is empty, too long, "
			                       "or contains '/' or control bytes");
	} else if (is_int(a[2])) {
		snprintf(keybuf, sizeof keybuf, "%lld", (long long)a[2]->u.i);
		key = keybuf;
	} else {
		return db_pk_fail_null(vm, at, "BINPERSID: storage key must be a str, not %s",
		                       db_pk_type_name(a[2]));
	}
	if (!is_int(a[4]) || a[4]->u.i < 0)
		return db_pk_fail_null(vm, at, "BINPERSID: storage size must be a "
		                       "non-negative int");
	if (n == 6 && a[5]->type != DB_PK_NONE)
		return db_pk_fail_null(vm, at, "BINPERSID: legacy storage views (view metadata) "
		                       "are not supported");
	db_pk_val *v = db_pk_mk(vm, DB_PK_STORAGE, at);
	if (!v)
		return NULL;
	size_t kl = strlen(key);
	char *k = db_pk_alloc(vm, kl + 1);
	if (!k)
		return db_pk_fail_null(vm, at, "out of memory");
	memcpy(k, key, kl + 1);
	v->u.storage.key = k;
	v->u.storage.dtype = a[1]->u.g.dtype;
	v->u.storage.itemsize = a[1]->u.g.itemsize;
	v->u.storage.numel = (uint64_t)a[4]->u.i;
	v->u.storage.untyped = a[1]->u.g.untyped;
	if (db_pk_grow((void **)&vm->storages, &vm->cap_storages, vm->n_storages + 1,
	               sizeof *vm->storages))
		return db_pk_fail_null(vm, at, "out of memory");
	vm->storages[vm->n_storages++] = v;
	return v;
}
