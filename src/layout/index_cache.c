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
#include "read/blockfile.h"
#include "util/hash.h"
#include "util/strmap.h"

#define ICACHE_MAGIC "DBICACH3"   /* 2: written and summed a block at a time
                                     (read/blockfile.h), not FNV a byte at a
                                     time; no fsync; 3: a key a file repeats
                                     renamed "KEY #N" (reader.c) */
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
	bool streaming;
	db_bfile sf;            /* the file being written */
	size_t count_at;        /* where its count is, patched at the end */
	uint64_t scount;
	db_wbuf sbuf;
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

static void load(db_icache *c)
{
	size_t size;
	char *buf = db_slurp(c->file, 32, (size_t)1 << 31, &size);
	if (!buf)
		return;
	uint64_t sum;
	memcpy(&sum, buf + size - 8, 8);
	if (memcmp(buf, ICACHE_MAGIC, 8) || sum != db_block_sum(buf, size - 8))
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

/* Errors may pass; a dump whose entries name tensor files (msprobe's tensor
 * task) is read again, since the file keeps no statistics and the metrics
 * cache keys on the files they name (measure/cache.c): neither is kept. */
static bool keepable(const ent_meta *ents, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ents[i].err || ents[i].st.data)
			return false;
	return true;
}

bool db_icache_enc(const ent_meta *ents, size_t n, db_wbuf *b)
{
	if (!keepable(ents, n))
		return false;
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

/* The header up to the count, and the count's offset in the file. */
static size_t put_head(db_wbuf *b, uint64_t count)
{
	db_wbuf_put(b, ICACHE_MAGIC, 8);
	db_wbuf_str(b, DB_VERSION);
	size_t at = b->n;
	db_wbuf_put(b, &count, 8);
	return at;
}

/* Written a block at a time (read/blockfile.h): the whole file built in
 * memory first was 58 MB more at the peak of a 10^6-file first open (issue
 * 24). No fsync, as the snapshots: a file torn by a crash fails its
 * checksum and reads as empty, which costs one slow open, never a wrong
 * answer. */
static void save(db_icache *c)
{
	size_t used = 0;
	for (size_t i = 0; i < c->n; i++)
		used += c->recs[i].used;
	/* files gone or changed pile up: keep this session's when they do */
	bool prune = c->n > 2 * used + 1024;
	db_bfile f;
	if (!db_bfile_open(&f, c->dir, c->file))
		return;
	db_wbuf b = {0};
	(void)put_head(&b, prune ? used : c->n);
	for (size_t i = 0; i < c->n && !f.bad; i++) {
		const irec *r = &c->recs[i];
		if (prune && !r->used)
			continue;
		ent_meta *e = dec_ents(r);
		if (!e) {
			b.err = true;   /* out of memory: nothing written */
			break;
		}
		put_record(&b, r->rel, r->size, r->mtime, e, r->n);
		free_ents(e, r->n);
		db_bfile_spill(&f, &b, false);
	}
	(void)db_bfile_close(&f, &b, false);
	free(b.p);
}

const char *db_icache_dir(const db_icache *c)
{
	return c ? c->dir : NULL;
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
	if (c->n == 0 && !c->streaming && db_bfile_open(&c->sf, c->dir, c->file)) {
		c->count_at = put_head(&c->sbuf, 0);    /* the count is set at the end */
		c->streaming = true;
	}
	bool on = c->streaming;
	pthread_mutex_unlock(&c->mu);
	return on;
}

void db_icache_stream_put(db_icache *c, const char *rel, off_t size, int64_t mtime_ns,
                          const ent_meta *ents, size_t n)
{
	if (!keepable(ents, n))
		return;
	pthread_mutex_lock(&c->mu);
	put_record(&c->sbuf, rel, (int64_t)size, mtime_ns, ents, (uint32_t)n);
	c->scount++;
	db_bfile_spill(&c->sf, &c->sbuf, false);
	pthread_mutex_unlock(&c->mu);
}

/* The streamed file completed: what another scan put in memory appended,
 * the count set, the whole summed again by reading it back (its head
 * changed after its first block was summed), renamed over the old file.
 * Any failure leaves the old file. */
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
	db_bfile_spill(&c->sf, b, true);
	if (!c->sf.bad && pwrite(c->sf.fd, &c->scount, 8, (off_t)c->count_at) != 8)
		c->sf.bad = true;
	if (!c->sf.bad)
		(void)db_bfile_sum_back(&c->sf);
	(void)db_bfile_close(&c->sf, b, false);
	free(b->p);
	*b = (db_wbuf){0};
	c->streaming = false;
	c->dirty = false;       /* written */
}

void db_icache_close(db_icache *c)
{
	if (!c)
		return;
	if (c->streaming)
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
