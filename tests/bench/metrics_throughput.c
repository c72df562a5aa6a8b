/* Throughput of the metrics engine alone, without the readers/pairing of
 * `dumpbisect compare`. Not built by CMake: tests/bench/bench_compare.sh
 * compiles it against libdbcore.a.
 *
 *   metrics_throughput [-t dtype] [-j N] [-r R] REF.bin TGT.bin
 *       two raw little-endian files of one dtype (default bfloat16)
 *   metrics_throughput [-t dtype] [-j N] [-r R] -n ELEMS
 *       synthetic data in memory (kernel speed, no page cache)
 *   metrics_throughput [-t dtype] [-j N] -l LIST
 *       LIST lines "REF OFF TGT OFF NELEMS": tensor payloads inside files
 *       (e.g. the data records of .pt zips); N workers take pairs in turn.
 *
 * Files are mmap'd read-only with sequential advice, walked in 4 MiB
 * chunks, and each chunk is dropped from the mapping once summed
 * (MADV_DONTNEED), so resident memory stays at a few chunks per worker
 * whatever the tensor size. Prints bytes, best wall time, GB/s. */
#include "db_metrics.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_BYTES (4u << 20)

typedef struct pair {
	char *ref, *tgt;
	long long ref_off, tgt_off, n;
} pair;

typedef struct pool {
	db_dtype dt;
	pair *pairs;
	size_t npairs;
	atomic_size_t next;
	/* x = single in-memory/whole-file pair (modes -n and two files) */
	const uint8_t *mx, *my;
	long long mn;
	int threads;
	atomic_uint failures;
} pool;

typedef struct worker {
	pool *p;
	int id;
	db_accum acc;           /* for the single-pair modes: this thread's share */
} worker;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const uint8_t *map_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*len = (size_t)st.st_size;
	void *m = mmap(NULL, *len ? *len : 1, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	madvise(m, *len, MADV_SEQUENTIAL);
	return m;
}

/* Drop the pages of [from, to) that lie wholly inside it. */
static void drop_range(const uint8_t *from, const uint8_t *to)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)from + pg - 1) & ~(pg - 1), b = (uintptr_t)to & ~(pg - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Accumulate elements [begin, end) of x/y in chunks, dropping pages behind. */
static void accum_chunked(db_accum *acc, const db_tensor *x, const db_tensor *y,
                          int64_t begin, int64_t end)
{
	size_t size = db_dtype_size(x->dtype);
	int64_t step = (int64_t)(CHUNK_BYTES / size) / 1024 * 1024;
	for (int64_t e = begin; e < end; e += step) {
		int64_t stop = e + step < end ? e + step : end;
		db_accum_range(acc, x, y, e, stop);
		drop_range(x->data + e * (int64_t)size, x->data + stop * (int64_t)size);
		drop_range(y->data + e * (int64_t)size, y->data + stop * (int64_t)size);
	}
}

static db_tensor vec(db_dtype dt, const uint8_t *data, long long n)
{
	db_tensor t = {.dtype = dt, .ndim = 1, .shape = {n}, .data = data};
	db_tensor_set_contiguous(&t);
	return t;
}

static void *run_list(void *arg)
{
	worker *w = arg;
	pool *p = w->p;
	for (;;) {
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->npairs)
			return NULL;
		pair *q = &p->pairs[i];
		size_t lx, ly, size = db_dtype_size(p->dt);
		const uint8_t *fx = map_file(q->ref, &lx), *fy = map_file(q->tgt, &ly);
		if (!fx || !fy || (size_t)q->ref_off + (size_t)q->n * size > lx ||
		    (size_t)q->tgt_off + (size_t)q->n * size > ly) {
			fprintf(stderr, "pair %zu: bad file or range\n", i);
			atomic_fetch_add(&p->failures, 1);
		} else {
			db_tensor x = vec(p->dt, fx + q->ref_off, q->n), y = vec(p->dt, fy + q->tgt_off, q->n);
			db_accum acc;
			db_metrics m;
			db_accum_init(&acc);
			accum_chunked(&acc, &x, &y, 0, q->n);
			db_accum_finish(&acc, &m);
		}
		if (fx)
			munmap((void *)fx, lx ? lx : 1);
		if (fy)
			munmap((void *)fy, ly ? ly : 1);
	}
}

static void *run_share(void *arg)
{
	worker *w = arg;
	pool *p = w->p;
	/* contiguous shares cut on 64 Ki-element boundaries */
	long long step = ((p->mn / p->threads) + 65535) / 65536 * 65536;
	long long b = w->id * step < p->mn ? w->id * step : p->mn;
	long long e = (w->id + 1) * step < p->mn ? (w->id + 1) * step : p->mn;
	db_tensor x = vec(p->dt, p->mx, p->mn), y = vec(p->dt, p->my, p->mn);
	db_accum_init(&w->acc);
	db_accum_range(&w->acc, &x, &y, b, e);
	return NULL;
}

static int read_list(const char *path, pool *p)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	char ref[4096], tgt[4096];
	long long ro, to, n;
	size_t cap = 0;
	while (fscanf(f, "%4095s %lld %4095s %lld %lld", ref, &ro, tgt, &to, &n) == 5) {
		if (p->npairs == cap) {
			cap = cap ? 2 * cap : 64;
			pair *np = realloc(p->pairs, cap * sizeof *np);
			if (!np)
				return -1;
			p->pairs = np;
		}
		p->pairs[p->npairs++] = (pair){strdup(ref), strdup(tgt), ro, to, n};
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	pool p = {.dt = DB_DT_BF16, .threads = 1};
	int repeats = 3, opt;
	long long gen = 0;
	const char *list = NULL;
	while ((opt = getopt(argc, argv, "t:j:r:n:l:")) != -1) {
		switch (opt) {
		case 't': p.dt = db_dtype_from_name(optarg); break;
		case 'j': p.threads = atoi(optarg); break;
		case 'r': repeats = atoi(optarg); break;
		case 'n': gen = atoll(optarg); break;
		case 'l': list = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-t dtype] [-j N] [-r N] (-n ELEMS | -l LIST | REF TGT)\n",
			        argv[0]);
			return 2;
		}
	}
	size_t size = db_dtype_size(p.dt);
	if (!size || p.threads < 1 || p.threads > 64 || repeats < 1) {
		fprintf(stderr, "bad dtype, thread or repeat count\n");
		return 2;
	}
	double bytes = 0;
	if (list) {
		if (read_list(list, &p) < 0)
			return 2;
		for (size_t i = 0; i < p.npairs; i++)
			bytes += 2.0 * (double)p.pairs[i].n * (double)size;
		repeats = 1;    /* the page-cache state is the bench script's business */
	} else if (gen > 0) {
		size_t len = (size_t)gen * size;
		uint8_t *a = malloc(len), *b = malloc(len);
		if (!a || !b)
			return 2;
		for (size_t i = 0; i < len; i++) {      /* finite values for every float dtype */
			a[i] = (uint8_t)((i * 2654435761u) >> 13) & 0x3f;
			b[i] = (uint8_t)(a[i] ^ (i % 7 == 0));
		}
		p.mx = a;
		p.my = b;
		p.mn = gen;
		bytes = 2.0 * (double)len;
	} else {
		if (argc - optind != 2) {
			fprintf(stderr, "need REF and TGT files (or -n ELEMS or -l LIST)\n");
			return 2;
		}
		size_t lx, ly;
		p.mx = map_file(argv[optind], &lx);
		p.my = map_file(argv[optind + 1], &ly);
		if (!p.mx || !p.my || lx != ly || lx % size) {
			fprintf(stderr, "files differ in size or are not whole %s elements\n",
			        db_dtype_name(p.dt));
			return 2;
		}
		p.mn = (long long)(lx / size);
		bytes = 2.0 * (double)lx;
	}

	double best = 1e30;
	db_metrics m = {0};
	for (int r = 0; r < repeats; r++) {
		worker w[64];
		pthread_t tid[64];
		atomic_store(&p.next, 0);
		double t0 = now();
		for (int i = 0; i < p.threads; i++) {
			w[i] = (worker){.p = &p, .id = i};
			pthread_create(&tid[i], NULL, list ? run_list : run_share, &w[i]);
		}
		db_accum total;
		db_accum_init(&total);
		for (int i = 0; i < p.threads; i++) {
			pthread_join(tid[i], NULL);
			if (!list)
				db_accum_merge(&total, &w[i].acc);
		}
		double t = now() - t0;
		if (!list)
			db_accum_finish(&total, &m);
		if (t < best)
			best = t;
	}
	printf("metrics_throughput: %s, %.0f MB, %d thread(s)%s: %.3f s, %.2f GB/s",
	       db_dtype_name(p.dt), bytes / 1e6, p.threads, list ? ", list of pairs" : "", best,
	       bytes / best / 1e9);
	if (!list)
		printf(", cos=%.17g", m.cos);
	printf("\n");
	return atomic_load(&p.failures) ? 1 : 0;
}
