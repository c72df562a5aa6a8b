/* The workbench's reopen (issue 12): an unchanged tree's first frame comes
 * from what the last open left, the per-file check comes after it.
 *
 * Decision: listing a 100k-file tree (a stat per file, getdents of huge
 * directories) cost most of a reopen. A directory's mtime changes when an
 * entry is added, removed or renamed, so when every directory of both trees
 * keeps the device, inode and mtime it had at the last full listing (the
 * stamp record, index_snap.c), that listing — and the index snapshots keyed
 * on it — are taken as current for the first frame. A file rewritten in
 * place keeps its directory's mtime, so a thread still lists every file
 * (size, mtime, inode + ctime) and compares the listing's hash with the
 * one the snapshots stand for; on any difference the caller rescans
 * (db_compare_rescan keeps the results of unchanged pairs) and says so.
 * Until the check is done the workbench marks the numbers as unchecked.
 * Anything unusual (no stamp, a snapshot missing, one folder holding one
 * side only) takes the full open. */
#include "pair/compare_priv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "layout/index_priv.h"
#include "read/walk.h"

typedef struct snap_job {
	db_compare *c;
	const char *root, *side;
	const db_walk *w;
	db_index *ix;
} snap_job;

static void *load_job(void *arg)
{
	snap_job *j = arg;
	db_cmp_priv *pr = j->c->priv;
	const db_profile *p = j->c->profile;
	j->ix = db_isnap_load(pr->cache_dir, j->root, j->side,
	                      db_isnap_key(j->w, false, p, j->side), j->w, false, p);
	return NULL;
}

static bool has_side(const db_index *ix, const char *side)
{
	for (size_t i = 0; i < ix->n_items; i++)
		if (!strcmp(ix->items[i].f.side, side))
			return true;
	return false;
}

/* db_reopen_trees on the trusted stamps wr and wt. */
static bool reopen_from(db_compare *c, const db_compare_opts *opts, bool tgt_given, bool same,
                        const db_walk *wr, const db_walk *wt)
{
	db_cmp_priv *pr = c->priv;
	db_err e;
	if (db_choose_profile(c, opts, wr, 0, "", &e) != 0) {
		c->why[0] = 0;
		return false;
	}
	db_set_folders(c, tgt_given, same);
	bool one = pr->one_folder;
	snap_job r = {c, c->ref_root, one ? "ref" : NULL, wr, NULL};
	snap_job t = {c, c->tgt_root, one ? "target" : NULL, wt, NULL};
	/* the two snapshots load side by side, as the full open scans */
	pthread_t th;
	bool spawned = pthread_create(&th, NULL, load_job, &t) == 0;
	load_job(&r);
	if (spawned)
		pthread_join(th, NULL);
	else
		load_job(&t);
	if (!r.ix || !t.ix || (one && (!has_side(r.ix, "ref") || !has_side(t.ix, "target")))) {
		db_index_free(r.ix);
		db_index_free(t.ix);
		db_profile_free(c->profile);
		c->profile = NULL;
		c->why[0] = 0;
		return false;
	}
	c->ref = r.ix;
	c->tgt = t.ix;
	pr->n_settling = 0;
	pr->from_snapshots = pr->unverified = true;
	pr->trusted[0] = wr->hash[0];
	pr->trusted[1] = wt->hash[0];
	db_keep_dirs(c, c->ref_root, wr, false);
	if (!same)
		db_keep_dirs(c, c->tgt_root, wt, true);
	atomic_store(&pr->verify_state, DB_VERIFY_PENDING);
	return true;
}

bool db_reopen_trees(db_compare *c, const db_compare_opts *opts, bool tgt_given, bool same)
{
	db_cmp_priv *pr = c->priv;
	db_walk wr, wt;
	if (!db_stamp_load(pr->cache_dir, c->ref_root, &wr))
		return false;
	if (same) {
		wt = wr;        /* one listing: freed once */
	} else if (!db_stamp_load(pr->cache_dir, c->tgt_root, &wt)) {
		db_walk_free(&wr);
		return false;
	}
	bool ok = reopen_from(c, opts, tgt_given, same, &wr, &wt);
	db_walk_free(&wr);
	if (!same)
		db_walk_free(&wt);
	return ok;
}

/* The listing of root as db_compare_open would make it, unchanged from
 * the one hashed as want. */
static bool same_listing(const char *root, uint64_t want)
{
	db_walk w;
	bool is_file;
	char msg[1024];
	if (db_walk_root(root, &w, &is_file, msg, sizeof msg) != 0)
		return false;   /* the rescan reports it */
	bool same = !is_file && !w.n_skipped && db_walk_hash(&w, false) == want;
	db_walk_free(&w);
	return same;
}

static void *verify_job(void *arg)
{
	db_compare *c = arg;
	db_cmp_priv *pr = c->priv;
	db_walk_stop_on(&pr->verify_cancel);
	bool same = same_listing(c->ref_root, pr->trusted[0]) &&
	            (!strcmp(c->ref_root, c->tgt_root) ||
	             same_listing(c->tgt_root, pr->trusted[1]));
	atomic_store(&pr->verify_state, same ? DB_VERIFY_NONE : DB_VERIFY_CHANGED);
	return NULL;
}

int db_compare_verify_start(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	if (!pr->unverified || pr->verify_on)
		return 0;
	if (pthread_create(&pr->verify_th, NULL, verify_job, c) != 0) {
		verify_job(c);  /* no thread: check now */
		return 0;
	}
	pr->verify_on = true;
	return 0;
}

db_verify_state db_compare_verify_state(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	if (!pr->unverified)
		return DB_VERIFY_NONE;
	int s = atomic_load(&pr->verify_state);
	if (s != DB_VERIFY_PENDING && pr->verify_on) {
		pthread_join(pr->verify_th, NULL);
		pr->verify_on = false;
	}
	if (s == DB_VERIFY_NONE)
		pr->unverified = false;         /* checked: the snapshots were current */
	return (db_verify_state)s;
}

bool db_compare_from_snapshots(const db_compare *c)
{
	return ((const db_cmp_priv *)c->priv)->from_snapshots;
}

void db_verify_join(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	if (pr->verify_on) {
		/* its answer is not wanted (closing, or a rescan that lists
		 * every file): stop the listing rather than wait (~0.8 s at
		 * 100k files) */
		atomic_store(&pr->verify_cancel, 1);
		pthread_join(pr->verify_th, NULL);
		atomic_store(&pr->verify_cancel, 0);
	}
	pr->verify_on = false;
	pr->unverified = false;
	pr->from_snapshots = false;
	atomic_store(&pr->verify_state, DB_VERIFY_NONE);
}
