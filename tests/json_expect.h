/* Test helpers shared by test_safetensors.c and test_npy.c: load
 * tests/fixtures/expected_files.json (written by the torch/numpy generator,
 * parsed with src/json_parse.h) and check a db_file's tensors against it.
 * Include after <cmocka.h>. */
#ifndef JSON_EXPECT_H
#define JSON_EXPECT_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db_dtype.h"
#include "db_reader.h"
#include "db_tensor.h"
#include "json_parse.h"

/* Whole file into a malloc'd buffer (caller frees); NULL when unreadable. */
static uint8_t *je_slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	*n = 0;
	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	long sz = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	uint8_t *b = malloc(sz > 0 ? (size_t)sz : 1);
	if (b && sz > 0 && fread(b, 1, (size_t)sz, fp) != (size_t)sz) {
		free(b);
		b = NULL;
	}
	fclose(fp);
	*n = sz > 0 ? (size_t)sz : 0;
	return b;
}

/* expected_files.json, parsed once per test binary; never freed. */
static const db_jp *je_expected(void)
{
	static db_jp *root;
	if (!root) {
		size_t n, epos = 0;
		const char *emsg = "";
		char *txt = (char *)je_slurp(FIXTURES "/expected_files.json", &n);
		assert_non_null(txt);
		if (db_jp_parse(txt, n, &root, &epos, &emsg))
			fail_msg("expected_files.json: byte %zu: %s", epos, emsg);
		free(txt);
	}
	return root;
}

/* A JSON number, or the strings "nan", "inf", "-inf". */
static double je_num(const db_jp *v)
{
	if (v->type == DB_JP_NUM)
		return v->num;
	if (v->type == DB_JP_STR) {
		if (!strcmp(v->str, "nan"))
			return NAN;
		if (!strcmp(v->str, "inf"))
			return INFINITY;
		if (!strcmp(v->str, "-inf"))
			return -INFINITY;
	}
	fail_msg("not a number in expected_files.json at byte %zu", v->pos);
	return 0;
}

static void je_close_enough(const char *what, const char *file, const char *key,
                            double got, double want)
{
	if (isnan(want) && isnan(got))
		return;
	if (got == want)
		return;
	double tol = 1e-9 * fmax(1.0, fabs(want));
	if (!(fabs(got - want) <= tol))
		fail_msg("%s '%s': %s = %.17g, expected %.17g", file, key, what, got, want);
}

/* Byte offset of C-order element i, computed here from shape/stride so the
 * reader's strides are what is tested. */
static int64_t je_elem_off(const db_tensor *t, int64_t i)
{
	int64_t off = 0;
	for (int d = t->ndim - 1; d >= 0; d--) {
		off += (i % t->shape[d]) * t->stride[d];
		i /= t->shape[d];
	}
	return off * (int64_t)db_dtype_size(t->dtype);
}

/* Component c (0 re / 1 im) of element i, as float64. */
static double je_value(const db_tensor *t, int64_t i, int c)
{
	size_t part = db_dtype_size(t->dtype) / (size_t)db_dtype_components(t->dtype);
	return db_decode1_f64(t->dtype, t->data + je_elem_off(t, i) + c * (int64_t)part, t->swap);
}

/* Checks one entry against its expected tensor object. */
static void je_check_tensor(const char *file, const db_entry *e, const db_jp *x)
{
	const char *key = db_jp_get(x, "key")->str;
	assert_string_equal(e->key, key);
	if (e->err)
		fail_msg("%s '%s': unexpected entry error: %s", file, key, e->err);
	const db_tensor *t = &e->t;
	const db_jp *dt = db_jp_get(x, "dtype");
	if (strcmp(db_dtype_name(t->dtype), dt->str))
		fail_msg("%s '%s': dtype %s, expected %s", file, key, db_dtype_name(t->dtype), dt->str);
	const db_jp *sh = db_jp_get(x, "shape");
	if ((size_t)t->ndim != sh->n)
		fail_msg("%s '%s': ndim %d, expected %zu", file, key, t->ndim, sh->n);
	int64_t numel = 1;
	for (size_t d = 0; d < sh->n; d++) {
		assert_int_equal(t->shape[d], (int64_t)sh->items[d].u);
		numel *= t->shape[d];
	}
	int nc = db_dtype_components(t->dtype);
	const db_jp *vals = db_jp_get(x, "values");
	for (size_t k = 0; k < vals->n; k++) {
		char what[32];
		snprintf(what, sizeof what, "values[%zu]", k);
		je_close_enough(what, file, key, je_value(t, (int64_t)k / nc, (int)k % nc),
		                je_num(&vals->items[k]));
	}
	assert_true(vals->n == (size_t)(numel * nc) || vals->n == 16);
	/* Whole-tensor stats (NaN propagates, as in torch). */
	double sum = 0, mn = INFINITY, mx = -INFINITY;
	for (int64_t i = 0; i < numel; i++)
		for (int c = 0; c < nc; c++) {
			double v = je_value(t, i, c);
			sum += v;
			mn = isnan(v) || isnan(mn) ? NAN : fmin(mn, v);
			mx = isnan(v) || isnan(mx) ? NAN : fmax(mx, v);
		}
	je_close_enough("sum", file, key, sum, je_num(db_jp_get(x, "sum")));
	if (numel) {
		je_close_enough("min", file, key, mn, je_num(db_jp_get(x, "min")));
		je_close_enough("max", file, key, mx, je_num(db_jp_get(x, "max")));
		je_close_enough("mean", file, key, sum / (double)(numel * nc),
		                je_num(db_jp_get(x, "mean")));
	}
}

/* Checks every tensor of f against the expected "tensors" list, in order. */
static void je_check_file(const char *rel, const db_file *f, const db_jp *exp)
{
	const db_jp *ts = db_jp_get(exp, "tensors");
	assert_non_null(ts);
	if (f->n_entries != ts->n)
		fail_msg("%s: %zu entries, expected %zu", rel, f->n_entries, ts->n);
	for (size_t k = 0; k < ts->n; k++)
		je_check_tensor(rel, &f->entries[k], &ts->items[k]);
}

/* Case-sensitive substring test that prints what it saw on failure. */
static void je_assert_contains(const char *rel, const char *msg, const char *want)
{
	if (!msg || !strstr(msg, want))
		fail_msg("%s: message '%s' lacks '%s'", rel, msg ? msg : "(none)", want);
}

#endif
