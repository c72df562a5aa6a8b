/* The process's inflate budget (issue 26 item 6) at the reader: a file
 * takes what its deflated members declare, all at once, and gives it back
 * when closed; an open that may not wait fails with -2 and says what it
 * needed; one that may wait does, until another file is closed; budget
 * taken beforehand (prepaid) is drawn first. DUMPBISECT_INFLATE_MAX=1M. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_reader.h"
#include "util/budget.h"
#include "zip_mini.h"

#define MEMBER (600u << 10)

static char dir[64];

/* path of an .npz holding one deflated float32 member of MEMBER bytes */
static void write_npz(const char *name, char *path, size_t len)
{
	static uint8_t npy[MEMBER];
	char h[100];
	snprintf(h, sizeof h, "{'descr': '<f4', 'fortran_order': False, 'shape': (%u,), }",
	         (MEMBER - 128) / 4);
	size_t hl = 118;        /* 10 + 118 = 128 bytes before the data */
	memset(npy, 0, sizeof npy);
	memcpy(npy, "\x93NUMPY\x01\x00", 8);
	npy[8] = (uint8_t)hl;
	memset(npy + 10, ' ', hl);
	memcpy(npy + 10, h, strlen(h));
	npy[10 + hl - 1] = '\n';
	zm_member m[] = {{"w.npy", npy, MEMBER, true}};
	size_t n;
	uint8_t *z = zm_build(m, 1, &n);
	snprintf(path, len, "%s/%s", dir, name);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(z, 1, n, fp), n);
	fclose(fp);
	free(z);
}

static char pa[128], pb[128];

static void *open_waiting(void *arg)
{
	db_file **out = arg;
	db_err err;
	assert_int_equal(db_file_open(pb, out, &err), 0);      /* waits for a */
	return NULL;
}

static void test_budget(void **state)
{
	(void)state;
	assert_int_equal(db_budget_limit(&db_inflate_budget), 1 << 20);
	db_file *a, *b;
	db_err err;
	assert_int_equal(db_file_open(pa, &a, &err), 0);
	assert_null(a->entries[0].err);
	assert_int_equal(a->inflate_held, MEMBER);
	assert_int_equal(db_inflate_budget.used, MEMBER);
	/* b does not fit beside a: without waiting, -2 and what it needs */
	db_open_opt o = {.nowait = true};
	assert_int_equal(db_file_open_opt(pb, NULL, &o, &b, &err), -2);
	assert_null(b);
	assert_int_equal(o.need, MEMBER);
	assert_non_null(strstr(err.msg, "waiting for inflate budget"));
	/* waiting: until a is closed */
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, open_waiting, &b), 0);
	usleep(50000);
	assert_int_equal(db_inflate_budget.used, MEMBER);     /* b still waits */
	db_file_close(a);
	pthread_join(th, NULL);
	assert_non_null(b);
	assert_null(b->entries[0].err);
	assert_int_equal(db_inflate_budget.used, MEMBER);
	/* prepaid: a's share taken beforehand, drawn first */
	uint64_t pre = MEMBER;
	assert_int_equal(db_budget_take(&db_inflate_budget, pre, false), -2);
	db_file_close(b);
	assert_int_equal(db_budget_take(&db_inflate_budget, pre, false), 0);
	db_open_opt q = {.nowait = true, .prepaid = &pre};
	assert_int_equal(db_file_open_opt(pa, NULL, &q, &a, &err), 0);
	assert_int_equal(pre, 0);
	assert_int_equal(db_inflate_budget.used, MEMBER);
	db_file_close(a);
	assert_int_equal(db_inflate_budget.used, 0);
}

int main(void)
{
	setenv("DUMPBISECT_INFLATE_MAX", "1M", 1);
	snprintf(dir, sizeof dir, "/tmp/db_inflate_XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	write_npz("a.npz", pa, sizeof pa);
	write_npz("b.npz", pb, sizeof pb);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(pa);
	unlink(pb);
	rmdir(dir);
	return rc;
}
