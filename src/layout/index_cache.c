/* Per-file entry metadata cache (issue 5: instant reopen). Keyed by the
 * file's path below the root, size and mtime (ns); a file that changed
 * misses and is parsed again. Stored as one file per tree root next to the
 * metrics cache, checksummed; anything unreadable is simply empty. The
 * reader's output depends on the program version, which is in the
 * header: another version starts empty. */
#include "index_priv.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/binio.h"
#include "util/hash.h"
#include "util/strmap.h"

#define ICACHE_MAGIC "DBICACH2"   /* 2: the checksum db_hash64x4 chained over
                                     1 MiB blocks (file_sum), not FNV a byte
                                     at a time; no fsync */
#define SUM_BLOCK ((size_t)1 << 20)
#ifndef DB_VERSION
#define DB_VERSION "dev"
#endif

/* A file's entries are kept as bytes (enc_ents), not as ent_meta: 224 B
 * an entry and a string each, ~400 B a file, were 300 MB at 10^6 files
 * while both sides scan (issue 24: peak RSS). */
typedef struct irec {
	char *rel;
	int64_t size, mtime;
	char *blob;             /* the entries, enc_ents */
	uint32_t blob_len, n;
	bool used;
} irec;

struct db_icache {
	pthread_mutex_t mu;
	char *dir, *file;
	db_strmap idx;
	irec *recs;
	size_t n, cap;
	bool dirty;
	bool loaded;            /* read on first use: a snapshot hit needs none */
	/* A first scan's records go straight to the file as they come
	 * (db_icache_stream_begin): no copy of 10^6 names and entries kept
	 * until the end (issue 24: ~100 MB a side at the peak) */
	int sfd;                /* the temp file; -1 none */
	char *stmp;
	uint64_t scount;
	db_wbuf sbuf;
	bool sbad;
};

static void free_ents(ent_meta *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].key);
		free(e[i].err);
		free(e[i].st.data);
	}
	free(e);
}

void db_ent_meta_set(ent_meta *m, const db_entry *en)
{
	m->key = strdup(en->key ? en->key : "");
	if (en->err) {
		m->err = strdup(en->err);
		m->dtype = DB_DT_UNKNOWN;
		return;
	}
	m->dtype = en->t.dtype;
	m->ndim = en->t.ndim;
	if (en->t.st) { /* kept: workers need not parse the file again */
		m->st = *en->t.st;
		m->st.call = NULL;
		m->st.data = en->t.st->data ? strdup(en->t.st->data) : NULL;
		m->has_st = true;
	}
	for (int d = 0; d < en->t.ndim && d < DB_MAX_DIMS; d++)
		m->shape[d] = en->t.shape[d];
}

/* Per entry: key, dtype, ndim, shape (the file's record, see save), then
 * whether statistics follow and their numbers (call and data not kept:
 * db_icache_put takes no entry naming a data file). */
/* An entry's key, dtype, ndim and shape: the part both encodings share. */
static void put_ent(db_wbuf *b, const ent_meta *e)
{
	int32_t dt = (int32_t)e->dtype, nd = e->ndim;
	db_wbuf_str(b, e->key ? e->key : "");
	db_wbuf_put(b, &dt, 4);
	db_wbuf_put(b, &nd, 4);
	db_wbuf_put(b, e->shape, (size_t)nd * 8);
}

static void enc_ents(db_wbuf *b, const ent_meta *e, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		put_ent(b, &e[k]);
		uint8_t st = e[k].has_st;
		db_wbuf_put(b, &st, 1);
		if (st) {
			db_tstat t = e[k].st;
			t.call = NULL;
			t.data = NULL;
			db_wbuf_put(b, &t, sizeof t);
		}
	}
}

static ent_meta *dec_ents(const irec *r)
{
	ent_meta *e = calloc(r->n ? r->n : 1, sizeof *e);
	if (!e)
		return NULL;
	db_rd rd = {r->blob, r->blob_len, false};
	for (size_t k = 0; k < r->n; k++) {
		int32_t dt, nd;
		uint8_t st;
		e[k].key = db_rd_str(&rd);
		db_rd_take(&rd, &dt, 4);
		db_rd_take(&rd, &nd, 4);
		e[k].dtype = (db_dtype)dt;
		e[k].ndim = nd < 0 || nd > DB_MAX_DIMS ? 0 : nd;
		db_rd_take(&rd, e[k].shape, (size_t)e[k].ndim * 8);
		db_rd_take(&rd, &st, 1);
		if (st) {
			db_rd_take(&rd, &e[k].st, sizeof e[k].st);
			e[k].has_st = true;
		}
		if (rd.bad) {   /* only out of memory: the bytes are our own */
			free_ents(e, k + 1);
			return NULL;
		}
	}
	return e;
}

/* Takes ownership of blob (NULL: out of memory, nothing added). */
static int add(db_icache *c, const char *rel, int64_t size, int64_t mtime, db_wbuf *blob,
               size_t n, bool used)
{
	if (blob->err || (!blob->p && n) || blob->n > UINT32_MAX || n > UINT32_MAX) {
		free(blob->p);
		return -1;
	}
	char *p = blob->n ? realloc(blob->p, blob->n) : NULL;  /* no slack: 10^6 of them */
	if (p)
		blob->p = p;
	bool added;
	size_t *v = db_strmap_put(&c->idx, rel, c->n, &added);
	if (!v) {
		free(blob->p);
		return -1;
	}
	if (!added) {
		irec *r = &c->recs[*v];
		free(r->blob);
		r->size = size;
		r->mtime = mtime;
		r->blob = blob->p;
		r->blob_len = (uint32_t)blob->n;
		r->n = (uint32_t)n;
		r->used |= used;
		return 0;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		irec *r = realloc(c->recs, cap * sizeof *r);
		if (!r) {
			free(blob->p);
			return -1;
		}
		c->recs = r;
		c->cap = cap;
	}
	char *k = strdup(rel);
	if (!k) {
		free(blob->p);
		return -1;
	}
	c->recs[c->n++] = (irec){k, size, mtime, blob->p, (uint32_t)blob->n, (uint32_t)n, used};
	return 0;
}

/* The checksum of n bytes: db_hash64x4 over each SUM_BLOCK in turn, each
 * seeded with the last (written files are summed by reading them back in
 * such blocks: sum_back). */
static uint64_t file_sum(const char *p, size_t n)
{
	uint64_t h = DB_HASH_SEED;
	for (size_t at = 0; at < n; at += SUM_BLOCK)
		h = db_hash64x4(p + at, n - at < SUM_BLOCK ? n - at : SUM_BLOCK, h);
	return h;
}

static void load(db_icache *c)
{
	size_t size;
	char *buf = db_slurp(c->file, 32, (size_t)1 << 31, &size);
	if (!buf)
		return;
	uint64_t sum;
	memcpy(&sum, buf + size - 8, 8);
	if (memcmp(buf, ICACHE_MAGIC, 8) || sum != file_sum(buf, size - 8))
		goto out;
	db_rd r = {buf + 8, size - 16, false};
	char *ver = db_rd_str(&r);
	bool ok = ver && !strcmp(ver, DB_VERSION);
	free(ver);
	uint64_t count;
	db_rd_take(&r, &count, 8);
	for (uint64_t i = 0; ok && !r.bad && i < count; i++) {
		char *rel = db_rd_str(&r);
		int64_t size_, mtime;
		uint32_t n;
		db_rd_take(&r, &size_, 8);
		db_rd_take(&r, &mtime, 8);
		db_rd_take(&r, &n, 4);
		if (r.bad || n > r.left / 12) {
			free(rel);
			break;
		}
		ent_meta *e = calloc(n ? n : 1, sizeof *e);
		if (!e) {
			free(rel);
			break;
		}
		size_t k = 0;
		for (; k < n && !r.bad; k++) {
			int32_t dt, nd;
			e[k].key = db_rd_str(&r);
			db_rd_take(&r, &dt, 4);
			db_rd_take(&r, &nd, 4);
			if (dt < 0 || dt >= DB_DT__COUNT || nd < 0 || nd > DB_MAX_DIMS)
				r.bad = true;
			e[k].dtype = (db_dtype)dt;
			e[k].ndim = nd;
			for (int d = 0; d < nd && !r.bad; d++)
				db_rd_take(&r, &e[k].shape[d], 8);
		}
		if (r.bad) {
			free_ents(e, k);
			free(rel);
			break;
		}
		db_wbuf b = {0};
		enc_ents(&b, e, n);
		free_ents(e, n);
		if (add(c, rel, size_, mtime, &b, n, false) != 0)
			r.bad = true;
		free(rel);
	}
out:
	free(buf);
}

static uint64_t root_hash(const char *root)
{
	char real[PATH_MAX];
	const char *r = realpath(root, real) ? real : root;
	return db_fnv(r, strlen(r) + 1, DB_FNV_INIT);
}

bool db_icache_exists(const char *dir, const char *root)
{
	if (!dir || !*dir)
		return false;
	char f[PATH_MAX];
	snprintf(f, sizeof f, "%s/%016llx.index", dir, (unsigned long long)root_hash(root));
	return access(f, F_OK) == 0;
}

db_icache *db_icache_open(const char *dir, const char *root)
{
	if (!dir || !*dir)
		return NULL;
	db_icache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->sfd = -1;
	pthread_mutex_init(&c->mu, NULL);
	db_strmap_init(&c->idx);
	uint64_t h = root_hash(root);
	size_t n = strlen(dir) + 40;
	c->dir = strdup(dir);
	c->file = malloc(n);
	if (!c->dir || !c->file) {
		db_icache_close(c);
		return NULL;
	}
	snprintf(c->file, n, "%s/%016llx.index", dir, (unsigned long long)h);
	return c;
}

bool db_icache_get(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                   ent_meta **ents, size_t *n)
{
	if (!c)
		return false;
	bool hit = false;
	pthread_mutex_lock(&c->mu);
	if (!c->loaded) {
		c->loaded = true;
		load(c);
	}
	size_t *v = db_strmap_get(&c->idx, rel);
	if (v && c->recs[*v].size == (int64_t)size && c->recs[*v].mtime == mtime_ns) {
		irec *r = &c->recs[*v];
		if ((*ents = dec_ents(r))) {
			*n = r->n;
			r->used = true;
			hit = true;
		}
	}
	pthread_mutex_unlock(&c->mu);
	return hit;
}

bool db_icache_enc(const ent_meta *ents, size_t n, db_wbuf *b)
{
	for (size_t i = 0; i < n; i++)
		if (ents[i].err || ents[i].st.data)
			return false;   /* errors may pass; a dump whose entries name
			                   tensor files (msprobe's tensor task) is read
			                   again, since the file keeps no statistics and
			                   the metrics cache keys on the files they name
			                   (measure/cache.c) */
	enc_ents(b, ents, n);
	char *p = b->n ? realloc(b->p, b->n) : NULL;    /* no slack (64 KiB grown):
	                                                   10^6 of them are kept */
	if (p) {
		b->p = p;
		b->cap = b->n;
	}
	return true;
}

void db_icache_reserve(db_icache *c, size_t n)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	if (!c->loaded) {
		c->loaded = true;
		load(c);
	}
	if (c->cap < c->n + n) {
		irec *r = realloc(c->recs, (c->n + n) * sizeof *r);
		if (r) {
			c->recs = r;
			c->cap = c->n + n;
		}
	}
	(void)db_strmap_reserve(&c->idx, c->n + n);     /* a hint */
	pthread_mutex_unlock(&c->mu);
}

void db_icache_put_enc(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                       db_wbuf *b, size_t n)
{
	if (!c) {
		free(b->p);
		*b = (db_wbuf){0};
		return;
	}
	pthread_mutex_lock(&c->mu);
	if (!c->loaded) {
		c->loaded = true;
		load(c);
	}
	if (add(c, rel, (int64_t)size, mtime_ns, b, n, true) == 0)
		c->dirty = true;
	pthread_mutex_unlock(&c->mu);
	*b = (db_wbuf){0};      /* add took the bytes */
}

void db_icache_put(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                   const ent_meta *ents, size_t n)
{
	if (!c)
		return;
	db_wbuf b = {0};
	if (!db_icache_enc(ents, n, &b))   /* outside the lock: the threads meet less */
		return;
	pthread_mutex_lock(&c->mu);
	if (!c->loaded) {
		c->loaded = true;
		load(c);
	}
	if (add(c, rel, (int64_t)size, mtime_ns, &b, n, true) == 0)
		c->dirty = true;
	pthread_mutex_unlock(&c->mu);
}

/* One file's record as the file holds it (load reads it back). */
static void put_record(db_wbuf *b, const char *rel, int64_t size, int64_t mtime,
                       const ent_meta *e, uint32_t n)
{
	db_wbuf_str(b, rel);
	db_wbuf_put(b, &size, 8);
	db_wbuf_put(b, &mtime, 8);
	db_wbuf_put(b, &n, 4);
	for (size_t k = 0; k < n; k++)
		put_ent(b, &e[k]);
}

/* b's bytes to fd; b emptied. */
static bool spill(int fd, db_wbuf *b)
{
	if (b->err)
		return false;
	bool ok = db_write_all(fd, b->p, b->n) == 0;
	b->n = 0;
	return ok;
}

/* The temp file tmp (written through wfd) read back in SUM_BLOCKs and its
 * checksum (file_sum) appended. No fsync, as the snapshots: a file torn by
 * a crash fails its checksum and reads as empty, which costs one slow open,
 * never a wrong answer. */
static bool sum_back(int wfd, const char *tmp)
{
	int rfd = open(tmp, O_RDONLY | O_CLOEXEC);
	char *blk = rfd >= 0 ? malloc(SUM_BLOCK) : NULL;
	bool ok = blk != NULL;
	uint64_t h = DB_HASH_SEED;
	while (ok) {
		size_t got = 0;
		ssize_t r = 1;
		while (got < SUM_BLOCK && (r = read(rfd, blk + got, SUM_BLOCK - got)) > 0)
			got += (size_t)r;
		if (r < 0)
			ok = false;
		else if (got)
			h = db_hash64x4(blk, got, h);
		if (got < SUM_BLOCK)
			break;
	}
	free(blk);
	if (rfd >= 0)
		close(rfd);
	return ok && write(wfd, &h, 8) == 8;
}

/* Written a megabyte at a time, then summed reading it back: the whole file
 * built in memory first was 58 MB more at the peak of a 10^6-file first
 * open (issue 24). The temp file is renamed over the old one only when
 * complete. */
static void save(db_icache *c)
{
	size_t used = 0;
	for (size_t i = 0; i < c->n; i++)
		used += c->recs[i].used;
	/* files gone or changed pile up: keep this session's when they do */
	bool prune = c->n > 2 * used + 1024;
	uint64_t count = prune ? used : c->n;
	size_t ln = strlen(c->file) + 32;
	char *tmp = malloc(ln);
	db_wbuf b = {0};
	int fd = -1;
	if (!tmp || db_mkdirs(c->dir) != 0)
		goto out;
	snprintf(tmp, ln, "%s.tmp.%ld", c->file, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		goto out;
	bool ok = true;
	db_wbuf_put(&b, ICACHE_MAGIC, 8);
	db_wbuf_str(&b, DB_VERSION);
	db_wbuf_put(&b, &count, 8);
	for (size_t i = 0; i < c->n && ok; i++) {
		const irec *r = &c->recs[i];
		if (prune && !r->used)
			continue;
		ent_meta *e = dec_ents(r);
		if (!e) {
			ok = false;
			break;
		}
		put_record(&b, r->rel, r->size, r->mtime, e, r->n);
		free_ents(e, r->n);
		if (b.n >= SUM_BLOCK)
			ok = spill(fd, &b);
	}
	ok = ok && spill(fd, &b) && sum_back(fd, tmp);
	if (close(fd) != 0)
		ok = false;
	if (!ok || rename(tmp, c->file) != 0)
		unlink(tmp);
out:
	free(b.p);
	free(tmp);
}

const char *db_icache_dir(const db_icache *c)
{
	return c ? c->dir : NULL;
}

/* The header up to the count, and the count's offset in the file. */
static size_t put_head(db_wbuf *b, uint64_t count)
{
	db_wbuf_put(b, ICACHE_MAGIC, 8);
	db_wbuf_str(b, DB_VERSION);
	size_t at = b->n;
	db_wbuf_put(b, &count, 8);
	return at;
}

bool db_icache_stream_begin(db_icache *c)
{
	if (!c)
		return false;
	pthread_mutex_lock(&c->mu);
	if (!c->loaded) {
		c->loaded = true;
		load(c);
	}
	bool on = false;
	size_t ln = strlen(c->file) + 32;
	if (c->n == 0 && !c->stmp && db_mkdirs(c->dir) == 0 && (c->stmp = malloc(ln))) {
		snprintf(c->stmp, ln, "%s.tmp.%ld.s", c->file, (long)getpid());
		c->sfd = open(c->stmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (c->sfd < 0) {
			free(c->stmp);
			c->stmp = NULL;
		} else {
			(void)put_head(&c->sbuf, 0);    /* the count is written at the end */
			on = true;
		}
	}
	pthread_mutex_unlock(&c->mu);
	return on;
}

void db_icache_stream_put(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                          const ent_meta *ents, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ents[i].err || ents[i].st.data)
			return;         /* not kept: as db_icache_enc */
	pthread_mutex_lock(&c->mu);
	put_record(&c->sbuf, rel, (int64_t)size, mtime_ns, ents, (uint32_t)n);
	c->scount++;
	if (c->sbuf.n >= ((size_t)1 << 20)) {
		c->sbad |= c->sbuf.err || db_write_all(c->sfd, c->sbuf.p, c->sbuf.n) != 0;
		c->sbuf.n = 0;
	}
	pthread_mutex_unlock(&c->mu);
}

/* The streamed file completed: what another scan put in memory appended,
 * the count set, summed (sum_back), renamed over the old file. Any failure
 * leaves the old file. */
static void stream_end(db_icache *c)
{
	db_wbuf *b = &c->sbuf;
	for (size_t i = 0; i < c->n && !b->err; i++) {
		ent_meta *e = dec_ents(&c->recs[i]);
		if (!e) {
			b->err = true;
			break;
		}
		put_record(b, c->recs[i].rel, c->recs[i].size, c->recs[i].mtime, e, c->recs[i].n);
		free_ents(e, c->recs[i].n);
		c->scount++;
	}
	db_wbuf head = {0};
	size_t at = put_head(&head, c->scount);
	bool ok = !c->sbad && !b->err && !head.err &&
	          db_write_all(c->sfd, b->p, b->n) == 0 &&
	          pwrite(c->sfd, &c->scount, 8, (off_t)at) == 8;
	free(head.p);
	ok = ok && sum_back(c->sfd, c->stmp);
	if (close(c->sfd) != 0)
		ok = false;
	if (!ok || rename(c->stmp, c->file) != 0)
		unlink(c->stmp);
	free(b->p);
	free(c->stmp);
	c->stmp = NULL;
	c->sfd = -1;
	c->dirty = false;       /* written */
}

void db_icache_close(db_icache *c)
{
	if (!c)
		return;
	if (c->stmp)
		stream_end(c);
	else if (c->dirty && c->file)
		save(c);
	for (size_t i = 0; i < c->n; i++) {
		free(c->recs[i].rel);
		free(c->recs[i].blob);
	}
	free(c->recs);
	db_strmap_free(&c->idx);
	free(c->dir);
	free(c->file);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
