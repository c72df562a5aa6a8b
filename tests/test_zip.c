/* zip.c: end records (classic, ZIP64 record + locator, 0xFFFF counts),
 * lookup, payload offsets, CRC, deflate with size caps, and the ways a
 * truncated or lying central directory is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "lib/test_util.h"
#include "read/zip.h"
#include "zip_mini.h"

static const char hello[] = "hello, zip";
static const char big[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                          "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

static void assert_contains(const char *msg, const char *want)
{
	if (!strstr(msg, want))
		fail_msg("message '%s' lacks '%s'", msg, want);
}

static void check_basic(bool zip64)
{
	zm_member m[] = {{"arc/data.pkl", hello, sizeof hello - 1, false},
	                 {"arc/data/0", big, sizeof big - 1, true},
	                 {"arc/version", "3\n", 2, false}};
	size_t n;
	uint8_t *z = zm_build_ex(m, 3, zip64, -1, &n);
	db_zip zip;
	db_err err;
	if (db_zip_open(z, n, "t.zip", &zip, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(zip.n_entries, 3);
	assert_string_equal(zip.entries[0].name, "arc/data.pkl");
	assert_null(db_zip_find(&zip, "arc/data"));
	assert_null(db_zip_find(&zip, "data.pkl"));
	const db_zip_entry *e = db_zip_find(&zip, "arc/data.pkl");
	assert_ptr_equal(e, &zip.entries[0]);
	uint64_t off;
	assert_int_equal(db_zip_payload_offset(&zip, e, &off, &err), 0);
	assert_int_equal(off, 30 + strlen("arc/data.pkl"));
	const uint8_t *p;
	size_t len;
	void *owned = (void *)1;
	assert_int_equal(db_zip_data(&zip, e, &p, &len, &owned, SIZE_MAX, &err), 0);
	assert_null(owned);                       /* stored: zero-copy */
	assert_ptr_equal(p, z + off);
	assert_int_equal(len, sizeof hello - 1);
	assert_memory_equal(p, hello, len);
	e = db_zip_find(&zip, "arc/data/0");
	assert_int_equal(e->method, 8);
	assert_int_equal(db_zip_data(&zip, e, &p, &len, &owned, SIZE_MAX, &err), 0);
	assert_non_null(owned);
	assert_int_equal(len, sizeof big - 1);
	assert_memory_equal(p, big, len);
	free(owned);
	/* the size cap guards against zip bombs */
	assert_int_equal(db_zip_data(&zip, e, &p, &len, &owned, 100, &err), -1);
	assert_contains(err.msg, "t.zip: entry 'arc/data/0'");
	assert_contains(err.msg, "more than the 100 allowed");
	assert_null(owned);
	assert_int_equal(db_zip_verify_crc(&zip, db_zip_find(&zip, "arc/version"), &err), 0);
	db_zip_close(&zip);
	free(z);
}

static void test_classic_and_zip64_end(void **state)
{
	(void)state;
	check_basic(false);
	check_basic(true);
}

/* With 0xFFFF in the classic record only the ZIP64 record has the count. */
static void test_zip64_true_count(void **state)
{
	(void)state;
	zm_member m[] = {{"a/x", "1", 1, false}, {"a/y", "2", 1, false}};
	size_t n;
	uint8_t *z = zm_build_ex(m, 2, true, 0xFFFF, &n);
	db_zip zip;
	db_err err;
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), 0);
	assert_int_equal(zip.n_entries, 2);
	db_zip_close(&zip);
	free(z);
	/* the same without a locator: the classic record cannot be trusted */
	z = zm_build_ex(m, 2, false, 0xFFFF, &n);
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), -1);
	assert_contains(err.msg, "no ZIP64 locator");
	free(z);
}

static void test_zip64_locator_lies(void **state)
{
	(void)state;
	zm_member m[] = {{"a/x", "1", 1, false}};
	size_t n;
	uint8_t *z = zm_build(m, 1, &n);
	/* locator is 20 bytes before the 22-byte EOCD; its offset field at +8 */
	uint8_t *loc = z + n - 22 - 20;
	assert_int_equal(loc[0], 'P');
	loc[8] = 3;
	db_zip zip;
	db_err err;
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), -1);
	assert_contains(err.msg, "no ZIP64 end record");
	assert_contains(err.msg, "byte ");
	free(z);
}

static void test_truncated_central_directory(void **state)
{
	(void)state;
	zm_member m[] = {{"a/data.pkl", hello, sizeof hello - 1, false}, {"a/data/0", big, 10, false}};
	size_t n;
	uint8_t *z = zm_build_ex(m, 2, false, -1, &n);
	db_zip zip;
	db_err err;
	/* cut the file inside the central directory: no end record left */
	assert_int_equal(db_zip_open(z, n - 40, "t.zip", &zip, &err), -1);
	assert_contains(err.msg, "end-of-central-directory");
	/* claim one more entry than the directory holds */
	z[n - 22 + 8] = 3;
	z[n - 22 + 10] = 3;
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), -1);
	assert_contains(err.msg, "t.zip: byte ");
	z[n - 22 + 8] = 2;
	z[n - 22 + 10] = 2;
	/* central directory size pointing past its end record */
	z[n - 22 + 12] += 100;
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), -1);
	assert_contains(err.msg, "outside the file");
	z[n - 22 + 12] -= 100;
	/* a record's signature destroyed */
	uint32_t cd_off = (uint32_t)z[n - 6] | (uint32_t)z[n - 5] << 8;
	z[cd_off] = 'X';
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), -1);
	assert_contains(err.msg, "central directory truncated or corrupt");
	char want[32];
	snprintf(want, sizeof want, "byte %u:", cd_off);
	assert_contains(err.msg, want);
	z[cd_off] = 'P';
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), 0);
	db_zip_close(&zip);
	free(z);
}

static void test_member_past_end_and_bad_local(void **state)
{
	(void)state;
	zm_member m[] = {{"a/x", big, sizeof big - 1, false}};
	size_t n;
	uint8_t *z = zm_build(m, 1, &n);
	db_zip zip;
	db_err err;
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), 0);
	/* inflate the declared size beyond the file */
	zip.entries[0].csize = zip.entries[0].usize = n;
	const uint8_t *p;
	size_t len;
	void *owned;
	assert_int_equal(db_zip_data(&zip, &zip.entries[0], &p, &len, &owned, SIZE_MAX, &err), -1);
	assert_contains(err.msg, "runs past the end");
	zip.entries[0].csize = zip.entries[0].usize = sizeof big - 1;
	z[0] = 'Q'; /* local header signature */
	assert_int_equal(db_zip_data(&zip, &zip.entries[0], &p, &len, &owned, SIZE_MAX, &err), -1);
	assert_contains(err.msg, "no local header signature");
	assert_contains(err.msg, "entry 'a/x': byte 0:");
	z[0] = 'P';
	db_zip_close(&zip);
	free(z);
}

static void test_crc_and_corrupt_deflate(void **state)
{
	(void)state;
	zm_member m[] = {{"a/s", hello, sizeof hello - 1, false}, {"a/d", big, sizeof big - 1, true}};
	size_t n;
	uint8_t *z = zm_build(m, 2, &n);
	db_zip zip;
	db_err err;
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), 0);
	uint64_t off;
	assert_int_equal(db_zip_payload_offset(&zip, &zip.entries[0], &off, &err), 0);
	z[off] ^= 1; /* flip a payload bit */
	const uint8_t *p;
	size_t len;
	void *owned;
	/* CRC is optional for stored members: off by default, on when asked */
	assert_int_equal(db_zip_data(&zip, &zip.entries[0], &p, &len, &owned, SIZE_MAX, &err), 0);
	assert_int_equal(db_zip_verify_crc(&zip, &zip.entries[0], &err), -1);
	assert_contains(err.msg, "CRC-32 mismatch");
	zip.check_crc = true;
	assert_int_equal(db_zip_data(&zip, &zip.entries[0], &p, &len, &owned, SIZE_MAX, &err), -1);
	zip.check_crc = false;
	/* deflated: always verified, and a broken stream is refused */
	assert_int_equal(db_zip_payload_offset(&zip, &zip.entries[1], &off, &err), 0);
	zip.entries[1].crc ^= 1;
	assert_int_equal(db_zip_data(&zip, &zip.entries[1], &p, &len, &owned, SIZE_MAX, &err), -1);
	assert_contains(err.msg, "CRC-32");
	zip.entries[1].crc ^= 1;
	zip.entries[1].usize += 1; /* directory lies about the length */
	assert_int_equal(db_zip_data(&zip, &zip.entries[1], &p, &len, &owned, SIZE_MAX, &err), -1);
	assert_contains(err.msg, "deflate stream");
	zip.entries[1].usize -= 2;
	assert_int_equal(db_zip_data(&zip, &zip.entries[1], &p, &len, &owned, SIZE_MAX, &err), -1);
	zip.entries[1].usize += 1;
	memset(z + off, 0xFF, 4);
	assert_int_equal(db_zip_data(&zip, &zip.entries[1], &p, &len, &owned, SIZE_MAX, &err), -1);
	assert_contains(err.msg, "entry 'a/d'");
	zip.entries[1].method = 12;
	assert_int_equal(db_zip_data(&zip, &zip.entries[1], &p, &len, &owned, SIZE_MAX, &err), -1);
	assert_contains(err.msg, "compression method 12");
	db_zip_close(&zip);
	free(z);
}

static void test_bad_names_refused(void **state)
{
	(void)state;
	zm_member m[] = {{"a/x", "1", 1, false}, {"a/x", "2", 1, false}};
	size_t n;
	uint8_t *z = zm_build(m, 2, &n);
	db_zip zip;
	db_err err;
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), -1);
	assert_contains(err.msg, "duplicate member name");
	free(z);
	zm_member c[] = {{"a/\x1b[2Jx", "1", 1, false}};
	z = zm_build(c, 1, &n);
	assert_int_equal(db_zip_open(z, n, "t.zip", &zip, &err), -1);
	assert_contains(err.msg, "control byte 0x1b");
	free(z);
	assert_int_equal(db_zip_open((const uint8_t *)"PK\x03\x04", 4, "t.zip", &zip, &err), -1);
	assert_int_equal(db_zip_open((const uint8_t *)"", 0, "t.zip", &zip, &err), -1);
}

/* A real torch file: the writer's ZIP64 records, FB padding, descriptors. */
static void test_real_torch_archive(void **state)
{
	(void)state;
	size_t n;
	uint8_t *d = (uint8_t *)tu_read(FIXTURES "/pt/many_300.pt", &n);
	assert_non_null(d);
	db_zip zip;
	db_err err;
	if (db_zip_open(d, n, "many_300.pt", &zip, &err))
		fail_msg("%s", err.msg);
	assert_true(zip.n_entries >= 302);
	assert_string_equal(zip.entries[0].name, "many_300/data.pkl");
	const db_zip_entry *e = db_zip_find(&zip, "many_300/data/299");
	assert_non_null(e);
	assert_int_equal(e->usize, 8);
	assert_int_equal(e->flags & 8, 8);
	uint64_t off;
	assert_int_equal(db_zip_payload_offset(&zip, e, &off, &err), 0);
	assert_int_equal(off % 64, 0);
	for (size_t i = 0; i < zip.n_entries; i++)
		assert_int_equal(db_zip_verify_crc(&zip, &zip.entries[i], &err), 0);
	db_zip_close(&zip);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classic_and_zip64_end),
		cmocka_unit_test(test_zip64_true_count),
		cmocka_unit_test(test_zip64_locator_lies),
		cmocka_unit_test(test_truncated_central_directory),
		cmocka_unit_test(test_member_past_end_and_bad_local),
		cmocka_unit_test(test_crc_and_corrupt_deflate),
		cmocka_unit_test(test_bad_names_refused),
		cmocka_unit_test(test_real_torch_archive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
