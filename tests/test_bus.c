/* Files that shrink under their mapping (issue 26 item 1, db_bus.h): a read
 * of a dump mapping whose pages are gone, inside a guard, comes back as an
 * error with the address, in this thread, again and again; the file is
 * truncated by the test itself after the mapping is made, so no timing is
 * involved. What must still kill: a SIGBUS sent (raise), one outside any
 * guard, one on a mapping that is not a dump file's (each in a child). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db_bus.h"
#include "db_reader.h"

#define NF (1 << 18)    /* floats: 1 MiB of data, so the file is mapped */

static char path[64];

/* a safetensors file with one float32 tensor "w" of NF elements */
static void write_file(void)
{
	char hdr[128];
	int hl = snprintf(hdr, sizeof hdr,
	                  "{\"w\":{\"dtype\":\"F32\",\"shape\":[%d],\"data_offsets\":[0,%d]}}  ", NF,
	                  4 * NF);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	uint64_t n = (uint64_t)hl;
	assert_int_equal(fwrite(&n, 8, 1, fp), 1);
	assert_int_equal(fwrite(hdr, 1, (size_t)hl, fp), (size_t)hl);
	float one = 1.0f;
	for (int i = 0; i < NF; i++)
		fwrite(&one, 4, 1, fp);
	fclose(fp);
}

static void test_guarded_read(void **state)
{
	(void)state;
	db_bus_reinstall();     /* over cmocka's handler for this test */
	write_file();
	db_file *f;
	db_err err;
	if (db_file_open(path, &f, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(f->map_is_mmap, DB_MAP_MMAP);
	const db_tensor *t = &f->entries[0].t;
	double *v = malloc(NF * sizeof *v);
	assert_non_null(v);
	assert_int_equal(db_tensor_to_f64(t, v, NF, NULL), 0);
	assert_true(v[NF - 1] == 1.0);
	/* the dumper truncates before it writes */
	assert_int_equal(truncate(path, 4096), 0);
	for (int k = 0; k < 3; k++) {           /* and again: SIGBUS stays open */
		const void *at = NULL;
		assert_int_equal(db_tensor_to_f64(t, v, NF, &at), -1);
		assert_true((const uint8_t *)at >= f->map + 4096);
		assert_true((const uint8_t *)at < f->map + f->map_size);
	}
	/* nested guards: the inner one catches, the outer goes on */
	db_bus_guard g;
	volatile int caught = 0;
	if (sigsetjmp(g.jb, 0) == 0) {
		db_bus_enter(&g);
		const void *at = NULL;
		caught = db_tensor_to_f64(t, v, NF, &at) == -1;
		db_bus_leave(&g);
	} else {
		fail_msg("the outer guard took the inner one's fault");
	}
	assert_true(caught);
	db_file_close(f);
	free(v);
}

/* A second thread truncates the file while this one reads it. */
static void *truncator(void *arg)
{
	(void)arg;
	usleep(1000);
	if (truncate(path, 0) != 0)
		perror("truncate");
	return NULL;
}

static void test_other_thread(void **state)
{
	(void)state;
	db_bus_reinstall();
	write_file();
	db_file *f;
	db_err err;
	if (db_file_open(path, &f, &err))
		fail_msg("%s", err.msg);
	double *v = malloc(NF * sizeof *v);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, truncator, NULL), 0);
	pthread_join(th, NULL);         /* joined first: no luck involved */
	assert_int_equal(db_tensor_to_f64(&f->entries[0].t, v, NF, NULL), -1);
	db_file_close(f);
	free(v);
}

/* In a child: what(); the child's end (a signal number, or 0 for exit 0). */
static int in_child(void (*what)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGBUS, SIG_DFL);        /* not cmocka's: die as a program would */
		db_bus_reinstall();
		what();
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st) ? -1 : 0;
}

static void raise_in_guard(void)
{
	db_bus_guard g;
	if (sigsetjmp(g.jb, 0) == 0) {
		db_bus_enter(&g);
		raise(SIGBUS);
		db_bus_leave(&g);
	}
	_exit(3);       /* reached only if the guard swallowed it */
}

static void fault_unguarded(void)
{
	write_file();
	db_file *f;
	db_err err;
	if (db_file_open(path, &f, &err) || truncate(path, 0))
		_exit(4);
	volatile float x = *(const float *)(f->map + 8192);  /* no guard */
	(void)x;
	_exit(3);
}

static void fault_foreign_mapping(void)
{
	write_file();
	db_bus_install();
	int fd = open(path, O_RDONLY);
	const uint8_t *m = mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED || truncate(path, 0))
		_exit(4);
	db_bus_guard g;
	if (sigsetjmp(g.jb, 0) == 0) {
		db_bus_enter(&g);
		volatile uint8_t x = m[8192];   /* not a registered dump mapping */
		(void)x;
		db_bus_leave(&g);
	}
	_exit(3);
}

static void test_real_bugs_stay_loud(void **state)
{
	(void)state;
	assert_int_equal(in_child(raise_in_guard), SIGBUS);
	assert_int_equal(in_child(fault_unguarded), SIGBUS);
	assert_int_equal(in_child(fault_foreign_mapping), SIGBUS);
}

int main(void)
{
	snprintf(path, sizeof path, "/tmp/db_bus_%d.safetensors", (int)getpid());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guarded_read),
		cmocka_unit_test(test_other_thread),
		cmocka_unit_test(test_real_bugs_stay_loud),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	return rc;
}
