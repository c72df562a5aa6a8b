/* .npy and .npz readers: every fixture against expected_files.json (values
 * from numpy/torch), every malformed fixture refused, and hand-made headers
 * and zips for each rule (dtypes refused by name, Fortran strides, byte
 * order, header caps, zip-bomb caps, one bad member among good ones). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json_expect.h"
#include "read/st_npy.h"
#include "zip_mini.h"

static bool starts_with(const char *s, const char *pre)
{
	return !strncmp(s, pre, strlen(pre));
}

static void test_fixtures_match_expected(void **state)
{
	(void)state;
	const db_jp *root = je_expected();
	int n_npy = 0, n_npz = 0;
	for (size_t k = 0; k < root->n; k++) {
		const char *rel = root->keys[k];
		const db_jp *fmt = db_jp_get(&root->items[k], "format");
		if (!fmt || (strcmp(fmt->str, "npy") && strcmp(fmt->str, "npz")))
			continue;
		db_file *f = je_open_fixture(rel);
		bool npz = !strcmp(fmt->str, "npz");
		assert_int_equal(f->format, npz ? DB_FMT_NPZ : DB_FMT_NPY);
		je_check_file(rel, f, &root->items[k]);
		const db_jp *ts = db_jp_get(&root->items[k], "tensors");
		for (size_t e = 0; e < f->n_entries; e++) {
			const db_tensor *t = &f->entries[e].t;
			const db_jp *descr = db_jp_get(&ts->items[e], "descr");
			const db_jp *fo = db_jp_get(&ts->items[e], "fortran_order");
			if (descr)      /* byte order flag from the descr numpy wrote */
				assert_int_equal(t->swap, descr->str[0] == '>' && strcmp(descr->str + 1, "i1") &&
				                 strcmp(descr->str + 1, "u1") && strcmp(descr->str + 1, "b1"));
			if (fo && fo->b && t->ndim > 1)
				assert_int_equal(t->stride[0], 1);  /* column-major, zero copy */
			if (t->file_offset >= 0)
				assert_ptr_equal(t->data, f->map + t->file_offset);
			else    /* inflated: lives in a buffer the db_file owns */
				assert_true(t->data < f->map || t->data >= f->map + f->map_size);
		}
		n_npz += npz;
		n_npy += !npz;
		db_file_close(f);
	}
	assert_true(n_npy >= 20);
	assert_true(n_npz >= 2);
}

static void test_bad_fixtures_refused(void **state)
{
	(void)state;
	const db_jp *root = je_expected();
	int checked = 0;
	for (size_t k = 0; k < root->n; k++) {
		const char *rel = root->keys[k], *want = je_refusal(root, k, ".npy");
		if (!want)
			want = je_refusal(root, k, ".npz");
		if (!want)
			continue;
		const char *path = je_path(rel);
		db_file *f;
		db_err err = { "" };
		if (db_file_open(path, &f, &err) == 0) {
			/* npz: the file opens; the bad member carries the error */
			const char *msg = NULL;
			for (size_t e = 0; e < f->n_entries && !msg; e++)
				msg = f->entries[e].err;
			je_assert_contains(rel, msg, want);
			je_assert_contains(rel, msg, rel);
			db_file_close(f);
		} else {
			je_assert_contains(rel, err.msg, want);
			je_assert_contains(rel, err.msg, rel);
		}
		checked++;
	}
	assert_true(checked >= 8);
}

/* An .npy image with header text hdr (padded with spaces + '\n' so the data
 * starts at a multiple of `align`). Caller frees. */
static uint8_t *mk_npy(int major, const char *hdr, size_t align, const void *data,
                       size_t dlen, size_t *n)
{
	size_t pre = major == 1 ? 10 : 12, hl = strlen(hdr) + 1;
	hl += (align - (pre + hl) % align) % align;
	*n = pre + hl + dlen;
	uint8_t *b = malloc(*n);
	assert_non_null(b);
	memcpy(b, "\x93NUMPY", 6);
	b[6] = (uint8_t)major;
	b[7] = 0;
	for (size_t k = 0; k < pre - 8; k++)
		b[8 + k] = (uint8_t)(hl >> (8 * k));
	memset(b + pre, ' ', hl);
	memcpy(b + pre, hdr, strlen(hdr));
	b[pre + hl - 1] = '\n';
	if (dlen)
		memcpy(b + pre + hl, data, dlen);
	return b;
}

static db_file *open_npy(const char *hdr, const void *data, size_t dlen, uint8_t **buf,
                         db_err *err)
{
	size_t n;
	*buf = mk_npy(1, hdr, 64, data, dlen, &n);
	return je_open_mem("mem.npy", *buf, n, err);
}

static void expect_refused(const char *hdr, size_t dlen, const char *want)
{
	uint8_t zeros[256] = { 0 };
	size_t n;
	uint8_t *buf = mk_npy(1, hdr, 64, zeros, dlen, &n);
	db_err err;
	je_expect_refused_mem("mem.npy", buf, n, hdr, want, &err);
	assert_true(starts_with(err.msg, "mem.npy: byte "));
	free(buf);
}

static void test_header_rules(void **state)
{
	(void)state;
	expect_refused("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16,
	               "'|O': object arrays hold pickles; refused");
	expect_refused("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", 4, "'<V2'");
	expect_refused("{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }", 6, "'|S3' holds byte strings");
	expect_refused("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", 24, "'<U3' holds unicode");
	expect_refused("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (2,), }", 16, "'<M8[ns]' holds datetimes");
	expect_refused("{'descr': '<m8[s]', 'fortran_order': False, 'shape': (2,), }", 16, "timedeltas");
	expect_refused("{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }", 32, "'<f16' not supported");
	expect_refused("{'descr': '<i3', 'fortran_order': False, 'shape': (2,), }", 6, "'<i3' not supported");
	expect_refused("{'descr': '<f4x', 'fortran_order': False, 'shape': (2,), }", 8, "'<f4x'");
	expect_refused("{'descr': '', 'fortran_order': False, 'shape': (2,), }", 8, "empty dtype");
	expect_refused("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (2,), }",
	               16, "structured dtype [('a', '<f4')");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8, "unexpected key 'x'");
	expect_refused("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8, "duplicate");
	expect_refused("{'descr': '<f4', 'shape': (2,)}", 8, "missing key 'fortran_order'");
	expect_refused("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", 8, "True or False");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", 8, "'(n,)'");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", 8, "tuple");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", 8, "non-negative");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (02,)}", 8, "leading zero");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", 24, "',' or ')'");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 8, "too large");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x", 8, "after the header dict");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", 8, "header");
	expect_refused("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2,)}", 8, "escape");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 8, "truncated: 3 elements of 4 bytes");
	expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 9, "1 trailing bytes");
	expect_refused("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 8, "overflow");
	expect_refused("{'descr': '<u1', 'fortran_order': False, 'shape': "
	               "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}", 1, "more than 16 dimensions");
}

static void test_versions_and_caps(void **state)
{
	(void)state;
	const char *h = "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }";
	int16_t v[3] = { -5, 7, 300 };
	db_file *f;
	db_err err;
	size_t n;
	/* v2 and v3 (u32 length), 16-byte alignment, and 'L' suffix, "=" order */
	for (int major = 1; major <= 3; major++) {
		uint8_t *b = mk_npy(major, h, 16, v, sizeof v, &n);
		assert_int_equal(db_file_open_mem("m.npy", b, n, &f, &err), 0);
		const db_tensor *t = &f->entries[0].t;
		assert_string_equal(f->entries[0].key, "");
		assert_int_equal(t->dtype, DB_DT_I16);
		assert_int_equal(t->file_offset, (int64_t)(n - sizeof v));
		assert_true(db_decode1_f64(t->dtype, t->data + 4, t->swap) == 300.0);
		db_file_close(f);
		free(b);
	}
	uint8_t *b = mk_npy(1, "{\"descr\": \"=i2\", \"fortran_order\": False, \"shape\": (3L,)}",
	                    64, v, sizeof v, &n);
	assert_int_equal(db_file_open_mem("m.npy", b, n, &f, &err), 0);
	assert_int_equal(f->entries[0].t.shape[0], 3);
	assert_false(f->entries[0].t.swap);
	db_file_close(f);
	free(b);
	/* a wide v2 header (numpy writes these for long shapes): 200 KB accepted */
	char *big = malloc(200000);
	snprintf(big, 200000, "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }");
	size_t bl = strlen(big);
	memset(big + bl, ' ', 199990 - bl);
	big[199990] = '\0';
	b = mk_npy(2, big, 64, v, sizeof v, &n);
	assert_int_equal(db_file_open_mem("m.npy", b, n, &f, &err), 0);
	db_file_close(f);
	/* header length over the 1 MiB cap: refused before reading it */
	b[8] = 0x01;
	b[9] = 0x00;
	b[10] = 0x10;
	b[11] = 0x00;
	assert_int_equal(db_file_open_mem("m.npy", b, n, &f, &err), -1);
	assert_non_null(strstr(err.msg, "m.npy: byte 8: npy header of 1048577 bytes exceeds"));
	free(b);
	free(big);
	/* versions and magic */
	b = mk_npy(1, h, 64, v, sizeof v, &n);
	b[7] = 1;
	assert_int_equal(db_file_open_mem("m.npy", b, n, &f, &err), -1);
	assert_non_null(strstr(err.msg, "version 1.1"));
	b[7] = 0;
	b[6] = 4;
	assert_int_equal(db_file_open_mem("m.npy", b, n, &f, &err), -1);
	assert_non_null(strstr(err.msg, "version 4.0"));
	b[6] = 1;
	b[9] = 0xff;     /* header length past the end */
	assert_int_equal(db_file_open_mem("m.npy", b, n, &f, &err), -1);
	assert_non_null(strstr(err.msg, "truncated"));
	free(b);
}

static void test_layout_and_byte_order(void **state)
{
	(void)state;
	/* Fortran (2, 3): memory holds column-major 0..5, so logical [i][j] = i + 2j */
	int32_t col[6] = { 0, 1, 2, 3, 4, 5 };
	uint8_t *buf;
	db_err err;
	db_file *f = open_npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
	                      col, sizeof col, &buf, &err);
	assert_non_null(f);
	const db_tensor *t = &f->entries[0].t;
	assert_int_equal(t->stride[0], 1);
	assert_int_equal(t->stride[1], 2);
	assert_false(db_tensor_is_contiguous(t));
	assert_int_equal(t->file_offset, 128);         /* header padded to 64 */
	assert_ptr_equal(t->data, buf + 128);          /* zero copy */
	/* C-order element 1 is [0][1] = 2 */
	assert_true(db_decode1_f64(t->dtype, t->data + je_elem_off(t, 1), t->swap) == 2.0);
	db_file_close(f);
	free(buf);
	/* big-endian f4 and c8 are flagged, not copied */
	uint8_t be[8] = { 0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0 };   /* 1.0, -2.0 */
	f = open_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", be, 8, &buf, &err);
	assert_non_null(f);
	assert_true(f->entries[0].t.swap);
	assert_true(db_decode1_f64(DB_DT_F32, f->entries[0].t.data + 4, true) == -2.0);
	db_file_close(f);
	free(buf);
	f = open_npy("{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }", be, 8, &buf, &err);
	assert_non_null(f);
	assert_int_equal(f->entries[0].t.dtype, DB_DT_C64);
	assert_true(f->entries[0].t.swap);
	db_file_close(f);
	free(buf);
	f = open_npy("{'descr': '>u1', 'fortran_order': False, 'shape': (), }", be, 1, &buf, &err);
	assert_non_null(f);
	assert_int_equal(f->entries[0].t.ndim, 0);
	assert_false(f->entries[0].t.swap);            /* one byte: nothing to swap */
	db_file_close(f);
	free(buf);
}

static void test_npz_members(void **state)
{
	(void)state;
	float fv[4] = { 1, 2, 3, 4 };
	size_t la, lb, lc, ld;
	uint8_t *a = mk_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 64, fv, 16, &la);
	uint8_t *bo = mk_npy(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", 64, fv, 8, &lb);
	uint8_t *c = mk_npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 64, fv, 16, &lc);
	/* 2 MB of zeros deflate ~1020:1; "bomb" declares 50 MB for it */
	size_t zl = 2u << 20;
	uint8_t *zeros = calloc(1, zl + 128);
	uint8_t *d = mk_npy(1, "{'descr': '<u1', 'fortran_order': False, 'shape': (2097152,), }", 64, zeros, zl, &ld);
	size_t le;
	uint8_t *z256 = mk_npy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (262144,), }", 64, zeros, 262144, &le);
	zm_member m[] = {
		{ "alpha.npy", a, la, false },
		{ "obj.npy", bo, lb, false },
		{ "dir/gamma.npy", c, lc, true },
		{ "bomb.npy", d, ld, true },
		{ "lie.npy", c, lc, true },
		{ "zero.npy", z256, le, true },
	};
	/* declared uncompressed sizes: bomb and lie do not tell the truth */
	const uint64_t usize[] = { 0, 0, 0, 50u << 20, 30, 0 };
	size_t n;
	uint8_t *zip = zm_build_full(m, sizeof m / sizeof m[0], false, -1, usize, &n);
	db_file *f;
	db_err err;
	if (db_file_open_mem("mem.npz", zip, n, &f, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(f->format, DB_FMT_NPZ);
	assert_int_equal(f->n_entries, 6);
	const db_entry *e = f->entries;
	assert_string_equal(e[0].key, "alpha");
	assert_null(e[0].err);
	assert_true(e[0].t.data > zip && e[0].t.data < zip + n);     /* stored: zero copy */
	assert_ptr_equal(e[0].t.data, zip + e[0].t.file_offset);
	assert_true(db_decode1_f64(DB_DT_F32, e[0].t.data + 12, false) == 4.0);
	assert_string_equal(e[1].key, "obj");
	assert_non_null(e[1].err);
	assert_non_null(strstr(e[1].err, "mem.npz: entry 'obj': byte "));
	assert_non_null(strstr(e[1].err, "object arrays hold pickles"));
	assert_string_equal(e[2].key, "dir/gamma");
	assert_null(e[2].err);
	assert_int_equal(e[2].t.file_offset, -1);
	assert_true(e[2].t.data < zip || e[2].t.data >= zip + n);   /* inflated copy */
	assert_int_equal(e[2].t.stride[1], 2);
	assert_true(db_decode1_f64(DB_DT_F32, e[2].t.data + je_elem_off(&e[2].t, 1), false) == 3.0);
	assert_string_equal(e[3].key, "bomb");
	assert_non_null(e[3].err);
	assert_non_null(strstr(e[3].err, "inflate ratio too large"));
	assert_string_equal(e[4].key, "lie");
	assert_non_null(e[4].err);
	assert_non_null(strstr(e[4].err, "inflate"));
	/* honest, highly compressed (~900:1) and under the caps: loads */
	assert_string_equal(e[5].key, "zero");
	assert_null(e[5].err);
	assert_int_equal(e[5].t.shape[0], 262144);
	assert_true(db_decode1_f64(DB_DT_U8, e[5].t.data + 262143, false) == 0.0);
	db_file_close(f);
	free(zip);
	free(a);
	free(bo);
	free(c);
	free(d);
	free(z256);
	free(zeros);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures_match_expected),
		cmocka_unit_test(test_bad_fixtures_refused),
		cmocka_unit_test(test_header_rules),
		cmocka_unit_test(test_versions_and_caps),
		cmocka_unit_test(test_layout_and_byte_order),
		cmocka_unit_test(test_npz_members),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
