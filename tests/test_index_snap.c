/* nftw (scratch trees) needs X/Open. */
#define _XOPEN_SOURCE 700
/* Snapshots for instant reopen (src/layout/index_snap.c): an index served from
 * its snapshot equals a fresh scan item for item, on every built-in
 * layout; a tree that changed (file added, removed, rewritten) or a
 * corrupt snapshot is scanned again; detection served from its record
 * names the same profile with the same reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmp_util.h"
#include "db_compare.h"
#include "layout/index_priv.h"
#include "pair/cache_writes.h"
#include "read/walk.h"

static db_compare *open_c(const char *r, const char *t, const char *cache)
{
	db_compare_opts o = {.cache_dir = cache};
	db_compare *c = NULL;
	db_err err = {{0}};
	if (db_compare_open(r, t, &o, &c, &err) != 0)
		print_error("db_compare_open(%s, %s): %s\n", r, t ? t : "-", err.msg);
	return c;
}

/* Field by field: bytes past a string's NUL are not part of it. */
static void same_fields(const db_ifields *a, const db_ifields *b)
{
	assert_string_equal(a->side, b->side);
	assert_string_equal(a->phase, b->phase);
	assert_string_equal(a->pass, b->pass);
	assert_int_equal(a->rank, b->rank);
	assert_int_equal(a->layer, b->layer);
	assert_string_equal(a->stage, b->stage);
	assert_int_equal(a->order, b->order);
	assert_int_equal(a->stage_is_file, b->stage_is_file);
}

static void same_item(const db_item *a, const db_item *b)
{
	assert_string_equal(a->path, b->path);
	assert_string_equal(a->key, b->key);
	same_fields(&a->f, &b->f);
	assert_int_equal(a->dtype, b->dtype);
	assert_int_equal(a->ndim, b->ndim);
	assert_memory_equal(a->shape, b->shape, sizeof a->shape);
	assert_true((a->err == NULL) == (b->err == NULL));
	if (a->err)
		assert_string_equal(a->err, b->err);
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->occurrence, b->occurrence);
	assert_int_equal(a->size, b->size);
	assert_int_equal(a->mtime_ns, b->mtime_ns);
	assert_true(a->ident == b->ident);
}

static void same_index(const db_index *a, const db_index *b)
{
	assert_string_equal(a->root, b->root);
	assert_int_equal(a->n_items, b->n_items);
	assert_int_equal(a->n_files, b->n_files);
	assert_int_equal(a->n_files_seen, b->n_files_seen);
	assert_int_equal(a->n_refused, b->n_refused);
	assert_int_equal(a->root_is_file, b->root_is_file);
	assert_int_equal(a->n_unparsed, b->n_unparsed);
	for (size_t i = 0; i < a->n_unparsed; i++)
		assert_string_equal(a->unparsed[i], b->unparsed[i]);
	assert_int_equal(a->n_skipped, b->n_skipped);
	for (size_t i = 0; i < a->n_skipped; i++)
		assert_string_equal(a->skipped[i], b->skipped[i]);
	for (size_t i = 0; i < a->n_items; i++)
		same_item(&a->items[i], &b->items[i]);
}

static void same_compare(const db_compare *a, const db_compare *b)
{
	assert_string_equal(a->profile->name, b->profile->name);
	assert_string_equal(a->why, b->why);
	same_index(a->ref, b->ref);
	same_index(a->tgt, b->tgt);
	assert_int_equal(a->n_pairs, b->n_pairs);
	for (size_t i = 0; i < a->n_pairs; i++) {
		const db_pair *p = &a->pairs[i], *q = &b->pairs[i];
		same_fields(&p->f, &q->f);
		assert_int_equal(p->status, q->status);
		assert_int_equal(p->merged, q->merged);
		assert_int_equal(p->numel, q->numel);
		assert_int_equal(p->ref ? p->ref->seq : -1, q->ref ? q->ref->seq : -1);
		assert_int_equal(p->tgt ? p->tgt->seq : -1, q->tgt ? q->tgt->seq : -1);
	}
	assert_int_equal(a->n_phases, b->n_phases);
}

/* An index from a snapshot keeps its paths and keys in its one block;
 * items of one file share the path. Returns how many shared one. */
static size_t in_block(const db_index *ix)
{
	size_t shared = 0;
	assert_non_null(ix->strs);
	for (size_t i = 0; i < ix->n_items; i++) {
		const db_item *it = &ix->items[i];
		assert_true(db_index_owns_str(ix, it->path));
		assert_true(db_index_owns_str(ix, it->key));
		if (i && !strcmp(it->path, ix->items[i - 1].path)) {
			assert_ptr_equal(it->path, ix->items[i - 1].path);
			shared++;
		}
	}
	return shared;
}

/* Is the snapshot of root (side NULL) there and valid for its listing? */
static bool snap_hit(const char *cache, const char *root, const db_profile *p)
{
	db_walk w;
	bool is_file;
	char msg[512];
	if (db_walk_root(root, &w, &is_file, msg, sizeof msg) != 0)
		return false;
	uint64_t key = db_isnap_key(&w, is_file, p, NULL);
	db_index *ix = db_isnap_load(cache, root, NULL, key, &w, is_file, p);
	db_walk_free(&w);
	bool hit = ix != NULL;
	db_index_free(ix);
	return hit;
}

static void t_every_layout(void **s)
{
	(void)s;
	static const char *const trees[] = {
		"layouts/generic_npz", "layouts/sglang_v2", "layouts/generic_npy",
		"layouts/generic_st", "layouts/sglang_v1", "layouts/fwd_hook",
		"layouts/atom_hooks", "bisect/signflip_tp2", "bisect/sparse", "demo",
	};
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	char cache[1100];
	snprintf(cache, sizeof cache, "%s/cache", dir);
	size_t shared = 0;
	for (size_t i = 0; i < sizeof trees / sizeof *trees; i++) {
		char r[1024], t[1024];
		snprintf(r, sizeof r, "%s/%s/ref", FIXTURES, trees[i]);
		snprintf(t, sizeof t, "%s/%s/target", FIXTURES, trees[i]);
		/* both list without a stat per file (no entry cache yet): the
		 * scan's opens fill the listing in, which keys the snapshots */
		db_compare *fresh = open_c(r, t, "");      /* no cache at all */
		db_compare *first = open_c(r, t, cache);   /* leaves the snapshots due */
		assert_non_null(fresh);
		assert_non_null(first);
		db_cwrites_join(first);                     /* written */
		assert_true(snap_hit(cache, r, first->profile));
		db_compare *again = open_c(r, t, cache);   /* served from them */
		assert_non_null(again);
		same_compare(fresh, first);
		same_compare(fresh, again);
		assert_null(first->ref->strs);     /* scanned: a malloc a string */
		shared += in_block(again->ref) + in_block(again->tgt);
		db_compare_free(fresh);
		db_compare_free(first);
		db_compare_free(again);
	}
	assert_true(shared > 0);        /* some layout holds several tensors a file */
	cu_rm_rf(dir);
	free(dir);
}

/* Files still being written (settle_ms) are left out of an index that came
 * from a snapshot as from a scan: the items dropped own no string of their
 * own there (a free of one would abort), and the rest equals the scan. */
static void t_settle_from_snapshot(void **s)
{
	(void)s;
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	char rd[1024], td[1024], cache[1024], bad[1400];
	snprintf(rd, sizeof rd, "%s/ref", dir);
	snprintf(td, sizeof td, "%s/target", dir);
	snprintf(cache, sizeof cache, "%s/cache", dir);
	assert_int_equal(cu_copy_tree(FIXTURES "/demo/ref", rd), 0);
	assert_int_equal(cu_copy_tree(FIXTURES "/demo/target", td), 0);
	snprintf(bad, sizeof bad, "%s/sglang_dump_1700000100.0/forward_pass_id=0___rank=0___name=attn.ctx"
	         "___dump_index=105___layer_id=7.pt", td);
	size_t n = 0;
	char *b = cu_slurp(bad, &n);
	assert_non_null(b);
	assert_int_equal(cu_write(bad, b, 100), 0);     /* a torch file cut short */
	free(b);
	db_compare *first = open_c(rd, td, cache);      /* writes the snapshots */
	assert_non_null(first);
	assert_int_equal(first->tgt->n_refused, 1);
	db_compare_free(first);

	db_compare_opts o = {.cache_dir = cache, .settle_ms = 600000};
	db_compare *again = NULL, *fresh = NULL;
	db_err err = {{0}};
	assert_int_equal(db_compare_open(rd, td, &o, &again, &err), 0);
	o.cache_dir = "";
	assert_int_equal(db_compare_open(rd, td, &o, &fresh, &err), 0);
	assert_int_equal(db_compare_settling(again), 1);
	assert_int_equal(again->tgt->n_refused, 0);
	in_block(again->tgt);
	same_compare(fresh, again);
	db_compare_free(again);
	db_compare_free(fresh);
	cu_rm_rf(dir);
	free(dir);
}

static void set_mtime(const char *path, time_t sec)
{
	struct timespec ts[2] = {{0, UTIME_OMIT}, {sec, 0}};
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* Changes to the tree are never hidden by a snapshot. */
static void t_changes_rescan(void **s)
{
	(void)s;
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	char rd[1024], td[1024], cache[1024], path[1400];
	snprintf(rd, sizeof rd, "%s/ref", dir);
	snprintf(td, sizeof td, "%s/target", dir);
	snprintf(cache, sizeof cache, "%s/cache", dir);
	assert_int_equal(cu_copy_tree(FIXTURES "/layouts/generic_npy/ref", rd), 0);
	assert_int_equal(cu_copy_tree(FIXTURES "/layouts/generic_npy/target", td), 0);
	db_compare *a = open_c(rd, td, cache);
	assert_non_null(a);
	size_t n0 = a->ref->n_items;
	db_compare_free(a);

	/* a file added */
	float six[6] = {1, 2, 3, 4, 5, 6};
	long s23[2] = {2, 3};
	assert_int_equal(cu_npy(rd, "layer7.extra_stage.npy", "<f4", 2, s23, six, 0), 0);
	a = open_c(rd, td, cache);
	db_compare *f = open_c(rd, td, "");
	assert_non_null(a);
	assert_non_null(f);
	assert_int_equal(a->ref->n_items, n0 + 1);
	same_compare(f, a);
	db_compare_free(a);
	db_compare_free(f);

	/* a file rewritten with another shape and the same size... and mtime
	 * moved: the snapshot key changes */
	long s32[2] = {3, 2};
	assert_int_equal(cu_npy(rd, "layer7.extra_stage.npy", "<f4", 2, s32, six, 0), 0);
	snprintf(path, sizeof path, "%s/layer7.extra_stage.npy", rd);
	set_mtime(path, 1000000000);
	a = open_c(rd, td, cache);
	assert_non_null(a);
	bool seen = false;
	for (size_t i = 0; i < a->ref->n_items; i++)
		if (!strcmp(a->ref->items[i].path, "layer7.extra_stage.npy")) {
			assert_int_equal(a->ref->items[i].shape[0], 3);
			seen = true;
		}
	assert_true(seen);
	db_compare_free(a);

	/* a file removed */
	assert_int_equal(unlink(path), 0);
	a = open_c(rd, td, cache);
	assert_non_null(a);
	assert_int_equal(a->ref->n_items, n0);
	db_compare_free(a);

	/* a corrupt snapshot reads as a miss; the open is still right */
	DIR *dd = opendir(cache);
	assert_non_null(dd);
	struct dirent *de;
	int flipped = 0;
	while ((de = readdir(dd))) {
		if (!strstr(de->d_name, ".snap"))
			continue;
		snprintf(path, sizeof path, "%s/%s", cache, de->d_name);
		size_t n = 0;
		char *b = cu_slurp(path, &n);
		assert_non_null(b);
		assert_true(n > 40);
		b[n / 2] ^= 0x10;
		assert_int_equal(cu_write(path, b, n), 0);
		free(b);
		flipped++;
	}
	closedir(dd);
	assert_int_equal(flipped, 2);
	f = open_c(rd, td, "");
	assert_non_null(f);
	assert_false(snap_hit(cache, rd, f->profile));
	assert_false(snap_hit(cache, td, f->profile));
	a = open_c(rd, td, cache);
	assert_non_null(a);
	same_compare(f, a);
	db_cwrites_join(a);     /* a first open writes its caches behind its frame */
	assert_true(snap_hit(cache, rd, f->profile));      /* rewritten whole */
	db_compare_free(a);
	db_compare_free(f);
	cu_rm_rf(dir);
	free(dir);
}

/* Detection served from its record: same profile, same reason; a changed
 * listing is detected again. */
static void t_detect_record(void **s)
{
	(void)s;
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	char rd[1024], cache[1024];
	snprintf(rd, sizeof rd, "%s/ref", dir);
	snprintf(cache, sizeof cache, "%s/cache", dir);
	assert_int_equal(cu_copy_tree(FIXTURES "/layouts/sglang_v1/ref", rd), 0);
	db_walk w;
	bool is_file;
	char msg[512], why0[512], why1[512], why2[512];
	assert_int_equal(db_walk_root(rd, &w, &is_file, msg, sizeof msg), 0);
	db_profile *p0 = NULL, *p1 = NULL, *p2 = NULL;
	assert_int_equal(db_profile_detect_walk(rd, &w, NULL, &p0, why0, sizeof why0, NULL), 0);
	assert_int_equal(db_profile_detect_walk(rd, &w, cache, &p1, why1, sizeof why1, NULL), 0);
	assert_int_equal(db_profile_detect_walk(rd, &w, cache, &p2, why2, sizeof why2, NULL), 0);
	assert_string_equal(p0->name, p1->name);
	assert_string_equal(p0->name, p2->name);
	assert_string_equal(why0, why1);
	assert_string_equal(why0, why2);
	db_walk_free(&w);
	db_profile_free(p0);
	db_profile_free(p1);
	db_profile_free(p2);

	/* files of another layout make up most of the tree now: a stale
	 * record would give the old profile or the old counts */
	float one[1] = {1};
	long s1[1] = {1};
	for (int i = 0; i < 300; i++) {
		char rel[64];
		snprintf(rel, sizeof rel, "layer%d.mlp.npy", i);
		assert_int_equal(cu_npy(rd, rel, "<f4", 1, s1, one, 0), 0);
	}
	assert_int_equal(db_walk_root(rd, &w, &is_file, msg, sizeof msg), 0);
	assert_int_equal(db_profile_detect_walk(rd, &w, NULL, &p0, why0, sizeof why0, NULL), 0);
	assert_int_equal(db_profile_detect_walk(rd, &w, cache, &p1, why1, sizeof why1, NULL), 0);
	assert_string_equal(p0->name, p1->name);
	assert_string_equal(why0, why1);
	assert_string_not_equal(why0, why2);
	db_walk_free(&w);
	db_profile_free(p0);
	db_profile_free(p1);
	cu_rm_rf(dir);
	free(dir);
}

/* Directory stamps (the reopen's cheap check): they stand for the listing
 * while no entry is added or removed; a rewrite in place keeps them (the
 * check behind the first frame must catch it), an added file does not,
 * unless the directory's mtime is put back. A reopen with verify_later
 * comes from the snapshots and pairs as the full open does. */
static void t_dir_stamps(void **s)
{
	(void)s;
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	char rd[1024], cache[1024], f[1100], extra[1100];
	snprintf(rd, sizeof rd, "%s/ref", dir);
	snprintf(cache, sizeof cache, "%s/cache", dir);
	assert_int_equal(cu_copy_tree(FIXTURES "/demo/ref", rd), 0);
	db_walk w, stub;
	bool is_file;
	char msg[512];
	assert_int_equal(db_walk_root(rd, &w, &is_file, msg, sizeof msg), 0);
	assert_true(w.n_dirs >= 2);     /* the root and its dump folder */
	assert_string_equal(w.dirs[0].rel, "");
	snprintf(f, sizeof f, "%s/%s", rd, w.files[0].rel);
	snprintf(extra, sizeof extra, "%s/%s.extra", rd, w.files[0].rel);
	db_stamp_store(cache, rd, &w);
	assert_true(db_stamp_load(cache, rd, &stub));
	assert_true(stub.stub);
	assert_int_equal(stub.n_files, w.n_files);
	assert_true(db_walk_hash(&stub, false) == db_walk_hash(&w, false));
	assert_true(db_walk_hash(&stub, true) == db_walk_hash(&w, true));
	/* the stub carries the stamped directories (the watcher's list) */
	assert_int_equal(stub.n_dirs, w.n_dirs);
	assert_string_equal(stub.dirs[0].rel, "");
	uint64_t h0 = db_walk_hash(&w, false);
	db_walk_free(&w);
	db_walk_free(&stub);

	/* rewritten in place: the stamps hold, the listing does not */
	FILE *fp = fopen(f, "r+b");
	assert_non_null(fp);
	assert_int_equal(fputc('\0', fp) == EOF, 0);
	fclose(fp);
	assert_true(db_stamp_load(cache, rd, &stub));
	db_walk_free(&stub);
	assert_int_equal(db_walk_root(rd, &w, &is_file, msg, sizeof msg), 0);
	assert_true(db_walk_hash(&w, false) != h0);
	db_walk_free(&w);

	/* a file added: the stamps fail; its directory's mtime put back: they
	 * hold again (the check behind the frame sees the new name) */
	char sub[1100];
	snprintf(sub, sizeof sub, "%s", extra);
	*strrchr(sub, '/') = 0;
	struct stat st;
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(cu_write(extra, "x", 1), 0);
	assert_false(db_stamp_load(cache, rd, &stub));
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, sub, ts, 0), 0);
	assert_true(db_stamp_load(cache, rd, &stub));
	assert_int_equal(db_walk_root(rd, &w, &is_file, msg, sizeof msg), 0);
	assert_true(db_walk_hash(&w, true) != db_walk_hash(&stub, true));
	db_walk_free(&w);
	db_walk_free(&stub);
	cu_rm_rf(dir);
	free(dir);

	/* a reopen from snapshots pairs as the full open */
	dir = cu_tmpdir();
	char td[1024];
	snprintf(rd, sizeof rd, "%s/ref", dir);
	snprintf(td, sizeof td, "%s/target", dir);
	snprintf(cache, sizeof cache, "%s/cache", dir);
	assert_int_equal(cu_copy_tree(FIXTURES "/demo/ref", rd), 0);
	assert_int_equal(cu_copy_tree(FIXTURES "/demo/target", td), 0);
	db_compare_opts o = {.cache_dir = cache, .verify_later = true};
	db_compare *a = NULL, *b = NULL;
	assert_int_equal(db_compare_open(rd, td, &o, &a, NULL), 0);
	assert_false(db_compare_from_snapshots(a));
	assert_int_equal(db_compare_verify_state(a), DB_VERIFY_NONE);
	db_cwrites_join(a);
	assert_int_equal(db_compare_open(rd, td, &o, &b, NULL), 0);
	assert_true(db_compare_from_snapshots(b));
	assert_int_equal(db_compare_verify_state(b), DB_VERIFY_PENDING);
	assert_int_equal(a->n_pairs, b->n_pairs);
	assert_string_equal(a->why, b->why);
	for (size_t i = 0; i < a->n_pairs; i++) {
		char ka[640], kb[640];
		assert_string_equal(db_fields_key(&a->pairs[i].f, ka, sizeof ka),
		                    db_fields_key(&b->pairs[i].f, kb, sizeof kb));
		assert_int_equal(a->pairs[i].occurrence, b->pairs[i].occurrence);
		assert_int_equal(a->pairs[i].status, b->pairs[i].status);
	}
	/* unchanged: the check says so */
	assert_int_equal(db_compare_verify_start(b), 0);
	db_verify_state vs;
	while ((vs = db_compare_verify_state(b)) == DB_VERIFY_PENDING)
		sched_yield();
	assert_int_equal(vs, DB_VERIFY_NONE);
	db_compare_free(b);
	/* rewritten in place: from snapshots, the check finds it, a rescan
	 * clears it */
	db_walk wt;
	assert_int_equal(db_walk_root(td, &wt, &is_file, msg, sizeof msg), 0);
	snprintf(f, sizeof f, "%s/%s", td, wt.files[0].rel);
	db_walk_free(&wt);
	fp = fopen(f, "r+b");
	assert_non_null(fp);
	fputc('\0', fp);
	fclose(fp);
	assert_int_equal(db_compare_open(rd, td, &o, &b, NULL), 0);
	assert_true(db_compare_from_snapshots(b));
	assert_int_equal(db_compare_verify_start(b), 0);
	while ((vs = db_compare_verify_state(b)) == DB_VERIFY_PENDING)
		sched_yield();
	assert_int_equal(vs, DB_VERIFY_CHANGED);
	assert_int_equal(db_compare_rescan(b, NULL), 0);
	assert_int_equal(db_compare_verify_state(b), DB_VERIFY_NONE);
	assert_false(db_compare_from_snapshots(b));
	db_compare_free(a);
	db_compare_free(b);
	cu_rm_rf(dir);
	free(dir);
}

/* The sort key of the listing orders names exactly as db_natcmp does. */
static int sign(int v) { return (v > 0) - (v < 0); }

static unsigned next_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 16;
}

/* Random name of 0..12 chars from an alphabet rich in digit runs. */
static void rand_name(char *p, unsigned *seed)
{
	static const char alpha[] = "0019a_.Z/-";
	int len = (int)(next_rand(seed) % 13);
	for (int i = 0; i < len; i++)
		p[i] = alpha[next_rand(seed) % (sizeof alpha - 1)];
	p[len] = 0;
}

static void t_natkey_order(void **s)
{
	(void)s;
	unsigned seed = 12345;
	char a[32], b[32];
	unsigned char ka[128], kb[128];
	for (int it = 0; it < 200000; it++) {
		rand_name(a, &seed);
		rand_name(b, &seed);
		if (it % 3 == 0) {      /* a shared prefix, as dump names have */
			char t[64];
			snprintf(t, sizeof t, "%.6s%.12s", a, b);
			memcpy(b, t, strlen(t) + 1);
		}
		size_t na = db_natkey(a, ka), nb = db_natkey(b, kb);
		if (sign(db_natcmp(a, b)) != sign(db_natkey_cmp(ka, na, kb, nb)))
			fail_msg("'%s' vs '%s': natcmp %d, key %d", a, b, db_natcmp(a, b),
			         db_natkey_cmp(ka, na, kb, nb));
	}
	size_t n1 = db_natkey("layer2", ka), n2 = db_natkey("layer10", kb);
	assert_true(db_natkey_cmp(ka, n1, kb, n2) < 0);
	n1 = db_natkey("x1", ka), n2 = db_natkey("x01", kb);
	assert_true(db_natkey_cmp(ka, n1, kb, n2) < 0);    /* fewer zeros first */
}

/* A walk told to stop lists nothing more (the reopen's check, given up
 * when the workbench closes); the next walk of the thread is whole. */
static void t_walk_stop(void **s)
{
	(void)s;
	char root[1024], msg[512];
	snprintf(root, sizeof root, "%s/demo/ref", FIXTURES);
	_Atomic int stop = 1;
	db_walk w;
	bool is_file;
	db_walk_stop_on(&stop);
	assert_int_equal(db_walk_root(root, &w, &is_file, msg, sizeof msg), 0);
	assert_int_equal(w.n_files, 0);
	db_walk_free(&w);
	db_walk_stop_on(NULL);
	assert_int_equal(db_walk_root(root, &w, &is_file, msg, sizeof msg), 0);
	assert_true(w.n_files > 0);
	db_walk_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_natkey_order),
		cmocka_unit_test(t_every_layout),
		cmocka_unit_test(t_changes_rescan),
		cmocka_unit_test(t_settle_from_snapshot),
		cmocka_unit_test(t_detect_record),
		cmocka_unit_test(t_dir_stamps),
		cmocka_unit_test(t_walk_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
