/* The CI gate's rules (compare/rules.c): the expression parser and its
 * errors by column, the REGEX: split, the first matching rule, how pairs
 * that are not measured are judged, the text form a session keeps, and
 * the downcast metrics (measure/metrics.c) against values torch gives. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "db_metrics.h"
#include "db_rules.h"

static double V[DB_RULE_NVARS];

static void set(double rel, double cos, double max_abs)
{
	for (int i = 0; i < DB_RULE_NVARS; i++)
		V[i] = 0.5;
	V[DB_RM_rel] = rel;
	V[DB_RM_cos] = cos;
	V[DB_RM_max_abs] = max_abs;
	V[DB_RM_N + DB_RM_rel] = rel / 10;
}

static bool ev(const char *e)
{
	bool out = false;
	db_err err = {{0}};
	if (db_rules_eval_expr(e, V, &out, &err) != 0)
		fail_msg("'%s': %s", e, err.msg);
	return out;
}

/* The error of e names column col. */
static void bad(const char *e, int col, const char *words)
{
	bool out;
	db_err err = {{0}};
	assert_int_equal(db_rules_eval_expr(e, V, &out, &err), -1);
	char want[64];
	snprintf(want, sizeof want, "column %d:", col);
	if (!strstr(err.msg, want) || (words && !strstr(err.msg, words)))
		fail_msg("'%s': want '%s' '%s', got: %s", e, want, words ? words : "", err.msg);
}

static void t_expressions(void **s)
{
	(void)s;
	set(1e-4, 0.9999, 2e-3);
	assert_true(ev("rel <= 1e-3"));
	assert_false(ev("rel > 1e-3"));
	assert_true(ev("rel<=0.0085 or max_abs<=1e-3"));
	assert_false(ev("rel <= 1e-5 or max_abs <= 1e-3"));
	assert_true(ev("rel <= 1e-3 and cos >= 0.999"));
	assert_false(ev("rel <= 1e-3 and cos >= 0.99999"));
	/* and binds tighter than or */
	assert_true(ev("rel > 1 and cos > 1 or max_abs < 1"));
	assert_false(ev("rel > 1 and (cos > 1 or max_abs < 1)"));
	assert_true(ev("((rel < 1))"));
	assert_true(ev("not rel > 1"));
	assert_true(ev("1e-3 >= rel"));                 /* number on the left */
	assert_true(ev("downcast_rel <= 2e-5"));        /* the downcast slot */
	assert_false(ev("downcast_rel <= 1e-6"));
	assert_true(ev("byte_equal == 0.5 && cos != 1 || rel > 9"));
	/* NaN compares false, both ways */
	V[DB_RM_cos] = NAN;
	assert_false(ev("cos >= 0.99"));
	assert_false(ev("cos < 0.99"));
	assert_false(ev("cos != 0.99"));
	assert_true(ev("not cos >= 0.99"));
}

static void t_errors(void **s)
{
	(void)s;
	set(0, 1, 0);
	bad("rel <=", 7, "found the end");
	bad("rel <= 1e-3 and", 16, "found the end");
	bad("rell <= 1", 1, "unknown metric 'rell'");
	bad("rel = 1", 5, "comparison");
	bad("rel <= 1 cos > 2", 10, "and / or");
	bad("(rel <= 1", 10, "')'");
	bad("rel <= 1)", 9, "without '('");
	bad("1 < 2", 6, "two numbers");
	bad("rel <= nan", 8, "unknown metric 'nan'");
	bad("rel <= 0x10", 8, "number");
	bad("", 1, "found the end");
	bad("downcast_ <= 1", 1, "unknown metric");
}

static db_pair pair_of(const char *stage, db_status st, double rel)
{
	db_pair p;
	memset(&p, 0, sizeof p);
	p.f.stage = stage;
	p.f.phase = p.f.pass = p.f.side = "";
	p.status = st;
	p.m.rel = rel;
	p.m.cos = 1;
	return p;
}

static void judge(const db_rules *r, const char *stage, db_status st, double rel, db_gate g,
                  int rule)
{
	db_pair p = pair_of(stage, st, rel);
	db_gate got;
	int k;
	db_err err = {{0}};
	assert_int_equal(db_rules_judge(r, &p, &got, &k, &err), 0);
	if (got != g || k != rule)
		fail_msg("%s rel %g: want %s by %d, got %s by %d", stage, rel, db_gate_name(g), rule,
		         db_gate_name(got), k);
}

static void t_rules(void **s)
{
	(void)s;
	db_rules *r = db_rules_new();
	db_err err = {{0}};
	assert_int_equal(db_rules_add(r, "attn: rel <= 0.5", &err), 0);
	/* the last ':' ends the regex: (?:...) is the regex's own */
	assert_int_equal(db_rules_add(r, "^(?:mlp|moe)_output$ : rel <= 1e-2", &err), 0);
	assert_false(db_rules_catch_all(r));
	judge(r, "attn_output", DB_ST_OK, 0.4, DB_GATE_PASSED, 0);
	judge(r, "attn_output", DB_ST_OK, 0.6, DB_GATE_FAILED, 0);
	judge(r, "mlp_output", DB_ST_OK, 0.6, DB_GATE_FAILED, 1);
	judge(r, "pre_mlp_residual", DB_ST_OK, 0, DB_GATE_NO_RULE, -1);
	assert_int_equal(db_rules_add(r, "rel <= 1e-3", &err), 0);
	assert_true(db_rules_catch_all(r));
	judge(r, "pre_mlp_residual", DB_ST_OK, 2e-3, DB_GATE_FAILED, 2);
	judge(r, "pre_mlp_residual", DB_ST_OK, 1e-4, DB_GATE_PASSED, 2);
	judge(r, "attn_output", DB_ST_REF_ONLY, 0, DB_GATE_SKIPPED, -1);
	judge(r, "attn_output", DB_ST_NOT_COMPARABLE, 0, DB_GATE_SKIPPED, -1);
	judge(r, "attn_output", DB_ST_SHAPE_MISMATCH, 0, DB_GATE_FAILED, -1);
	judge(r, "attn_output", DB_ST_ERROR, 0, DB_GATE_FAILED, -1);
	assert_string_equal(db_rules_text(r, 1), "^(?:mlp|moe)_output$ : rel <= 1e-2");
	/* the text form a session keeps, and the shared copy it gives back */
	char buf[256];
	assert_true(db_rules_str(r, buf, sizeof buf));
	const db_rules *k = db_rules_intern(buf, &err);
	assert_non_null(k);
	assert_ptr_equal(db_rules_intern(buf, &err), k);
	assert_int_equal(db_rules_count(k), 3);
	judge(k, "mlp_output", DB_ST_OK, 0.6, DB_GATE_FAILED, 1);
	assert_false(db_rules_str(r, buf, 20));          /* did not fit: said */
	/* errors name the column of the whole rule */
	assert_int_equal(db_rules_add(r, "attn: rel <", &err), -1);
	assert_non_null(strstr(err.msg, "column 12"));
	assert_int_equal(db_rules_add(r, " : rel < 1", &err), -1);
	assert_non_null(strstr(err.msg, "empty regex"));
	assert_int_equal(db_rules_add(r, "a(b: rel < 1", &err), -1);
	assert_non_null(strstr(err.msg, "regex 'a(b'"));
	/* a rule past 4096 characters is refused, not evaluated 1,000 deep */
	char big[8200];
	size_t l = 0;
	while (l + 12 < sizeof big) {
		memcpy(big + l, "rel < 1 and ", 12);
		l += 12;
	}
	memcpy(big + l - 5, "\0", 1);
	assert_int_equal(db_rules_add(r, big, &err), -1);
	assert_non_null(strstr(err.msg, "longer than 4096"));
	assert_int_equal(db_rules_count(r), 3);
	db_rules_free(r);
}

/* float32 reference against its bfloat16 rounding (the values and the
 * expected numbers from torch: x = torch.tensor([...], dtype=float32),
 * y = x.to(bfloat16) with its last element nudged one bf16 ulp up). */
static void t_downcast(void **s)
{
	(void)s;
	float xf[4] = {1.0f, 0.333333343267440796f, -2.71828174591064453f, 100.123001098632812f};
	uint16_t yb[4] = {0x3f80, 0x3eab, 0xc02e, 0x42c9};  /* bf16 of x; last: 100.5 */
	db_tensor x = {.dtype = DB_DT_F32, .ndim = 1, .shape = {4}, .stride = {1},
	               .data = (const uint8_t *)xf};
	db_tensor y = {.dtype = DB_DT_BF16, .ndim = 1, .shape = {4}, .stride = {1},
	               .data = (const uint8_t *)yb};
	db_metrics m;
	db_err err = {{0}};
	assert_int_equal(db_metrics_compute(&x, &y, &m, &err), 0);
	assert_int_equal(m.dc_dtype, DB_DT_BF16);
	/* torch: x.to(bf16) = [1, 0.333984375, -2.71875, 100.0]; y - that =
	 * [0, 0, 0, 0.5]: max_abs 0.5, rel 0.5/100, 3 of 4 equal */
	assert_true(fabs(m.dc.max_abs - 0.5) < 1e-15);
	assert_true(fabs(m.dc.rel - 0.005) < 1e-15);
	assert_true(fabs(m.dc.byte_equal - 0.75) < 1e-15);
	assert_true(fabs(m.dc.mean_abs - 0.125) < 1e-15);
	/* torch, in float64 without the cast: max_abs 0.3769989013671875,
	 * rel 0.0037653575824779734 */
	assert_true(fabs(m.max_abs - 0.3769989013671875) < 1e-15);
	assert_true(fabs(m.rel - 0.0037653575824779734) < 1e-15);
	assert_true(isnan(m.byte_equal));
	/* one dtype: no downcast */
	assert_int_equal(db_metrics_compute(&x, &x, &m, &err), 0);
	assert_int_equal(m.dc_dtype, DB_DT_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_expressions),
		cmocka_unit_test(t_errors),
		cmocka_unit_test(t_rules),
		cmocka_unit_test(t_downcast),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
