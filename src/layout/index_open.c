#include "index_open.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_reader.h"
#include "read/walk.h"

typedef struct open_pool {
	const char *root;       /* a job's full path is made when it is opened:
	                           10^6 of them kept were 100 MB (issue 24) */
	bool root_is_file;
	file_job *jobs;
	size_t n;
	atomic_size_t next;
	db_icache *ic;
} open_pool;

char *db_index_job_full(const char *root, bool root_is_file, const file_job *j)
{
	return root_is_file ? strdup(root) : db_path_join(root, j->rel);
}

static void read_file_at(file_job *j, const char *full, db_icache *ic, db_readbuf *rb);

static void read_file_meta(file_job *j, const open_pool *op, db_readbuf *rb)
{
	if (j->err)
		return;         /* refused by its name already */
	if (j->size >= 0 &&
	    db_icache_get(op->ic, j->rel, j->size, j->mtime_ns ^ (int64_t)j->ident, &j->ents,
	                  &j->n_ents))
		return;
	char *full = db_index_job_full(op->root, op->root_is_file, j);
	if (!full) {
		j->err = strdup("out of memory");
		return;
	}
	read_file_at(j, full, op->ic, rb);
	free(full);
}

static void read_file_at(file_job *j, const char *full, db_icache *ic, db_readbuf *rb)
{
	db_file *df = NULL;
	db_err e = {{0}};
	int rc = db_file_open_rb(full, rb, &df, &e);
	if (j->size < 0) {
		/* the listing left the stat to this open (a first-ever scan) */
		struct stat st;
		if (rc == 0) {
			j->size = df->st_size;
			j->mtime_ns = df->st_mtime_ns;
			j->ident = df->st_ident;
		} else if (stat(full, &st) == 0) {
			j->size = st.st_size;
			j->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
			j->ident = db_stat_ident(&st);
		}
	}
	if (rc != 0) {
		j->read_err = (j->err = strdup(e.msg[0] ? e.msg : "file refused")) != NULL;
		return;
	}
	j->ents = calloc(df->n_entries ? df->n_entries : 1, sizeof *j->ents);
	if (!j->ents) {
		j->err = strdup("out of memory");
		db_file_close(df);
		return;
	}
	for (size_t i = 0; i < df->n_entries; i++)
		db_ent_meta_set(&j->ents[j->n_ents++], &df->entries[i]);
	db_file_close(df);
	/* put by the scan's own thread (items_from_jobs): no lock taken per file */
	j->enc = ic && db_icache_enc(j->ents, j->n_ents, &j->blob);
}

static void *open_worker(void *arg)
{
	open_pool *op = arg;
	db_readbuf rb = {NULL, 0};
	for (;;) {
		size_t i = atomic_fetch_add(&op->next, 1);
		if (i >= op->n)
			break;
		read_file_meta(&op->jobs[i], op, &rb);
	}
	free(rb.p);
	return NULL;
}

static int cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

void db_index_open_all(const char *root, bool root_is_file, file_job *jobs, size_t n,
                     db_icache *ic)
{
	open_pool op = {.root = root, .root_is_file = root_is_file, .jobs = jobs, .n = n,
	                .ic = ic};
	atomic_init(&op.next, 0);
	int nt = cpu_count();
	if (nt > 8)
		nt = 8;
	if (n < 16)
		nt = 1;
	pthread_t th[8];
	int started = 0;
	for (int t = 1; t < nt; t++)
		if (pthread_create(&th[started], NULL, open_worker, &op) == 0)
			started++;
	open_worker(&op);
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
}

