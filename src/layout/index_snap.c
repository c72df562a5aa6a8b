/* Snapshots for instant reopen (issue 5). Reopening an unchanged tree
 * should cost its listing, not a regex match, a sort and a cache lookup per
 * file. Two records per tree root, each one small file beside the entry
 * cache:
 *   ROOTHASH.SIDE.snap  the whole index of the tree for one side filter;
 *   ROOTHASH.detect     which profile detection picked, and why.
 * A record is used only when its key matches: the key hashes every input
 * the result depends on — the listing (path, size, mtime of every file;
 * paths only for detection), the profile's rules the index reads, the side
 * filter and the program version — so an added, removed or touched file, or
 * an edited profile, misses and the slow path runs (and stores a new
 * record). Corrupt or foreign files read as a miss (checksum).
 * Items a read error refused are kept with their messages (issue 24: a
 * tree of 10^6 files with a few unreadable ones was a full scan at every
 * open); a load reads those files again and misses when one now reads
 * differently (a read error may pass: EIO, out of memory).
 * A third record lets a reopen skip the listing (compare_reopen.c):
 *   ROOTHASH.stamp      the last full listing of the tree: its file count,
 *                       hashes, and the device, inode and mtime of every
 *                       directory in it; while those still match, the
 *                       listing stands in for a new one until it is
 *                       checked behind the first frame. */
#include "index_priv.h"
#include "snap_record.h"
#include "read/blockfile.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_reader.h"
#include "read/binio.h"
#include "util/hash.h"
#include "util/intern.h"
#include "read/walk.h"

#define SNAP_MAGIC "DBISNAP8"     /* 3: seq from recorded order first; 4: ident;
                                     * 5: names cut to their field refused;
                                     * 6: items with read errors kept;
                                     * 7: a names table, the size of the
                                     * paths' and keys' block; 8: a key a
                                     * file repeats renamed "KEY #N" */
#define DETECT_MAGIC "DBDETEC1"
#define STAMP_MAGIC "DBSTAMP1"
#ifndef DB_VERSION
#define DB_VERSION "dev"
#endif

/* Strings hash with their NUL; NULL differs from "". */
static uint64_t fnv_str(const char *s, uint64_t h)
{
	static const char null_mark[] = "\x01(null)";
	return s ? db_fnv(s, strlen(s) + 1, h) : db_fnv(null_mark, sizeof null_mark, h);
}

static uint64_t fnv_strs(char *const *v, size_t n, uint64_t h)
{
	h = db_fnv(&n, sizeof n, h);
	for (size_t i = 0; i < n; i++)
		h = fnv_str(v[i], h);
	return h;
}

/* ---- keys ----------------------------------------------------------------- */

/* The profile's fields db_index_scan reads (match_path, match_key,
 * inner_key, phase order, stage order for trees that record none,
 * model-level stages drawn after the layers). */
static uint64_t profile_index_hash(const db_profile *p, uint64_t h)
{
	h = fnv_str(p->files_pat, h);
	h = fnv_str(p->path_pat, h);
	h = fnv_str(p->key_pat, h);
	h = fnv_str(p->value_key, h);
	h = fnv_strs(p->ignore_keys, p->n_ignore_keys, h);
	h = fnv_str(p->side_ref, h);
	h = fnv_str(p->side_target, h);
	h = fnv_strs(p->phase_order, p->n_phase_order, h);
	h = fnv_strs(p->stage_order, p->n_stage_order, h);
	h = db_fnv(&p->dict_order_none, sizeof p->dict_order_none, h);
	h = fnv_strs(p->model_after, p->n_model_after, h);
	h = fnv_strs(p->rename_from, p->n_rename, h);
	h = fnv_strs(p->rename_to, p->n_rename, h);
	for (size_t i = 0; i < p->n_rewrites; i++) {
		h = db_fnv(&p->rewrites[i].field, sizeof p->rewrites[i].field, h);
		h = fnv_str(p->rewrites[i].pattern, h);
		h = fnv_str(p->rewrites[i].to, h);
	}
	for (size_t i = 0; i < p->n_pass_shift; i++) {
		h = fnv_str(p->pass_shift_pat[i], h);
		h = db_fnv(&p->pass_shift_by[i], sizeof p->pass_shift_by[i], h);
	}
	return h;
}

uint64_t db_isnap_key(const db_walk *w, bool is_file, const db_profile *p, const char *side)
{
	uint64_t h = fnv_str(SNAP_MAGIC DB_VERSION, DB_FNV_INIT);
	h = db_fnv(&is_file, sizeof is_file, h);
	h = fnv_str(side, h);
	h = profile_index_hash(p, h);
	return h ^ db_walk_hash(w, false);
}

uint64_t db_detect_key(const db_walk *w, const db_profile *const *profiles, size_t n)
{
	uint64_t h = fnv_str(DETECT_MAGIC DB_VERSION, DB_FNV_INIT);
	h = db_fnv(&n, sizeof n, h);
	/* detection reads the name and what match_path reads */
	for (size_t i = 0; i < n; i++) {
		const db_profile *p = profiles[i];
		h = fnv_str(p->name, h);
		h = fnv_str(p->files_pat, h);
		h = fnv_str(p->path_pat, h);
		h = fnv_str(p->side_ref, h);
		h = fnv_str(p->side_target, h);
	}
	return h ^ db_walk_hash(w, true);
}

/* ---- index snapshots ------------------------------------------------------ */

static const char *side_tag(const char *side)
{
	return !side ? "all.snap" : !strcmp(side, "ref") ? "ref.snap" : "target.snap";
}

/* The names of a snapshot's items, each once: the fields of an item are
 * four indexes into this table (a million items carry a few hundred
 * distinct names). Keyed by pointer: the names are interned, so equal
 * names share one (two copies of a name would only cost a row). */
typedef struct name_tab {
	const char **name;      /* by index */
	uint32_t n;
	struct { const char *p; uint32_t i; } *slot;
	size_t cap;             /* slots, a power of two */
} name_tab;

static size_t ptr_hash(const char *p, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (cap - 1);
}

/* The index of name p, added when new; -1 on OOM. */
static int64_t name_index(name_tab *t, const char *p)
{
	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		const char **nn = realloc(t->name, cap / 2 * sizeof *nn);
		void *ns = calloc(cap, sizeof *t->slot);
		if (!nn || !ns) {
			if (nn)
				t->name = nn;
			free(ns);
			return -1;
		}
		t->name = nn;
		free(t->slot);
		t->slot = ns;
		t->cap = cap;
		for (uint32_t i = 0; i < t->n; i++) {
			size_t h = ptr_hash(t->name[i], cap);
			while (t->slot[h].p)
				h = (h + 1) & (cap - 1);
			t->slot[h].p = t->name[i];
			t->slot[h].i = i;
		}
	}
	size_t h = ptr_hash(p, t->cap);
	while (t->slot[h].p && t->slot[h].p != p)
		h = (h + 1) & (t->cap - 1);
	if (!t->slot[h].p) {
		t->slot[h].p = p;
		t->slot[h].i = t->n;
		t->name[t->n++] = p;
	}
	return t->slot[h].i;
}

/* Bytes of the block a load puts paths and keys in: "" once, a path when
 * it differs from the previous item's (a file's items are neighbours), a
 * key when not "". The load applies the same rule. */
static uint64_t strs_bytes(const db_index *ix)
{
	uint64_t n = 1;
	for (size_t i = 0; i < ix->n_items; i++) {
		const db_item *it = &ix->items[i];
		if (!i || strcmp(it->path, ix->items[i - 1].path))
			n += strlen(it->path) + 1;
		if (*it->key)
			n += strlen(it->key) + 1;
	}
	return n;
}

void db_isnap_store(const char *dir, const char *root, const char *side, uint64_t key,
                    const db_index *ix)
{
	if (!dir || !*dir)
		return;
	for (size_t i = 0; i < ix->n_items; i++)
		if (ix->items[i].has_st)
			return;         /* a snapshot keeps no statistics: an item opened
			                   from it re-read its dump.json for every pair
			                   (and the metrics cache needs the tensor file
			                   st.data names, cache.c); the index cache keeps them */
	name_tab t = {0};
	for (size_t i = 0; i < ix->n_items; i++) {
		const db_ifields *f = &ix->items[i].f;
		if (name_index(&t, f->side) < 0 || name_index(&t, f->phase) < 0 ||
		    name_index(&t, f->pass) < 0 || name_index(&t, f->stage) < 0)
			goto out;
	}
	char *path = snap_path(dir, root, side_tag(side));
	db_bfile o;             /* a block at a time: no copy of it all in memory */
	if (!path || !db_bfile_open(&o, dir, path)) {
		free(path);
		goto out;
	}
	db_wbuf b = {0};
	db_wbuf_put(&b, SNAP_MAGIC, 8);
	db_wbuf_put(&b, &key, 8);
	uint64_t v[6] = {ix->n_files, ix->n_refused, ix->n_items, ix->n_unparsed, t.n,
	                 strs_bytes(ix)};
	db_wbuf_put(&b, v, sizeof v);
	for (size_t i = 0; i < ix->n_unparsed; i++)
		db_wbuf_str(&b, ix->unparsed[i]);
	for (uint32_t i = 0; i < t.n; i++)
		db_wbuf_str(&b, t.name[i]);
	for (size_t i = 0; i < ix->n_items; i++) {
		const db_item *it = &ix->items[i];
		db_wbuf_str(&b, it->path);
		db_wbuf_str(&b, it->key);
		uint32_t nv[4] = {(uint32_t)name_index(&t, it->f.side),
		                  (uint32_t)name_index(&t, it->f.phase),
		                  (uint32_t)name_index(&t, it->f.pass),
		                  (uint32_t)name_index(&t, it->f.stage)};
		db_wbuf_put(&b, nv, sizeof nv);
		int32_t iv[5] = {it->f.rank, it->f.layer, (int32_t)it->dtype, it->ndim,
		                 it->occurrence};
		int64_t lv[5] = {it->f.order, it->seq, (int64_t)it->size, it->mtime_ns,
		                 (int64_t)it->ident};
		uint8_t sf = (uint8_t)(it->f.stage_is_file | it->refused << 1);
		db_wbuf_str(&b, it->err ? it->err : "");
		db_wbuf_put(&b, iv, sizeof iv);
		db_wbuf_put(&b, lv, sizeof lv);
		db_wbuf_put(&b, &sf, 1);
		db_wbuf_put(&b, it->shape, (size_t)it->ndim * sizeof *it->shape);
		db_bfile_spill(&o, &b, false);
	}
	(void)db_bfile_close(&o, &b, false);    /* no fsync: see write_record */
	free(b.p);
	free(path);
out:
	free(t.name);
	free(t.slot);
}

/* The stored fields' names: the same bounds db_fields gives them. */
#define FIELD_CAP(m) sizeof ((db_fields *)0)->m

/* The next string's bytes in place (u32 length, no NUL in them); NULL and
 * bad when short or holding a NUL. */
static const char *rd_bytes(db_rd *r, uint32_t *len)
{
	db_rd_take(r, len, 4);
	if (r->bad || r->left < *len || memchr(r->p, 0, *len)) {
		r->bad = true;
		return NULL;
	}
	const char *s = r->p;
	r->p += *len;
	r->left -= *len;
	return s;
}

/* The block of an index's paths and keys (strs_bytes), filled in order. */
typedef struct strs_fill {
	db_index *ix;
	size_t used;
	const char *last;       /* the previous item's path */
	size_t last_len;
} strs_fill;

/* The next item's path: the previous one when equal, else copied in. */
static char *rd_path(db_rd *r, strs_fill *sf)
{
	uint32_t l;
	const char *s = rd_bytes(r, &l);
	if (!s)
		return NULL;
	if (sf->last && l == sf->last_len && !memcmp(s, sf->last, l))
		return (char *)sf->last;
	if (sf->ix->strs_len - sf->used <= l) {
		r->bad = true;  /* more than the header said */
		return NULL;
	}
	char *d = sf->ix->strs + sf->used;
	memcpy(d, s, l);
	d[l] = 0;
	sf->used += (size_t)l + 1;
	sf->last = d;
	sf->last_len = l;
	return d;
}

/* The next item's key: "" is the block's first byte. */
static char *rd_key(db_rd *r, strs_fill *sf)
{
	uint32_t l;
	const char *s = rd_bytes(r, &l);
	if (!s)
		return NULL;
	if (!l)
		return sf->ix->strs;
	if (sf->ix->strs_len - sf->used <= l) {
		r->bad = true;
		return NULL;
	}
	char *d = sf->ix->strs + sf->used;
	memcpy(d, s, l);
	d[l] = 0;
	sf->used += (size_t)l + 1;
	return d;
}

/* The names table, interned; each name's length for the fields' bounds. */
static int rd_names(db_rd *r, uint64_t n, const char ***names, uint32_t **lens)
{
	*names = calloc(n ? n : 1, sizeof **names);
	*lens = calloc(n ? n : 1, sizeof **lens);
	if (!*names || !*lens)
		return -1;
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		const char *s = rd_bytes(r, &(*lens)[i]);
		if (s && !((*names)[i] = db_intern_n(s, (*lens)[i])))
			return -1;
	}
	return r->bad ? -1 : 0;
}

static int copy_skipped(db_index *ix, const db_walk *w)
{
	if (!w->n_skipped)
		return 0;
	if (!(ix->skipped = calloc(w->n_skipped, sizeof *ix->skipped)))
		return -1;
	for (size_t i = 0; i < w->n_skipped; i++) {
		if (!(ix->skipped[i] = strdup(w->skipped[i])))
			return -1;
		ix->n_skipped++;
	}
	return 0;
}

/* An item's error: NULL for "" without a malloc (nearly every item). */
static char *rd_err(db_rd *r)
{
	uint32_t l;
	if (r->left >= 4 && (memcpy(&l, r->p, 4), l == 0)) {
		db_rd_take(r, &l, 4);
		return NULL;
	}
	return db_rd_str(r);
}

/* Every file the reader refused is refused again, with the same message:
 * only those files are read (the snapshot stands for the others). */
static bool same_refusals(const db_index *ix)
{
	const char *last = NULL;
	for (size_t i = 0; i < ix->n_items; i++) {
		const db_item *it = &ix->items[i];
		if (!it->refused || (last && !strcmp(last, it->path)))
			continue;
		last = it->path;
		char *full = db_index_path(ix, it);
		db_file *f = NULL;
		db_err e = {{0}};
		int rc = full ? db_file_open(full, &f, &e) : 0;
		free(full);
		if (rc == 0) {
			db_file_close(f);
			return false;   /* reads now (or OOM): the full scan */
		}
		if (strcmp(e.msg[0] ? e.msg : "file refused", it->err))
			return false;
	}
	return true;
}

db_index *db_isnap_load(const char *dir, const char *root, const char *side, uint64_t key,
                        const db_walk *w, bool is_file, const db_profile *p)
{
	db_rd r;
	record buf;
	if (!load_record(dir, root, side_tag(side), SNAP_MAGIC, key, &r, &buf))
		return NULL;
	uint64_t v[6];
	db_rd_take(&r, v, sizeof v);
	const char **names = NULL;
	uint32_t *lens = NULL;
	db_index *ix = calloc(1, sizeof *ix);
	/* every item takes at least 89 bytes, a name or string 4: bounds the
	 * allocations; the block holds at most a NUL for each length */
	if (!ix || r.bad || v[2] > r.left / 89 || v[3] > r.left / 4 || v[4] > r.left / 4 ||
	    !v[5] || v[5] > r.left)
		goto bad;
	ix->profile = p;
	ix->root_is_file = is_file;
	ix->n_files_seen = w->n_files;
	ix->n_links_out = w->n_links_out;
	ix->n_files = (size_t)v[0];
	ix->n_refused = (size_t)v[1];
	if (!(ix->root = strdup(root)) || copy_skipped(ix, w) != 0)
		goto bad;
	if (v[3] && !(ix->unparsed = calloc((size_t)v[3], sizeof *ix->unparsed)))
		goto bad;
	for (uint64_t i = 0; i < v[3] && !r.bad; i++)
		if ((ix->unparsed[i] = db_rd_str(&r)))
			ix->n_unparsed++;
	if (rd_names(&r, v[4], &names, &lens) != 0)
		goto bad;
	if (v[2] && !(ix->items = calloc((size_t)v[2], sizeof *ix->items)))
		goto bad;
	if (!(ix->strs = malloc((size_t)v[5])))
		goto bad;
	ix->strs_len = (size_t)v[5];
	ix->strs[0] = 0;
	strs_fill sf = {ix, 1, NULL, 0};
	const size_t cap[4] = {FIELD_CAP(side), FIELD_CAP(phase), FIELD_CAP(pass), FIELD_CAP(stage)};
	for (uint64_t i = 0; i < v[2] && !r.bad; i++) {
		db_item *it = &ix->items[ix->n_items++];
		it->path = rd_path(&r, &sf);
		it->key = rd_key(&r, &sf);
		uint32_t nv[4];
		db_rd_take(&r, nv, sizeof nv);
		const char *f[4];
		for (int k = 0; k < 4; k++) {
			if (nv[k] >= v[4] || lens[nv[k]] >= cap[k]) {
				r.bad = true;
				break;
			}
			f[k] = names[nv[k]];
		}
		if (r.bad)
			break;
		it->f.side = f[0];
		it->f.phase = f[1];
		it->f.pass = f[2];
		it->f.stage = f[3];
		it->err = rd_err(&r);
		/* iv[5], lv[5], flags: one read */
		unsigned char rec[5 * 4 + 5 * 8 + 1];
		int32_t iv[5];
		int64_t lv[5];
		db_rd_take(&r, rec, sizeof rec);
		memcpy(iv, rec, sizeof iv);
		memcpy(lv, rec + sizeof iv, sizeof lv);
		uint8_t flags = rec[sizeof iv + sizeof lv];
		it->f.rank = iv[0];
		it->f.layer = iv[1];
		it->f.order = lv[0];
		it->f.stage_is_file = flags & 1;
		it->refused = it->err && (flags & 2);
		if (iv[2] < 0 || iv[2] >= DB_DT__COUNT || iv[3] < 0 || iv[3] > DB_MAX_DIMS)
			r.bad = true;
		it->dtype = (db_dtype)iv[2];
		it->ndim = r.bad ? 0 : iv[3];
		it->occurrence = iv[4];
		it->seq = lv[1];
		it->size = (off_t)lv[2];
		it->mtime_ns = lv[3];
		it->ident = (uint64_t)lv[4];
		db_rd_take(&r, it->shape, (size_t)it->ndim * sizeof *it->shape);
	}
	if (r.bad || r.left || sf.used != ix->strs_len || !same_refusals(ix))
		goto bad;
	ix->records_order = db_index_records_order(ix->items, ix->n_items, p);
	free(names);
	free(lens);
	drop_record(&buf);
	return ix;
bad:
	free(names);
	free(lens);
	drop_record(&buf);
	db_index_free(ix);
	return NULL;
}

/* ---- detection ------------------------------------------------------------ */

bool db_detect_load(const char *dir, const char *root, uint64_t key, char *name,
                    size_t namelen, char *why, size_t whylen)
{
	db_rd r;
	record buf;
	if (!load_record(dir, root, "detect", DETECT_MAGIC, key, &r, &buf))
		return false;
	db_rd_fixed(&r, name, namelen);
	db_rd_fixed(&r, why, whylen);
	bool ok = !r.bad && !r.left && *name;
	drop_record(&buf);
	return ok;
}

void db_detect_store(const char *dir, const char *root, uint64_t key, const char *name,
                     const char *why)
{
	if (!dir || !*dir)
		return;
	char *path = snap_path(dir, root, "detect");
	if (!path)
		return;
	db_wbuf b = {0};
	db_wbuf_put(&b, DETECT_MAGIC, 8);
	db_wbuf_put(&b, &key, 8);
	db_wbuf_str(&b, name);
	db_wbuf_str(&b, why);
	write_record(dir, path, &b);
	free(b.p);
	free(path);
}

/* ---- directory stamps ----------------------------------------------------- */

static uint64_t stamp_key(void)
{
	/* a listing made following links out of the tree is no stand-in
	 * for one made without, nor the other way round */
	bool follow = db_walk_follows_links();
	return db_fnv(&follow, sizeof follow, fnv_str(STAMP_MAGIC DB_VERSION, DB_FNV_INIT));
}

void db_stamp_store(const char *dir, const char *root, const db_walk *w)
{
	if (!dir || !*dir || w->stub || w->n_skipped || !w->n_dirs)
		return;         /* skipped entries: their trouble may pass */
	char *path = snap_path(dir, root, "stamp");
	if (!path)
		return;
	uint64_t key = stamp_key();
	uint64_t v[4] = {w->n_files, db_walk_hash(w, false), db_walk_hash(w, true), w->n_dirs};
	db_wbuf b = {0};
	db_wbuf_put(&b, STAMP_MAGIC, 8);
	db_wbuf_put(&b, &key, 8);
	db_wbuf_put(&b, v, sizeof v);
	for (size_t i = 0; i < w->n_dirs; i++) {
		const db_walk_stamp *d = &w->dirs[i];
		uint64_t dv[3] = {d->dev, d->ino, (uint64_t)d->mtime_ns};
		db_wbuf_str(&b, d->rel);
		db_wbuf_put(&b, dv, sizeof dv);
	}
	/* every full open lists the tree: write only what changed */
	record old;
	bool had = read_record(path, STAMP_MAGIC, key, &old);
	if (!had || old.size - 8 != b.n || memcmp(old.p, b.p, b.n))
		write_record(dir, path, &b);
	if (had)
		drop_record(&old);
	free(b.p);
	free(path);
}

bool db_stamp_load(const char *dir, const char *root, db_walk *stub)
{
	memset(stub, 0, sizeof *stub);
	db_rd r;
	record buf;
	if (!load_record(dir, root, "stamp", STAMP_MAGIC, stamp_key(), &r, &buf))
		return false;
	uint64_t v[4];
	db_rd_take(&r, v, sizeof v);
	/* every directory takes at least 28 bytes: bounds the allocation */
	db_walk_stamp *dirs = !r.bad && v[3] && v[3] <= r.left / 28 ? calloc(v[3], sizeof *dirs)
	                                                         : NULL;
	size_t n = 0;
	for (; dirs && n < v[3] && !r.bad; n++) {
		uint64_t dv[3];
		dirs[n].rel = db_rd_str(&r);
		db_rd_take(&r, dv, sizeof dv);
		dirs[n].dev = dv[0];
		dirs[n].ino = dv[1];
		dirs[n].mtime_ns = (int64_t)dv[2];
	}
	bool ok = dirs && !r.bad && !r.left && db_walk_dirs_same(root, dirs, n);
	drop_record(&buf);
	if (ok) {
		stub->stub = true;
		stub->n_files = (size_t)v[0];
		stub->hash[0] = v[1];
		stub->hash[1] = v[2];
		stub->dirs = dirs;      /* the watcher's directories */
		stub->n_dirs = stub->cap_dirs = n;
	} else {
		for (size_t i = 0; dirs && i < n; i++)
			free(dirs[i].rel);
		free(dirs);
	}
	return ok;
}
