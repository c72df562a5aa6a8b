/* safetensors reader and the strict JSON parser under it: every fixture
 * against expected_files.json (values from torch/numpy), every malformed
 * fixture refused, and hand-made headers for each validation rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json_expect.h"
#include "read/st_npy.h"

static void test_fixtures_match_expected(void **state)
{
	(void)state;
	const db_jp *root = je_expected();
	int checked = 0;
	for (size_t k = 0; k < root->n; k++) {
		const db_jp *fmt = db_jp_get(&root->items[k], "format");
		if (!fmt || strcmp(fmt->str, "safetensors"))
			continue;
		db_file *f = je_open_fixture(root->keys[k]);
		assert_int_equal(f->format, DB_FMT_SAFETENSORS);
		je_check_file(root->keys[k], f, &root->items[k]);
		for (size_t e = 0; e < f->n_entries; e++) {
			const db_tensor *t = &f->entries[e].t;
			/* zero-copy: data points into the mapping at file_offset */
			assert_ptr_equal(t->data, f->map + t->file_offset);
			assert_false(t->swap);
		}
		db_file_close(f);
		checked++;
	}
	assert_true(checked >= 2);
}

/* Direct reader call, so even files the dispatcher cannot classify (under
 * 8 bytes) are checked for the reader's own message. */
static int read_direct(const char *name, const uint8_t *p, size_t n, db_file **out, db_err *err)
{
	db_file *f = calloc(1, sizeof *f);
	assert_non_null(f);
	f->path = strdup(name);
	int rc = db_read_safetensors(f, p, n, err);
	*out = f;
	return rc;
}

static void test_bad_fixtures_refused(void **state)
{
	(void)state;
	const db_jp *root = je_expected();
	int checked = 0;
	for (size_t k = 0; k < root->n; k++) {
		const char *rel = root->keys[k], *want = je_refusal(root, k, ".safetensors");
		if (!want)
			continue;
		const char *path = je_path(rel);
		size_t n;
		uint8_t *buf = (uint8_t *)tu_slurp(path, &n);
		assert_non_null(buf);
		db_file *f;
		db_err err = { "" };
		if (read_direct(rel, buf, n, &f, &err) == 0)
			fail_msg("%s accepted by db_read_safetensors", rel);
		je_assert_contains(rel, err.msg, want);
		je_assert_contains(rel, err.msg, rel);          /* names the file */
		je_assert_contains(rel, err.msg, "byte ");      /* and an offset */
		db_file_close(f);
		/* Through the dispatcher too: refused as a whole. */
		if (db_file_open(path, &f, &err) == 0)
			fail_msg("%s accepted by db_file_open", rel);
		if (n >= 8)
			je_assert_contains(rel, err.msg, want);
		free(buf);
		checked++;
	}
	assert_true(checked >= 10);
}

/* A safetensors image: u64 length, header, data. Caller frees. */
static uint8_t *mk_st(const char *hdr, const void *data, size_t dlen, size_t *n)
{
	size_t hl = strlen(hdr);
	*n = 8 + hl + dlen;
	uint8_t *b = malloc(*n);
	assert_non_null(b);
	for (int k = 0; k < 8; k++)
		b[k] = (uint8_t)((uint64_t)hl >> (8 * k));
	memcpy(b + 8, hdr, hl);
	if (dlen)
		memcpy(b + 8 + hl, data, dlen);
	return b;
}

static db_file *open_st(const char *hdr, const void *data, size_t dlen, uint8_t **buf,
                        db_err *err)
{
	size_t n;
	*buf = mk_st(hdr, data, dlen, &n);
	return je_open_mem("mem.safetensors", *buf, n, err);
}

static void expect_refused(const char *hdr, size_t dlen, const char *want)
{
	uint8_t zeros[64] = { 0 };
	assert_true(dlen <= sizeof zeros);
	size_t n;
	uint8_t *buf = mk_st(hdr, zeros, dlen, &n);
	db_err err;
	je_expect_refused_mem("mem.safetensors", buf, n, hdr, want, &err);
	assert_non_null(strstr(err.msg, "mem.safetensors: "));
	free(buf);
}

static void test_validation_rules(void **state)
{
	(void)state;
	/* JSON strictness */
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},}", 4, "json");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[00,4]}}", 4, "leading zero");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x", 4, "trailing characters");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "duplicate");
	expect_refused("{\"a\xff\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "UTF-8");
	expect_refused("{\"\xc0\xaf\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "UTF-8");
	expect_refused("{\"\\ud800\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "surrogate");
	expect_refused("{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "NUL");
	expect_refused("{\"a\tb\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "control");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]} /* c */}", 4, "json");
	expect_refused("[]", 0, "{");
	/* tensor info */
	expect_refused("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "lacks 'dtype'");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "lacks 'shape'");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "lacks 'data_offsets'");
	expect_refused("{\"a\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "unknown dtype 'f32'");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4, "shape[0]");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "shape[0]");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 4, "data_offsets");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,0]}}", 4, "end 0 < begin 4");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "size mismatch");
	expect_refused("{\"a\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", 2, "whole bytes");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 3, "truncated");
	expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 5, "1 trailing bytes");
	expect_refused("{}", 1, "trailing");
	expect_refused("{\"__metadata__\":[\"x\"]}", 0, "__metadata__ is not an object");
	expect_refused("{\"__metadata__\":{\"k\":null}}", 0, "not a string");
	/* two tensors sharing bytes, and a gap */
	expect_refused("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
	               "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4, "invalid offset");
	expect_refused("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
	               "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[5,9]}}", 9, "invalid offset");
	/* nesting is capped (an unknown field may hold anything, but not this) */
	char deep[512];
	int n = snprintf(deep, sizeof deep, "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":");
	for (int k = 0; k < 80; k++)
		deep[n++] = '[';
	for (int k = 0; k < 80; k++)
		deep[n++] = ']';
	snprintf(deep + n, sizeof deep - (size_t)n, "}}");
	expect_refused(deep, 1, "nesting too deep");
}

/* Header lengths beyond the limits: refused before anything is parsed. */
static void test_header_bounds(void **state)
{
	(void)state;
	uint8_t b[16] = { 0 };
	db_file *f;
	db_err err;
	memcpy(b, "\x00\xe1\xf5\x05\x00\x00\x00\x00{}", 10);   /* 100000000: allowed size, past EOF */
	assert_int_equal(read_direct("m.st", b, 10, &f, &err), -1);
	assert_non_null(strstr(err.msg, "invalid header length"));
	db_file_close(f);
	memcpy(b, "\x01\xe1\xf5\x05\x00\x00\x00\x00{}", 10);   /* 100000001 */
	assert_int_equal(read_direct("m.st", b, 10, &f, &err), -1);
	assert_non_null(strstr(err.msg, "header too large"));
	db_file_close(f);
	memcpy(b, "\xff\xff\xff\xff\xff\xff\xff\xff{}", 10);
	assert_int_equal(read_direct("m.st", b, 10, &f, &err), -1);
	assert_non_null(strstr(err.msg, "header too large"));
	db_file_close(f);
	assert_int_equal(read_direct("m.st", b, 7, &f, &err), -1);
	assert_non_null(strstr(err.msg, "too small"));
	db_file_close(f);
	memcpy(b, "\x00\x00\x00\x00\x00\x00\x00\x00", 8);   /* empty header */
	assert_int_equal(read_direct("m.st", b, 8, &f, &err), -1);
	assert_non_null(strstr(err.msg, "m.st: byte 8: safetensors header must begin with '{'"));
	db_file_close(f);
	/* the smallest valid file: an empty header object, no data */
	memcpy(b, "\x02\x00\x00\x00\x00\x00\x00\x00{}", 10);
	assert_int_equal(read_direct("m.st", b, 10, &f, &err), 0);
	assert_int_equal(f->n_entries, 0);
	db_file_close(f);
}

static void test_entries_in_header_order(void **state)
{
	(void)state;
	/* header order z, a, s, e, m; data order a, z; unpadded, no metadata
	 * first, whitespace after the object (the writer pads with spaces) */
	float a[2] = { 1.5f, -2.0f }, z = 7.0f;
	uint8_t data[12];
	memcpy(data, a, 8);
	memcpy(data + 8, &z, 4);
	const char *hdr =
		"{\"z\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[8,12]},"
		"\"a\":{\"dtype\":\"F32\",\"shape\":[2,1],\"data_offsets\":[0,8],\"extra\":{\"ok\":[1]}},"
		"\"__metadata__\":{\"format\":\"pt\"},"
		"\"e\":{\"dtype\":\"BF16\",\"shape\":[3,0,2],\"data_offsets\":[12,12]},"
		"\"m.x\\/\\u00e9\":{\"dtype\":\"I64\",\"shape\":[0],\"data_offsets\":[12,12]}}   ";
	uint8_t *buf;
	db_err err;
	db_file *f = open_st(hdr, data, sizeof data, &buf, &err);
	if (!f)
		fail_msg("%s", err.msg);
	assert_int_equal(f->n_entries, 4);
	assert_string_equal(f->entries[0].key, "z");
	assert_string_equal(f->entries[1].key, "a");
	assert_string_equal(f->entries[2].key, "e");
	assert_string_equal(f->entries[3].key, "m.x/\xc3\xa9");       /* verbatim, decoded */
	const db_tensor *tz = &f->entries[0].t, *ta = &f->entries[1].t, *te = &f->entries[2].t;
	assert_int_equal(tz->ndim, 0);
	size_t hl = strlen(hdr);
	assert_int_equal(tz->file_offset, (int64_t)(8 + hl + 8));
	assert_ptr_equal(tz->data, buf + 8 + hl + 8);
	assert_true(db_decode1_f64(tz->dtype, tz->data, false) == 7.0);
	assert_int_equal(ta->ndim, 2);
	assert_int_equal(ta->shape[0], 2);
	assert_int_equal(ta->stride[0], 1);
	assert_true(db_decode1_f64(ta->dtype, ta->data + 4, false) == -2.0);
	assert_int_equal(te->dtype, DB_DT_BF16);
	assert_int_equal(te->ndim, 3);
	assert_int_equal(te->shape[1], 0);
	db_file_close(f);
	free(buf);
}

static void test_entry_errors_keep_others(void **state)
{
	(void)state;
	uint8_t data[6] = { 0x12, 0x34, 0, 0, 0x80, 0x3f };   /* F4 pair, then f32 1.0 */
	char hdr[1024];
	int n = snprintf(hdr, sizeof hdr,
	                 "{\"q\":{\"dtype\":\"F4\",\"shape\":[4,1],\"data_offsets\":[0,2]},"
	                 "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]},"
	                 "\"d\":{\"dtype\":\"U8\",\"shape\":[");
	for (int k = 0; k < 17; k++)
		n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%s1", k ? "," : "");
	snprintf(hdr + n, sizeof hdr - (size_t)n, "],\"data_offsets\":[6,6]}}");
	/* d is 17 x 1 = 1 byte; fix its data range */
	char *fix = strstr(hdr, "[6,6]");
	memcpy(fix, "[6,7]", 5);
	uint8_t data7[7];
	memcpy(data7, data, 6);
	data7[6] = 9;
	uint8_t *buf;
	db_err err;
	db_file *f = open_st(hdr, data7, sizeof data7, &buf, &err);
	if (!f)
		fail_msg("%s", err.msg);
	assert_int_equal(f->n_entries, 3);
	assert_non_null(f->entries[0].err);
	/* two FP4 values per byte need rows of an even length */
	assert_non_null(strstr(f->entries[0].err, "F4 tensor's last dimension must be even"));
	assert_non_null(strstr(f->entries[0].err, "mem.safetensors: entry 'q': byte 13: "));
	assert_null(f->entries[1].err);
	assert_true(db_decode1_f64(f->entries[1].t.dtype, f->entries[1].t.data, false) == 1.0);
	assert_non_null(f->entries[2].err);
	assert_non_null(strstr(f->entries[2].err, "17 dimensions"));
	db_file_close(f);
	free(buf);
}

static void test_error_names_offset(void **state)
{
	(void)state;
	/* unknown dtype: offset is 8 + the dtype value's position in the header */
	const char *hdr = "{\"w\":{\"dtype\":\"Q9\",\"shape\":[1],\"data_offsets\":[0,1]}}";
	uint8_t *buf;
	db_err err;
	assert_null(open_st(hdr, "x", 1, &buf, &err));
	char want[128];
	snprintf(want, sizeof want, "mem.safetensors: entry 'w': byte %d: unknown dtype 'Q9'",
	         8 + (int)(strstr(hdr, "\"Q9\"") - hdr));
	assert_string_equal(err.msg, want);
	free(buf);
}

static void test_every_dtype(void **state)
{
	(void)state;
	static const struct { const char *st; db_dtype dt; int size; } tab[] = {
		{ "BOOL", DB_DT_BOOL, 1 }, { "U8", DB_DT_U8, 1 }, { "I8", DB_DT_I8, 1 },
		{ "F8_E5M2", DB_DT_F8_E5M2, 1 }, { "F8_E4M3", DB_DT_F8_E4M3FN, 1 },
		{ "F8_E4M3FNUZ", DB_DT_F8_E4M3FNUZ, 1 }, { "F8_E5M2FNUZ", DB_DT_F8_E5M2FNUZ, 1 },
		{ "F8_E8M0", DB_DT_F8_E8M0FNU, 1 }, { "I16", DB_DT_I16, 2 }, { "U16", DB_DT_U16, 2 },
		{ "F16", DB_DT_F16, 2 }, { "BF16", DB_DT_BF16, 2 }, { "I32", DB_DT_I32, 4 },
		{ "U32", DB_DT_U32, 4 }, { "F32", DB_DT_F32, 4 }, { "I64", DB_DT_I64, 8 },
		{ "U64", DB_DT_U64, 8 }, { "F64", DB_DT_F64, 8 }, { "C64", DB_DT_C64, 8 },
	};
	for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++) {
		char hdr[160];
		snprintf(hdr, sizeof hdr, "{\"t\":{\"dtype\":\"%s\",\"shape\":[3],\"data_offsets\":[0,%d]}}",
		         tab[k].st, 3 * tab[k].size);
		uint8_t data[24] = { 0 }, *buf;
		db_err err;
		db_file *f = open_st(hdr, data, 3 * (size_t)tab[k].size, &buf, &err);
		if (!f)
			fail_msg("%s: %s", tab[k].st, err.msg);
		assert_null(f->entries[0].err);
		assert_int_equal(f->entries[0].t.dtype, tab[k].dt);
		db_file_close(f);
		free(buf);
	}
	/* F4: packed e2m1 read as float4_e2m1fn_x2, one byte per two values
	 * of a row: [2, 4] is [2, 2] bytes */
	uint8_t f4[4] = {0x21, 0x43, 0x65, 0x87}, *b4;
	db_err e4;
	db_file *f4f = open_st("{\"t\":{\"dtype\":\"F4\",\"shape\":[2,4],\"data_offsets\":[0,4]}}",
	                       f4, 4, &b4, &e4);
	if (!f4f)
		fail_msg("F4: %s", e4.msg);
	assert_null(f4f->entries[0].err);
	assert_int_equal(f4f->entries[0].t.dtype, DB_DT_F4_E2M1FN_X2);
	assert_int_equal(f4f->entries[0].t.ndim, 2);
	assert_int_equal(f4f->entries[0].t.shape[0], 2);
	assert_int_equal(f4f->entries[0].t.shape[1], 2);
	assert_int_equal(f4f->entries[0].t.stride[0], 2);
	assert_int_equal(f4f->entries[0].t.data[3], 0x87);
	assert_false(db_dtype_comparable(DB_DT_F4_E2M1FN_X2));  /* only dequantized */
	db_file_close(f4f);
	free(b4);
	/* F6 known but unsupported: 4 x 6 bits = 3 bytes */
	uint8_t *buf;
	db_err err;
	db_file *f = open_st("{\"t\":{\"dtype\":\"F6_E2M3\",\"shape\":[4],\"data_offsets\":[0,3]}}",
	                     "abc", 3, &buf, &err);
	assert_non_null(f);
	assert_non_null(strstr(f->entries[0].err, "F6_E2M3 not supported"));
	db_file_close(f);
	free(buf);
}

static void test_json_parser(void **state)
{
	(void)state;
	db_jp *v;
	size_t pos;
	const char *msg;
	const char *ok = " {\"u\":18446744073709551615,\"big\":18446744073709551616,\"neg\":-0,"
	                 "\"f\":1.5e3,\"s\":\"\\ud83d\\ude00\\n\\\"\",\"a\":[true,false,null,[]],\"o\":{}} ";
	assert_int_equal(db_jp_parse(ok, strlen(ok), &v, &pos, &msg), 0);
	const db_jp *u = db_jp_get(v, "u");
	assert_true(u->is_uint);
	assert_true(u->u == UINT64_MAX);
	assert_false(db_jp_get(v, "big")->is_uint);
	assert_false(db_jp_get(v, "neg")->is_uint);
	assert_false(db_jp_get(v, "f")->is_uint);
	assert_true(db_jp_get(v, "f")->num == 1500.0);
	const db_jp *s = db_jp_get(v, "s");
	assert_int_equal(s->len, 6);
	assert_memory_equal(s->str, "\xf0\x9f\x98\x80\n\"", 6);
	assert_int_equal(db_jp_get(v, "a")->n, 4);
	assert_int_equal(db_jp_get(v, "a")->items[3].type, DB_JP_ARR);
	assert_int_equal(db_jp_get(v, "o")->type, DB_JP_OBJ);
	assert_null(db_jp_get(v, "missing"));
	db_jp_free(v);
	static const struct { const char *txt; size_t pos; } bad[] = {
		{ "[1,]", 3 }, { "[01]", 1 }, { "[1.]", 3 }, { "[.5]", 1 }, { "[+1]", 1 },
		{ "{\"a\" 1}", 5 }, { "{'a':1}", 1 }, { "\"abc", 0 }, { "[\"\\x\"]", 2 },
		{ "[\"\\u12G4\"]", 6 }, { "tru", 0 }, { "[1] [2]", 4 }, { "{\"a\":1,\"a\":2}", 7 },
		{ "[\"\\udc00\"]", 2 }, { "[\"\xed\xa0\x80\"]", 2 }, { "[\"\xf4\x90\x80\x80\"]", 2 },
		{ "NaN", 0 }, { "", 0 }, { "[1e]", 3 },
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		pos = 999;
		if (db_jp_parse(bad[k].txt, strlen(bad[k].txt), &v, &pos, &msg) == 0)
			fail_msg("accepted: %s", bad[k].txt);
		if (pos != bad[k].pos)
			fail_msg("%s: error at %zu (%s), expected %zu", bad[k].txt, pos, msg, bad[k].pos);
	}
	/* Length-bounded: a NUL or text past len is not read. */
	assert_int_equal(db_jp_parse("[1]xyz", 3, &v, &pos, &msg), 0);
	db_jp_free(v);
	assert_int_equal(db_jp_parse("[\"a\"]", 4, &v, &pos, &msg), -1);
}

/* Many tensors: every key is found through the sorted index, in header
 * order's entry; absent keys (before, between, after all) are not. Objects
 * with many keys still refuse a duplicate, with its offset. */
static void test_find_many(void **state)
{
	(void)state;
	enum { N = 5000 };
	size_t cap = (size_t)N * 80 + 8, o = 0;
	char *hdr = malloc(cap);
	assert_non_null(hdr);
	o += (size_t)snprintf(hdr + o, cap - o, "{");
	for (int i = 0; i < N; i++)         /* not in key order: 'k<i*7919 % N>' */
		o += (size_t)snprintf(hdr + o, cap - o,
		                      "%s\"k%d\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[%d,%d]}",
		                      i ? "," : "", (int)((long)i * 7919 % N), i, i + 1);
	snprintf(hdr + o, cap - o, "}");
	uint8_t *data = calloc(N, 1), *buf;
	db_err err;
	db_file *f = open_st(hdr, data, N, &buf, &err);
	if (!f)
		fail_msg("%s", err.msg);
	assert_int_equal(f->n_entries, N);
	for (int i = 0; i < N; i++) {
		char key[32];
		snprintf(key, sizeof key, "k%d", (int)((long)i * 7919 % N));
		assert_ptr_equal(db_file_find(f, key), &f->entries[i]);
	}
	assert_null(db_file_find(f, ""));
	assert_null(db_file_find(f, "k"));
	assert_null(db_file_find(f, "k10000"));
	assert_null(db_file_find(f, "zz"));
	db_file_close(f);
	free(buf);
	/* a duplicate among many keys, and among a few */
	const char *dup = "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,"
	                  "\"i\":9,\"c\":10}";
	db_jp *v;
	size_t pos;
	const char *msg;
	assert_int_equal(db_jp_parse(dup, strlen(dup), &v, &pos, &msg), -1);
	assert_int_equal(pos, (size_t)(strrchr(dup, 'c') - dup - 1));
	assert_string_equal(msg, "duplicate key in object");
	free(data);
	free(hdr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_match_expected),
		cmocka_unit_test(test_bad_fixtures_refused),
		cmocka_unit_test(test_validation_rules),
		cmocka_unit_test(test_header_bounds),
		cmocka_unit_test(test_entries_in_header_order),
		cmocka_unit_test(test_entry_errors_keep_others),
		cmocka_unit_test(test_error_names_offset),
		cmocka_unit_test(test_every_dtype),
		cmocka_unit_test(test_json_parser),
		cmocka_unit_test(test_find_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
