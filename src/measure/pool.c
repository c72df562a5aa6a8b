/* Computing pairs: a pthread pool over (pair, chunk) tasks. Each chunk is
 * accumulated alone and the chunks of a pair are merged in chunk order by
 * whichever worker finishes last, so the numbers never depend on the
 * number of threads. Workers first look every pending pair up in the
 * metrics cache (so the caller never waits for that), then compute the
 * misses. A prefetch thread reads ahead of them on a cold page cache. */
#include "pair/compare_priv.h"
#include "pair/cache_writes.h"
#include "util/par.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct db_pool {
	db_compare *c;
	size_t *task_pair;
	uint32_t *task_chunk;
	size_t n_tasks;
	atomic_size_t next;
	atomic_int cancel;
	/* metrics cache lookups come first, spread over the workers, so the
	 * caller (the TUI's first frame) does not wait for them */
	size_t *lookup;             /* pairs to look up */
	size_t n_lookup;
	atomic_size_t next_lookup, lookups_left;
	size_t *acc_base;           /* per pair: first slot in acc; SIZE_MAX not in
	                               the pool; ONE_CHUNK its one chunk's accumulator
	                               lives on the worker's stack */
	db_accum *acc;              /* pairs of several chunks only: ~200 B a task
	                               was 80 MB at 10^6 pairs of one chunk (issue 24) */
	atomic_uint *left;          /* per pair: chunks still to finish */
	char **errmsg;              /* per pair: first chunk error */
	pthread_mutex_t mu;
	pthread_t *th;
	int n_th;
	pthread_t pf;               /* the prefetcher */
	bool pf_on;
	size_t cap_files;
};

/* ---- the pool ---------------------------------------------------------- */

/* Cold cache: ask the kernel to start reading a big file we will need
 * soon, so its I/O overlaps the current pair's compute. *last is the file
 * asked for last on this side: the pairs of one dict file come in a row,
 * and asking again walked the page cache of the whole file per tensor. */
static void prefetch_item(const db_index *ix, const db_item *it, uint64_t *last)
{
	if (!it || it->err || it->size < ((off_t)1 << 20) || it->ident == *last)
		return;
	*last = it->ident;
	char *path = db_index_path(ix, it);
	if (!path)
		return;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
		close(fd);
	}
	free(path);
}

/* How far the prefetcher runs ahead of the workers, in pairs. */
#define PREFETCH_PAIRS 2

static void prefetch_pair(const db_compare *c, const db_pair *p, uint64_t last[2])
{
	if (!p->merged) {
		prefetch_item(c->ref, p->ref, &last[0]);
		prefetch_item(c->tgt, p->tgt, &last[1]);
		return;
	}
	for (size_t i = 0; i < p->n_ref_shards; i++)
		prefetch_item(c->ref, p->ref_shards[i], &last[0]);
	for (size_t i = 0; i < p->n_tgt_shards; i++)
		prefetch_item(c->tgt, p->tgt_shards[i], &last[1]);
}

static void nap_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* Cold cache: one thread asks for the files of the pairs in line, in
 * order, up to PREFETCH_PAIRS pairs ahead of the task the workers take
 * next, so the disk reads ahead while they compute. Its own thread because
 * asking can block while the device queue is full: a worker would stall. */
static void *prefetcher(void *arg)
{
	db_pool *pl = arg;
	db_compare *c = pl->c;
	uint64_t last[2] = {0, 0};
	while (atomic_load(&pl->lookups_left) > 0 && !atomic_load(&pl->cancel))
		nap_ms(1);      /* pairs served from the metrics cache need no bytes */
	for (size_t t = 0; t < pl->n_tasks && !atomic_load(&pl->cancel);) {
		db_pair *q = &c->pairs[pl->task_pair[t]];
		size_t nc = db_pair_n_chunks(q);
		if (atomic_load(&q->state) != DB_PAIR_DONE) {
			size_t next;
			while ((next = atomic_load(&pl->next)) < pl->n_tasks &&
			       t > next + PREFETCH_PAIRS * nc && !atomic_load(&pl->cancel))
				nap_ms(2);
			if (next >= pl->n_tasks)
				break;  /* every task handed out: too late to help */
			prefetch_pair(c, q, last);
		}
		t += nc;
	}
	return NULL;
}

static void prefetch_start(db_pool *pl)
{
	pl->pf_on = pthread_create(&pl->pf, NULL, prefetcher, pl) == 0;
}

#define ONE_CHUNK (SIZE_MAX - 1)

/* Publish pair pi: its one chunk's accumulator (only), or its chunks' in
 * order from acc. */
static void finish_pair(db_pool *pl, size_t pi, const db_accum *only)
{
	db_compare *c = pl->c;
	db_pair *p = &c->pairs[pi];
	if (pl->errmsg[pi]) {
		db_pair_publish(c, p, NULL, pl->errmsg[pi]);
		return;
	}
	if (only) {
		db_pair_publish(c, p, only, NULL);
		return;
	}
	db_accum total;
	db_accum_init(&total);
	size_t nc = db_pair_n_chunks(p);
	for (size_t k = 0; k < nc; k++)
		db_accum_merge(&total, &pl->acc[pl->acc_base[pi] + k]);
	db_pair_publish(c, p, &total, NULL);
}

/* Look up pairs in the metrics cache until none is left, then wait until
 * every lookup (other workers' too) is over: no pair is computed while its
 * lookup may still hit. Lookups are cheap and always finish, even when
 * cancelled: whatever the cache holds is published by db_compare_stop. */
static void lookups(db_pool *pl)
{
	db_compare *c = pl->c;
	db_cmp_priv *pr = c->priv;
	for (size_t i; (i = atomic_fetch_add(&pl->next_lookup, 1)) < pl->n_lookup;) {
		size_t pi = pl->lookup[i];
		int expect = DB_OWNER_FREE;
		if (atomic_compare_exchange_strong(&pr->owner[pi], &expect, DB_OWNER_POOL) &&
		    !db_cache_lookup(c, &c->pairs[pi]))
			atomic_store(&pr->owner[pi], DB_OWNER_FREE);   /* a miss: to compute */
		atomic_fetch_sub(&pl->lookups_left, 1);
	}
	while (atomic_load(&pl->lookups_left) > 0)
		sched_yield();
}

static void *pool_worker(void *arg)
{
	db_pool *pl = arg;
	db_compare *c = pl->c;
	db_cmp_priv *pr = c->priv;
	db_wctx w;
	if (db_wctx_init(&w, pl->cap_files) != 0) {
		lookups(pl);    /* never leave the others waiting on ours */
		return NULL;
	}
	lookups(pl);
	while (!atomic_load(&pl->cancel)) {
		size_t t = atomic_fetch_add(&pl->next, 1);
		if (t >= pl->n_tasks)
			break;
		size_t pi = pl->task_pair[t];
		uint32_t k = pl->task_chunk[t];
		db_pair *p = &c->pairs[pi];
		if (atomic_load_explicit(&p->state, memory_order_acquire) == DB_PAIR_DONE)
			continue;       /* a cache hit (or the caller finished it) */
		int expect = DB_OWNER_FREE;
		if (atomic_compare_exchange_strong(&pr->owner[pi], &expect, DB_OWNER_POOL))
			atomic_store(&p->state, DB_PAIR_RUNNING);
		else if (expect != DB_OWNER_POOL)
			continue;       /* the caller computes it */
		int64_t b, e;
		db_pair_chunk_range(p, k, &b, &e);
		db_accum one;
		bool alone = pl->acc_base[pi] == ONE_CHUNK;
		db_accum *a = alone ? &one : &pl->acc[pl->acc_base[pi] + k];
		db_accum_init(a);
		db_err err = {{0}};
		if (db_pair_accum(c, &w, p, b, e, a, &err) != 0) {
			pthread_mutex_lock(&pl->mu);
			if (!pl->errmsg[pi])
				pl->errmsg[pi] = strdup(err.msg);
			pthread_mutex_unlock(&pl->mu);
		}
		if (atomic_fetch_sub(&pl->left[pi], 1) == 1)
			finish_pair(pl, pi, alone ? a : NULL);
	}
	db_wctx_free(&w);
	return NULL;
}

static void pool_free(db_pool *pl)
{
	if (!pl)
		return;
	if (pl->errmsg)
		for (size_t i = 0; i < pl->c->n_pairs; i++)
			free(pl->errmsg[i]);
	free(pl->errmsg);
	free(pl->task_pair);
	free(pl->task_chunk);
	free(pl->lookup);
	free(pl->acc_base);
	free(pl->acc);
	free(pl->left);
	free(pl->th);
	pthread_mutex_destroy(&pl->mu);
	free(pl);
}

/* Tasks for every pair still pending (cache hits are published here). */
static db_pool *pool_new(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	db_pool *pl = calloc(1, sizeof *pl);
	if (!pl)
		return NULL;
	pl->c = c;
	pthread_mutex_init(&pl->mu, NULL);
	atomic_init(&pl->next, 0);
	atomic_init(&pl->cancel, 0);
	atomic_init(&pl->next_lookup, 0);
	atomic_init(&pl->lookups_left, 0);
	size_t n = c->n_pairs;
	pl->acc_base = malloc((n + 1) * sizeof *pl->acc_base);
	pl->left = calloc(n + 1, sizeof *pl->left);
	pl->errmsg = calloc(n + 1, sizeof *pl->errmsg);
	if (!pl->acc_base || !pl->left || !pl->errmsg) {
		pool_free(pl);
		return NULL;
	}
	size_t total = 0, n_acc = 0;
	bool cache = pr->cache_dir != NULL;
	if (cache && !(pl->lookup = malloc((n + 1) * sizeof *pl->lookup))) {
		pool_free(pl);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		db_pair *p = &c->pairs[i];
		pl->acc_base[i] = SIZE_MAX;
		if (atomic_load(&p->state) != DB_PAIR_PENDING ||
		    atomic_load(&pr->owner[i]) != DB_OWNER_FREE)
			continue;
		if (cache)
			pl->lookup[pl->n_lookup++] = i;
		size_t nc = db_pair_n_chunks(p);
		pl->acc_base[i] = nc == 1 ? ONE_CHUNK : n_acc;
		n_acc += nc == 1 ? 0 : nc;
		atomic_init(&pl->left[i], (unsigned)nc);
		total += nc;
	}
	pl->task_pair = malloc((total + 1) * sizeof *pl->task_pair);
	pl->task_chunk = malloc((total + 1) * sizeof *pl->task_chunk);
	pl->acc = malloc((n_acc + 1) * sizeof *pl->acc);
	if (!pl->task_pair || !pl->task_chunk || !pl->acc) {
		pool_free(pl);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (pl->acc_base[i] == SIZE_MAX)
			continue;
		size_t nc = db_pair_n_chunks(&c->pairs[i]);
		for (size_t k = 0; k < nc; k++) {
			pl->task_pair[pl->n_tasks] = i;
			pl->task_chunk[pl->n_tasks] = (uint32_t)k;
			pl->n_tasks++;
		}
	}
	atomic_store(&pl->lookups_left, pl->n_lookup);
	pl->cap_files = db_compare_files_needed(c);
	int nt = pr->threads > 0 ? pr->threads : db_cpus() > 256 ? 256 : db_cpus();
	if ((size_t)nt > pl->n_tasks)
		nt = pl->n_tasks ? (int)pl->n_tasks : 1;
	pl->th = calloc((size_t)nt, sizeof *pl->th);
	if (!pl->th) {
		pool_free(pl);
		return NULL;
	}
	pl->n_th = nt;
	return pl;
}

/* Join the workers; pairs left half-done go back to pending. */
static void pool_join(db_compare *c, db_pool *pl, int started)
{
	db_cmp_priv *pr = c->priv;
	for (int i = 0; i < started; i++)
		pthread_join(pl->th[i], NULL);
	if (pl->pf_on) {
		atomic_store(&pl->cancel, 1);   /* the workers are done */
		pthread_join(pl->pf, NULL);
		pl->pf_on = false;
	}
	for (size_t i = 0; i < c->n_pairs; i++) {
		if (pl->acc_base[i] == SIZE_MAX)
			continue;
		if (atomic_load(&pr->owner[i]) == DB_OWNER_POOL &&
		    atomic_load(&c->pairs[i].state) != DB_PAIR_DONE) {
			atomic_store(&c->pairs[i].state, DB_PAIR_PENDING);
			atomic_store(&pr->owner[i], DB_OWNER_FREE);
		}
	}
	db_cache_flush(c);
}

void db_compare_run(db_compare *c)
{
	db_compare_stop(c);
	db_cwrites_start(c);
	db_pool *pl = pool_new(c);
	if (!pl) {
		/* no memory for a pool: compute in this thread */
		for (size_t i = 0; i < c->n_pairs; i++)
			db_compare_pair(c, &c->pairs[i]);
		return;
	}
	int started = 0;
	for (int i = 1; i < pl->n_th; i++)
		if (pthread_create(&pl->th[started], NULL, pool_worker, pl) == 0)
			started++;
	prefetch_start(pl);
	pool_worker(pl);
	pool_join(c, pl, started);
	pool_free(pl);
	/* anything the pool could not take (no memory for a worker context) */
	for (size_t i = 0; i < c->n_pairs; i++)
		db_compare_pair(c, &c->pairs[i]);
}

int db_compare_start(db_compare *c)
{
	db_compare_stop(c);
	db_cwrites_start(c);    /* a first open's cache files, at low priority */
	db_cmp_priv *pr = c->priv;
	db_pool *pl = pool_new(c);
	if (!pl)
		return -1;
	int started = 0;
	for (int i = 0; i < pl->n_th; i++)
		if (pthread_create(&pl->th[started], NULL, pool_worker, pl) == 0)
			started++;
	if (!started) {
		pool_free(pl);
		return -1;
	}
	pl->n_th = started;
	prefetch_start(pl);
	pr->pool = pl;
	return 0;
}

void db_compare_stop(db_compare *c)
{
	db_cmp_priv *pr = c ? c->priv : NULL;
	if (!pr || !pr->pool)
		return;
	db_pool *pl = pr->pool;
	atomic_store(&pl->cancel, 1);
	pool_join(c, pl, pl->n_th);
	pool_free(pl);
	pr->pool = NULL;
}

bool db_compare_finished(const db_compare *c)
{
	return atomic_load(&((db_compare *)c)->n_done) >= c->n_pairs;
}
