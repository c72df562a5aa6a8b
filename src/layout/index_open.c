#include "index_open.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_reader.h"
#include "read/walk.h"
#include "util/par.h"

typedef struct open_pool {
	const char *root;       /* a job's full path is made when it is opened:
	                           10^6 of them kept were 100 MB (issue 24) */
	bool root_is_file;
	file_job *jobs;
	size_t n;
	atomic_size_t next;
	db_icache *ic;
	bool enc;               /* encode entries for ic (else the caller streams) */
} open_pool;

char *db_index_job_full(const char *root, bool root_is_file, const file_job *j)
{
	return root_is_file ? strdup(root) : db_path_join(root, j->rel);
}

/* A worker's open directory: the jobs come in listing order, so a file's
 * directory is mostly the last one's, and the open looks up one name in
 * it instead of walking the whole path (10^6 opens, issue 24). */
typedef struct wdir {
	char *rel;              /* the directory below the root ("" the root) */
	int fd;                 /* -1: none (the full path is opened) */
} wdir;

static void wdir_close(wdir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->rel);
	*d = (wdir){NULL, -1};
}

/* The open directory of j, or -1; *name its name in it. */
static int wdir_of(wdir *d, const open_pool *op, const file_job *j, const char **name)
{
	if (op->root_is_file)
		return -1;
	const char *slash = strrchr(j->rel, '/');
	size_t n = slash ? (size_t)(slash - j->rel) : 0;
	*name = slash ? slash + 1 : j->rel;
	if (d->rel && strlen(d->rel) == n && !memcmp(d->rel, j->rel, n))
		return d->fd;
	wdir_close(d);
	if (!(d->rel = strndup(j->rel, n)))
		return -1;
	char *path = n ? db_path_join(op->root, d->rel) : strdup(op->root);
	d->fd = path ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	free(path);
	return d->fd;
}

static void read_file_at(file_job *j, const char *full, db_icache *ic, db_readbuf *rb,
                         db_open_opt *opt);

static void read_file_meta(file_job *j, const open_pool *op, db_readbuf *rb, wdir *d)
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
	db_open_opt opt = {.dirfd = -1};
	if ((opt.dirfd = wdir_of(d, op, j, &opt.at_name)) < 0)
		opt.at_name = NULL;
	read_file_at(j, full, op->enc ? op->ic : NULL, rb, &opt);
	free(full);
}

static void read_file_at(file_job *j, const char *full, db_icache *ic, db_readbuf *rb,
                         db_open_opt *opt)
{
	db_file *df = NULL;
	db_err e = {{0}};
	int rc = db_file_open_opt(full, rb, opt, &df, &e);
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
	wdir d = {NULL, -1};
	for (;;) {
		size_t i = atomic_fetch_add(&op->next, 1);
		if (i >= op->n)
			break;
		read_file_meta(&op->jobs[i], op, &rb, &d);
	}
	wdir_close(&d);
	free(rb.p);
	return NULL;
}

void db_index_open_all(const char *root, bool root_is_file, file_job *jobs, size_t n,
                       db_icache *ic, bool enc)
{
	open_pool op = {.root = root, .root_is_file = root_is_file, .jobs = jobs, .n = n,
	                .ic = ic, .enc = enc};
	atomic_init(&op.next, 0);
	/* files are independent: up to 8 threads, one for a handful */
	int nt = db_cpus();
	db_par_run(open_worker, &op, n < 16 ? 1 : nt > 8 ? 8 : nt);
}

