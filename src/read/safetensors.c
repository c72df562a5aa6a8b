/* safetensors: u64 header length N, N bytes of JSON, then the byte buffer.
 * Validated at least as strictly as huggingface/safetensors (tensor.rs),
 * plus: the header must begin with '{' and keys must be unique (the README
 * requires both; the reference does not check). See formats.md §5. */
#include "st_npy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_parse.h"
#include "reader_impl.h"

#define ST_MAX_HEADER 100000000u        /* reference: HeaderTooLarge above this */

typedef struct st_dtype {
	const char *name;
	db_dtype dt;            /* DB_DT_UNKNOWN: known to the format, not supported */
	unsigned bits;
} st_dtype;

static const st_dtype st_dtypes[] = {
	{ "BOOL", DB_DT_BOOL, 8 }, { "U8", DB_DT_U8, 8 }, { "I8", DB_DT_I8, 8 },
	{ "F8_E5M2", DB_DT_F8_E5M2, 8 },
	{ "F8_E4M3", DB_DT_F8_E4M3FN, 8 },      /* = torch float8_e4m3fn */
	{ "F8_E4M3FNUZ", DB_DT_F8_E4M3FNUZ, 8 },
	{ "F8_E5M2FNUZ", DB_DT_F8_E5M2FNUZ, 8 },
	{ "F8_E8M0", DB_DT_F8_E8M0FNU, 8 },
	{ "I16", DB_DT_I16, 16 }, { "U16", DB_DT_U16, 16 },
	{ "F16", DB_DT_F16, 16 }, { "BF16", DB_DT_BF16, 16 },
	{ "I32", DB_DT_I32, 32 }, { "U32", DB_DT_U32, 32 }, { "F32", DB_DT_F32, 32 },
	{ "I64", DB_DT_I64, 64 }, { "U64", DB_DT_U64, 64 }, { "F64", DB_DT_F64, 64 },
	{ "C64", DB_DT_C64, 64 },               /* 2 x f32 */
	/* packed e2m1, two per byte: read as float4_e2m1fn_x2, last dim halved */
	{ "F4", DB_DT_F4_E2M1FN_X2, 4 },
	{ "F6_E2M3", DB_DT_UNKNOWN, 6 }, { "F6_E3M2", DB_DT_UNKNOWN, 6 },
};

static const st_dtype *st_dtype_find(const char *s)
{
	for (size_t k = 0; k < sizeof st_dtypes / sizeof st_dtypes[0]; k++)
		if (strcmp(st_dtypes[k].name, s) == 0)
			return &st_dtypes[k];
	return NULL;
}

/* One tensor's header info, checked. */
typedef struct st_info {
	const char *name;
	const st_dtype *dtype;
	const db_jp *shape;
	uint64_t begin, end;
	int64_t hpos;           /* file offset of the tensor's header value */
} st_info;

static uint64_t st_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int k = 7; k >= 0; k--)
		v = v << 8 | p[k];
	return v;
}

/* Fill *in from the header object v of tensor `name`; file-level errors. */
static int st_info_read(const char *fn, const char *name, const db_jp *v,
                        int64_t hbase, st_info *in, db_err *err)
{
	in->name = name;
	in->hpos = hbase + (int64_t)v->pos;
	if (v->type != DB_JP_OBJ)
		return db_err_set(err, fn, name, in->hpos, "tensor info is not a JSON object");
	const db_jp *dt = db_jp_get(v, "dtype");
	const db_jp *sh = db_jp_get(v, "shape");
	const db_jp *off = db_jp_get(v, "data_offsets");
	if (!dt || !sh || !off)
		return db_err_set(err, fn, name, in->hpos, "tensor info lacks '%s'",
		                  !dt ? "dtype" : !sh ? "shape" : "data_offsets");
	if (dt->type != DB_JP_STR)
		return db_err_set(err, fn, name, hbase + (int64_t)dt->pos, "dtype is not a string");
	if (!(in->dtype = st_dtype_find(dt->str)))
		return db_err_set(err, fn, name, hbase + (int64_t)dt->pos,
		                  "unknown dtype '%.64s'", dt->str);
	if (sh->type != DB_JP_ARR)
		return db_err_set(err, fn, name, hbase + (int64_t)sh->pos, "shape is not an array");
	uint64_t numel = 1;
	bool overflow = false;
	for (size_t k = 0; k < sh->n; k++) {
		const db_jp *d = &sh->items[k];
		if (d->type != DB_JP_NUM || !d->is_uint)
			return db_err_set(err, fn, name, hbase + (int64_t)d->pos,
			                  "shape[%zu] is not a non-negative integer", k);
		if (d->u && numel > UINT64_MAX / d->u)
			overflow = true;
		else
			numel *= d->u;
	}
	/* A zero dimension makes any overflow in the others harmless, but the
	 * reference refuses the overflow regardless; so do we. */
	if (overflow || numel > UINT64_MAX / in->dtype->bits)
		return db_err_set(err, fn, name, hbase + (int64_t)sh->pos,
		                  "shape element count overflows");
	if (off->type != DB_JP_ARR || off->n != 2 ||
	    off->items[0].type != DB_JP_NUM || !off->items[0].is_uint ||
	    off->items[1].type != DB_JP_NUM || !off->items[1].is_uint)
		return db_err_set(err, fn, name, hbase + (int64_t)off->pos,
		                  "data_offsets is not [begin, end] of non-negative integers");
	in->begin = off->items[0].u;
	in->end = off->items[1].u;
	in->shape = sh;
	if (in->end < in->begin)
		return db_err_set(err, fn, name, hbase + (int64_t)off->pos,
		                  "data_offsets end %" PRIu64 " < begin %" PRIu64,
		                  in->end, in->begin);
	uint64_t bits = numel * in->dtype->bits;
	if (bits % 8)
		return db_err_set(err, fn, name, hbase + (int64_t)sh->pos,
		                  "%s tensor of %" PRIu64 " elements does not fill whole bytes",
		                  in->dtype->name, numel);
	if (in->end - in->begin != bits / 8)
		return db_err_set(err, fn, name, hbase + (int64_t)off->pos,
		                  "data size mismatch: data_offsets [%" PRIu64 ", %" PRIu64 "] hold %"
		                  PRIu64 " bytes but %s x shape needs %" PRIu64,
		                  in->begin, in->end, in->end - in->begin,
		                  in->dtype->name, bits / 8);
	return 0;
}

static int st_cmp_offsets(const void *a, const void *b)
{
	const st_info *x = *(st_info *const *)a, *y = *(st_info *const *)b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/* Sorted by offsets, tensors must tile [0, last_end) exactly, and the
 * buffer must end the file. */
static int st_check_layout(const char *fn, st_info *info, size_t nt,
                           uint64_t data_start, size_t fsize, db_err *err)
{
	uint64_t end = 0;
	if (nt) {
		st_info **ord = malloc(nt * sizeof *ord);
		if (!ord)
			return db_err_set(err, fn, NULL, -1, "out of memory");
		for (size_t k = 0; k < nt; k++)
			ord[k] = &info[k];
		qsort(ord, nt, sizeof *ord, st_cmp_offsets);
		for (size_t k = 0; k < nt; k++) {
			if (ord[k]->begin != end) {
				const st_info *t = ord[k];
				free(ord);
				return db_err_set(err, fn, t->name, t->hpos,
				                  "invalid offset: data begins at %" PRIu64 " but %s at %" PRIu64
				                  " (tensors must be contiguous from 0, no gap or overlap)",
				                  t->begin, k ? "the previous tensor ends" : "the buffer starts", end);
			}
			end = ord[k]->end;
		}
		free(ord);
	}
	uint64_t have = fsize - data_start;
	if (end > have)
		return db_err_set(err, fn, NULL, (int64_t)data_start,
		                  "truncated: tensors need %" PRIu64 " data bytes, file has %" PRIu64,
		                  end, have);
	if (end < have)
		return db_err_set(err, fn, NULL, (int64_t)(data_start + end),
		                  "%" PRIu64 " trailing bytes after the last tensor", have - end);
	return 0;
}

static int st_add(db_file *f, const char *fn, const st_info *in,
                  const uint8_t *p, uint64_t data_start, db_err *err)
{
	db_err eerr;
	int bad = 0;
	if (in->dtype->dt == DB_DT_UNKNOWN)
		bad = db_err_set(&eerr, fn, in->name, in->hpos, "dtype %s not supported",
		                 in->dtype->name);
	else if (in->shape->n > DB_MAX_DIMS)
		bad = db_err_set(&eerr, fn, in->name, in->hpos,
		                 "%zu dimensions (at most %d supported)", in->shape->n, DB_MAX_DIMS);
	for (size_t k = 0; !bad && k < in->shape->n; k++)
		if (in->shape->items[k].u > (uint64_t)INT64_MAX)
			bad = db_err_set(&eerr, fn, in->name, in->hpos, "shape[%zu] too large", k);
	/* F4 counts 4-bit values; a byte of the buffer holds two of one row
	 * only when the last dim is even (the bit total alone can be even
	 * with odd rows) */
	bool f4 = in->dtype->dt == DB_DT_F4_E2M1FN_X2;
	if (!bad && f4 && (in->shape->n == 0 || in->shape->items[in->shape->n - 1].u % 2))
		bad = db_err_set(&eerr, fn, in->name, in->hpos,
		                 "F4 tensor's last dimension must be even (two values per byte)");
	if (bad)
		return db_file_add_entry_error(f, in->name, &eerr, err);
	db_entry *e = db_file_add_entry(f, in->name);
	if (!e)
		return db_err_set(err, fn, in->name, -1, "out of memory");
	db_tensor *t = &e->t;
	t->dtype = in->dtype->dt;
	t->ndim = (int)in->shape->n;
	int64_t s = 1;
	for (int k = t->ndim - 1; k >= 0; k--) {
		t->shape[k] = (int64_t)in->shape->items[k].u;
		if (f4 && k == t->ndim - 1)
			t->shape[k] /= 2;
		t->stride[k] = s;
		s *= t->shape[k] ? t->shape[k] : 1;
	}
	t->data = p + data_start + in->begin;
	t->file_offset = (int64_t)(data_start + in->begin);
	t->swap = false;
	return 0;
}

int db_read_safetensors(db_file *f, const uint8_t *p, size_t n, db_err *err)
{
	const char *fn = f->path ? f->path : "?";
	if (n < 8)
		return db_err_set(err, fn, NULL, 0, "safetensors header too small: "
		                  "%zu bytes, the length field alone needs 8", n);
	uint64_t hlen = st_le64(p);
	if (hlen > ST_MAX_HEADER)
		return db_err_set(err, fn, NULL, 0, "safetensors header too large: "
		                  "%" PRIu64 " bytes (max %u)", hlen, ST_MAX_HEADER);
	if (hlen > n - 8)
		return db_err_set(err, fn, NULL, 0, "invalid header length: %" PRIu64
		                  " bytes but only %zu follow the length field", hlen, n - 8);
	if (hlen == 0 || p[8] != '{')
		return db_err_set(err, fn, NULL, 8, "safetensors header must begin with '{'");
	db_jp *h;
	size_t epos;
	const char *emsg;
	if (db_jp_parse((const char *)p + 8, (size_t)hlen, &h, &epos, &emsg))
		return db_err_set(err, fn, NULL, 8 + (int64_t)epos, "header is not valid json: %s", emsg);

	int rc = -1;
	st_info *info = calloc(h->n ? h->n : 1, sizeof *info);
	size_t nt = 0;
	if (!info) {
		db_err_set(err, fn, NULL, -1, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < h->n; k++) {
		const char *key = h->keys[k];
		const db_jp *v = &h->items[k];
		if (strlen(key) != h->key_len[k]) {
			db_err_set(err, fn, NULL, 8 + (int64_t)h->key_pos[k], "tensor name holds a NUL character");
			goto out;
		}
		if (strcmp(key, "__metadata__") == 0) {
			if (v->type != DB_JP_OBJ) {
				db_err_set(err, fn, key, 8 + (int64_t)v->pos, "__metadata__ is not an object");
				goto out;
			}
			for (size_t m = 0; m < v->n; m++)
				if (v->items[m].type != DB_JP_STR) {
					db_err_set(err, fn, key, 8 + (int64_t)v->items[m].pos,
					           "metadata value for '%.128s' is not a string", v->keys[m]);
					goto out;
				}
			continue;
		}
		if (st_info_read(fn, key, v, 8, &info[nt], err))
			goto out;
		nt++;
	}
	if (st_check_layout(fn, info, nt, 8 + hlen, n, err))
		goto out;
	f->format = DB_FMT_SAFETENSORS;
	for (size_t k = 0; k < nt; k++)
		if (st_add(f, fn, &info[k], p, 8 + hlen, err))
			goto out;
	rc = 0;
out:
	free(info);
	db_jp_free(h);
	return rc;
}
