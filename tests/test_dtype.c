/* dtype names/sizes, exact decoding of every 16- and 8-bit float code
 * against tables written by tests/fixtures/gen_dtype_tables.py (torch for
 * f16/bf16, the format definitions for fp8), integer decoding, byte order,
 * and the tensor shape/stride helpers. */
#include "db_dtype.h"
#include "db_tensor.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static double *read_table(const char *name, size_t count)
{
	char path[512];
	snprintf(path, sizeof path, "%s/dtype_tables/%s.bin", FIXTURES, name);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	double *t = malloc(count * sizeof *t);
	assert_non_null(t);
	assert_int_equal(fread(t, sizeof *t, count, f), count);
	fclose(f);
	return t;
}

/* Same double, bit for bit (so -0 != +0), or both NaN. */
static int same_value(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return memcmp(&a, &b, sizeof a) == 0;
}

static void test_names_sizes(void **state)
{
	(void)state;
	for (int dt = DB_DT_UNKNOWN + 1; dt < DB_DT__COUNT; dt++) {
		const char *name = db_dtype_name((db_dtype)dt);
		assert_int_equal(db_dtype_from_name(name), dt);
		assert_true(db_dtype_size((db_dtype)dt) > 0);
	}
	assert_int_equal(db_dtype_from_name("torch.bfloat16"), DB_DT_BF16);
	assert_int_equal(db_dtype_from_name("float8_e4m3fn"), DB_DT_F8_E4M3FN);
	assert_int_equal(db_dtype_from_name("float8_e8m0fnu"), DB_DT_F8_E8M0FNU);
	assert_int_equal(db_dtype_from_name("float"), DB_DT_UNKNOWN);
	assert_int_equal(db_dtype_from_name(NULL), DB_DT_UNKNOWN);
	assert_int_equal(db_dtype_size(DB_DT_UNKNOWN), 0);
	assert_int_equal(db_dtype_size(DB_DT_BF16), 2);
	assert_int_equal(db_dtype_size(DB_DT_C128), 16);
	assert_int_equal(db_dtype_size(DB_DT_QINT32), 4);
	assert_string_equal(db_dtype_name(DB_DT_F8_E5M2FNUZ), "float8_e5m2fnuz");
	assert_string_equal(db_dtype_name(DB_DT_QUINT4X2), "quint4x2");
	assert_true(db_dtype_comparable(DB_DT_C64));
	assert_true(db_dtype_comparable(DB_DT_BOOL));
	assert_false(db_dtype_comparable(DB_DT_QINT8));
	assert_false(db_dtype_comparable(DB_DT_UNKNOWN));
	assert_true(db_dtype_is_quantized(DB_DT_QUINT2X4));
	assert_int_equal(db_dtype_components(DB_DT_C128), 2);
	assert_int_equal(db_dtype_components(DB_DT_F32), 1);
}

/* All 65536 codes through every decode route: scalar, contiguous block
 * (the vectorized loop), strided, and byte-swapped. */
static void check_16bit(db_dtype dt, const char *table)
{
	double *want = read_table(table, 65536);
	uint8_t *le = malloc(2 * 65536), *be = malloc(2 * 65536), *gap = malloc(6 * 65536);
	double *got = malloc(65536 * sizeof *got);
	assert_true(le && be && gap && got);
	for (unsigned c = 0; c < 65536; c++) {
		le[2 * c] = (uint8_t)c;
		le[2 * c + 1] = (uint8_t)(c >> 8);
		be[2 * c] = (uint8_t)(c >> 8);
		be[2 * c + 1] = (uint8_t)c;
		gap[6 * c] = (uint8_t)c;
		gap[6 * c + 1] = (uint8_t)(c >> 8);
	}
	for (unsigned c = 0; c < 65536; c++) {
		if (!same_value(db_decode1_f64(dt, le + 2 * c, false), want[c]))
			fail_msg("%s code 0x%04x: got %a want %a", table, c,
			         db_decode1_f64(dt, le + 2 * c, false), want[c]);
		assert_true(same_value(db_decode1_f64(dt, be + 2 * c, true), want[c]));
	}
	/* odd start and odd count so the vector loop's tail runs too */
	db_decode_f64(dt, le + 2, 2, 65535, false, got + 1);
	for (unsigned c = 1; c < 65536; c++)
		if (!same_value(got[c], want[c]))
			fail_msg("%s block code 0x%04x: got %a want %a", table, c, got[c], want[c]);
	memset(got, 0, 65536 * sizeof *got);
	db_decode_f64(dt, be, 2, 65536, true, got);
	for (unsigned c = 0; c < 65536; c++)
		assert_true(same_value(got[c], want[c]));
	db_decode_f64(dt, gap, 6, 65536, false, got);
	for (unsigned c = 0; c < 65536; c++)
		assert_true(same_value(got[c], want[c]));
	free(want);
	free(le);
	free(be);
	free(gap);
	free(got);
}

static void test_f16_exhaustive(void **state)
{
	(void)state;
	check_16bit(DB_DT_F16, "float16");
}

static void test_bf16_exhaustive(void **state)
{
	(void)state;
	check_16bit(DB_DT_BF16, "bfloat16");
}

static void test_fp8_exhaustive(void **state)
{
	(void)state;
	static const struct { db_dtype dt; const char *name; } fmts[] = {
		{DB_DT_F8_E4M3FN, "float8_e4m3fn"}, {DB_DT_F8_E5M2, "float8_e5m2"},
		{DB_DT_F8_E4M3FNUZ, "float8_e4m3fnuz"}, {DB_DT_F8_E5M2FNUZ, "float8_e5m2fnuz"},
		{DB_DT_F8_E8M0FNU, "float8_e8m0fnu"},
	};
	uint8_t codes[256];
	for (int c = 0; c < 256; c++)
		codes[c] = (uint8_t)c;
	for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
		double *want = read_table(fmts[f].name, 256), got[256];
		db_decode_f64(fmts[f].dt, codes, 1, 256, true, got); /* swap: no-op for 1 byte */
		for (int c = 0; c < 256; c++) {
			if (!same_value(db_decode1_f64(fmts[f].dt, codes + c, false), want[c]) ||
			    !same_value(got[c], want[c]))
				fail_msg("%s code 0x%02x: got %a want %a", fmts[f].name, c, got[c], want[c]);
		}
		free(want);
	}
	/* anchors straight from formats.md §7 */
	uint8_t b = 0x7e;
	assert_true(db_decode1_f64(DB_DT_F8_E4M3FN, &b, false) == 448.0);
	b = 0x7f;
	assert_true(isnan(db_decode1_f64(DB_DT_F8_E4M3FN, &b, false)));
	b = 0x7c;
	assert_true(isinf(db_decode1_f64(DB_DT_F8_E5M2, &b, false)));
	b = 0x80;
	assert_true(isnan(db_decode1_f64(DB_DT_F8_E4M3FNUZ, &b, false)));
	assert_true(isnan(db_decode1_f64(DB_DT_F8_E5M2FNUZ, &b, false)));
	b = 0x7f;
	assert_true(db_decode1_f64(DB_DT_F8_E8M0FNU, &b, false) == 1.0);
}

static void test_ints_and_wide(void **state)
{
	(void)state;
	uint8_t buf[16];
	memset(buf, 0xff, sizeof buf);
	assert_true(db_decode1_f64(DB_DT_I8, buf, false) == -1);
	assert_true(db_decode1_f64(DB_DT_U8, buf, false) == 255);
	assert_true(db_decode1_f64(DB_DT_I64, buf, false) == -1);
	assert_true(db_decode1_f64(DB_DT_U64, buf, false) == 18446744073709551615.0);
	assert_true(db_decode1_f64(DB_DT_U32, buf, false) == 4294967295.0);
	assert_true(db_decode1_f64(DB_DT_QINT8, buf, false) == -1);  /* raw int */
	uint8_t be16[2] = {0x12, 0x34};
	assert_true(db_decode1_f64(DB_DT_I16, be16, true) == 0x1234);
	assert_true(db_decode1_f64(DB_DT_I16, be16, false) == 0x3412);
	uint8_t two = 2;
	assert_true(db_decode1_f64(DB_DT_BOOL, &two, false) == 1);
	int32_t i32[3] = {-7, 0, 2147483647};
	double out[3];
	db_decode_f64(DB_DT_I32, (const uint8_t *)i32, 4, 3, false, out);
	assert_true(out[0] == -7 && out[1] == 0 && out[2] == 2147483647.0);
	double d = -1.5e300, back;
	uint8_t sw[8];
	for (int i = 0; i < 8; i++)
		sw[i] = ((uint8_t *)&d)[7 - i];
	db_decode_f64(DB_DT_F64, sw, 8, 1, true, &back);
	assert_true(back == d);
	float f = 3.25f;
	for (int i = 0; i < 4; i++)
		sw[i] = ((uint8_t *)&f)[3 - i];
	assert_true(db_decode1_f64(DB_DT_F32, sw, true) == 3.25);
	/* complex64: components are float32, (re, im) */
	float cplx[4] = {1.5f, -2.0f, 0.25f, 8.0f};
	double comp[4];
	db_decode_f64(DB_DT_C64, (const uint8_t *)cplx, 4, 4, false, comp);
	assert_true(comp[0] == 1.5 && comp[1] == -2.0 && comp[2] == 0.25 && comp[3] == 8.0);
	assert_true(db_decode1_f64(DB_DT_C64, (const uint8_t *)(cplx + 1), false) == -2.0);
	assert_true(isnan(db_decode1_f64(DB_DT_UNKNOWN, buf, false)));
}

static void test_tensor_helpers(void **state)
{
	(void)state;
	db_tensor t = {.dtype = DB_DT_F32, .ndim = 3, .shape = {2, 3, 4}};
	db_tensor_set_contiguous(&t);
	assert_int_equal(t.stride[0], 12);
	assert_int_equal(t.stride[1], 4);
	assert_int_equal(t.stride[2], 1);
	assert_int_equal(db_tensor_numel(&t), 24);
	assert_true(db_tensor_is_contiguous(&t));
	assert_int_equal(db_tensor_elem_offset(&t, 23), 23 * 4);
	char buf[64];
	assert_string_equal(db_shape_str(&t, buf, sizeof buf), "[2, 3, 4]");
	char tiny[5];
	assert_string_equal(db_shape_str(&t, tiny, sizeof tiny), "[2, ");

	/* transpose of a [3, 4] matrix: shape [4, 3], strides [1, 4] */
	db_tensor tr = {.dtype = DB_DT_BF16, .ndim = 2, .shape = {4, 3}, .stride = {1, 4}};
	assert_false(db_tensor_is_contiguous(&tr));
	/* element (i, j) = flat i*3 + j sits at j*4 + i */
	assert_int_equal(db_tensor_elem_offset(&tr, 5), (2 * 4 + 1) * 2);
	assert_int_equal(db_tensor_elem_offset(&tr, 11), (2 * 4 + 3) * 2);

	/* size-1 dims may carry any stride and still be contiguous */
	db_tensor s1 = {.dtype = DB_DT_F32, .ndim = 3, .shape = {1, 5, 1}, .stride = {99, 1, 7}};
	assert_true(db_tensor_is_contiguous(&s1));
	db_tensor step = {.dtype = DB_DT_F32, .ndim = 1, .shape = {5}, .stride = {2}};
	assert_false(db_tensor_is_contiguous(&step));
	assert_int_equal(db_tensor_elem_offset(&step, 4), 32);

	db_tensor scalar = {.dtype = DB_DT_F64, .ndim = 0};
	assert_int_equal(db_tensor_numel(&scalar), 1);
	assert_true(db_tensor_is_contiguous(&scalar));
	assert_int_equal(db_tensor_elem_offset(&scalar, 0), 0);
	assert_string_equal(db_shape_str(&scalar, buf, sizeof buf), "[]");

	db_tensor empty = {.dtype = DB_DT_F32, .ndim = 2, .shape = {0, 7}, .stride = {3, 3}};
	assert_int_equal(db_tensor_numel(&empty), 0);
	assert_true(db_tensor_is_contiguous(&empty));

	db_tensor u = t;
	assert_true(db_shape_equal(&t, &u));
	u.shape[2] = 5;
	assert_false(db_shape_equal(&t, &u));
	u.ndim = 2;
	assert_false(db_shape_equal(&t, &u));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_sizes),
		cmocka_unit_test(test_f16_exhaustive),
		cmocka_unit_test(test_bf16_exhaustive),
		cmocka_unit_test(test_fp8_exhaustive),
		cmocka_unit_test(test_ints_and_wide),
		cmocka_unit_test(test_tensor_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
