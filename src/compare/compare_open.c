/* Opening a comparison: profile choice, scanning both trees (entry cache),
 * pairing (compare.c), rescans that keep unchanged results, and the queries
 * over finished pairs. The workbench's reopen from snapshots is in
 * compare_reopen.c. */
#include "db_compare.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <limits.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <time.h>

#include "pair/cache_writes.h"
#include "pair/compare_priv.h"
#include "pair/pairkey.h"
#include "measure/xform.h"
#include "db_noise.h"
#include "db_slot.h"
#include "layout/index_priv.h"
#include "util/strmap.h"
#include "read/walk.h"
#include "lift.h"

static bool same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	if (!realpath(a, ra) || !realpath(b, rb))
		return !strcmp(a, b);
	return !strcmp(ra, rb);
}

static bool has_side(const db_index *ix, const char *side)
{
	for (size_t i = 0; i < ix->n_items; i++)
		if (!strcmp(ix->items[i].f.side, side))
			return true;
	return false;
}

/* One tree: its listing, then its index. The two trees of a comparison
 * are listed and indexed side by side, one in a second thread. */
typedef struct tree_job {
	const char *root;
	const char *walk_path, *sub;    /* lifted (compare/lift.c): list walk_path,
	                                   named "sub/..." below root; else NULL */
	db_walk w;
	bool want_stat;         /* false: the scan's opens stat the files */
	bool is_file, listed;
	int rc;
	char msg[1024];         /* listing error */
	const db_profile *p;
	const char *side;
	db_icache *ic;
	bool close_ic;          /* this side's own cache: written when its scan ends */
	bool defer;             /* the snapshot left to db_cwrites (due) */
	db_snap_due due;
	db_index *ix;
	db_err err;
} tree_job;

static void *list_job(void *arg)
{
	tree_job *j = arg;
	j->rc = db_walk_root2(j->walk_path ? j->walk_path : j->root, &j->w, j->want_stat,
	                      &j->is_file, j->msg, sizeof j->msg);
	if (j->rc == 0 && j->sub) {
		/* a lifted file is one name below the root, no longer the root */
		if (db_walk_prefix(&j->w, j->sub) != 0) {
			db_walk_free(&j->w);
			snprintf(j->msg, sizeof j->msg, "%s: out of memory", j->walk_path);
			j->rc = -1;
		}
		j->is_file = false;
	}
	j->listed = j->rc == 0;
	return NULL;
}

static void *scan_job(void *arg)
{
	tree_job *j = arg;
	j->rc = db_index_scan_walk(j->root, &j->w, j->is_file, j->p, j->side, j->ic,
	                           j->defer ? &j->due : NULL, &j->ix, &j->err);
	if (j->close_ic)
		db_icache_close(j->ic);     /* each side writes its own, side by side */
	return NULL;
}

/* f(a) here and f(b) in a second thread (b NULL: only a). */
static void run_both(void *(*f)(void *), void *a, void *b)
{
	pthread_t th;
	bool spawned = b && pthread_create(&th, NULL, f, b) == 0;
	f(a);
	if (spawned)
		pthread_join(th, NULL);
	else if (b)
		f(b);
}

typedef struct trees {
	tree_job ref, tgt;
	bool shared;            /* the target is the reference folder: one listing */
} trees;

/* A tree never indexed before (no entry cache) is listed without a stat
 * per file: the scan opens every file anyway and takes the stat from that
 * open (100k files: ~0.15 s of stat calls saved on a first-ever open).
 * One folder for both sides is listed once and scanned by both: stat'ed
 * here, so the two scans only read it. */
static void list_trees(trees *t, const db_cmp_priv *pr, const char *ref, const char *tgt,
                       bool same)
{
	const char *cache_dir = pr->cache_dir;
	memset(t, 0, sizeof *t);
	t->ref.root = ref;
	t->tgt.root = tgt;
	t->ref.walk_path = pr->lift_path[0];
	t->ref.sub = pr->lift_sub[0];
	t->tgt.walk_path = pr->lift_path[1];
	t->tgt.sub = pr->lift_sub[1];
	t->shared = same;
	t->ref.want_stat = same || db_icache_exists(cache_dir, ref);
	t->tgt.want_stat = db_icache_exists(cache_dir, tgt);
	run_both(list_job, &t->ref, same ? NULL : &t->tgt);
	if (same) {
		t->tgt.rc = t->ref.rc;
		t->tgt.listed = t->ref.listed;
		t->tgt.is_file = t->ref.is_file;
		t->tgt.w = t->ref.w;
		memcpy(t->tgt.msg, t->ref.msg, sizeof t->tgt.msg);
	}
}

static void free_trees(trees *t)
{
	db_walk_free(&t->ref.w);
	if (!t->shared)
		db_walk_free(&t->tgt.w);
	memset(t, 0, sizeof *t);
}

/* The snapshots t's scans left due, written now: the same files a scan
 * that writes its own would leave. */
static void write_due_now(db_compare *c, trees *t, const db_index *ref, const db_index *tgt)
{
	db_cmp_priv *pr = c->priv;
	if (t->ref.due.due)
		db_isnap_store(pr->cache_dir, c->ref_root, t->ref.side, t->ref.due.key, ref);
	if (t->tgt.due.due)
		db_isnap_store(pr->cache_dir, c->tgt_root, t->tgt.side, t->tgt.due.key, tgt);
	t->ref.due.due = t->tgt.due.due = false;
}

/* Scan both listed trees (c->profile, roots and priv set). defer: the
 * snapshots are left to db_cwrites (an open's first scan). */
static int scan_trees(db_compare *c, trees *t, db_index **ref, db_index **tgt, bool defer,
                      db_err *err)
{
	*ref = *tgt = NULL;
	db_cmp_priv *pr = c->priv;
	bool one = pr->one_folder;
	if (t->ref.rc != 0)
		return db_err_set(err, NULL, NULL, -1, "%s", t->ref.msg);
	if (t->tgt.rc != 0)
		return db_err_set(err, NULL, NULL, -1, "%s", t->tgt.msg);
	/* entry metadata of unchanged files comes from the cache; one folder
	 * shares one cache between its two sides */
	db_icache *icr = db_icache_open(pr->cache_dir, c->ref_root);
	db_icache *ict = one ? icr : db_icache_open(pr->cache_dir, c->tgt_root);
	t->ref.p = t->tgt.p = c->profile;
	t->ref.side = one ? "ref" : NULL;
	t->tgt.side = one ? "target" : NULL;
	t->ref.ic = icr;
	t->tgt.ic = ict;
	/* an open writes its snapshots behind the first frame (cache_writes.h);
	 * a settling scan drops files after its snapshot would be taken: now.
	 * The entry caches are written as each scan ends: a first scan's is
	 * mostly on disk already (db_icache_stream_begin) and the rest holds
	 * ~100 MB a side at 10^6 files, freed before pairing. */
	defer = defer && pr->settle_ns == 0;
	t->ref.close_ic = t->tgt.close_ic = ict != icr;
	t->ref.defer = t->tgt.defer = defer;
	t->ref.due.due = t->tgt.due.due = false;
	run_both(scan_job, &t->ref, &t->tgt);
	if (ict == icr)
		db_icache_close(icr);   /* one folder: one cache, both scans done */
	if (t->ref.rc != 0 || t->tgt.rc != 0) {
		if (err)
			*err = t->ref.rc != 0 ? t->ref.err : t->tgt.err;
		db_index_free(t->ref.ix);
		db_index_free(t->tgt.ix);
		return -1;
	}
	*ref = t->ref.ix;
	*tgt = t->tgt.ix;
	/* the listings the snapshots were keyed on: a reopen may trust them */
	if (!t->ref.is_file)
		db_stamp_store(pr->cache_dir, c->ref_root, &t->ref.w);
	if (!t->shared && !t->tgt.is_file)
		db_stamp_store(pr->cache_dir, c->tgt_root, &t->tgt.w);
	db_keep_dirs(c, c->ref_root, &t->ref.w, false);
	if (!t->shared)
		db_keep_dirs(c, c->tgt_root, &t->tgt.w, true);
	pr->n_settling = 0;
	if (pr->settle_ns > 0) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		int64_t cut = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - pr->settle_ns;
		pr->n_settling = db_index_drop_settling(*ref, cut) +
		                 (*tgt != *ref ? db_index_drop_settling(*tgt, cut) : 0);
	}
	if (one && (!has_side(*ref, "ref") || !has_side(*tgt, "target"))) {
		bool no_ref = !has_side(*ref, "ref");
		write_due_now(c, t, *ref, *tgt);
		db_index_free(*ref);
		db_index_free(*tgt);
		*ref = *tgt = NULL;
		if (pr->twice) {
			/* REF and TARGET named the same folder and it holds one run
			 * only (ATOM's reference files alone): compare it with itself */
			pr->one_folder = false;
			return scan_trees(c, t, ref, tgt, defer, err);
		}
		return db_err_set(err, c->ref_root, NULL, -1,
		                  "one folder given, but profile %s finds no %s side in it; "
		                  "give REF and TARGET folders", c->profile->name,
		                  no_ref ? "reference" : "target");
	}
	if (t->ref.due.due &&
	    db_cwrites_snap(c, pr->cache_dir, c->ref_root, t->ref.side, t->ref.due.key, *ref) == 0)
		t->ref.due.due = false;
	if (t->tgt.due.due &&
	    db_cwrites_snap(c, pr->cache_dir, c->tgt_root, t->tgt.side, t->tgt.due.key, *tgt) == 0)
		t->tgt.due.due = false;
	write_due_now(c, t, *ref, *tgt);        /* no memory to keep them for later */
	return 0;
}

/* List and scan both trees. */
static int scan_and_pair(db_compare *c, db_index **ref, db_index **tgt, db_err *err)
{
	db_cmp_priv *pr = c->priv;
	trees t;
	list_trees(&t, pr, c->ref_root, c->tgt_root,
	           !strcmp(c->ref_root, c->tgt_root) &&
	           (!pr->lift_path[1] || !strcmp(pr->lift_path[0], pr->lift_path[1])));
	int rc = scan_trees(c, &t, ref, tgt, false, err);
	free_trees(&t);
	return rc;
}

void db_compare_free(db_compare *c)
{
	if (!c)
		return;
	db_compare_stop(c);
	db_cmp_priv *pr = c->priv;
	if (pr) {
		db_cwrites_join(c);     /* they read c's indexes */
		db_verify_join(c);
		db_cache_close(c);
		pcre2_code_free(pr->filter_re);
		free(pr->filter);
		free(pr->owner);
		free(pr->cache_dir);
		for (int k = 0; k < 2; k++) {
			free(pr->lift_path[k]);
			free(pr->lift_sub[k]);
		}
		db_drop_dirs(pr);
		db_cells_drop(c);
		db_xform_drop(c);
		db_noise_free(pr->noise);
		pthread_mutex_destroy(&pr->cache_mu);
		pthread_mutex_destroy(&pr->cells_mu);
		if (pr->caller_w)
			db_wctx_free(pr->caller_w);
		free(pr->caller_w);
		pthread_mutex_destroy(&pr->caller_mu);
		pthread_mutex_destroy(&pr->slot_mu);
		free(pr->slot_anchors);
		free(pr);
	}
	db_free_pairs(c);
	db_index_free(c->ref);
	db_index_free(c->tgt);
	if (c->profile)
		db_profile_free(c->profile);
	free(c->ref_root);
	free(c->tgt_root);
	free(c->slot_passes);
	free(c);
}

static int alloc_owner(db_compare *c)
{
	db_cmp_priv *pr = c->priv;
	free(pr->owner);
	pr->owner = calloc(c->n_pairs + 1, sizeof *pr->owner);
	if (!pr->owner)
		return -1;
	for (size_t i = 0; i < c->n_pairs; i++)
		atomic_init(&pr->owner[i], DB_OWNER_FREE);
	return 0;
}

static char *default_cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char buf[PATH_MAX];
	if (x && x[0] == '/') /* the XDG spec: relative values are invalid */
		snprintf(buf, sizeof buf, "%s/dumpbisect", x);
	else if (home && *home)
		snprintf(buf, sizeof buf, "%s/.cache/dumpbisect", home);
	else
		return NULL;
	return strdup(buf);
}

/* The per-stage rules (sub-stages, input and routing ids; shards ran while
 * pairing) tried once on every stage now: a regex that hits its limit on
 * one is an error here, before any answer built on "no" is shown. */
static int check_stage_rules(db_compare *c, db_err *err)
{
	const db_profile *p = c->profile;
	db_nameset seen;        /* by the interned stage: no string hashed per pair */
	db_nameset_init(&seen);
	for (size_t i = 0; i < c->n_pairs && !db_profile_regex_error(p); i++) {
		const char *st = c->pairs[i].f.stage;
		int added = db_nameset_add(&seen, st);
		if (added < 0) {
			db_nameset_free(&seen);
			return db_err_set(err, NULL, NULL, -1, "out of memory");
		}
		if (!added)
			continue;
		char buf[256];
		(void)db_profile_parent(p, st, NULL, 0, buf, sizeof buf);
		(void)db_profile_is_input_ids(p, st);
		(void)db_profile_is_routing_ids(p, st);
	}
	db_nameset_free(&seen);
	if (db_profile_regex_error(p))
		return db_err_set(err, NULL, NULL, -1, "profile %s: %s", p->name,
		                  db_profile_regex_error(p));
	return 0;
}

/* Only the generic profile parses the paths as given: try the folders
 * around them (compare/lift.c). Lifted, both sides are rooted at their
 * ancestors, listed again from the paths given, and the caches stay off
 * (a snapshot of a part must never stand for the whole ancestor). 1
 * lifted, 0 when nothing lifts, -1 on OOM. */
const char *db_compare_given(const db_compare *c, int side)
{
	const db_cmp_priv *pr = c->priv;
	const char *l = pr ? pr->lift_path[side != 0] : NULL;
	return l ? l : side ? c->tgt_root : c->ref_root;
}

static int lift(db_compare *c, trees *t, bool same)
{
	db_cmp_priv *pr = c->priv;
	db_lift l;
	if (t->ref.rc != 0 || t->tgt.rc != 0 ||
	    !db_lift_detect(c->ref_root, &t->ref.w, t->ref.is_file, &l))
		return 0;
	char *troot, *tsub;
	if (!db_lift_side(c->tgt_root, t->tgt.is_file, &l, &troot, &tsub)) {
		db_profile_free(l.profile);
		free(l.root);
		free(l.sub);
		return 0;
	}
	pr->lift_path[0] = c->ref_root;
	pr->lift_path[1] = c->tgt_root;
	pr->lift_sub[0] = l.sub;
	pr->lift_sub[1] = tsub;
	c->ref_root = l.root;
	c->tgt_root = troot;
	db_profile_free(c->profile);
	c->profile = l.profile;
	snprintf(c->why, sizeof c->why, "%s", l.why);
	free(pr->cache_dir);
	pr->cache_dir = NULL;
	free_trees(t);
	list_trees(t, pr, c->ref_root, c->tgt_root, same);
	return 1;
}

/* --noise: the reference against the noise tree, with c's profile and
 * options, measured before any pair of c so that each is judged as it is
 * measured; only the floors are kept. */
static int open_noise(db_compare *c, const db_compare_opts *opts, db_err *err)
{
	db_compare_opts o = *opts;
	o.noise = NULL;
	o.verify_later = false;
	if (!o.profile || !*o.profile)
		o.profile = c->profile->origin && strncmp(c->profile->origin, "built-in", 8)
		            ? c->profile->origin : c->profile->name;
	db_compare *nc;
	if (db_compare_open(c->ref_root, opts->noise, &o, &nc, err) != 0) {
		char m[sizeof err->msg];
		snprintf(m, sizeof m, "%s", err->msg);
		return db_err_set(err, NULL, NULL, -1, "--noise %s: %s", opts->noise, m);
	}
	db_compare_run(nc);
	db_cmp_priv *pr = c->priv;
	pr->noise = db_noise_build(nc, opts->noise);
	db_compare_free(nc);
	if (!pr->noise)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	return 0;
}

int db_compare_open(const char *ref, const char *tgt,
                    const db_compare_opts *opts, db_compare **out, db_err *err)
{
	*out = NULL;
	db_compare_opts none = {0};
	if (!opts)
		opts = &none;
	if (!ref || !*ref)
		return db_err_set(err, NULL, NULL, -1, "no reference given");
	db_compare *c = calloc(1, sizeof *c);
	db_cmp_priv *pr = calloc(1, sizeof *pr);
	if (!c || !pr) {
		free(c);
		free(pr);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	c->priv = pr;
	pthread_mutex_init(&pr->cache_mu, NULL);
	pthread_mutex_init(&pr->caller_mu, NULL);
	pthread_mutex_init(&pr->cells_mu, NULL);
	pthread_mutex_init(&pr->slot_mu, NULL);
	atomic_init(&pr->slot_regime, -1);
	atomic_init(&c->n_done, 0);
	atomic_init(&c->n_cached, 0);
	c->ref_root = strdup(ref);
	c->tgt_root = strdup(tgt ? tgt : ref);
	pr->threads = opts->threads;
	pr->align_mode = opts->align;
	pr->settle_ns = (int64_t)opts->settle_ms * 1000000;
	if (opts->slot) {
		if (db_slot_parse(opts->slot, &pr->slot, err) < 0) {
			db_compare_free(c);
			return -1;
		}
		pr->has_slot = true;
	}
	if (opts->slots) {
		/* one tree: slot 0's rows are the reference side; two: the
		 * reference is the prompt alone */
		if (opts->slots < 2) {
			db_compare_free(c);
			return db_err_set(err, NULL, NULL, -1, "--slots wants 2 or more sequences");
		}
		pr->n_slots = opts->slots;
		pr->slots_alone = tgt && !same_dir(ref, tgt);
	}
	if (!c->ref_root || !c->tgt_root)
		goto oom;
	if (opts->cache_dir)
		pr->cache_dir = *opts->cache_dir ? strdup(opts->cache_dir) : NULL;
	else
		pr->cache_dir = default_cache_dir();
	if (opts->filter && *opts->filter) {
		int ec;
		PCRE2_SIZE eo;
		/* names need not be UTF-8: such a byte never matches, but it is
		 * not an error either */
		pr->filter_re = pcre2_compile((PCRE2_SPTR)opts->filter, PCRE2_ZERO_TERMINATED,
		                              PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &ec, &eo, NULL);
		if (!pr->filter_re) {
			PCRE2_UCHAR m[256];
			pcre2_get_error_message(ec, m, sizeof m);
			db_err_set(err, NULL, NULL, -1, "--filter '%s': at offset %zu: %s",
			           opts->filter, (size_t)eo, (char *)m);
			db_compare_free(c);
			return -1;
		}
		if (!(pr->filter = strdup(opts->filter)))
			goto oom;
	}
	/* both trees are listed once, side by side; detection and the
	 * index read the listings */
	bool same = !tgt || same_dir(ref, tgt);
	int rc = 0;
	if (opts->verify_later && db_reopen_trees(c, opts, tgt != NULL, same))
		goto pair;
	trees t;
	list_trees(&t, pr, c->ref_root, c->tgt_root, same);
	int crc = db_choose_profile(c, opts, &t.ref.w, t.ref.rc, t.ref.msg, err);
	/* detection found only the generic profile, or none: the folders
	 * around what was given may name it (compare/lift.c) */
	/* one tree too (issue 33): a rank folder of a TP tree, alone or under
	 * --slots, opens as the whole tree restricted to that rank */
	if (!(opts->profile && *opts->profile) && !opts->noise &&
	    (crc != 0 || !strncmp(c->profile->name, "generic", 7))) {
		int lrc = lift(c, &t, same);
		if (lrc < 0) {
			free_trees(&t);
			goto oom;
		}
		if (lrc > 0)
			crc = 0;
	}
	if (crc != 0) {
		free_trees(&t);
		db_compare_free(c);
		return -1;
	}
	db_set_folders(c, tgt != NULL, same);
	rc = scan_trees(c, &t, &c->ref, &c->tgt, true, err);
	free_trees(&t);
#ifdef __GLIBC__
	/* the scan threads' arenas keep what the files' entries took (~470 MB
	 * at 10^6 files, issue 24): back to the system before pairing */
	malloc_trim(0);
#endif
pair:
	if (rc != 0 || db_align_prepare(c, pr->align_mode, err) != 0 ||
	    db_build_pairs(c, err) != 0) {
		db_compare_free(c);
		return -1;
	}
	db_slots_assign(c, pr->has_slot ? &pr->slot : NULL);
	/* the prompt alone against a batch that a warmup (or another pass)
	 * puts out of step: aligned as --slots N would (the raw kit's
	 * --batch-same tree, issue 33); tokens aligned across passes win */
	if (!pr->n_slots && !pr->has_slot && !same && !c->align && !opts->noise &&
	    pr->align_mode == DB_ALIGN_AUTO && (pr->n_slots = db_slots_alone_find(c))) {
		pr->slots_alone = true;
		c->slots_found = true;
	}
	if (pr->n_slots && (pr->slots_alone ? db_slots_alone(c, pr->n_slots, err)
	                                    : db_slots_split(c, pr->n_slots, err)) != 0) {
		db_compare_free(c);
		return -1;
	}
	if (db_build_phases(c) != 0 || alloc_owner(c) != 0)
		goto oom;
	if (check_stage_rules(c, err) != 0 ||
	    (opts->noise && *opts->noise && open_noise(c, opts, err) != 0)) {
		db_compare_free(c);
		return -1;
	}
	*out = c;
	return 0;
oom:
	db_compare_free(c);
	return db_err_set(err, NULL, NULL, -1, "out of memory");
}

static bool same_item(const db_item *a, const db_item *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a->path, b->path) && !strcmp(a->key, b->key) && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ident == b->ident && !a->err && !b->err;
}

static bool same_inputs(const db_pair *a, const db_pair *b)
{
	if (a->merged != b->merged || a->n_ref_shards != b->n_ref_shards ||
	    a->n_tgt_shards != b->n_tgt_shards || a->unshard.how != b->unshard.how ||
	    a->unshard.dim != b->unshard.dim || a->unshard.n_parts != b->unshard.n_parts ||
	    memcmp(a->unshard.parts, b->unshard.parts, sizeof a->unshard.parts))
		return false;
	if (!a->merged)
		return same_item(a->ref, b->ref) && same_item(a->tgt, b->tgt);
	for (size_t i = 0; i < a->n_ref_shards; i++)
		if (!same_item(a->ref_shards[i], b->ref_shards[i]))
			return false;
	for (size_t i = 0; i < a->n_tgt_shards; i++)
		if (!same_item(a->tgt_shards[i], b->tgt_shards[i]))
			return false;
	return true;
}

int db_compare_rescan(db_compare *c, db_err *err)
{
	db_compare_stop(c);
	db_cwrites_join(c);     /* the old indexes go: theirs written first */
	db_verify_join(c);      /* this scan lists every file: nothing left to check */
	db_compare tmp = *c;    /* new scan into a scratch copy */
	tmp.pairs = NULL;
	tmp.n_pairs = 0;
	tmp.phases = NULL;
	tmp.n_phases = 0;
	if (scan_and_pair(&tmp, &tmp.ref, &tmp.tgt, err) != 0)
		return -1;
	db_cmp_priv *pr = c->priv;
	int brc = db_align_prepare(&tmp, pr->align_mode, err);
	if (brc == 0)
		brc = db_build_pairs(&tmp, err);
	if (brc == 0)
		db_slots_assign(&tmp, pr->has_slot ? &pr->slot : NULL);
	if (brc == 0 && pr->n_slots) {
		tmp.slot_passes = NULL;     /* c's stay until the swap */
		brc = pr->slots_alone ? db_slots_alone(&tmp, pr->n_slots, err)
		                      : db_slots_split(&tmp, pr->n_slots, err);
	}
	if (brc != 0 || db_build_phases(&tmp) != 0 || check_stage_rules(&tmp, err) != 0) {
		db_free_pairs(&tmp);
		db_index_free(tmp.ref);
		db_index_free(tmp.tgt);
		return -1;
	}
	/* carry over finished results of pairs whose inputs did not change */
	db_strmap old;
	db_strmap_init(&old);
	for (size_t i = 0; i < c->n_pairs; i++) {
		char k[620];
		db_pair_fields_key(&c->pairs[i].f, c->pairs[i].occurrence, k, sizeof k);
		if (c->pairs[i].merged)
			strcat(k, "\x1fm");
		db_strmap_put(&old, k, i, NULL);
	}
	size_t done = 0;
	for (size_t i = 0; i < tmp.n_pairs; i++) {
		db_pair *np = &tmp.pairs[i];
		char k[620];
		db_pair_fields_key(&np->f, np->occurrence, k, sizeof k);
		if (np->merged)
			strcat(k, "\x1fm");
		size_t *v = db_strmap_get(&old, k);
		if (np->status == DB_ST_OK && v) {
			db_pair *op = &c->pairs[*v];
			if (atomic_load(&op->state) == DB_PAIR_DONE && same_inputs(op, np) &&
			    op->slot.len == np->slot.len) {
				np->status = op->status;
				np->m = op->m;
				np->band = op->band;
				np->noise = op->noise;
				np->noise_floor = op->noise_floor;
				np->noise_ratio = op->noise_ratio;
				atomic_store(&np->slot.start, atomic_load(&op->slot.start));
				np->slot.side = op->slot.side;  /* 0: no block matched */
				if (op->error)
					np->error = strdup(op->error);
				atomic_store(&np->state, DB_PAIR_DONE);
			}
		}
		done += atomic_load(&np->state) == DB_PAIR_DONE;
	}
	db_strmap_free(&old);
	db_free_pairs(c);
	db_index_free(c->ref);
	db_index_free(c->tgt);
	c->ref = tmp.ref;
	c->tgt = tmp.tgt;
	c->pairs = tmp.pairs;
	c->n_pairs = tmp.n_pairs;
	c->align = tmp.align;
	c->align_whole = tmp.align_whole;
	memcpy(c->align_note, tmp.align_note, sizeof c->align_note);
	if (pr->n_slots) {
		free(c->slot_passes);
		c->slot_passes = tmp.slot_passes;
		c->n_slot_passes = tmp.n_slot_passes;
		memcpy(c->slots_align, tmp.slots_align, sizeof c->slots_align);
	}
	c->pairs_gen = tmp.pairs_gen;
	c->quant = tmp.quant;
	c->phases = tmp.phases;
	c->n_phases = tmp.n_phases;
	db_slot_regime_settle(c, NULL); /* the results carried over */
	atomic_store(&c->n_done, done);
	if (alloc_owner(c) != 0)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	return 0;
}

size_t db_compare_settling(const db_compare *c)
{
	return ((const db_cmp_priv *)c->priv)->n_settling;
}

void db_compare_set_settle(db_compare *c, int settle_ms)
{
	((db_cmp_priv *)c->priv)->settle_ns = (int64_t)settle_ms * 1000000;
}
