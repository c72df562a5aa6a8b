/* Pickle bombs (issue 26 item 5): containers a pickle shares are walked
 * once (40 DUP + TUPLE2 made 2^40 paths: `ls` never ended; with a tensor
 * leaf, 3.4 GB), tied tensors keep one entry per key, a file names at most
 * 2^20 tensors, and a data.pkl is capped by the process's pickle budget
 * before anything is inflated (2 MB deflating to 2 GiB cost 2.1 GB and
 * 9.4 s per file). The budget itself: take, give, wait, refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "db_reader.h"
#include "pickle_mini.h"
#include "util/budget.h"
#include "zip_mini.h"

static void assert_has(const char *msg, const char *want)
{
	if (!msg || !strstr(msg, want))
		fail_msg("message '%s' lacks '%s'", msg ? msg : "(none)", want);
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* A torch zip holding data.pkl = p (deflated or not) and a 4-byte storage
 * record "0". */
static int open_pt(const pb *p, bool deflate, db_file **f, db_err *err, uint8_t **keep)
{
	static const uint8_t rec[4] = {0, 0, 0x80, 0x3f};
	zm_member m[] = {{"a/data.pkl", p->b, p->n, deflate}, {"a/data/0", rec, 4, false}};
	size_t len;
	*keep = zm_build(m, 2, &len);
	err->msg[0] = 0;
	return db_file_open_mem("bomb.pt", *keep, len, f, err);
}

/* A one-element float tensor (storage "0"), left on the stack. */
static void tensor(pb *p)
{
	glob(p, "torch._utils", "_rebuild_tensor_v2");
	tensor_args_open(p, "FloatStorage", 1, "K\x01\x85", "K\x01\x85");
	RAW(p, "tR");
}

static void test_shared_containers(void **state)
{
	(void)state;
	pb p = {0};
	RAW(&p, "\x80\x02]");
	for (int i = 0; i < 40; i++)
		RAW(&p, "2\x86");       /* DUP, TUPLE2: (x, x) */
	op(&p, '.');
	db_file *f;
	db_err err;
	uint8_t *keep;
	double t0 = cpu_s();
	assert_int_equal(open_pt(&p, false, &f, &err, &keep), 0);
	assert_true(cpu_s() - t0 < 5.0);
	assert_int_equal(f->n_entries, 0);
	db_file_close(f);
	free(keep);
	free(p.b);

	/* a tensor at the bottom: the innermost (t, t) names it twice */
	pb q = {0};
	RAW(&q, "\x80\x02");
	tensor(&q);
	for (int i = 0; i < 40; i++)
		RAW(&q, "2\x86");
	op(&q, '.');
	assert_int_equal(open_pt(&q, false, &f, &err, &keep), 0);
	assert_int_equal(f->n_entries, 2);
	char want[128] = "";
	for (int i = 0; i < 39; i++)
		strcat(want, "0.");
	assert_string_equal(f->entries[0].key, strcat(want, "0"));
	want[strlen(want) - 1] = '1';
	assert_string_equal(f->entries[1].key, want);
	assert_null(f->entries[0].err);
	db_file_close(f);
	free(keep);
	free(q.b);
}

static void test_tied_and_shared(void **state)
{
	(void)state;
	/* {'a': t, 'b': t}: tied weights, one entry per key */
	pb p = {0};
	RAW(&p, "\x80\x02}(");
	str(&p, "a");
	tensor(&p);
	RAW(&p, "q\x01");       /* BINPUT 1 */
	str(&p, "b");
	RAW(&p, "h\x01u.");     /* BINGET 1, SETITEMS */
	db_file *f;
	db_err err;
	uint8_t *keep;
	if (open_pt(&p, false, &f, &err, &keep))
		fail_msg("%s", err.msg);
	assert_int_equal(f->n_entries, 2);
	assert_string_equal(f->entries[0].key, "a");
	assert_string_equal(f->entries[1].key, "b");
	db_file_close(f);
	free(keep);
	free(p.b);
	/* {'x': L, 'y': L} with L = [t]: the list is walked once, as x */
	pb q = {0};
	RAW(&q, "\x80\x02}(");
	str(&q, "x");
	RAW(&q, "]");
	tensor(&q);
	RAW(&q, "aq\x01");      /* APPEND, BINPUT 1 */
	str(&q, "y");
	RAW(&q, "h\x01u.");
	if (open_pt(&q, false, &f, &err, &keep))
		fail_msg("%s", err.msg);
	assert_int_equal(f->n_entries, 1);
	assert_string_equal(f->entries[0].key, "x.0");
	db_file_close(f);
	free(keep);
	free(q.b);
}

/* 2^20 + 1 references to one tensor in a list: over the entry cap. */
static void test_entry_cap(void **state)
{
	(void)state;
	pb p = {0};
	RAW(&p, "\x80\x02]");
	tensor(&p);
	RAW(&p, "q\x01");               /* the tensor at memo 1 */
	op(&p, '0');                    /* POP it */
	size_t n = ((size_t)1 << 20) + 1;
	for (size_t done = 0; done < n;) {
		op(&p, '(');
		for (size_t k = 0; k < 100000 && done < n; k++, done++)
			RAW(&p, "h\x01");
		op(&p, 'e');            /* APPENDS */
	}
	op(&p, '.');
	db_file *f;
	db_err err;
	uint8_t *keep;
	assert_int_equal(open_pt(&p, true, &f, &err, &keep), -1);
	assert_has(err.msg, "more than 1048576 tensors in one file");
	assert_has(err.msg, "bomb.pt");
	assert_has(err.msg, "byte ");
	free(keep);
	free(p.b);
}

/* main() set DUMPBISECT_PICKLE_MAX=3M: a 4 MiB data.pkl (deflated to a
 * few KB) is refused before it is inflated; a 2.9 MiB one is run. */
static void test_pickle_cap(void **state)
{
	(void)state;
	assert_int_equal(db_budget_limit(&db_pickle_budget), 3 << 20);
	pb p = {0};
	RAW(&p, "\x80\x02");
	for (size_t i = 0; i < ((size_t)4 << 20); i++)
		op(&p, 'N');
	db_file *f;
	db_err err;
	uint8_t *keep;
	assert_int_equal(open_pt(&p, true, &f, &err, &keep), -1);
	assert_has(err.msg, "bomb.pt: entry 'a/data.pkl': byte ");
	assert_has(err.msg, "pickle of 4 MiB exceeds the 3 MiB cap on pickles");
	assert_has(err.msg, "DUMPBISECT_PICKLE_MAX");
	free(keep);
	p.n = (size_t)2900 << 10;
	op(&p, '.');
	assert_int_equal(open_pt(&p, true, &f, &err, &keep), -1);
	assert_has(err.msg, "stack deeper than");     /* it ran */
	free(keep);
	free(p.b);
	assert_int_equal(db_pickle_budget.used, 0);  /* every take given back */
}

static void *take_wait(void *arg)
{
	db_budget *b = arg;
	assert_int_equal(db_budget_take(b, 600, true), 0);    /* waits for the give */
	db_budget_give(b, 600);
	return NULL;
}

static void test_budget(void **state)
{
	(void)state;
	db_budget b = DB_BUDGET_INIT("DUMPBISECT_TEST_BUDGET_UNSET", 1000);
	assert_int_equal(db_budget_limit(&b), 1000);
	assert_int_equal(db_budget_take(&b, 1001, true), -1);  /* never fits */
	assert_int_equal(db_budget_take(&b, 500, false), 0);
	assert_int_equal(db_budget_take(&b, 600, false), -2);  /* busy */
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, take_wait, &b), 0);
	usleep(20000);
	assert_int_equal(b.used, 500);          /* still waiting */
	db_budget_give(&b, 500);
	pthread_join(th, NULL);
	assert_int_equal(b.used, 0);
	assert_int_equal(db_budget_take(&b, 1000, false), 0);
	db_budget_give(&b, 1000);
}

int main(void)
{
	setenv("DUMPBISECT_PICKLE_MAX", "3M", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_containers),
		cmocka_unit_test(test_tied_and_shared),
		cmocka_unit_test(test_entry_cap),
		cmocka_unit_test(test_pickle_cap),
		cmocka_unit_test(test_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
