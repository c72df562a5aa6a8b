/* The restricted pickle VM on hand-written byte strings: values it builds,
 * every refused opcode and name (with its file offset), SETITEM/APPEND only
 * on their containers, and the caps on depth, memo, marks and sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/pickle.h"
#include "pickle_mini.h"

#define BASE 1000 /* file offset of the pickle's first byte in messages */

static db_pk *vm;
static db_err err;

static int run(pb *p, db_pk_val **out)
{
	db_pk_free(vm);
	vm = db_pk_new("t.pt", "t/data.pkl", false);
	size_t used;
	memset(&err, 0, sizeof err);
	int rc = db_pk_run(vm, p->b, p->n, BASE, out, &used, &err);
	if (!rc)
		assert_int_equal(used, p->n);
	free(p->b);
	memset(p, 0, sizeof *p);
	return rc;
}

/* Runs p, expecting a refusal whose message holds want and names the byte. */
static void refused(pb *p, const char *want, long at)
{
	db_pk_val *v;
	if (run(p, &v) == 0)
		fail_msg("pickle accepted, expected '%s'", want);
	if (!strstr(err.msg, want))
		fail_msg("message '%s' lacks '%s'", err.msg, want);
	assert_non_null(strstr(err.msg, "t.pt: entry 't/data.pkl': byte "));
	if (at >= 0) {
		char b[48];
		snprintf(b, sizeof b, "byte %ld:", BASE + at);
		if (!strstr(err.msg, b))
			fail_msg("message '%s' lacks '%s'", err.msg, b);
	}
}

/* A pickle given as its bytes, and the refusal it must meet. */
typedef struct raw_refusal {
	const char *bytes;
	size_t n;
	const char *want;
	long at;                /* byte named in the message; -1: any */
} raw_refusal;

#define REFUSE(lit, want, at) {lit, sizeof(lit) - 1, want, at}

static void refused_all(const raw_refusal *c, size_t n)
{
	for (size_t i = 0; i < n; i++, c++) {
		pb p = {0};
		put(&p, c->bytes, c->n);
		refused(&p, c->want, c->at);
	}
}

#define REFUSED_ALL(cases) refused_all(cases, sizeof cases / sizeof cases[0])

static const db_pk_val *dget(const db_pk_val *d, const char *k)
{
	assert_int_equal(d->type, DB_PK_DICT);
	for (size_t i = 0; i < d->u.dict.n; i++)
		if (d->u.dict.k[i]->type == DB_PK_STR && !strcmp(d->u.dict.k[i]->u.str.s, k))
			return d->u.dict.v[i];
	fail_msg("no key %s", k);
	return NULL;
}

static void test_values(void **state)
{
	(void)state;
	pb p = {0};
	RAW(&p, "\x80\x02}q\x00(");
	str(&p, "a");
	int1(&p, 1);
	str(&p, "b");
	RAW(&p, "]q\x01(G\x3f\xf8\x00\x00\x00\x00\x00\x00N\x88\x89" "e");
	str(&p, "c");
	RAW(&p, "K\x01K\x02K\x03\x87");
	str(&p, "n");
	RAW(&p, "J\xfb\xff\xff\xff");
	str(&p, "big");
	RAW(&p, "\x8a\x06\x00\x00\x00\x00\x00\x01");
	str(&p, "neg");
	RAW(&p, "\x8a\x01\xff");
	str(&p, "m");
	RAW(&p, "M\x34\x12");
	str(&p, "again");
	RAW(&p, "h\x01");
	str(&p, "by");
	RAW(&p, "C\x02\x00\xff");
	RAW(&p, "u.");
	db_pk_val *v;
	if (run(&p, &v))
		fail_msg("%s", err.msg);
	assert_int_equal(v->type, DB_PK_DICT);
	assert_int_equal(v->u.dict.n, 9);
	assert_string_equal(v->u.dict.k[0]->u.str.s, "a"); /* insertion order */
	assert_int_equal(dget(v, "a")->u.i, 1);
	const db_pk_val *l = dget(v, "b");
	assert_int_equal(l->type, DB_PK_LIST);
	assert_int_equal(l->u.seq.n, 4);
	assert_true(l->u.seq.v[0]->u.f == 1.5); /* big-endian BINFLOAT */
	assert_int_equal(l->u.seq.v[1]->type, DB_PK_NONE);
	assert_true(l->u.seq.v[2]->u.b);
	assert_false(l->u.seq.v[3]->u.b);
	assert_int_equal(dget(v, "c")->type, DB_PK_TUPLE);
	assert_int_equal(dget(v, "c")->u.seq.v[2]->u.i, 3);
	assert_int_equal(dget(v, "n")->u.i, -5);
	assert_int_equal(dget(v, "big")->u.i, 1LL << 40);
	assert_int_equal(dget(v, "neg")->u.i, -1);
	assert_int_equal(dget(v, "m")->u.i, 0x1234);
	assert_ptr_equal(dget(v, "again"), l); /* memo shares the object */
	assert_int_equal(dget(v, "by")->type, DB_PK_BYTES);
	assert_int_equal(dget(v, "by")->u.str.len, 2);
	assert_int_equal((uint8_t)dget(v, "by")->u.str.s[1], 0xff);
}

static void test_codecs_encode_and_ordered_dict(void **state)
{
	(void)state;
	pb p = {0};
	RAW(&p, "\x80\x02");
	glob(&p, "collections", "OrderedDict");
	RAW(&p, ")R(");
	str(&p, "k");
	glob(&p, "_codecs", "encode");
	str(&p, "\xc3\xa9" "A");
	str(&p, "latin1");
	RAW(&p, "\x86R");
	RAW(&p, "u}");
	str(&p, "_metadata");
	RAW(&p, "}sb.");
	db_pk_val *v;
	if (run(&p, &v))
		fail_msg("%s", err.msg);
	const db_pk_val *b = dget(v, "k");
	assert_int_equal(b->type, DB_PK_BYTES);
	assert_int_equal(b->u.str.len, 2);
	assert_int_equal((uint8_t)b->u.str.s[0], 0xe9);
	assert_int_equal(b->u.str.s[1], 'A');
	assert_int_equal(v->u.dict.n, 1); /* BUILD state ignored */
}

static void test_refused_opcodes(void **state)
{
	(void)state;
	static const raw_refusal cases[] = {
		REFUSE("\x80\x02(iposix\nsystem\n", "INST posix.system is refused", 3),
		REFUSE("\x82\x01.", "EXT1", 0),
		REFUSE("\x83\x01\x00.", "EXT2", 0),
		REFUSE("K\x01\x84\x01\x00\x00\x00.", "EXT4", 2),
		REFUSE("P0\n.", "PERSID", 0),
		REFUSE("S'x'\n.", "unsupported pickle opcode 'S'", 0),
		REFUSE("\x96\x00\x00\x00\x00\x00\x00\x00\x00.", "unsupported pickle opcode 0x96", 0),
	};
	REFUSED_ALL(cases);
	pb p = {0};
	RAW(&p, "\x80\x02(");
	glob(&p, "collections", "OrderedDict");
	RAW(&p, "o.");
	refused(&p, "opcode OBJ is refused", 3 + 25);
	glob(&p, "collections", "OrderedDict");
	RAW(&p, ")\x81.");
	refused(&p, "NEWOBJ of collections.OrderedDict is refused", 26);
	glob(&p, "collections", "OrderedDict");
	RAW(&p, ")}\x92.");
	refused(&p, "NEWOBJ_EX", 27);
}

static void test_refused_globals(void **state)
{
	(void)state;
	pb p = {0};
	RAW(&p, "\x80\x02");
	glob(&p, "os", "system");
	refused(&p, "GLOBAL os.system is not allowed (nothing in a file is executed)", 2);
	glob(&p, "__builtin__", "eval");
	refused(&p, "GLOBAL builtins.eval is not allowed", 0);
	glob(&p, "torch", "load");
	refused(&p, "GLOBAL torch.load is not allowed", 0);
	/* the module part must match exactly, not as a prefix */
	glob(&p, "torch._utils._rebuild_tensor_v2", "x");
	refused(&p, "not allowed", 0);
	glob(&p, "torch", "_utils._rebuild_tensor_v2");
	refused(&p, "not allowed", 0);
	/* names echoed into messages lose their control bytes */
	glob(&p, "os\x1b[2J", "system");
	refused(&p, "GLOBAL os?[2J.system is not allowed", 0);
	assert_null(strchr(err.msg, 0x1b));
	/* STACK_GLOBAL with strings from the memo: checked when it executes */
	RAW(&p, "\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00");
	str(&p, "posix");
	op(&p, 0x94);
	str(&p, "system");
	RAW(&p, "\x94" "0" "0" "h\x00h\x01\x93");
	refused(&p, "STACK_GLOBAL posix.system is not allowed", 11 + 7 + 1 + 8 + 1 + 2 + 4);
	int1(&p, 1);
	str(&p, "system");
	op(&p, 0x93);
	refused(&p, "STACK_GLOBAL needs two strings", 10);
	/* REDUCE only of functions we rebuild */
	glob(&p, "torch", "float32");
	RAW(&p, ")R.");
	refused(&p, "REDUCE of torch.float32 is not allowed", 16);
	str(&p, "x");
	RAW(&p, ")R.");
	refused(&p, "REDUCE: the callable is a str", 4);
	glob(&p, "collections", "OrderedDict");
	RAW(&p, "K\x01\x85R.");
	refused(&p, "only OrderedDict() with no arguments", -1);
	/* persistent ids other than storages */
	RAW(&p, "(");
	str(&p, "module");
	RAW(&p, "K\x01tQ.");
	refused(&p, "persistent id ('module', ...) is refused", 12);
}

static void test_containers_only_their_ops(void **state)
{
	(void)state;
	static const raw_refusal cases[] = {
		REFUSE("]K\x01K\x02s.", "SETITEM on a list is refused", 5),
		REFUSE("](K\x01K\x02u.", "SETITEMS on a list is refused", 6),
		REFUSE("}K\x01" "a.", "APPEND to a dict is refused", 3),
		REFUSE(")(K\x01" "e.", "APPENDS to a tuple is refused", 4),
		REFUSE("]}b.", "BUILD on a list is refused", 2),
		REFUSE("(K\x01K\x02K\x03" "d.", "DICT with an odd number", 7),
	};
	REFUSED_ALL(cases);
	pb p = {0};
	glob(&p, "torch", "Size");
	RAW(&p, "K\x01" "a.");
	refused(&p, "APPEND to a global is refused", -1);
}

static void test_stack_discipline(void **state)
{
	(void)state;
	static const raw_refusal cases[] = {
		REFUSE("(.", "STOP on an empty stack", 1),
		REFUSE("K\x01(a.", "APPEND on an empty stack", 3),
		REFUSE("K\x01" "t.", "TUPLE without a MARK", 2),
		REFUSE("(K\x01u.", "SETITEMS with no container below its MARK", 3),
		REFUSE("K\x01\x86.", "TUPLE2 with fewer than 2", 2),
		REFUSE("K\x01", "no STOP", 2),
		REFUSE("X\xff\x00\x00\x00" "abc.", "truncated inside BINUNICODE", 0),
		REFUSE("\x80\x07.", "unsupported pickle protocol 7", 0),
	};
	REFUSED_ALL(cases);
	pb p = {0};
	/* POP discards, POP_MARK drops back to the mark */
	RAW(&p, "K\x05K\x06" "0(K\x07K\x08" "1.");
	db_pk_val *v;
	assert_int_equal(run(&p, &v), 0);
	assert_int_equal(v->u.i, 5);
}

static void test_depth_cap(void **state)
{
	(void)state;
	pb p = {0};
	/* 99 lists nested into one another: allowed */
	for (int i = 0; i < 100; i++)
		op(&p, ']');
	for (int i = 0; i < 99; i++)
		op(&p, 'a');
	op(&p, '.');
	db_pk_val *v;
	if (run(&p, &v))
		fail_msg("%s", err.msg);
	assert_int_equal(v->depth, 99);
	for (int i = 0; i < 150; i++)
		op(&p, ']');
	for (int i = 0; i < 149; i++)
		op(&p, 'a');
	op(&p, '.');
	refused(&p, "nested deeper than 100 levels", 150 + 100);
	/* tuples built from marks count too */
	for (int i = 0; i < 150; i++)
		op(&p, '(');
	for (int i = 0; i < 150; i++)
		op(&p, 't');
	op(&p, '.');
	refused(&p, "nested deeper than 100 levels", -1);
	/* a list appended to itself cannot recurse forever */
	RAW(&p, "]q\x00");
	for (int i = 0; i < 200; i++)
		RAW(&p, "h\x00" "a");
	op(&p, '.');
	refused(&p, "nested deeper", -1);
}

static void test_memo_and_mark_caps(void **state)
{
	(void)state;
	static const raw_refusal cases[] = {
		REFUSE("K\x01r\xff\xff\xff\xff.", "memo index 4294967295 exceeds the cap", 2),
		REFUSE("K\x01r\x00\x00\x40\x00.", "exceeds the cap", 2),
		REFUSE("h\x05.", "memo slot 5 read before it was written", 0),
		REFUSE("\x8b\x00\x10\x00\x00", "LONG4 of 4096 bytes exceeds the cap", 0),
	};
	REFUSED_ALL(cases);
	pb p = {0};
	RAW(&p, "K\x01r\xff\xff\x3f\x00" "j\xff\xff\x3f\x00.");
	db_pk_val *v;
	assert_int_equal(run(&p, &v), 0); /* the largest allowed slot works */
	assert_int_equal(v->u.i, 1);
	for (int i = 0; i < 70000; i++)
		op(&p, '(');
	op(&p, '.');
	refused(&p, "nested MARKs (cap)", 65536);
}

static void test_tensor_rebuild(void **state)
{
	(void)state;
	pb p = {0};
	tensor_pickle(&p, "_rebuild_tensor_v2", "FloatStorage", 12, "K\x03K\x04\x86", "K\x04K\x01\x86");
	RAW(&p, "tR.");
	db_pk_val *v;
	if (run(&p, &v))
		fail_msg("%s", err.msg);
	assert_int_equal(v->type, DB_PK_TENSOR);
	const db_pk_tensor *t = v->u.tensor;
	assert_int_equal(t->dtype, DB_DT_F32);
	assert_int_equal(t->ndim, 2);
	assert_int_equal(t->shape[1], 4);
	assert_int_equal(t->stride[0], 4);
	assert_string_equal(t->storage->u.storage.key, "0");
	assert_int_equal(t->storage->u.storage.numel, 12);
	size_t ns;
	db_pk_storages(vm, &ns);
	assert_int_equal(ns, 1);
	/* negative stride */
	tensor_pickle(&p, "_rebuild_tensor_v2", "FloatStorage", 12, "K\x03\x85", "\x8a\x01\xff\x85");
	RAW(&p, "tR.");
	refused(&p, "stride[0] = -1 is negative", -1);
	/* size and stride of different rank */
	tensor_pickle(&p, "_rebuild_tensor_v2", "FloatStorage", 12, "K\x03\x85", ")");
	RAW(&p, "tR.");
	refused(&p, "size has 1 dimensions but stride has 0", -1);
	/* wrong argument count */
	tensor_pickle(&p, "_rebuild_tensor_v2", "FloatStorage", 12, "K\x03\x85", "K\x01\x85");
	RAW(&p, "K\x01K\x02tR.");
	refused(&p, "takes 6 or 7 arguments, got 8", -1);
	/* v3: dtype argument; a dtype torch has but we do not read -> entry error later */
	tensor_pickle(&p, "_rebuild_tensor_v3", "UntypedStorage", 8, "K\x04\x85", "K\x01\x85");
	glob(&p, "torch", "complex32");
	RAW(&p, "tR.");
	if (run(&p, &v))
		fail_msg("%s", err.msg);
	assert_string_equal(v->u.tensor->unsupported, "dtype torch.complex32 is not supported");
	tensor_pickle(&p, "_rebuild_tensor_v3", "UntypedStorage", 8, "K\x04\x85", "K\x01\x85");
	glob(&p, "torch", "bfloat16");
	RAW(&p, "tR.");
	assert_int_equal(run(&p, &v), 0);
	assert_int_equal(v->u.tensor->dtype, DB_DT_BF16);
	assert_int_equal(v->u.tensor->itemsize, 2);
	assert_true(v->u.tensor->storage->u.storage.untyped);
	/* storage key must not escape data/ */
	RAW(&p, "(");
	str(&p, "storage");
	glob(&p, "torch", "FloatStorage");
	str(&p, "../x");
	str(&p, "cpu");
	RAW(&p, "K\x01tQ.");
	refused(&p, "storage key is empty, too long, or contains", -1);
}

static void test_parameter_sparse_and_subclass(void **state)
{
	(void)state;
	pb p = {0};
	/* _rebuild_parameter(tensor, rg, hooks) is the tensor itself */
	RAW(&p, "\x80\x02");
	glob(&p, "torch._utils", "_rebuild_parameter");
	RAW(&p, "(");
	glob(&p, "torch._utils", "_rebuild_tensor_v2");
	tensor_args_open(&p, "HalfStorage", 2, "K\x02\x85", "K\x01\x85");
	RAW(&p, "tR\x88");
	glob(&p, "collections", "OrderedDict");
	RAW(&p, ")RtR.");
	db_pk_val *v;
	if (run(&p, &v))
		fail_msg("%s", err.msg);
	assert_int_equal(v->type, DB_PK_TENSOR);
	assert_int_equal(v->u.tensor->dtype, DB_DT_F16);
	/* sparse: a tensor value that says it cannot be read, with its shape */
	glob(&p, "torch._utils", "_rebuild_sparse_tensor");
	RAW(&p, "(");
	glob(&p, "torch.serialization", "_get_layout");
	str(&p, "torch.sparse_coo");
	RAW(&p, "\x85R(NN");
	glob(&p, "torch", "Size");
	RAW(&p, "K\x05K\x06\x86\x85RttR.");
	if (run(&p, &v))
		fail_msg("%s", err.msg);
	assert_int_equal(v->type, DB_PK_TENSOR);
	assert_string_equal(v->u.tensor->unsupported, "sparse tensors are not supported");
	assert_int_equal(v->u.tensor->ndim, 2);
	assert_int_equal(v->u.tensor->shape[1], 6);
	/* _rebuild_from_type_v2(func, Tensor, args, state) keeps func(*args) */
	glob(&p, "torch._tensor", "_rebuild_from_type_v2");
	RAW(&p, "(");
	glob(&p, "torch._utils", "_rebuild_tensor_v2");
	glob(&p, "torch", "Tensor");
	tensor_args_open(&p, "LongStorage", 3, "K\x03\x85", "K\x01\x85");
	RAW(&p, "t}tR.");
	if (run(&p, &v))
		fail_msg("%s", err.msg);
	assert_int_equal(v->type, DB_PK_TENSOR);
	assert_int_equal(v->u.tensor->dtype, DB_DT_I64);
	/* ... but not with an arbitrary class */
	glob(&p, "torch._tensor", "_rebuild_from_type_v2");
	RAW(&p, "(");
	glob(&p, "collections", "OrderedDict");
	glob(&p, "collections", "OrderedDict");
	RAW(&p, ")}tR.");
	refused(&p, "only (rebuild function, torch.Tensor or Parameter", -1);
}

static int teardown(void **state)
{
	(void)state;
	db_pk_free(vm);
	vm = NULL;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_codecs_encode_and_ordered_dict),
		cmocka_unit_test(test_refused_opcodes),
		cmocka_unit_test(test_refused_globals),
		cmocka_unit_test(test_containers_only_their_ops),
		cmocka_unit_test(test_stack_discipline),
		cmocka_unit_test(test_depth_cap),
		cmocka_unit_test(test_memo_and_mark_caps),
		cmocka_unit_test(test_tensor_rebuild),
		cmocka_unit_test(test_parameter_sparse_and_subclass),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
