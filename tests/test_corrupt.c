/* Corrupt corpus: every committed fixture under tests/fixtures/{pt,st,np}
 * truncated at many offsets and bit-flipped. Each damaged copy (in a buffer
 * of exactly its size, so ASan sees any read past the end) must either be
 * refused with a message naming the file and a byte offset, or load; then
 * each entry is either an error naming file and offset or a tensor that can
 * be walked end to end (db_stats_compute). Never a crash or a hang.
 *
 * Offsets: every byte for files under 4 KiB; else ~200 spread offsets plus
 * every ZIP record boundary (and one byte either side). Flips: 40 seeded
 * single-bit flips per file, 6 for files over 16 KiB (a few thousand in
 * all). Under ASan the whole run takes about 5 s of CPU. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <cmocka.h>

#include "db_metrics.h"
#include "db_reader.h"

#define SMALL 4096
#define SPREAD 200
#define FLIPS 40
#define FLIPS_BIG 6     /* files over 16 KiB */

typedef struct corpus {
	char **paths;       /* relative to FIXTURES, e.g. "np/c8.npy" */
	size_t n, cap;
} corpus;

typedef struct tally {
	size_t runs, refused, loaded, entry_errs, walked, bad;
} tally;

static void add_tree(corpus *c, const char *rel)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/%s", FIXTURES, rel);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char sub[1024], full[2048];
		snprintf(sub, sizeof sub, "%s/%s", rel, de->d_name);
		snprintf(full, sizeof full, "%s/%s", FIXTURES, sub);
		struct stat st;
		if (lstat(full, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			add_tree(c, sub);
		} else if (S_ISREG(st.st_mode)) {
			if (c->n == c->cap) {
				c->cap = c->cap ? c->cap * 2 : 64;
				c->paths = realloc(c->paths, c->cap * sizeof *c->paths);
				assert_non_null(c->paths);
			}
			c->paths[c->n++] = strdup(sub);
		}
	}
	closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint8_t *slurp(const char *rel, size_t *n)
{
	char full[2048];
	snprintf(full, sizeof full, "%s/%s", FIXTURES, rel);
	FILE *f = fopen(full, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(sz > 0 ? (size_t)sz : 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*n = (size_t)sz;
	return b;
}

/* Report one violation (at most a few per file, to keep the log readable). */
static void bad(tally *t, const char *rel, const char *what, size_t at, const char *msg)
{
	if (t->bad++ < 25 || getenv("DB_CORRUPT_ALL"))
		print_message("CORRUPT %s %s %zu: %s\n", rel, what, at, msg ? msg : "(no message)");
}

static bool names_file_and_offset(const char *msg, const char *rel)
{
	return msg && strstr(msg, rel) && strstr(msg, "byte ");
}

/* Open the damaged copy b[0..n) and check the outcome. */
static void check_one(tally *t, const char *rel, const uint8_t *b, size_t n,
                      const char *what, size_t at)
{
	db_file *f = NULL;
	db_err err = {""};
	t->runs++;
	if (db_file_open_mem(rel, b, n, &f, &err)) {
		t->refused++;
		/* an empty file has no offset to name */
		if (n == 0 ? !strstr(err.msg, rel) : !names_file_and_offset(err.msg, rel))
			bad(t, rel, what, at, err.msg);
		return;
	}
	t->loaded++;
	for (size_t i = 0; i < f->n_entries; i++) {
		const db_entry *e = &f->entries[i];
		if (e->err) {
			t->entry_errs++;
			if (!names_file_and_offset(e->err, rel))
				bad(t, rel, what, at, e->err);
			continue;
		}
		if (!db_dtype_comparable(e->t.dtype))
			continue;
		/* Known bug pinned by test_caps.c: a stride-0 view of any element
		 * count is accepted (walking 2^62 elements is a hang). */
		if (db_tensor_numel(&e->t) > (1 << 26)) {
			bad(t, rel, what, at, "accepted a view of more than 2^26 elements");
			continue;
		}
		db_stats s;
		db_err serr;
		db_stats_compute(&e->t, &s, &serr);
		t->walked++;
	}
	db_file_close(f);
}

/* Truncate to len: the bytes go at the end of end_buf (n bytes, malloc'd),
 * so reading past len runs off the allocation and ASan sees it, without a
 * malloc per copy. */
static void truncated(tally *t, const char *rel, const uint8_t *b, uint8_t *end_buf, size_t n,
                      size_t len)
{
	uint8_t *c = end_buf + (n - len);
	memcpy(c, b, len);
	check_one(t, rel, c, len, "truncated at", len);
}

static bool is_zip_sig(const uint8_t *p)
{
	if (p[0] != 'P' || p[1] != 'K')
		return false;
	return (p[2] == 1 && p[3] == 2) || (p[2] == 3 && p[3] == 4) || (p[2] == 5 && p[3] == 6) ||
	       (p[2] == 6 && p[3] == 6) || (p[2] == 6 && p[3] == 7) || (p[2] == 7 && p[3] == 8);
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void damage_file(tally *t, const char *rel, uint64_t *rng)
{
	size_t n;
	uint8_t *b = slurp(rel, &n);
	uint8_t *c = malloc(n ? n : 1);
	assert_non_null(c);
	if (n < SMALL) {
		for (size_t len = 0; len < n; len++)
			truncated(t, rel, b, c, n, len);
	} else {
		for (size_t k = 0; k < SPREAD; k++)
			truncated(t, rel, b, c, n, n * k / SPREAD);
		for (size_t i = 0; i + 4 <= n; i++)
			if (is_zip_sig(b + i))
				for (size_t len = i ? i - 1 : 0; len <= i + 1; len++)
					truncated(t, rel, b, c, n, len);
		/* the last 64 bytes hold the end records */
		for (size_t len = n - 64; len < n; len++)
			truncated(t, rel, b, c, n, len);
	}
	int flips = n > (16u << 10) ? FLIPS_BIG : FLIPS;
	for (int k = 0; k < flips && n; k++) {
		memcpy(c, b, n);
		size_t at = (size_t)(rng_next(rng) % n);
		c[at] ^= (uint8_t)(1u << (rng_next(rng) % 8));
		check_one(t, rel, c, n, "bit flip at", at);
	}
	free(c);
	free(b);
}

static void test_corrupt_corpus(void **state)
{
	(void)state;
	corpus c = {0};
	add_tree(&c, "pt");
	add_tree(&c, "st");
	add_tree(&c, "np");
	assert_true(c.n >= 60);
	qsort(c.paths, c.n, sizeof *c.paths, cmp_str);
	tally t = {0};
	uint64_t rng = 0x9E3779B97F4A7C15ull;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < c.n; i++) {
		struct timespec a, z;
		clock_gettime(CLOCK_MONOTONIC, &a);
		damage_file(&t, c.paths[i], &rng);
		clock_gettime(CLOCK_MONOTONIC, &z);
		if (getenv("DB_CORRUPT_TIMES"))
			print_message("%6.3f s  %s\n", (double)(z.tv_sec - a.tv_sec) +
			              (double)(z.tv_nsec - a.tv_nsec) / 1e9, c.paths[i]);
		free(c.paths[i]);
	}
	free(c.paths);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("%zu files, %zu damaged copies: %zu refused, %zu loaded (%zu entry errors, "
	              "%zu tensors walked), %zu violations, %.1f s\n", c.n, t.runs, t.refused,
	              t.loaded, t.entry_errs, t.walked, t.bad, secs);
	assert_true(t.runs > 50000);
	assert_true(t.refused > 0 && t.walked > 0);
	assert_int_equal(t.bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corrupt_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
