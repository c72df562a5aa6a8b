/* Test helpers shared by the reader tests (test_npy.c, test_safetensors.c,
 * test_pt.c): load tests/fixtures/expected_files.json (written by the
 * torch/numpy generator, parsed with src/json_parse.h), check a db_file's
 * tensors against it, open fixtures and in-memory images, and check
 * refusals. Include after <cmocka.h>. */
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
#include "util/json_parse.h"
#include "lib/test_util.h"

#define JE_FN static __attribute__((unused))

/* expected_files.json, parsed once per test binary; never freed. */
JE_FN const db_jp *je_expected(void)
{
	static db_jp *root;
	if (!root)
		root = tu_json(FIXTURES "/expected_files.json");
	return root;
}

/* A JSON number, or the strings "nan", "inf", "-inf". */
JE_FN double je_num(const db_jp *v)
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

JE_FN void je_close_enough(const char *what, const char *file, const char *key,
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
JE_FN int64_t je_elem_off(const db_tensor *t, int64_t i)
{
	int64_t off = 0;
	for (int d = t->ndim - 1; d >= 0; d--) {
		off += (i % t->shape[d]) * t->stride[d];
		i /= t->shape[d];
	}
	return off * (int64_t)db_dtype_size(t->dtype);
}

/* Component c (0 re / 1 im) of element i, as float64. */
JE_FN double je_value(const db_tensor *t, int64_t i, int c)
{
	size_t part = db_dtype_size(t->dtype) / (size_t)db_dtype_components(t->dtype);
	return db_decode1_f64(t->dtype, t->data + je_elem_off(t, i) + c * (int64_t)part, t->swap);
}

/* Checks one entry against its expected tensor object. */
JE_FN void je_check_tensor(const char *file, const db_entry *e, const db_jp *x)
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
JE_FN void je_check_file(const char *rel, const db_file *f, const db_jp *exp)
{
	const db_jp *ts = db_jp_get(exp, "tensors");
	assert_non_null(ts);
	if (f->n_entries != ts->n)
		fail_msg("%s: %zu entries, expected %zu", rel, f->n_entries, ts->n);
	for (size_t k = 0; k < ts->n; k++)
		je_check_tensor(rel, &f->entries[k], &ts->items[k]);
}

/* Case-sensitive substring test that prints what it saw on failure. */
JE_FN void je_assert_contains(const char *rel, const char *msg, const char *want)
{
	if (msg && strstr(msg, want))
		return;
	/* msg copied to a buffer: gcc -O2 with UBSan otherwise warns (wrongly)
	 * that the %s argument may be null */
	char seen[1100];
	snprintf(seen, sizeof seen, "%s", msg ? msg : "(none)");
	fail_msg("%s: message '%s' lacks '%s'", rel, seen, want);
}

JE_FN bool je_ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* FIXTURES/rel, in a static buffer that the next call reuses. */
JE_FN const char *je_path(const char *rel)
{
	static char path[1024];
	snprintf(path, sizeof path, "%s/%s", FIXTURES, rel);
	return path;
}

/* FIXTURES/rel, opened; a refusal fails the test. Caller closes. */
JE_FN db_file *je_open_fixture(const char *rel)
{
	db_file *f = NULL;
	db_err err;
	if (db_file_open(je_path(rel), &f, &err))
		fail_msg("%s refused: %s", rel, err.msg);
	return f;
}

/* The words the refusal of fixture k of expected_files.json must hold
 * when it is a bad fixture whose name ends with suf; else NULL. */
JE_FN const char *je_refusal(const db_jp *root, size_t k, const char *suf)
{
	const db_jp *ref = db_jp_get(&root->items[k], "refuse");
	return ref && je_ends_with(root->keys[k], suf) ? ref->str : NULL;
}

/* The image buf[0..n), opened as the file name: the file (caller closes),
 * or NULL with *err set. */
JE_FN db_file *je_open_mem(const char *name, const uint8_t *buf, size_t n, db_err *err)
{
	db_file *f = NULL;
	if (db_file_open_mem(name, buf, n, &f, err))
		return NULL;
	return f;
}

/* Opening the image buf[0..n) as name must fail with a message holding
 * want; what names the case in the failure. The message is left in *err. */
JE_FN void je_expect_refused_mem(const char *name, const uint8_t *buf, size_t n,
                                 const char *what, const char *want, db_err *err)
{
	err->msg[0] = 0;
	if (je_open_mem(name, buf, n, err))
		fail_msg("accepted: %s", what);
	if (!strstr(err->msg, want))
		fail_msg("%s: message '%s' lacks '%s'", what, err->msg, want);
}

#endif
