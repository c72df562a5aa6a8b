/* The arithmetic of quantized formats (src/read/quant.c): FP4 values and
 * every code's quantization step against tests/fixtures/gen_dtype_tables.py
 * (from the format definitions, in Python), how a scale tiles its weight
 * (DeepSeek 128 x 128 blocks with partial edges, NVFP4 groups, per-channel
 * and per-tensor scales, and the errors), the logical shape of packed and
 * split codes, scale bytes read as e8m0/e4m3, layout transforms' index
 * maps against numpy's aiter shuffles, and the quant: key of a profile
 * (defaults and refusals). */
#include "db_quant.h"
#include "db_profile.h"

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

static void test_e2m1(void **state)
{
	(void)state;
	double *v = read_table("float4_e2m1", 16), *s = read_table("float4_e2m1_step", 16);
	for (unsigned c = 0; c < 16; c++) {
		assert_true(db_e2m1_f64(c) == v[c]);
		assert_true(db_quant_code_value(DB_DT_U8, DB_QV_E2M1, c) == v[c]);
		assert_true(db_quant_code_step(DB_DT_U8, DB_QV_E2M1, v[c]) == s[c]);
	}
	free(v);
	free(s);
}

static void test_fp8_steps(void **state)
{
	(void)state;
	const struct { const char *name; db_dtype dt; } k[] = {
		{"float8_e4m3fn", DB_DT_F8_E4M3FN}, {"float8_e5m2", DB_DT_F8_E5M2},
		{"float8_e4m3fnuz", DB_DT_F8_E4M3FNUZ}, {"float8_e5m2fnuz", DB_DT_F8_E5M2FNUZ},
	};
	for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
		char sn[64];
		snprintf(sn, sizeof sn, "%s_step", k[i].name);
		double *v = read_table(k[i].name, 256), *s = read_table(sn, 256);
		int checked = 0;
		for (unsigned c = 0; c < 256; c++) {
			double got = db_quant_code_value(k[i].dt, DB_QV_FP8, c);
			assert_true((isnan(got) && isnan(v[c])) || got == v[c]);
			if (isnan(s[c]))
				continue;
			if (db_quant_code_step(k[i].dt, DB_QV_FP8, v[c]) != s[c])
				fail_msg("%s code 0x%02x (%g): step %g, want %g", k[i].name, c, v[c],
				         db_quant_code_step(k[i].dt, DB_QV_FP8, v[c]), s[c]);
			checked++;
		}
		assert_true(checked >= 240);
		free(v);
		free(s);
	}
}

static db_quant_rule rule(db_qvalues v, int b0, int b1)
{
	db_quant_rule r;
	memset(&r, 0, sizeof r);
	r.name = "t";
	r.of = r.as = "weight";
	r.scale = "weight_scale";
	r.values = v;
	r.block[0] = b0;
	r.block[1] = b1;
	return r;
}

static void test_blocks(void **state)
{
	(void)state;
	char msg[300];
	int64_t blk[DB_MAX_DIMS];
	/* DeepSeek: [192, 160] in 128 x 128 blocks, the edge blocks partial */
	db_quant_rule r = rule(DB_QV_FP8, 128, 128);
	int64_t w[] = {192, 160}, s[] = {2, 2};
	assert_int_equal(db_quant_blocks(&r, 2, w, 2, s, blk, msg, sizeof msg), 0);
	assert_int_equal(blk[0], 128);
	assert_int_equal(blk[1], 128);
	int64_t s3[] = {3, 2};
	assert_int_equal(db_quant_blocks(&r, 2, w, 2, s3, blk, msg, sizeof msg), -1);
	assert_non_null(strstr(msg, "scale [3, 2] does not tile weight [192, 160] in blocks of 128 "
	                             "along dim 0 (2 blocks)"));
	/* per-tensor ([] and [1]) and per-channel ([out] and [out, 1]) */
	db_quant_rule f = rule(DB_QV_FP8, 0, 0);
	assert_int_equal(db_quant_blocks(&f, 2, w, 0, NULL, blk, msg, sizeof msg), 0);
	assert_int_equal(blk[0], 192);
	assert_int_equal(blk[1], 160);
	int64_t one[] = {1};
	assert_int_equal(db_quant_blocks(&f, 2, w, 1, one, blk, msg, sizeof msg), 0);
	int64_t ch[] = {192}, ch1[] = {192, 1};
	assert_int_equal(db_quant_blocks(&f, 2, w, 1, ch, blk, msg, sizeof msg), 0);
	assert_int_equal(blk[0], 1);
	assert_int_equal(blk[1], 160);
	assert_int_equal(db_quant_blocks(&f, 2, w, 2, ch1, blk, msg, sizeof msg), 0);
	assert_int_equal(blk[0], 1);
	/* a per-column scale where rows were meant does not tile */
	int64_t col[] = {160};
	assert_int_equal(db_quant_blocks(&f, 2, w, 1, col, blk, msg, sizeof msg), -1);
	/* NVFP4: a group of 16 along the last dim; 3-d MoE [E, out, in] */
	db_quant_rule n = rule(DB_QV_E2M1, 1, 16);
	int64_t w3[] = {2, 64, 160}, s3d[] = {2, 64, 10};
	assert_int_equal(db_quant_blocks(&n, 3, w3, 3, s3d, blk, msg, sizeof msg), 0);
	assert_int_equal(blk[0], 1);
	assert_int_equal(blk[1], 1);
	assert_int_equal(blk[2], 16);
	int64_t s3bad[] = {2, 64, 5};
	assert_int_equal(db_quant_blocks(&n, 3, w3, 3, s3bad, blk, msg, sizeof msg), -1);
}

static void test_logical_shape(void **state)
{
	(void)state;
	char msg[300];
	int nd;
	int64_t ls[DB_MAX_DIMS];
	db_quant_rule e = rule(DB_QV_E2M1, 1, 32);
	int64_t packed[] = {192, 80};
	assert_int_equal(db_quant_logical_shape(&e, DB_DT_U8, 2, packed, &nd, ls, msg, sizeof msg), 0);
	assert_int_equal(nd, 2);
	assert_int_equal(ls[1], 160);
	assert_int_equal(db_quant_logical_shape(&e, DB_DT_F4_E2M1FN_X2, 2, packed, &nd, ls, msg,
	                                        sizeof msg), 0);
	/* fp8 codes are not e2m1, bf16 is no code at all */
	assert_int_equal(db_quant_logical_shape(&e, DB_DT_F8_E4M3FN, 2, packed, &nd, ls, msg,
	                                        sizeof msg), -1);
	db_quant_rule f = rule(DB_QV_FP8, 128, 128);
	assert_false(db_quant_codes_fit(&f, DB_DT_BF16));
	assert_false(db_quant_codes_fit(&f, DB_DT_F8_E8M0FNU));
	assert_true(db_quant_codes_fit(&f, DB_DT_F8_E4M3FNUZ));
	/* gpt-oss: [E, rows, G, 16] bytes are rows of G * 32 values */
	e.split = 16;
	int64_t blocks[] = {2, 64, 5, 16};
	assert_int_equal(db_quant_logical_shape(&e, DB_DT_U8, 4, blocks, &nd, ls, msg, sizeof msg), 0);
	assert_int_equal(nd, 3);
	assert_int_equal(ls[0], 2);
	assert_int_equal(ls[1], 64);
	assert_int_equal(ls[2], 160);
	int64_t wrong[] = {2, 64, 5, 8};
	assert_int_equal(db_quant_logical_shape(&e, DB_DT_U8, 4, wrong, &nd, ls, msg, sizeof msg), -1);
}

/* int4 words: GPTQ's [in/8, out] and AWQ's [in, out/8] are both [out, in]
 * weights; the scales' shape [in/32, out] tells them apart (an AWQ qweight
 * read as GPTQ's has eight output columns per scale: refused). */
static void test_int4_shapes(void **state)
{
	(void)state;
	char msg[300];
	int nd;
	int64_t ls[DB_MAX_DIMS], blk[DB_MAX_DIMS];
	db_quant_rule gptq = rule(DB_QV_INT4, 0, 0), awq = gptq, ct = gptq;
	gptq.transposed = awq.transposed = true;
	gptq.pack_dim = 0;
	gptq.zero_pack_dim = 1;
	awq.pack_dim = ct.pack_dim = 1;
	assert_true(db_quant_codes_fit(&gptq, DB_DT_I32));
	assert_false(db_quant_codes_fit(&gptq, DB_DT_U8));
	int64_t gq[] = {8, 96}, aq[] = {64, 12}, cq[] = {96, 8}, sc[] = {2, 96}, cs[] = {96, 2};
	assert_int_equal(db_quant_logical_shape(&gptq, DB_DT_I32, 2, gq, &nd, ls, msg, sizeof msg), 0);
	assert_int_equal(ls[0], 96);
	assert_int_equal(ls[1], 64);
	assert_int_equal(db_quant_scale_blocks(&gptq, nd, ls, 2, sc, blk, msg, sizeof msg), 0);
	assert_int_equal(blk[0], 1);
	assert_int_equal(blk[1], 32);
	assert_int_equal(db_quant_logical_shape(&awq, DB_DT_I32, 2, aq, &nd, ls, msg, sizeof msg), 0);
	assert_int_equal(ls[0], 96);
	assert_int_equal(ls[1], 64);
	assert_int_equal(db_quant_scale_blocks(&awq, nd, ls, 2, sc, blk, msg, sizeof msg), 0);
	/* AWQ's codes under GPTQ's rule: [512, 12] stored, the scales cover 8 rows */
	assert_int_equal(db_quant_logical_shape(&gptq, DB_DT_I32, 2, aq, &nd, ls, msg, sizeof msg), 0);
	assert_int_equal(db_quant_scale_blocks(&gptq, nd, ls, 2, sc, blk, msg, sizeof msg), -1);
	assert_int_equal(db_quant_logical_shape(&ct, DB_DT_I32, 2, cq, &nd, ls, msg, sizeof msg), 0);
	assert_int_equal(ls[0], 96);
	assert_int_equal(ls[1], 64);
	assert_int_equal(db_quant_scale_blocks(&ct, nd, ls, 2, cs, blk, msg, sizeof msg), 0);
	assert_int_equal(blk[1], 32);
	/* packed zero points unpack along their pack dim */
	int64_t qz[] = {2, 12}, zs[2];
	db_quant_zero_shape(&gptq, DB_DT_I32, 2, qz, zs);
	assert_int_equal(zs[1], 96);
	db_quant_zero_shape(&gptq, DB_DT_F16, 2, qz, zs);
	assert_int_equal(zs[1], 12);
	assert_true(db_quant_code_value(DB_DT_I32, DB_QV_INT4, 0x1f) == 15.0);
	assert_true(db_quant_code_step(DB_DT_I32, DB_QV_INT4, -8) == 1.0);
}

static void test_scale_bytes(void **state)
{
	(void)state;
	db_quant_rule r = rule(DB_QV_E2M1, 1, 32);
	uint8_t b = 127;
	assert_true(db_quant_scale_value(&r, DB_DT_U8, &b, false) == 127.0);  /* stored: a number */
	r.scale_type = DB_QS_E8M0;
	assert_true(db_quant_scale_value(&r, DB_DT_U8, &b, false) == 1.0);
	b = 120;
	assert_true(db_quant_scale_value(&r, DB_DT_U8, &b, false) == ldexp(1, -7));
	b = 0xff;
	assert_true(isnan(db_quant_scale_value(&r, DB_DT_U8, &b, false)));
	r.scale_type = DB_QS_E4M3;
	b = 0x7e;
	assert_true(db_quant_scale_value(&r, DB_DT_U8, &b, false) == 448.0);
	/* a stored F8_E8M0 scale decodes as itself whatever the rule says */
	r.scale_type = DB_QS_STORED;
	b = 130;
	assert_true(db_quant_scale_value(&r, DB_DT_F8_E8M0FNU, &b, false) == 8.0);
}

static int64_t *read_i64(const char *name, size_t count)
{
	char path[512];
	snprintf(path, sizeof path, "%s/quant/%s.bin", FIXTURES, name);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	int64_t *t = malloc(count * sizeof *t);
	assert_non_null(t);
	assert_int_equal(fread(t, sizeof *t, count, f), count);
	fclose(f);
	return t;
}

/* Layout transforms' index maps against gen_quant.py's numpy versions of
 * aiter's shuffle_weight (16, 16), (32, 16) (one- and two-byte elements),
 * shuffle_weight_NK (16, 32) and a gate/up row interleave, on [32, 64]. */
static void test_xform_index(void **state)
{
	(void)state;
	const struct { const char *name; db_xform x; } k[] = {
		{"xform_shuffle_16_16", {DB_XF_TILE, 16, 32, 16, "s"}},
		{"xform_shuffle_32_16", {DB_XF_TILE, 32, 32, 16, "s"}},
		{"xform_shuffle_16_16_bf16", {DB_XF_TILE, 16, 32, 8, "s"}},
		{"xform_nk_16_32", {DB_XF_TILE, 16, 32, 8, "s"}},
		{"xform_gate_up", {DB_XF_GATE_UP, 0, 0, 0, "g"}},
		{"xform_e8m0", {DB_XF_E8M0, 0, 0, 0, "e"}},
	};
	int64_t shape[] = {32, 64}, bad[] = {24, 64};
	for (size_t t = 0; t < sizeof k / sizeof *k; t++) {
		int64_t *want = read_i64(k[t].name, 32 * 64);
		assert_true(db_xform_fits(&k[t].x, 2, shape));
		for (int64_t i = 0; i < 32 * 64; i++)
			if (db_xform_index(&k[t].x, 2, shape, i) != want[i])
				fail_msg("%s: logical %lld stored at %lld, numpy says %lld", k[t].name,
				         (long long)i, (long long)db_xform_index(&k[t].x, 2, shape, i),
				         (long long)want[i]);
		free(want);
	}
	/* tiles of 16 or 32 rows do not fit 24 rows; the interleave does */
	assert_false(db_xform_fits(&k[0].x, 2, bad));
	assert_false(db_xform_fits(&k[1].x, 2, bad));
	assert_true(db_xform_fits(&k[4].x, 2, bad));
	assert_false(db_xform_fits(&k[5].x, 2, bad));   /* e8m0: rows by 32 */
	/* a [32, 64] weight stored [64, 32] (numpy's .T, for two layers) */
	db_xform tr = {DB_XF_TRANSPOSE, 0, 0, 0, "transposed"};
	int64_t *want = read_i64("xform_transpose", 2 * 32 * 64);
	int64_t stored[] = {2, 64, 32};
	for (int64_t i = 0; i < 2 * 32 * 64; i++)
		if (db_xform_index(&tr, 3, stored, i) != want[i])
			fail_msg("transpose: logical %lld stored at %lld, numpy says %lld", (long long)i,
			         (long long)db_xform_index(&tr, 3, stored, i), (long long)want[i]);
	free(want);
}

static const char BASE[] = "name: q\npath: '^(?<stage>.+)\\.pt$'\n";

static int parse(const char *quant, db_profile **p, db_err *e)
{
	char y[2048];
	snprintf(y, sizeof y, "%s%s", BASE, quant);
	return db_profile_parse(y, strlen(y), "q.yaml", p, e);
}

static void test_profile_key(void **state)
{
	(void)state;
	db_profile *p = NULL;
	db_err e = {{0}};
	assert_int_equal(parse("quant:\n  - {name: gptoss, of: _blocks, as: '', scale: _scales,\n"
	                       "     values: e2m1, scale_type: e8m0, split: 16, group: 32,\n"
	                       "     nibbles: high_first, also: [input_scale]}\n"
	                       "  - {name: ds, scale: weight_scale_inv, values: fp8, block: [128, 64],"
	                       " invert: true}\n", &p, &e), 0);
	assert_int_equal(p->n_quant, 2);
	assert_string_equal(p->quant[0].of, "_blocks");
	assert_string_equal(p->quant[0].as, "");
	assert_int_equal(p->quant[0].values, DB_QV_E2M1);
	assert_int_equal(p->quant[0].scale_type, DB_QS_E8M0);
	assert_int_equal(p->quant[0].split, 16);
	assert_int_equal(p->quant[0].block[0], 1);
	assert_int_equal(p->quant[0].block[1], 32);
	assert_true(p->quant[0].high_first);
	assert_int_equal(p->quant[0].n_also, 1);
	/* of defaults to weight, as to of */
	assert_string_equal(p->quant[1].of, "weight");
	assert_string_equal(p->quant[1].as, "weight");
	assert_true(p->quant[1].invert);
	assert_int_equal(p->quant[1].block[0], 128);
	assert_int_equal(p->quant[1].block[1], 64);
	db_profile_free(p);
	const char *bad[][2] = {
		{"quant:\n  - {name: x, scale: s}\n", "name, scale and values are required"},
		{"quant:\n  - {name: x, scale: s, values: fp4}\n", "expected fp8, e2m1, int8 or int4"},
		{"quant:\n  - {name: x, scale: s, values: int4, order: [0, 1, 2, 3, 4, 5, 6, 6]}\n",
		 "6 twice, expected a permutation of 0..7"},
		{"quant:\n  - {name: x, scale: s, values: int4, order: [0, 1]}\n", "expected eight numbers"},
		{"quant:\n  - {name: x, scale: s, values: int4, pack_dim: 2}\n", "quant.pack_dim"},
		{"quant:\n  - {name: x, scale: s, values: int4, group: 32}\n", "int4 groups follow the shapes"},
		{"quant:\n  - {name: x, scale: s, values: fp8, block: [128]}\n", "expected [rows, cols]"},
		{"quant:\n  - {name: x, scale: s, values: fp8, nibbles: first}\n", "low_first or high_first"},
		{"quant:\n  - {name: x, scale: s, values: fp8, split: 16}\n", "packed e2m1 codes only"},
		{"quant:\n  - {name: x, scale: s, values: fp8, scales: t}\n", "unknown key 'scales'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		p = NULL;
		memset(&e, 0, sizeof e);
		assert_int_equal(parse(bad[i][0], &p, &e), -1);
		if (!strstr(e.msg, bad[i][1]) || !strstr(e.msg, "q.yaml:"))
			fail_msg("%s: '%s'", bad[i][1], e.msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_e2m1),
		cmocka_unit_test(test_fp8_steps),
		cmocka_unit_test(test_blocks),
		cmocka_unit_test(test_logical_shape),
		cmocka_unit_test(test_int4_shapes),
		cmocka_unit_test(test_scale_bytes),
		cmocka_unit_test(test_xform_index),
		cmocka_unit_test(test_profile_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
