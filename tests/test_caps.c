/* Resource caps: each one is an error value with a message (file, byte
 * offset), never an abort, a hang or an allocation sized by the attacker.
 *   pickle: container depth, self-reference, memo index, stack, marks,
 *           string/long lengths;
 *   element counts vs the bytes present: torch storages and views,
 *           safetensors shapes, npy shapes, zip entry counts;
 *   header sizes: safetensors (100 MB), npy (1 MiB);
 *   npz inflate: 1 GiB of inflated data per file (checked on the declared
 *           sizes before allocating), declared size must be what inflates,
 *           honest ~1030:1 zero arrays load;
 *   special files: opening a FIFO or a device never blocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <zlib.h>

#include "db_metrics.h"
#include "db_reader.h"
#include "read/pickle.h"
#include "pickle_mini.h"
#include "read/zip.h"
#include "zip_mini.h"

#define HOSTILE FIXTURES "/hostile"

static void assert_has(const char *msg, const char *want)
{
	if (!msg || !strstr(msg, want))
		fail_msg("message '%s' lacks '%s'", msg ? msg : "(none)", want);
}

/* Run one pickle; returns the VM's rc and leaves the message in err. */
static int run_pickle(const pb *p, db_err *err)
{
	db_pk *vm = db_pk_new("caps.pkl", "data.pkl", false);
	assert_non_null(vm);
	db_pk_val *out;
	size_t used;
	err->msg[0] = '\0';
	int rc = db_pk_run(vm, p->b, p->n, 0, &out, &used, err);
	db_pk_free(vm);
	return rc;
}

static void expect_pickle_error(const pb *p, const char *want)
{
	db_err err;
	assert_int_equal(run_pickle(p, &err), -1);
	assert_has(err.msg, want);
	assert_has(err.msg, "caps.pkl");
	assert_has(err.msg, "byte ");
}

/* n nested lists: ] x n, then n-1 APPENDs fold each into the one below. */
static void nested_lists(pb *p, int n)
{
	RAW(p, "\x80\x02");
	for (int i = 0; i < n; i++)
		op(p, ']');
	for (int i = 1; i < n; i++)
		op(p, 'a');
	op(p, '.');
}

static void test_pickle_depth(void **state)
{
	(void)state;
	pb ok = {0}, deep = {0};
	db_err err;
	nested_lists(&ok, DB_PK_MAX_DEPTH);
	assert_int_equal(run_pickle(&ok, &err), 0);
	nested_lists(&deep, DB_PK_MAX_DEPTH + 2);
	expect_pickle_error(&deep, "nested deeper than");
	free(ok.b);
	free(deep.b);
}

/* A torch zip holding data.pkl = p and one 12-byte storage record "0". */
static int open_pt(const pb *p, const void *rec, size_t rec_len, db_file **f, db_err *err,
                   uint8_t **keep)
{
	zm_member m[] = {{"a/data.pkl", p->b, p->n, false}, {"a/data/0", rec, rec_len, false}};
	size_t len;
	*keep = zm_build(m, 2, &len);
	return db_file_open_mem("caps.pt", *keep, len, f, err);
}

/* {'x': <the dict itself>}: the memo makes a cycle; flattening it must stop. */
static void test_pickle_self_reference(void **state)
{
	(void)state;
	pb p = {0};
	RAW(&p, "\x80\x02}q\x00");
	str(&p, "x");
	RAW(&p, "h\x00s.");
	db_file *f = NULL;
	db_err err;
	uint8_t *keep;
	uint8_t rec[12] = {0};
	if (open_pt(&p, rec, sizeof rec, &f, &err, &keep) == 0) {
		/* accepted: then it holds no tensor and flattening terminated */
		for (size_t i = 0; i < f->n_entries; i++)
			assert_non_null(f->entries[i].err);
		db_file_close(f);
	} else {
		assert_has(err.msg, "caps.pt");
		assert_has(err.msg, "byte ");
	}
	free(keep);
	free(p.b);
}

static void test_pickle_memo(void **state)
{
	(void)state;
	pb big = {0}, ok = {0};
	db_err err;
	/* LONG_BINPUT 0xFFFFFFFF: must not size a memo table from it */
	RAW(&big, "\x80\x02N" "r\xff\xff\xff\xff" ".");
	expect_pickle_error(&big, "memo index");
	/* the last index under the cap works */
	RAW(&ok, "\x80\x02N" "r");
	uint32_t idx = DB_PK_MAX_MEMO - 1;
	put(&ok, &idx, 4);  /* little-endian host (x86/arm64) */
	op(&ok, '.');
	assert_int_equal(run_pickle(&ok, &err), 0);
	free(big.b);
	free(ok.b);
}

static void test_pickle_stack_and_marks(void **state)
{
	(void)state;
	pb st = {0}, mk = {0};
	RAW(&st, "\x80\x02");
	for (unsigned i = 0; i <= DB_PK_MAX_STACK; i++)
		op(&st, 'N');
	op(&st, '.');
	expect_pickle_error(&st, "stack deeper than");
	RAW(&mk, "\x80\x02");
	for (unsigned i = 0; i <= DB_PK_MAX_MARKS; i++)
		op(&mk, '(');
	op(&mk, '.');
	expect_pickle_error(&mk, "MARKs");
	free(st.b);
	free(mk.b);
}

static void test_pickle_lengths(void **state)
{
	(void)state;
	pb s8 = {0}, s4 = {0}, l4 = {0};
	/* BINUNICODE8 of 2^40 bytes: over the string cap */
	RAW(&s8, "\x80\x04\x8d\x00\x00\x00\x00\x00\x01\x00\x00" "abc.");
	expect_pickle_error(&s8, "exceeds the cap");
	/* BINUNICODE of 1 GiB - 16 in a 20-byte pickle: under the cap, past the end */
	RAW(&s4, "\x80\x02X\xf0\xff\xff\x3f" "abc.");
	expect_pickle_error(&s4, "truncated");
	/* LONG4 of 2 GiB */
	RAW(&l4, "\x80\x02\x8b\x00\x00\x00\x80" "abc.");
	expect_pickle_error(&l4, "LONG4");
	free(s8.b);
	free(s4.b);
	free(l4.b);
}

/* _rebuild_tensor_v2 of a FloatStorage whose numel is given as LONG1 8-byte
 * value, with sizes/strides as raw pickle opcodes. */
static void pt_tensor_n(pb *p, uint64_t numel, const char *sizes, size_t sl,
                        const char *strides, size_t tl)
{
	RAW(p, "\x80\x02");
	glob(p, "torch._utils", "_rebuild_tensor_v2");
	RAW(p, "((");
	str(p, "storage");
	glob(p, "torch", "FloatStorage");
	str(p, "0");
	str(p, "cpu");
	op(p, 0x8a);
	op(p, 8);
	put(p, &numel, 8);
	RAW(p, "tQK\x00");
	put(p, sizes, sl);
	put(p, strides, tl);
	op(p, 0x89);
	glob(p, "collections", "OrderedDict");
	RAW(p, ")RtR.");
}
/* sizes/strides are string literals holding NULs */
#define pt_tensor(p, numel, sizes, strides) \
	pt_tensor_n(p, numel, sizes, sizeof(sizes) - 1, strides, sizeof(strides) - 1)

static void test_counts_vs_bytes_pt(void **state)
{
	(void)state;
	uint8_t rec[12] = {0};
	db_file *f;
	db_err err;
	uint8_t *keep;
	/* a storage of 2^40 floats backed by 12 bytes */
	pb a = {0};
	pt_tensor(&a, 1ull << 40, "K\x04\x85", "K\x01\x85");
	assert_int_equal(open_pt(&a, rec, sizeof rec, &f, &err, &keep), -1);
	assert_has(err.msg, "caps.pt");
	assert_has(err.msg, "byte ");
	free(keep);
	free(a.b);
	/* a 2^31 x 2^31 view with strides 0 of a 3-float storage: in bounds,
	 * but 2^62 logical elements; walking them would never finish, so it
	 * must be refused (a cap on the element count of a view). */
	pb b = {0};
	pt_tensor(&b, 3, "\x8a\x05\x00\x00\x00\x80\x00" "\x8a\x05\x00\x00\x00\x80\x00" "\x86",
	          "K\x00K\x00\x86");
	int rc = open_pt(&b, rec, sizeof rec, &f, &err, &keep);
	bool accepted = false;
	if (rc == 0) {
		accepted = f->n_entries && !f->entries[0].err;
		db_file_close(f);
	} else {
		assert_has(err.msg, "byte ");
	}
	free(keep);
	free(b.b);
	if (accepted)
		fail_msg("a stride-0 view of 2^62 elements over 3 floats was accepted "
		         "(ls --stats / compare would walk it forever): src/read/pt.c needs a "
		         "cap on a view's element count");
	/* the same from real torch: torch.zeros(1).expand(2**31, 2**31) */
	if (db_file_open(HOSTILE "/expand_huge.pt", &f, &err) == 0) {
		accepted = f->n_entries && !f->entries[0].err;
		db_file_close(f);
		if (accepted)
			fail_msg("hostile/expand_huge.pt (a 2^62-element expand) was accepted");
	}
}

static uint8_t *st_file(const char *json, size_t data, size_t *n)
{
	size_t hl = strlen(json);
	*n = 8 + hl + data;
	uint8_t *b = calloc(1, *n);
	assert_non_null(b);
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)((uint64_t)hl >> (8 * i));
	memcpy(b + 8, json, hl);
	return b;
}

static void expect_open_error(const char *name, const uint8_t *b, size_t n, const char *want)
{
	db_file *f = NULL;
	db_err err = {""};
	int rc = db_file_open_mem(name, b, n, &f, &err);
	if (rc == 0) {
		const char *msg = NULL;
		for (size_t i = 0; i < f->n_entries && !msg; i++)
			msg = f->entries[i].err;
		assert_has(msg, want);
		assert_has(msg, name);
		assert_has(msg, "byte ");
		db_file_close(f);
	} else {
		assert_has(err.msg, want);
		assert_has(err.msg, name);
	}
}

static void test_counts_vs_bytes_st_npy_zip(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = st_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
	                     "\"data_offsets\":[0,16]}}", 16, &n);
	expect_open_error("caps.safetensors", b, n, "w");
	free(b);
	/* npy: 2^40 float32 elements, 16 bytes present */
	const char *h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }";
	size_t hl = 118;
	n = 10 + hl + 16;
	b = calloc(1, n);
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	b[8] = (uint8_t)hl;
	memset(b + 10, ' ', hl);
	memcpy(b + 10, h, strlen(h));
	b[10 + hl - 1] = '\n';
	expect_open_error("caps.npy", b, n, "truncated");
	free(b);
	/* zip: an end record claiming 65534 entries in a 46-byte directory */
	zm_member m[] = {{"a.npy", "x", 1, false}};
	uint8_t *z = zm_build_ex(m, 1, false, 65534, &n);
	expect_open_error("caps.npz", z, n, "cannot fit");
	free(z);
}

static void test_header_caps(void **state)
{
	(void)state;
	/* safetensors header length just over 100 MB, in a 16-byte file */
	uint8_t st[16] = {0};
	uint64_t hl = 100000001;
	for (int i = 0; i < 8; i++)
		st[i] = (uint8_t)(hl >> (8 * i));
	st[8] = '{';
	expect_open_error("caps.safetensors", st, sizeof st, "too large");
	/* npy 2.0 header length 1 MiB + 1 */
	uint8_t np[64] = "\x93NUMPY\x02\x00";
	uint32_t nl = (1u << 20) + 1;
	memcpy(np + 8, &nl, 4);
	expect_open_error("caps.npy", np, sizeof np, "cap");
}

/* ---- npz inflate ---- */

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	long sz = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	uint8_t *b = malloc((size_t)sz);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)sz, fp), (size_t)sz);
	fclose(fp);
	*n = (size_t)sz;
	return b;
}

static void test_npz_bomb_fixture(void **state)
{
	(void)state;
	/* 335 bytes whose ZIP64 directory declares a 2 GiB member */
	db_file *f;
	db_err err;
	assert_int_equal(db_file_open(HOSTILE "/bomb_1g.npz", &f, &err), 0);
	assert_int_equal(f->n_entries, 1);
	assert_has(f->entries[0].err, "inflate cap exceeded");
	assert_has(f->entries[0].err, "bomb_1g.npz");
	assert_has(f->entries[0].err, "byte ");
	db_file_close(f);
}

static void test_npz_honest_zeros_load(void **state)
{
	(void)state;
	/* np.savez_compressed of 64 MiB of zeros: ~1030:1, must load */
	db_file *f;
	db_err err;
	if (db_file_open(HOSTILE "/zeros_64m.npz", &f, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(f->n_entries, 1);
	const db_entry *e = db_file_find(f, "mask");
	assert_non_null(e);
	if (e->err)
		fail_msg("%s", e->err);
	assert_int_equal(e->t.ndim, 1);
	assert_int_equal(e->t.shape[0], 64 << 20);
	db_stats s;
	assert_int_equal(db_stats_compute(&e->t, &s, &err), 0);
	assert_true(s.n == (uint64_t)64 << 20 && s.sum == 0 && s.max == 0);
	db_file_close(f);
}

/* npz with two deflated members: "a" = the zeros_64m member (honest), then
 * "b" = the same stream declaring `b_usize` bytes (via ZIP64 extras). */
static uint8_t *npz_two(const uint8_t *comp, size_t clen, uint64_t a_usize, uint32_t a_crc,
                        uint64_t b_usize, size_t *n)
{
	zm_buf b = {0}, cd = {0};
	const char *names[2] = {"a.npy", "b.npy"};
	uint64_t us[2] = {a_usize, b_usize};
	for (int i = 0; i < 2; i++) {
		uint32_t lho = (uint32_t)b.n;
		zm_u32(&b, 0x04034b50); zm_u16(&b, 45); zm_u16(&b, 0); zm_u16(&b, 8);
		zm_u32(&b, 0); zm_u32(&b, a_crc); zm_u32(&b, 0xFFFFFFFF); zm_u32(&b, 0xFFFFFFFF);
		zm_u16(&b, 5); zm_u16(&b, 20);
		zm_put(&b, names[i], 5);
		zm_u16(&b, 1); zm_u16(&b, 16); zm_u64(&b, us[i]); zm_u64(&b, clen);
		zm_put(&b, comp, clen);
		zm_u32(&cd, 0x02014b50); zm_u16(&cd, 45); zm_u16(&cd, 45); zm_u16(&cd, 0);
		zm_u16(&cd, 8); zm_u32(&cd, 0); zm_u32(&cd, a_crc);
		zm_u32(&cd, 0xFFFFFFFF); zm_u32(&cd, 0xFFFFFFFF);
		zm_u16(&cd, 5); zm_u16(&cd, 20); zm_u16(&cd, 0); zm_u16(&cd, 0); zm_u16(&cd, 0);
		zm_u32(&cd, 0); zm_u32(&cd, lho);
		zm_put(&cd, names[i], 5);
		zm_u16(&cd, 1); zm_u16(&cd, 16); zm_u64(&cd, us[i]); zm_u64(&cd, clen);
	}
	uint64_t cd_off = b.n;
	zm_put(&b, cd.p, cd.n);
	zm_u32(&b, 0x06054b50); zm_u16(&b, 0); zm_u16(&b, 0); zm_u16(&b, 2); zm_u16(&b, 2);
	zm_u32(&b, (uint32_t)cd.n); zm_u32(&b, (uint32_t)cd_off); zm_u16(&b, 0);
	free(cd.p);
	*n = b.n;
	return b.p;
}

static void test_npz_budget_and_lies(void **state)
{
	(void)state;
	/* take the deflated member out of the honest fixture */
	size_t fn;
	uint8_t *fx = slurp(HOSTILE "/zeros_64m.npz", &fn);
	db_zip z;
	db_err err;
	assert_int_equal(db_zip_open(fx, fn, "zeros_64m.npz", &z, &err), 0);
	const db_zip_entry *e = db_zip_find(&z, "mask.npy");
	assert_non_null(e);
	assert_int_equal(e->method, 8);
	uint64_t off;
	assert_int_equal(db_zip_payload_offset(&z, e, &off, &err), 0);
	const uint8_t *comp = fx + off;
	size_t clen = (size_t)e->csize;
	uint64_t usize = e->usize;
	uint32_t crc = e->crc;
	db_zip_close(&z);

	/* b declares what is left of the 1 GiB budget after a, plus one byte:
	 * refused before allocating; a still loads */
	size_t n;
	uint8_t *npz = npz_two(comp, clen, usize, crc, (1ull << 30) - usize + 1, &n);
	db_file *f;
	if (db_file_open_mem("two.npz", npz, n, &f, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(f->n_entries, 2);
	assert_null(f->entries[0].err);
	assert_has(f->entries[1].err, "inflate cap exceeded");
	assert_has(f->entries[1].err, "two.npz");
	assert_has(f->entries[1].err, "byte ");
	db_file_close(f);
	free(npz);

	/* b declares less than it inflates to: inflation stops at declared + 1 */
	npz = npz_two(comp, clen, usize, crc, usize / 2, &n);
	assert_int_equal(db_file_open_mem("lie.npz", npz, n, &f, &err), 0);
	assert_null(f->entries[0].err);
	assert_has(f->entries[1].err, "inflate");
	assert_has(f->entries[1].err, "byte ");
	db_file_close(f);
	free(npz);

	/* b declares more than deflate can produce from its bytes (> 1032:1) */
	npz = npz_two(comp, clen, usize, crc, (uint64_t)clen * 1100, &n);
	assert_int_equal(db_file_open_mem("ratio.npz", npz, n, &f, &err), 0);
	assert_null(f->entries[0].err);
	assert_has(f->entries[1].err, "inflate ratio too large");
	db_file_close(f);
	free(npz);
	free(fx);
}

/* db_file_open on a FIFO with no writer returns at once (O_NONBLOCK, then
 * "not a regular file") instead of blocking in open(2); so does a device. */
static void test_special_files_do_not_block(void **state)
{
	(void)state;
	char dir[] = "/tmp/db_test_caps_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char fifo[64];
	snprintf(fifo, sizeof fifo, "%s/pipe.pt", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	db_file *f = NULL;
	db_err err;
	alarm(20); /* a regression would block forever: fail loudly instead */
	assert_int_equal(db_file_open(fifo, &f, &err), -1);
	assert_has(err.msg, "pipe.pt");
	assert_has(err.msg, "not a regular file");
	assert_int_equal(db_file_open("/dev/zero", &f, &err), -1);
	assert_has(err.msg, "not a regular file");
	alarm(0);
	unlink(fifo);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pickle_depth),
		cmocka_unit_test(test_pickle_self_reference),
		cmocka_unit_test(test_pickle_memo),
		cmocka_unit_test(test_pickle_stack_and_marks),
		cmocka_unit_test(test_pickle_lengths),
		cmocka_unit_test(test_counts_vs_bytes_pt),
		cmocka_unit_test(test_counts_vs_bytes_st_npy_zip),
		cmocka_unit_test(test_header_caps),
		cmocka_unit_test(test_npz_bomb_fixture),
		cmocka_unit_test(test_npz_honest_zeros_load),
		cmocka_unit_test(test_npz_budget_and_lies),
		cmocka_unit_test(test_special_files_do_not_block),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
