#include "db_index.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_reader.h"
#include "index_open.h"
#include "index_priv.h"
#include "util/hash.h"
#include "db_re.h"
#include "util/strmap.h"
#include "read/walk.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static bool side_kept(const char *side, const db_fields *f)
{
	return !side || !f->side[0] || !strcmp(side, f->side);
}

/* key is the profile's value_key or lies under it ("value", "value.0"). */
static bool key_is_value(const db_profile *p, const char *key)
{
	if (!p->value_key || !*p->value_key)
		return false;
	size_t n = strlen(p->value_key);
	return !strncmp(key, p->value_key, n) && (key[n] == 0 || key[n] == '.');
}

typedef struct build {
	db_index *ix;
	size_t cap;
	size_t *file_idx, *entry_idx;   /* parallel to ix->items while building */
} build;

static int reserve_items(build *b, size_t cap)
{
	db_index *ix = b->ix;
	db_item *it = realloc(ix->items, cap * sizeof *it);
	size_t *f = realloc(b->file_idx, cap * sizeof *f);
	size_t *e = f ? realloc(b->entry_idx, cap * sizeof *e) : NULL;
	if (it)
		ix->items = it;
	if (f)
		b->file_idx = f;
	if (e)
		b->entry_idx = e;
	if (!it || !f || !e)
		return -1;
	b->cap = cap;
	return 0;
}

static db_item *new_item(build *b, size_t fi, size_t ei)
{
	db_index *ix = b->ix;
	if (ix->n_items == b->cap && reserve_items(b, b->cap ? b->cap * 2 : 256) != 0)
		return NULL;
	b->file_idx[ix->n_items] = fi;
	b->entry_idx[ix->n_items] = ei;
	db_item *it = &ix->items[ix->n_items++];
	memset(it, 0, sizeof *it);
	return it;
}

static void default_stage(db_fields *f, const char *key, const char *rel)
{
	if (f->stage[0])
		return;
	if (key && *key) {
		f->cut |= (size_t)snprintf(f->stage, sizeof f->stage, "%s", key) >= sizeof f->stage;
		return;
	}
	const char *b = base_name(rel);
	const char *dot = strrchr(b, '.');
	int n = dot && dot != b ? (int)(dot - b) : (int)strlen(b);
	f->cut |= (size_t)snprintf(f->stage, sizeof f->stage, "%.*s", n, b) >= sizeof f->stage;
}

/* A name cut to its field (db_fields.cut) would pair by its first bytes
 * with another alike in them: a reference "...x.q_proj" with a target
 * "...x.k_proj" as one pair, a scramble. The item is refused instead: an
 * error naming its file and entry, and a stage of its own (the first bytes
 * and a hash of file and entry) that pairs with no other name. */
static int refuse_cut(db_item *it, db_fields *f, const char *full)
{
	size_t sl = strlen(f->stage);
	const char *what = sl + 1 == sizeof f->stage ? "stage"
	                   : strlen(f->phase) + 1 == sizeof f->phase ? "phase" : "pass";
	size_t cap = !strcmp(what, "stage") ? sizeof f->stage - 1 : sizeof f->phase - 1;
	db_err e;
	db_err_set(&e, full, it->key && *it->key ? it->key : NULL, -1,
	           "%s name longer than %zu bytes: refused, not compared (cut, it could pair "
	           "with another name alike in its first %zu bytes)", what, cap, cap);
	uint64_t h = db_hash64(it->path, strlen(it->path), DB_HASH_SEED);
	h = db_hash64(it->key ? it->key : "", it->key ? strlen(it->key) : 0, h);
	size_t at = sl < 200 ? sl : 200;
	snprintf(f->stage + at, sizeof f->stage - at, "...#%016llx", (unsigned long long)h);
	free(it->err);
	it->err = strdup(e.msg);
	it->refused = false;    /* the name's error now, not the reader's */
	return it->err ? 0 : -1;
}

/* The item refused for its cut name (refuse_cut), named by its full path. */
static int refuse_cut_job(build *b, db_item *it, db_fields *f, const file_job *j)
{
	char *full = db_index_job_full(b->ix->root, b->ix->root_is_file, j);
	int rc = full ? refuse_cut(it, f, full) : -1;
	free(full);
	return rc;
}

static int items_from_job(build *b, const db_profile *p, const char *side,
                          file_job *j, size_t fi)
{
	if (j->err) {
		db_item *it = new_item(b, fi, 0);
		if (!it)
			return -1;
		it->path = strdup(j->rel);
		it->key = strdup("");
		db_fields f;
		db_fields_load(&j->f, &f);
		db_err e;
		(void)db_profile_match_key(p, "", &f, &e);  /* finalises a file stage */
		default_stage(&f, NULL, j->rel);
		it->err = j->err;
		it->refused = j->read_err;
		j->err = NULL;
		if (!it->path || !it->key || (f.cut && refuse_cut_job(b, it, &f, j) < 0) ||
		    db_fields_store(&f, &it->f) < 0)
			return -1;
		it->size = j->size;
		it->mtime_ns = j->mtime_ns;
		it->ident = j->ident;
		b->ix->n_refused++;
		return it->path && it->key ? 0 : -1;
	}
	/* a dict holding the value key: its other members are metadata */
	bool has_value = false;
	for (size_t i = 0; i < j->n_ents && !has_value; i++)
		has_value = key_is_value(p, j->ents[i].key);
	for (size_t i = 0; i < j->n_ents; i++) {
		ent_meta *m = &j->ents[i];
		if (has_value && !key_is_value(p, m->key))
			continue;
		db_fields f;
		db_fields_load(&j->f, &f);
		db_err e;
		int mk = db_profile_match_key(p, m->key, &f, &e);
		if (mk == 0)
			continue;
		if (mk < 0) {
			/* an entry error, not "no match": the key stays in view */
			db_err ke;
			db_err_set(&ke, j->rel, m->key, -1, "%s", e.msg);
			db_fields_load(&j->f, &f);
			f.stage_is_file = false;
			free(m->err);
			if (!(m->err = strdup(ke.msg)))
				return -1;
		}
		if (!side_kept(side, &f))
			continue;
		const char *inner = db_profile_inner_key(p, m->key);
		default_stage(&f, inner, j->rel);
		db_item *it = new_item(b, fi, i);
		if (!it)
			return -1;
		it->path = strdup(j->rel);
		it->key = m->key;
		m->key = NULL;
		it->dtype = m->dtype;
		it->ndim = m->ndim;
		memcpy(it->shape, m->shape, sizeof it->shape);
		it->err = m->err;
		m->err = NULL;
		it->st = m->st;
		it->has_st = m->has_st;
		m->st.data = NULL;      /* the item's now */
		it->size = j->size;
		it->mtime_ns = j->mtime_ns;
		it->ident = j->ident;
		if (!it->path || !it->key || (f.cut && refuse_cut_job(b, it, &f, j) < 0) ||
		    db_fields_store(&f, &it->f) < 0)
			return -1;
	}
	return 0;
}

/* Sort record: execution order is phase (causal), pass, then the position
 * in the per-rank stream, then rank — so ranks interleave at the same
 * point of the run. The stream follows what the dumps record: the dump
 * order when the names carry one (dump_index; items without one go after),
 * then model-level "before" stages, layers ascending, model-level "after"
 * stages, then file and entry order.
 *
 * A tree records its execution order when an item carries a dump order, or
 * when one file holds several modules of one layer (a dict written as the
 * hooks fired: SGLang's forward hook) and no layer's items spread over
 * several files (ATOM writes a dict {hidden, input} per module and call:
 * entry order there orders one module's tensors, not the layer's modules).
 * Tuple members "m.0", "m.1" count as one module m, so a tuple output
 * alone does not qualify; nor does a
 * .safetensors file, whose writers sort tensors by dtype and name, nor a
 * layout whose profile says dict_order: none (weights: registration
 * order). A call number (ATOM's _callNNN) is the pass: it orders passes,
 * not the stages inside one. Only a tree that records no order (one file
 * per module, whose names sort alphabetically) sorts a layer's items by the
 * profile's stage_order before file order.
 * The choice is per tree, never per pair of items: mixing entry order
 * inside files with stage_order across files would not be transitive. */
typedef struct rec {
	db_item *it;
	/* the item's fields the sorts compare, copied: comparing through it
	 * was a cache miss per item and comparison (issue 24) */
	const char *phase;      /* interned */
	int rank;
	int64_t order;          /* the dump order; none: INT64_MAX */
	int phase_pos;
	int pass_pos;           /* rank of the pass among this tree's passes */
	int64_t bucket;         /* model-level before, layers, model-level after */
	int64_t stage_pos;      /* no recorded order: stage_order position, unlisted last */
	size_t file_idx, entry_idx;
	int64_t stream_pos;
} rec;

static int phase_pos(const db_profile *p, const char *phase)
{
	for (size_t i = 0; i < p->n_phase_order; i++)
		if (!strcmp(p->phase_order[i], phase))
			return (int)i;
	return (int)p->n_phase_order;
}

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int cmp_head(const rec *a, const rec *b)
{
	int c = a->phase_pos - b->phase_pos;
	if (c)
		return c;
	if (a->phase != b->phase && (c = strcmp(a->phase, b->phase)))
		return c;
	return a->pass_pos - b->pass_pos;
}

static int cmp_pass_str(const void *a, const void *b)
{
	return db_natcmp(*(char *const *)a, *(char *const *)b);
}

/* Rank every pass string once, so sorting compares ints. */
static int rank_passes(rec *r, size_t n)
{
	db_strmap m;
	db_strmap_init(&m);
	const char **names = malloc((n + 1) * sizeof *names);
	size_t k = 0;
	int rc = names ? 0 : -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		bool added;
		if (!db_strmap_put(&m, r[i].it->f.pass, k, &added))
			rc = -1;
		else if (added)
			names[k++] = r[i].it->f.pass;
	}
	if (rc == 0) {
		qsort(names, k, sizeof *names, cmp_pass_str);
		for (size_t j = 0; j < k; j++)
			*db_strmap_get(&m, names[j]) = j;
		for (size_t i = 0; i < n; i++)
			r[i].pass_pos = (int)*db_strmap_get(&m, r[i].it->f.pass);
	}
	free(names);
	db_strmap_free(&m);
	return rc;
}

static int cmp_stream(const void *va, const void *vb)
{
	const rec *a = va, *b = vb;
	int c = cmp_head(a, b);
	if (c)
		return c;
	if ((c = cmp_i64(a->rank, b->rank)))
		return c;
	if ((c = cmp_i64(a->order, b->order)))
		return c;
	if ((c = cmp_i64(a->bucket, b->bucket)))
		return c;
	if ((c = cmp_i64(a->stage_pos, b->stage_pos)))
		return c;
	if ((c = cmp_i64((int64_t)a->file_idx, (int64_t)b->file_idx)))
		return c;
	return cmp_i64((int64_t)a->entry_idx, (int64_t)b->entry_idx);
}

static int cmp_exec(const void *va, const void *vb)
{
	const rec *a = va, *b = vb;
	int c = cmp_head(a, b);
	if (c)
		return c;
	if ((c = cmp_i64(a->stream_pos, b->stream_pos)))
		return c;
	if ((c = cmp_i64(a->rank, b->rank)))
		return c;
	if ((c = cmp_i64((int64_t)a->file_idx, (int64_t)b->file_idx)))
		return c;
	return cmp_i64((int64_t)a->entry_idx, (int64_t)b->entry_idx);
}

static int order_items(build *b, const db_profile *p)
{
	db_index *ix = b->ix;
	size_t n = ix->n_items;
	if (!n)
		return 0;
	rec *r = malloc(n * sizeof *r);
	size_t *sorted = malloc(n * sizeof *sorted);
	if (!r || !sorted) {
		free(r);
		free(sorted);
		return -1;
	}
	/* stage_pos is the same for all when the tree records its order */
	ix->records_order = db_index_records_order(ix->items, n, p);
	const char *last_phase = NULL;  /* interned: runs of one phase */
	int last_pos = 0;
	for (size_t i = 0; i < n; i++) {
		const db_ifields *f = &ix->items[i].f;
		if (f->phase != last_phase) {
			last_phase = f->phase;
			last_pos = phase_pos(p, f->phase);
		}
		int64_t bucket = f->layer >= 0 ? 1 + (int64_t)f->layer
		               : db_profile_is_model_after(p, f->stage) ? INT64_MAX : 0;
		int sp = ix->records_order ? 0 : db_profile_stage_pos(p, f->stage);
		r[i] = (rec){&ix->items[i], f->phase, f->rank, f->order >= 0 ? f->order : INT64_MAX,
		             last_pos, 0, bucket, sp >= 0 ? sp : INT64_MAX,
		             b->file_idx[i], b->entry_idx[i], 0};
	}
	if (rank_passes(r, n) != 0) {
		free(r);
		free(sorted);
		return -1;
	}
	qsort(r, n, sizeof *r, cmp_stream);
	int64_t pos = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && (cmp_head(&r[i], &r[i - 1]) || r[i].rank != r[i - 1].rank))
			pos = 0;
		r[i].stream_pos = pos++;
	}
	qsort(r, n, sizeof *r, cmp_exec);
	/* into that order in place (a second array of items was the peak of
	 * memory at 100k files, issue 12): item r[i].it goes to i */
	size_t *to = sorted;
	for (size_t i = 0; i < n; i++)
		to[r[i].it - ix->items] = i;
	free(r);
	for (size_t i = 0; i < n; i++) {
		while (to[i] != i) {
			size_t j = to[i];
			db_item tmp = ix->items[j];
			ix->items[j] = ix->items[i];
			ix->items[i] = tmp;
			to[i] = to[j];
			to[j] = j;
		}
	}
	free(sorted);
	if (b->cap > n) {
		db_item *shrunk = realloc(ix->items, n * sizeof *shrunk);
		if (shrunk) {
			ix->items = shrunk;
			b->cap = n;
		}
	}

	/* occurrence: n-th repeat of the same side + fields, in execution order */
	for (size_t i = 0; i < n; i++)
		ix->items[i].seq = (int64_t)i;
	return db_items_occurrences(ix->items, n);
}

static void free_job_ents(file_job *j)
{
	for (size_t k = 0; k < j->n_ents; k++) {
		free(j->ents[k].key);
		free(j->ents[k].err);
		free(j->ents[k].st.data);
	}
	free(j->ents);
	j->ents = NULL;
	j->n_ents = 0;
	free(j->blob.p);
	j->blob = (db_wbuf){0};
}

static void free_jobs(file_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free_job_ents(&jobs[i]);
		free(jobs[i].err);
	}
	free(jobs);
}

int db_index_scan(const char *root, const db_profile *p, const char *side,
                  db_index **out, db_err *err)
{
	return db_index_scan_ic(root, p, side, NULL, out, err);
}

int db_index_scan_ic(const char *root, const db_profile *p, const char *side,
                     db_icache *ic, db_index **out, db_err *err)
{
	*out = NULL;
	db_walk w;
	bool is_file;
	char msg[1024];
	if (db_walk_root(root, &w, &is_file, msg, sizeof msg) != 0)
		return db_err_set(err, NULL, NULL, -1, "%s", msg);
	int rc = db_index_scan_walk(root, &w, is_file, p, side, ic, NULL, out, err);
	db_walk_free(&w);
	return rc;
}

int db_index_scan_walk(const char *root, db_walk *wp, bool is_file,
                       const db_profile *p, const char *side, db_icache *ic,
                       db_snap_due *later, db_index **out, db_err *err)
{
	*out = NULL;
	/* an unchanged tree: the whole index from its snapshot (a listing
	 * without stats is a first-ever scan: no snapshot to look for) */
	const char *snap_dir = db_icache_dir(ic);
	bool stat_later = false;
	for (size_t i = 0; i < wp->n_files && !stat_later; i++)
		stat_later = wp->files[i].size < 0;
	uint64_t snap_key = snap_dir && !stat_later ? db_isnap_key(wp, is_file, p, side) : 0;
	if (snap_dir && !stat_later &&
	    (*out = db_isnap_load(snap_dir, root, side, snap_key, wp, is_file, p)))
		return 0;
	if (wp->stub)
		return db_err_set(err, root, NULL, -1, "no snapshot of the listing");
	db_walk w = *wp;        /* the skipped list is copied, the rest borrowed */
	db_index *ix = calloc(1, sizeof *ix);
	file_job *jobs = calloc(w.n_files ? w.n_files : 1, sizeof *jobs);
	if (!ix || !jobs || !(ix->root = strdup(root))) {
		free(ix);
		free(jobs);
		return db_err_set(err, root, NULL, -1, "out of memory");
	}
	ix->profile = p;
	ix->root_is_file = is_file;
	ix->n_files_seen = w.n_files;
	ix->n_links_out = w.n_links_out;
	for (size_t i = 0; i < w.n_skipped; i++)
		if (db_push_str(&ix->skipped, &ix->n_skipped, w.skipped[i]) != 0) {
			free(jobs);
			db_index_free(ix);
			return db_err_set(err, root, NULL, -1, "out of memory");
		}

	int rc = 0;
	size_t nj = 0;
	for (size_t i = 0; i < w.n_files && rc == 0; i++) {
		const char *rel = w.files[i].rel;
		db_fields f;
		db_err e;
		int mp = p->files_re ? db_re_search(p->files_re, p->files_pat, rel, NULL, &e) : 1;
		if (mp == 0)
			continue;       /* not a file of this layout */
		if (mp == 1) {
			mp = db_profile_match_path(p, rel, &f, &e);
		} else {        /* fields as a failed path match leaves them */
			memset(&f, 0, sizeof f);
			f.rank = f.layer = -1;
			f.order = -1;
		}
		if (mp == 0) {
			rc = db_push_str(&ix->unparsed, &ix->n_unparsed, rel);
			continue;
		}
		/* the other side's files in a shared folder are not ours: skip
		 * unless the side comes only from inner keys */
		if (!side_kept(side, &f))
			continue;
		file_job *j = &jobs[nj++];
		j->rel = rel;
		if (db_fields_store(&f, &j->f) < 0)
			rc = -1;
		j->wi = i;
		j->size = w.files[i].size;
		j->mtime_ns = w.files[i].mtime_ns;
		j->ident = w.files[i].ident;
		if (mp < 0) {
			/* a regex hit its limit: the file is refused with why (not
			 * "unparsed", a wrong answer) and not opened; the rest loads */
			char *full = db_index_job_full(root, ix->root_is_file, j);
			db_err fe;
			db_err_set(&fe, full ? full : rel, NULL, -1, "%s", e.msg);
			free(full);
			if (!(j->err = strdup(fe.msg)))
				rc = -1;
		}
	}
	if (rc == 0) {
		ix->n_files = nj;
		/* a tree never indexed: its entry cache written as the items come */
		bool stream = db_icache_stream_begin(ic);
		db_index_open_all(root, ix->root_is_file, jobs, nj, ic, !stream);
		if (stat_later) {
			/* the listing complete: the opens' stats, a stat for the rest */
			for (size_t i = 0; i < nj; i++) {
				db_walk_file *wf = &wp->files[jobs[i].wi];
				wf->size = jobs[i].size;
				wf->mtime_ns = jobs[i].mtime_ns;
				wf->ident = jobs[i].ident;
			}
			db_walk_fill_stat(root, wp);
			if (snap_dir)
				snap_key = db_isnap_key(wp, is_file, p, side);
		}
		build b = {.ix = ix};
		/* every item at once: no regrowth, no slack (issue 12) */
		size_t want = 0;
		for (size_t i = 0; i < nj; i++)
			want += jobs[i].n_ents ? jobs[i].n_ents : 1;
		if (want && reserve_items(&b, want) != 0)
			rc = -1;
		size_t n_enc = 0;
		for (size_t i = 0; i < nj; i++)
			n_enc += jobs[i].enc;
		db_icache_reserve(ic, n_enc);
		for (size_t i = 0; i < nj && rc == 0; i++) {
			file_job *j = &jobs[i];
			if (stream && !j->err)
				db_icache_stream_put(ic, j->rel, j->size, j->mtime_ns ^ (int64_t)j->ident,
				                     j->ents, j->n_ents);
			else if (j->enc)
				db_icache_put_enc(ic, j->rel, j->size, j->mtime_ns ^ (int64_t)j->ident,
				                  &j->blob, j->n_ents);
			rc = items_from_job(&b, p, side, j, i);
			/* the job's entries are the items' now: what is left goes
			 * while the items still grow (issue 24: peak RSS) */
			free_job_ents(&jobs[i]);
		}
		/* the jobs are spent: gone before the sort needs its memory */
		free_jobs(jobs, nj);
		jobs = NULL;
		if (rc == 0)
			rc = order_items(&b, p);
		free(b.file_idx);
		free(b.entry_idx);
	}
	if (jobs)
		free_jobs(jobs, nj);
	if (rc != 0) {
		db_index_free(ix);
		return db_err_set(err, root, NULL, -1, "out of memory while indexing");
	}
	if (snap_dir && later)
		*later = (db_snap_due){true, snap_key};
	else if (snap_dir)
		db_isnap_store(snap_dir, root, side, snap_key, ix);
	*out = ix;
	return 0;
}
