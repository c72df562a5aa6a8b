/* torch.save readers and the file-open layer: every pt/ fixture (written by
 * torch 1.13, or hand-built where 1.13 cannot) against expected_files.json,
 * every bad .pt fixture refused with the expected words, and hand-made archives for
 * prefix, byteorder, deflated records, flattening and entry errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json_expect.h"
#include "pickle_mini.h"
#include "read/pt.h"
#include "read/reader_impl.h"
#include "zip_mini.h"

static bool is_pt_format(const char *fmt)
{
	return !strcmp(fmt, "pt_zip") || !strcmp(fmt, "pt_legacy");
}

/* pt-only fields: strides, storage offsets, quantization, float8 tables. */
static void check_pt_extras(const char *rel, const db_file *f, const db_jp *exp)
{
	const db_jp *ts = db_jp_get(exp, "tensors");
	bool zip = f->format == DB_FMT_PT_ZIP;
	for (size_t k = 0; k < ts->n; k++) {
		const db_jp *x = &ts->items[k];
		const db_entry *e = &f->entries[k];
		const db_tensor *t = &e->t;
		const db_jp *st = db_jp_get(x, "stride");
		if (st) {
			assert_int_equal(st->n, (size_t)t->ndim);
			for (size_t d = 0; d < st->n; d++)
				if (t->shape[d] > 1 && (int64_t)st->items[d].u != t->stride[d])
					fail_msg("%s '%s': stride[%zu] = %lld, expected %llu", rel, e->key, d,
					         (long long)t->stride[d], (unsigned long long)st->items[d].u);
		}
		/* zero-copy: data is the mapping at file_offset */
		assert_true(t->file_offset >= 0);
		assert_ptr_equal(t->data, f->map + t->file_offset);
		const db_jp *so = db_jp_get(x, "storage_offset");
		if (zip && so) /* torch aligns every record to 64 bytes */
			assert_int_equal((t->file_offset - (int64_t)so->u * (int64_t)db_dtype_size(t->dtype)) % 64, 0);
		const db_jp *qs = db_jp_get(x, "q_scale"), *qz = db_jp_get(x, "q_zero_point");
		if (qs) {
			je_close_enough("q_scale", rel, e->key, t->q_scale, je_num(qs));
			assert_int_equal(t->q_zero, (int64_t)qz->num);
		}
		if (db_jp_get(x, "q_per_channel_scales"))
			assert_true(t->q_scale == 0); /* listed; not comparable */
		const db_jp *all = db_jp_get(x, "all_values");
		if (all) {
			assert_int_equal(all->n, (size_t)db_tensor_numel(t));
			for (size_t i = 0; i < all->n; i++)
				je_close_enough("all_values", rel, e->key, je_value(t, (int64_t)i, 0),
				                je_num(&all->items[i]));
		}
	}
}

/* Quantized: raw stored integers (what db_decode gives) against
 * int_values/int_sum; per-tensor also (raw - zero) * scale against the
 * dequantized values torch reports. */
static void check_quantized(const char *rel, const db_entry *e, const db_jp *x)
{
	const db_tensor *t = &e->t;
	assert_null(e->err);
	assert_string_equal(db_dtype_name(t->dtype), db_jp_get(x, "dtype")->str);
	const db_jp *iv = db_jp_get(x, "int_values"), *vals = db_jp_get(x, "values");
	assert_non_null(iv);
	assert_int_equal(iv->n, (size_t)db_tensor_numel(t));
	double sum = 0;
	for (size_t i = 0; i < iv->n; i++) {
		double raw = je_value(t, (int64_t)i, 0);
		sum += raw;
		je_close_enough("int_values", rel, e->key, raw, je_num(&iv->items[i]));
		if (t->q_scale != 0)
			je_close_enough("dequantized", rel, e->key, (raw - (double)t->q_zero) * t->q_scale,
			                je_num(&vals->items[i]));
	}
	je_close_enough("int_sum", rel, e->key, sum, je_num(db_jp_get(x, "int_sum")));
}

static void check_tensors(const char *rel, const db_file *f, const db_jp *exp)
{
	const db_jp *ts = db_jp_get(exp, "tensors");
	if (f->n_entries != ts->n)
		fail_msg("%s: %zu entries, expected %zu", rel, f->n_entries, ts->n);
	for (size_t k = 0; k < ts->n; k++) {
		const db_jp *x = &ts->items[k];
		assert_string_equal(f->entries[k].key, db_jp_get(x, "key")->str);
		if (db_dtype_is_quantized(db_dtype_from_name(db_jp_get(x, "dtype")->str)))
			check_quantized(rel, &f->entries[k], x);
		else
			je_check_tensor(rel, &f->entries[k], x);
	}
}

static void test_fixtures_match_expected(void **state)
{
	(void)state;
	const db_jp *root = je_expected();
	int n_zip = 0, n_legacy = 0;
	for (size_t k = 0; k < root->n; k++) {
		const char *rel = root->keys[k];
		const db_jp *fmt = db_jp_get(&root->items[k], "format");
		if (!fmt || !is_pt_format(fmt->str))
			continue;
		db_file *f = je_open_fixture(rel);
		bool legacy = !strcmp(fmt->str, "pt_legacy");
		assert_string_equal(db_format_name(f->format), fmt->str);
		const db_jp *ts = db_jp_get(&root->items[k], "tensors");
		bool quantized = false;
		for (size_t e = 0; e < ts->n; e++)
			quantized |= db_dtype_is_quantized(db_dtype_from_name(db_jp_get(&ts->items[e], "dtype")->str));
		if (quantized)
			check_tensors(rel, f, &root->items[k]);
		else
			je_check_file(rel, f, &root->items[k]);
		check_pt_extras(rel, f, &root->items[k]);
		/* the same bytes through db_file_open_mem give the same entries */
		db_err err;
		db_file *g = je_open_mem(f->path, f->map, f->map_size, &err);
		if (!g)
			fail_msg("%s refused from memory: %s", rel, err.msg);
		assert_int_equal(g->n_entries, f->n_entries);
		for (size_t e = 0; e < f->n_entries; e++) {
			assert_string_equal(g->entries[e].key, f->entries[e].key);
			assert_int_equal(g->entries[e].t.file_offset, f->entries[e].t.file_offset);
		}
		if (f->n_entries)
			assert_ptr_equal(db_file_find(f, f->entries[0].key), &f->entries[0]);
		db_file_close(g);
		db_file_close(f);
		n_zip += !legacy;
		n_legacy += legacy;
	}
	assert_true(n_zip >= 30);
	assert_true(n_legacy >= 2);
}

static void test_bad_fixtures_refused(void **state)
{
	(void)state;
	const db_jp *root = je_expected();
	int checked = 0;
	for (size_t k = 0; k < root->n; k++) {
		const char *rel = root->keys[k], *want = je_refusal(root, k, ".pt");
		if (!want)
			continue;
		const char *path = je_path(rel);
		db_file *f = (db_file *)1;
		db_err err = {""};
		if (db_file_open(path, &f, &err) == 0)
			fail_msg("%s was accepted; expected a refusal with '%s'", rel, want);
		assert_null(f);
		je_assert_contains(rel, err.msg, want);
		je_assert_contains(rel, err.msg, rel);      /* names the file */
		if (!strstr(rel, "truncated"))
			je_assert_contains(rel, err.msg, "byte "); /* and where */
		checked++;
	}
	assert_true(checked >= 18);
}

/* ---- hand-made archives ------------------------------------------------ */

static db_file *open_members(const zm_member *m, size_t n, db_err *err, uint8_t **keep)
{
	size_t len;
	*keep = zm_build(m, n, &len);
	return je_open_mem("hand.pt", *keep, len, err);
}

/* The archive of members m must be refused with a message holding want
 * (what names the case); the message is left in *err. */
static void expect_archive_refused(const zm_member *m, size_t n, const char *what,
                                   const char *want, db_err *err)
{
	size_t len;
	uint8_t *z = zm_build(m, n, &len);
	je_expect_refused_mem("hand.pt", z, len, what, want, err);
	free(z);
}

static void test_prefix_byteorder_and_deflate(void **state)
{
	(void)state;
	pb p = {0};
	tensor_pickle(&p, "_rebuild_tensor_v2", "FloatStorage", 3, "K\x03\x85", "K\x01\x85");
	RAW(&p, "tR.");
	static const uint8_t be[12] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0, 0xc0, 0x40, 0, 0};
	zm_member m[] = {{"my.odd name/data.pkl", p.b, p.n, false},
	                 {"my.odd name/byteorder", "big", 3, false},
	                 {"my.odd name/data/0", be, sizeof be, false},
	                 {"my.odd name/version", "3\n", 2, false}};
	uint8_t *z;
	db_err err;
	db_file *f = open_members(m, 4, &err, &z);
	if (!f)
		fail_msg("%s", err.msg);
	assert_int_equal(f->format, DB_FMT_PT_ZIP);
	assert_int_equal(f->n_entries, 1);
	const db_tensor *t = &db_file_find(f, "")->t;
	assert_true(t->swap);
	assert_true(db_decode1_f64(t->dtype, t->data, t->swap) == 1.0);
	assert_true(db_decode1_f64(t->dtype, t->data + 8, t->swap) == -3.0);
	assert_memory_equal(z + t->file_offset, be, 12);
	db_file_close(f);
	free(z);
	/* a deflated storage record is inflated into a buffer the file owns */
	static const float le[3] = {1.0f, 2.0f, -3.0f};
	zm_member d[] = {{"x/data.pkl", p.b, p.n, true}, {"x/data/0", le, sizeof le, true}};
	if (!(f = open_members(d, 2, &err, &z)))
		fail_msg("%s", err.msg);
	t = &f->entries[0].t;
	assert_int_equal(t->file_offset, -1);
	assert_false(t->swap);
	assert_true(db_decode1_f64(t->dtype, t->data + 4, false) == 2.0);
	db_file_close(f);
	free(z);
	/* byteorder must say little or big */
	m[1].data = "middle";
	m[1].len = 6;
	expect_archive_refused(m, 4, "byteorder", "hand.pt: entry 'my.odd name/byteorder'", &err);
	free(p.b);
}

static void test_archive_refusals(void **state)
{
	(void)state;
	pb p = {0};
	tensor_pickle(&p, "_rebuild_tensor_v2", "FloatStorage", 3, "K\x03\x85", "K\x01\x85");
	RAW(&p, "tR.");
	static const float le[3] = {1, 2, 3};
	db_err err;
	zm_member no_pkl[] = {{"a/version", "3\n", 2, false}};
	expect_archive_refused(no_pkl, 1, "no data.pkl", "without 'a/data.pkl'", &err);
	zm_member no_rec[] = {{"a/data.pkl", p.b, p.n, false}};
	expect_archive_refused(no_rec, 1, "no record", "has no record 'a/data/0'", &err);
	je_assert_contains("no record", err.msg, "byte ");
	zm_member no_prefix[] = {{"data.pkl", p.b, p.n, false}, {"a/data/0", le, 12, false}};
	expect_archive_refused(no_prefix, 2, "prefix", "no '<prefix>/' folder", &err);
	zm_member code[] = {{"a/data.pkl", p.b, p.n, false}, {"a/code/m.py", "x", 1, false},
	                    {"a/data/0", le, 12, false}};
	expect_archive_refused(code, 3, "code/", "TorchScript", &err);
	zm_member short_rec[] = {{"a/data.pkl", p.b, p.n, false}, {"a/data/0", le, 8, false}};
	expect_archive_refused(short_rec, 2, "short",
	                       "record holds 8 bytes but the pickle declares 3 elements", &err);
	free(p.b);
}

/* Flattening: nested dicts/lists/tuples, int keys, non-tensor leaves, one
 * sparse entry that fails alone, a view sharing a storage. */
static void test_flatten_and_entry_errors(void **state)
{
	(void)state;
	pb p = {0};
	RAW(&p, "\x80\x02}(");
	str(&p, "layers");
	RAW(&p, "](}(");
	int1(&p, 7);                       /* int dict key */
	glob(&p, "torch._utils", "_rebuild_tensor_v2");
	tensor_args_key(&p, "0", "FloatStorage", 6, "K\x02K\x02\x86", "K\x01K\x02\x86"); /* transpose */
	RAW(&p, "tR");
	str(&p, "meta");
	str(&p, "not a tensor");
	RAW(&p, "u(NN");
	glob(&p, "torch._utils", "_rebuild_tensor_v2");
	tensor_args_key(&p, "0", "FloatStorage", 6, "K\x02\x85", "K\x01\x85");
	RAW(&p, "tRte");
	str(&p, "sparse");
	glob(&p, "torch._utils", "_rebuild_sparse_tensor");
	RAW(&p, "(N(NN");
	glob(&p, "torch", "Size");
	RAW(&p, "K\x05\x85\x85RttR");
	str(&p, "step");
	int1(&p, 3);
	str(&p, "bell\x07");       /* control bytes in keys are shown as '?' */
	glob(&p, "torch._utils", "_rebuild_tensor_v2");
	tensor_args_key(&p, "0", "FloatStorage", 6, "K\x01\x85", "K\x01\x85");
	RAW(&p, "tR");
	RAW(&p, "u.");
	static const float v[6] = {0, 1, 2, 3, 4, 5};
	zm_member m[] = {{"k/data.pkl", p.b, p.n, false}, {"k/data/0", v, sizeof v, false}};
	uint8_t *z;
	db_err err;
	db_file *f = open_members(m, 2, &err, &z);
	if (!f)
		fail_msg("%s", err.msg);
	assert_int_equal(f->n_entries, 4);
	assert_string_equal(f->entries[3].key, "bell?");
	assert_string_equal(f->entries[0].key, "layers.0.7");
	assert_string_equal(f->entries[1].key, "layers.1.2");
	assert_string_equal(f->entries[2].key, "sparse");
	const db_tensor *t = &f->entries[0].t;
	assert_int_equal(t->stride[0], 1);
	assert_int_equal(t->stride[1], 2);
	assert_true(db_decode1_f64(t->dtype, t->data + db_tensor_elem_offset(t, 1), false) == 2.0);
	assert_ptr_equal(f->entries[1].t.data, t->data); /* shared storage, no copy */
	assert_null(f->entries[0].err);
	assert_non_null(f->entries[2].err);
	je_assert_contains("sparse", f->entries[2].err, "hand.pt: entry 'sparse': byte ");
	je_assert_contains("sparse", f->entries[2].err, "sparse tensors are not supported");
	assert_null(db_file_find(f, "step"));
	assert_null(db_file_find(f, "layers.0.meta"));
	db_file_close(f);
	free(z);
	free(p.b);
}

/* torch >= 2.1's storage classes of the new dtypes in a v2 persistent id
 * (Float8_e4m3fnStorage, Float4_e2m1fn_x2Storage), hand-built as such
 * writers do; and the committed ATOM-style fixture of gen_quant.py. */
static void test_new_dtype_storages(void **state)
{
	(void)state;
	pb p = {0};
	RAW(&p, "\x80\x02}(");
	str(&p, "w8");
	glob(&p, "torch._utils", "_rebuild_tensor_v2");
	tensor_args_key(&p, "0", "Float8_e4m3fnStorage", 4, "K\x02K\x02\x86", "K\x02K\x01\x86");
	RAW(&p, "tR");
	str(&p, "w4");
	glob(&p, "torch._utils", "_rebuild_tensor_v2");
	tensor_args_key(&p, "1", "Float4_e2m1fn_x2Storage", 2, "K\x01K\x02\x86", "K\x02K\x01\x86");
	RAW(&p, "tRu.");
	static const uint8_t c8[4] = {0x38, 0xb8, 0x7e, 0x01}, c4[2] = {0x21, 0xf7};
	zm_member m[] = {{"k/data.pkl", p.b, p.n, false}, {"k/data/0", c8, 4, false},
	                 {"k/data/1", c4, 2, false}};
	uint8_t *z;
	db_err err;
	db_file *f = open_members(m, 3, &err, &z);
	if (!f)
		fail_msg("%s", err.msg);
	assert_int_equal(f->n_entries, 2);
	assert_null(f->entries[0].err);
	assert_int_equal(f->entries[0].t.dtype, DB_DT_F8_E4M3FN);
	const db_tensor *t = &f->entries[0].t;
	assert_true(db_decode1_f64(t->dtype, t->data, false) == 1.0);
	assert_true(db_decode1_f64(t->dtype, t->data + 2, false) == 448.0);
	assert_null(f->entries[1].err);
	assert_int_equal(f->entries[1].t.dtype, DB_DT_F4_E2M1FN_X2);
	assert_int_equal(f->entries[1].t.shape[1], 2);
	db_file_close(f);
	free(z);
	free(p.b);
	f = NULL;
	assert_int_equal(db_file_open(FIXTURES "/quant/fp8_pt/weights/atom_rank0_layer0.pt", &f, &err), 0);
	const db_entry *w = db_file_find(f, "layers.0.attn.wq_b.weight");
	const db_entry *s = db_file_find(f, "layers.0.attn.wq_b.weight_scale");
	assert_non_null(w);
	assert_non_null(s);
	assert_null(w->err);
	assert_int_equal(w->t.dtype, DB_DT_F8_E4M3FN);
	assert_int_equal(w->t.ndim, 2);
	assert_int_equal(w->t.shape[0], 96);
	assert_int_equal(w->t.shape[1], 64);
	assert_int_equal(s->t.dtype, DB_DT_F32);
	assert_int_equal(s->t.ndim, 0);
	db_file_close(f);
}

static void test_dispatch(void **state)
{
	(void)state;
	db_file *f;
	db_err err;
	assert_int_equal(db_file_open_mem("e.bin", (const uint8_t *)"", 0, &f, &err), -1);
	je_assert_contains("empty", err.msg, "e.bin: empty file");
	assert_int_equal(db_file_open_mem("u.bin", (const uint8_t *)"hello", 5, &f, &err), -1);
	je_assert_contains("unknown", err.msg, "u.bin: byte 0: unknown format (starts with 68 65 6c 6c 6f)");
	assert_int_equal(db_file_open(FIXTURES "/does-not-exist.pt", &f, &err), -1);
	je_assert_contains("missing", err.msg, "cannot open");
	assert_int_equal(db_file_open(FIXTURES, &f, &err), -1);
	je_assert_contains("dir", err.msg, "not a regular file");
	/* legacy magic after PROTO 2, or after PROTO 4 + FRAME */
	static const uint8_t leg2[] = {0x80, 2, 0x8a, 10, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, '.'};
	static const uint8_t leg4[] = {0x80, 4, 0x95, 12, 0, 0, 0, 0, 0, 0, 0, 0x8a, 10, 0x6c, 0xfc, 0x9c,
	                               0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, '.'};
	assert_int_equal(db_detect_format(leg2, sizeof leg2), DB_FMT_PT_LEGACY);
	assert_int_equal(db_detect_format(leg4, sizeof leg4), DB_FMT_PT_LEGACY);
	assert_int_equal(db_detect_format(leg2, sizeof leg2 - 2), DB_FMT_UNKNOWN);
	/* a legacy stream that stops after the magic */
	assert_int_equal(db_file_open_mem("l.pt", leg2, sizeof leg2, &f, &err), -1);
	je_assert_contains("legacy", err.msg, "l.pt: entry 'pickle 2 (protocol version)': byte 15:");
	assert_int_equal(db_detect_format((const uint8_t *)"\x93NUMPY\x01\x00", 8), DB_FMT_NPY);
	assert_int_equal(db_detect_format((const uint8_t *)"\x02\x00\x00\x00\x00\x00\x00\x00{}", 10),
	                 DB_FMT_SAFETENSORS);
	/* a zip with only .npy members is an npz; one with data.pkl is torch */
	static const char *np[] = {FIXTURES "/np/stored.npz", FIXTURES "/np/deflated.npz"};
	for (size_t i = 0; i < sizeof np / sizeof np[0]; i++) {
		if (db_file_open(np[i], &f, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(f->format, DB_FMT_NPZ);
		db_file_close(f);
	}
	assert_string_equal(db_format_name(DB_FMT_PT_LEGACY), "pt_legacy");
	assert_string_equal(db_format_name(DB_FMT_NPZ), "npz");
	assert_string_equal(db_format_name((db_format)99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_match_expected),
		cmocka_unit_test(test_bad_fixtures_refused),
		cmocka_unit_test(test_prefix_byteorder_and_deflate),
		cmocka_unit_test(test_archive_refusals),
		cmocka_unit_test(test_flatten_and_entry_errors),
		cmocka_unit_test(test_new_dtype_storages),
		cmocka_unit_test(test_dispatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
