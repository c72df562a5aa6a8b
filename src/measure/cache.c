/* Metrics cache (issue 5): results of computed pairs, so reopening a tree
 * shows every number at once. One file per (reference, target, profile)
 * under the cache directory; an entry's key names every input file of the
 * pair by absolute path, size, mtime, inode + ctime (a rewrite with the
 * mtime put back still changes the ctime) and inner key, plus the metric
 * version — a changed file changes the key, so nothing stale is served.
 * Only the key's two 64-bit hashes are kept, in memory and in the file: the
 * keys (two absolute paths and their stats each) were most of the memory
 * at 10^6 files (issue 24); serving a wrong entry needs both to collide.
 * The file is a cache: missing, unreadable or corrupt (checksum) means
 * empty; it is rewritten whole (temp + fsync + rename). Bands are not
 * stored: they are recomputed from the metrics with the current profile. */
#include "pair/compare_priv.h"
#include "read/blockfile.h"
#include "db_dequant.h"
#include "xform.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/binio.h"
#include "db_hints.h"
#include "db_noise.h"
#include "db_routing.h"
#include "util/hash.h"

/* Bump when a metric's definition or the record layout changes. */
#define CACHE_METRIC_VERSION 2        /* 2: diff_downcast (v[15..22]) */
#define CACHE_MAGIC "DBMCACH4"   /* 2: checksum db_hash64; 3: key hashes, not keys;
                                   4: the checksum chained over 1 MiB blocks,
                                   read/blockfile.h */
/* Written and checksummed a block at a time (read/blockfile.h): the file
 * was built whole in memory (55 MB at 10^6 pairs, the end of a first run:
 * the peak of memory, issue 24). */
#define REC_NUMS 23             /* numbers per record, see put_metrics */

typedef struct crec {
	uint64_t h[2];          /* the key's hashes (key_hash) */
	double v[REC_NUMS];     /* put_metrics */
	bool used;              /* looked up or stored in this session */
} crec;

typedef struct cache {
	pthread_mutex_t mu;
	bool loaded, dirty;
	char *file;             /* the cache file; NULL: cache off */
	char *ref_real, *tgt_real;
	size_t *slots;          /* open addressing on h[0]: 1 + index in recs, 0 empty */
	size_t cap_slots;       /* a power of two, at least twice n */
	crec *recs;
	size_t n, cap;
} cache;

static char *real_or_copy(const char *p)
{
	char buf[PATH_MAX];
	return strdup(realpath(p, buf) ? buf : p);
}

static cache *get_cache(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	if (!pr->cache_dir)
		return NULL;
	pthread_mutex_lock(&pr->cache_mu);
	cache *k = pr->cache;
	if (k || !(k = calloc(1, sizeof *k))) {
		pthread_mutex_unlock(&pr->cache_mu);
		return k;
	}
	pthread_mutex_init(&k->mu, NULL);
	k->ref_real = real_or_copy(c->ref_root);
	k->tgt_real = real_or_copy(c->tgt_root);
	if (k->ref_real && k->tgt_real) {
		uint64_t h = DB_FNV_INIT;
		h = db_fnv(k->ref_real, strlen(k->ref_real) + 1, h);
		h = db_fnv(k->tgt_real, strlen(k->tgt_real) + 1, h);
		h = db_fnv(c->profile->name, strlen(c->profile->name) + 1, h);
		h = db_fnv(&pr->one_folder, sizeof pr->one_folder, h);
		size_t n = strlen(pr->cache_dir) + 40;
		if ((k->file = malloc(n)))
			snprintf(k->file, n, "%s/%016llx.cache", pr->cache_dir, (unsigned long long)h);
	}
	pr->cache = k;
	pthread_mutex_unlock(&pr->cache_mu);
	return k;
}

/* Appending to a growing key without printf (a key per pair on reopen). */
typedef struct kbuf {
	char *s;
	size_t n, cap;
	bool err;
} kbuf;

static void kput(kbuf *k, const char *p, size_t n)
{
	if (k->err)
		return;
	if (k->n + n + 1 > k->cap) {
		size_t cap = (k->n + n + 1) * 2;
		char *t = realloc(k->s, cap);
		if (!t) {
			k->err = true;
			return;
		}
		k->s = t;
		k->cap = cap;
	}
	memcpy(k->s + k->n, p, n);
	k->n += n;
	k->s[k->n] = 0;
}

static void kstr(kbuf *k, const char *s)
{
	kput(k, s, strlen(s));
}

static void kint(kbuf *k, long long v)
{
	char buf[24], *e = buf + sizeof buf, *p = e;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10));
	if (v < 0)
		*--p = '-';
	kput(k, p, (size_t)(e - p));
}

/* The identity of the file a statistics entry names for its tensor
 * (dump_tensor_data/NAME beside its dump): a rewritten .pt under an
 * unchanged dump.json is a changed input too. Such entries always come
 * with their statistics: neither the entry cache on disk nor the index
 * snapshot keeps a file that has them (db_icache_put, db_isnap_store). */
static void kdata(kbuf *b, const db_index *ix, const db_item *it)
{
	char *p = db_index_data_path(ix, it, it->st.data);
	struct stat st;
	kput(b, "\x1f" "d", 2);
	if (!p)
		b->err = true;
	else if (stat(p, &st) == 0) {
		kint(b, (long long)st.st_size);
		kput(b, "\x1f", 1);
		kint(b, (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec);
		kput(b, "\x1f", 1);
		kint(b, (long long)st.st_ino ^ (long long)st.st_ctim.tv_nsec);
	} else {
		kput(b, "-", 1);        /* none: measured on statistics */
	}
	free(p);
}

/* Key of a pair: profile, metric version, then each input item:
 * "v1\x1fPROFILE\x1fMERGED[/HOW/DIM[:PART...]]" + per item "\x1e" r|t PATH "\x1f" SIZE "\x1f"
 * MTIME "\x1f" KEY. */
static char *pair_key(db_compare *c, cache *k, const db_pair *p)
{
	kbuf b = {malloc(512), 0, 512, false};
	if (!b.s)
		return NULL;
	kput(&b, "v", 1);
	kint(&b, CACHE_METRIC_VERSION);
	kput(&b, "\x1f", 1);
	kstr(&b, c->profile->name);
	kput(&b, "\x1f", 1);
	kint(&b, p->merged);
	if (p->merged) {        /* how the shards were put together (a profile edit changes it) */
		kput(&b, "/", 1);
		kint(&b, p->unshard.how);
		kput(&b, "/", 1);
		kint(&b, p->unshard.dim);
		for (int i = 0; i < p->unshard.n_parts; i++) {
			kput(&b, ":", 1);
			kint(&b, p->unshard.parts[i]);
		}
	}
	size_t nr = p->merged ? p->n_ref_shards : 1, nt = p->merged ? p->n_tgt_shards : 1;
	for (size_t i = 0; i < nr + nt; i++) {
		bool ref = i < nr;
		const db_item *it = ref ? (p->merged ? p->ref_shards[i] : p->ref)
		                        : (p->merged ? p->tgt_shards[i - nr] : p->tgt);
		const db_index *ix = ref ? c->ref : c->tgt;
		kput(&b, ref ? "\x1er" : "\x1et", 2);
		kstr(&b, ref ? k->ref_real : k->tgt_real);
		if (!ix->root_is_file) {
			kput(&b, "/", 1);
			kstr(&b, it->path);
		}
		kput(&b, "\x1f", 1);
		kint(&b, (long long)it->size);
		kput(&b, "\x1f", 1);
		kint(&b, (long long)it->mtime_ns);
		kput(&b, "\x1f", 1);
		kint(&b, (long long)it->ident);
		kput(&b, "\x1f", 1);
		kstr(&b, it->key);
		if (it->has_st && it->st.data)  /* msprobe's tensor task: the .pt it names */
			kdata(&b, ix, it);
	}
	if (b.err) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

static void put_metrics(const db_metrics *m, double *v)
{
	v[0] = (double)m->n;
	v[1] = m->cos;
	v[2] = m->rel;
	v[3] = m->rel_l2;
	v[4] = m->rel_diff;
	v[5] = m->max_abs;
	v[6] = m->mean_abs;
	v[7] = (double)m->argmax;
	v[8] = m->byte_equal;
	v[9] = (double)m->nan_ref;
	v[10] = (double)m->nan_tgt;
	v[11] = (double)m->inf_ref;
	v[12] = (double)m->inf_tgt;
	v[13] = (double)m->nonfinite_mismatch;
	v[14] = 0;
	v[15] = (double)m->dc_dtype;
	const double dc[7] = {m->dc.cos, m->dc.rel, m->dc.rel_l2, m->dc.rel_diff, m->dc.max_abs,
	                      m->dc.mean_abs, m->dc.byte_equal};
	memcpy(v + 16, dc, sizeof dc);
}

static void get_metrics(const double *v, db_metrics *m)
{
	memset(m, 0, sizeof *m);
	m->n = (uint64_t)v[0];
	m->cos = v[1];
	m->rel = v[2];
	m->rel_l2 = v[3];
	m->rel_diff = v[4];
	m->max_abs = v[5];
	m->mean_abs = v[6];
	m->argmax = (int64_t)v[7];
	m->byte_equal = v[8];
	m->nan_ref = (uint64_t)v[9];
	m->nan_tgt = (uint64_t)v[10];
	m->inf_ref = (uint64_t)v[11];
	m->inf_tgt = (uint64_t)v[12];
	m->nonfinite_mismatch = (uint64_t)v[13];
	m->dc_dtype = (db_dtype)v[15];
	m->dc.cos = v[16];
	m->dc.rel = v[17];
	m->dc.rel_l2 = v[18];
	m->dc.rel_diff = v[19];
	m->dc.max_abs = v[20];
	m->dc.mean_abs = v[21];
	m->dc.byte_equal = v[22];
}

static void key_hash(const char *key, uint64_t h[2])
{
	size_t n = strlen(key);
	h[0] = db_hash64(key, n, DB_HASH_SEED);
	h[1] = db_hash64(key, n, ~DB_HASH_SEED ^ 0x5bd1e9955bd1e995ull);
}

static size_t *find_slot(const cache *k, const uint64_t h[2])
{
	size_t m = k->cap_slots - 1;
	for (size_t i = (size_t)h[0] & m;; i = (i + 1) & m) {
		size_t r = k->slots[i];
		if (!r || (k->recs[r - 1].h[0] == h[0] && k->recs[r - 1].h[1] == h[1]))
			return &k->slots[i];
	}
}

static int grow_slots(cache *k)
{
	size_t cap = k->cap_slots ? k->cap_slots * 2 : 1024;
	size_t *s = calloc(cap, sizeof *s);
	if (!s)
		return -1;
	free(k->slots);
	k->slots = s;
	k->cap_slots = cap;
	for (size_t i = 0; i < k->n; i++)
		*find_slot(k, k->recs[i].h) = i + 1;
	return 0;
}

static crec *get_rec(const cache *k, const uint64_t h[2])
{
	if (!k->cap_slots)
		return NULL;
	size_t r = *find_slot(k, h);
	return r ? &k->recs[r - 1] : NULL;
}

static int add_rec(cache *k, const uint64_t h[2], const double *v, bool used)
{
	crec *old = get_rec(k, h);
	if (old) {
		memcpy(old->v, v, sizeof old->v);
		old->used |= used;
		return 0;
	}
	if (2 * (k->n + 1) > k->cap_slots && grow_slots(k) != 0)
		return -1;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 256;
		crec *r = realloc(k->recs, cap * sizeof *r);
		if (!r)
			return -1;
		k->recs = r;
		k->cap = cap;
	}
	crec *r = &k->recs[k->n];
	r->h[0] = h[0];
	r->h[1] = h[1];
	memcpy(r->v, v, sizeof r->v);
	r->used = used;
	*find_slot(k, h) = ++k->n;
	return 0;
}

/* File: magic, u32 version, u64 count, records (u64 h[0], u64 h[1],
 * REC_NUMS doubles), u64 db_hash64 of everything before it. */
#define REC_BYTES (16 + REC_NUMS * sizeof(double))

static void load(cache *k)
{
	k->loaded = true;
	if (!k->file)
		return;
	size_t size;
	char *buf = db_slurp(k->file, 28, (size_t)1 << 30, &size);
	if (!buf)
		return;
	uint64_t sum, count;
	uint32_t ver;
	if (memcmp(buf, CACHE_MAGIC, 8) != 0)
		goto out;
	memcpy(&sum, buf + size - 8, 8);
	if (sum != db_block_sum(buf, size - 8))
		goto out;
	memcpy(&ver, buf + 8, 4);
	memcpy(&count, buf + 12, 8);
	if (ver != CACHE_METRIC_VERSION || count != (size - 28) / REC_BYTES ||
	    (size - 28) % REC_BYTES)
		goto out;
	/* room at once: no regrowth of a 10^6-entry table while reading */
	size_t cap = 1024;
	while (cap < 2 * count + 2)
		cap *= 2;
	if (!(k->recs = malloc((count + 1) * sizeof *k->recs)) ||
	    !(k->slots = calloc(cap, sizeof *k->slots)))
		goto out;
	k->cap = count + 1;
	k->cap_slots = cap;
	for (size_t i = 0, off = 20; i < count; i++, off += REC_BYTES) {
		uint64_t h[2];
		double v[REC_NUMS];
		memcpy(h, buf + off, 16);
		memcpy(v, buf + off + 16, sizeof v);
		if (add_rec(k, h, v, false) != 0)
			break;
	}
out:
	free(buf);
}

static bool quantized(const db_compare *c, const db_pair *p)
{
	return db_pair_dequantized(p) || db_pair_xform(c, p, NULL);
}

bool db_cache_lookup(db_compare *c, db_pair *p)
{
	/* a batch slot's start is not in an entry: found again; a dequantized
	 * pair's companions and floor are not in the key nor the entry */
	if (p->status != DB_ST_OK || p->slot.side || quantized(c, p))
		return false;
	cache *k = get_cache(c);
	if (!k || !k->file)
		return false;
	pthread_mutex_lock(&k->mu);
	if (!k->loaded)
		load(k);
	bool empty = k->n == 0;
	pthread_mutex_unlock(&k->mu);
	if (empty)
		return false;   /* a first run: no key built per pair for nothing */
	char *key = pair_key(c, k, p);
	if (!key)
		return false;
	uint64_t h[2];
	key_hash(key, h);
	free(key);
	bool hit = false;
	double v[REC_NUMS];
	pthread_mutex_lock(&k->mu);
	crec *r = get_rec(k, h);
	if (r) {
		r->used = true;
		memcpy(v, r->v, sizeof v);
		hit = true;
	}
	pthread_mutex_unlock(&k->mu);
	if (!hit)
		return false;
	get_metrics(v, &p->m);
	p->band = db_pair_band(c, p);
	db_replica_settle(c, p);
	db_noise_judge(c, p);
	atomic_store_explicit(&p->state, DB_PAIR_DONE, memory_order_release);
	db_slot_regime_settle(c, p);
	atomic_fetch_add(&c->n_cached, 1);
	atomic_fetch_add(&c->n_done, 1);
	return true;
}

void db_cache_store(db_compare *c, const db_pair *p)
{
	/* statistics-only metrics are read from a few numbers: not cached */
	if (p->status != DB_ST_OK || p->slot.side || quantized(c, p) || p->m.stats_only)
		return;
	cache *k = get_cache(c);
	if (!k || !k->file)
		return;
	char *key = pair_key(c, k, p);
	if (!key)
		return;
	uint64_t h[2];
	key_hash(key, h);
	free(key);
	double v[REC_NUMS];
	put_metrics(&p->m, v);
	pthread_mutex_lock(&k->mu);
	if (!k->loaded)
		load(k);
	if (add_rec(k, h, v, true) == 0)
		k->dirty = true;
	pthread_mutex_unlock(&k->mu);
}

void db_cache_flush(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	cache *k = pr ? pr->cache : NULL;
	if (!k || !k->file)
		return;
	pthread_mutex_lock(&k->mu);
	if (!k->dirty) {
		pthread_mutex_unlock(&k->mu);
		return;
	}
	/* entries of files that changed are never hit again: when they pile
	 * up, keep only this session's */
	size_t used = 0;
	for (size_t i = 0; i < k->n; i++)
		used += k->recs[i].used;
	bool prune = k->n > 2 * used + 1024;
	uint64_t count = prune ? used : k->n;
	db_bfile f;
	int rc = -1;
	if (db_bfile_open(&f, pr->cache_dir, k->file)) {
		db_wbuf w = {0};
		uint32_t ver = CACHE_METRIC_VERSION;
		db_wbuf_put(&w, CACHE_MAGIC, 8);
		db_wbuf_put(&w, &ver, 4);
		db_wbuf_put(&w, &count, 8);
		for (size_t i = 0; i < k->n && !f.bad; i++) {
			if (prune && !k->recs[i].used)
				continue;
			db_wbuf_put(&w, k->recs[i].h, 16);
			db_wbuf_put(&w, k->recs[i].v, sizeof k->recs[i].v);
			db_bfile_spill(&f, &w, false);
		}
		rc = db_bfile_close(&f, &w, true);
		free(w.p);
	}
	/* a cache that cannot be kept is worth a word, never a failure: the
	 * old file (if any) is untouched, the numbers are right */
	if (rc != 0)
		snprintf(c->cache_err, sizeof c->cache_err, "%s: %s: %s", k->file, f.what,
		         strerror(f.eno));
	else
		c->cache_err[0] = '\0';
	if (rc == 0)
		k->dirty = false;
	pthread_mutex_unlock(&k->mu);
}

void db_cache_close(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	cache *k = pr ? pr->cache : NULL;
	if (!k)
		return;
	db_cache_flush(c);
	free(k->recs);
	free(k->slots);
	free(k->file);
	free(k->ref_real);
	free(k->tgt_real);
	pthread_mutex_destroy(&k->mu);
	free(k);
	pr->cache = NULL;
}
