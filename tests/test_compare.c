/* nftw (scratch trees) needs X/Open. */
#define _XOPEN_SOURCE 700
/* Pairing and computing whole trees: every built-in layout against the
 * metrics torch computed (expected.json), unsharding, occurrences, bad
 * input, determinism across thread counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <math.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmp_util.h"
#include "db_compare.h"
#include "db_reader.h"

/* The pair of layer / stage (the last one when several match), or NULL. */
static const db_pair *find_layer_stage(const db_compare *c, int layer, const char *stage)
{
	const db_pair *p = NULL;
	for (size_t i = 0; i < c->n_pairs; i++)
		if (c->pairs[i].f.layer == layer && !strcmp(c->pairs[i].f.stage, stage))
			p = &c->pairs[i];
	return p;
}

/* got agrees with want (db_metrics_reference) on every float metric. */
static void metrics_close(const db_metrics *want, const db_metrics *got)
{
	assert_true(cu_close(want->cos, got->cos));
	assert_true(cu_close(want->rel, got->rel));
	assert_true(cu_close(want->rel_l2, got->rel_l2));
	assert_true(cu_close(want->rel_diff, got->rel_diff));
	assert_true(cu_close(want->max_abs, got->max_abs));
	assert_true(cu_close(want->mean_abs, got->mean_abs));
}

/* A scratch directory with the paths of its ref/ and target/ trees. */
typedef struct scratch {
	char *dir;
	char ref[1024], tgt[1024];
} scratch;

static void scratch_open(scratch *s)
{
	s->dir = cu_tmpdir();
	assert_non_null(s->dir);
	snprintf(s->ref, sizeof s->ref, "%s/ref", s->dir);
	snprintf(s->tgt, sizeof s->tgt, "%s/target", s->dir);
}

static void scratch_close(scratch *s)
{
	cu_rm_rf(s->dir);
	free(s->dir);
}

/* ---- every layout vs expected.json ------------------------------------ */

static void check_layout(const char *name, const char *ref, const char *tgt)
{
	char r[1024], t[1024], e[1024];
	snprintf(r, sizeof r, "%s/layouts/%s%s%s", FIXTURES, name, ref ? "/" : "", ref ? ref : "");
	snprintf(t, sizeof t, "%s/layouts/%s/%s", FIXTURES, name, tgt ? tgt : "");
	snprintf(e, sizeof e, "%s/layouts/%s/expected.json", FIXTURES, name);
	db_jp *exp = tu_json(e);
	assert_non_null(exp);
	assert_int_equal(exp->type, DB_JP_ARR);
	assert_true(exp->n > 0);
	db_compare *c = cu_run(r, tgt ? t : NULL, NULL, NULL, 0);
	assert_true(db_compare_finished(c));
	size_t missing = 0, bad = 0;
	for (size_t i = 0; i < exp->n; i++) {
		const db_jp *x = &exp->items[i];
		const db_pair *p = NULL;
		for (size_t k = 0; k < c->n_pairs && !p; k++)
			if (cu_pair_is(&c->pairs[k], x))
				p = &c->pairs[k];
		const db_jp *st = db_jp_get(x, "stage"), *ly = db_jp_get(x, "layer");
		if (!p) {
			print_error("%s: expected pair layer %g stage '%s' (rank %s) not found\n", name,
			            ly->type == DB_JP_NULL ? -1.0 : ly->num, st->str,
			            db_jp_get(x, "rank")->type == DB_JP_NULL ? "null" : "set");
			missing++;
			continue;
		}
		if (p->status != DB_ST_OK) {
			print_error("%s: %s: status %s %s\n", name, st->str, db_status_name(p->status),
			            p->error ? p->error : "");
			bad++;
			continue;
		}
		const char *names[] = {"cos", "rel", "rel_l2", "rel_diff", "max_abs", "mean_abs"};
		const double got[] = {p->m.cos, p->m.rel, p->m.rel_l2, p->m.rel_diff, p->m.max_abs,
		                      p->m.mean_abs};
		for (int k = 0; k < 6; k++) {
			const db_jp *v = db_jp_get(x, names[k]);
			double want = v->type == DB_JP_NULL ? NAN : v->num;
			if (!cu_close(want, got[k])) {
				print_error("%s: L%d %s rank %d: %s expected %.17g got %.17g\n", name,
				            p->f.layer, p->f.stage, p->f.rank, names[k], want, got[k]);
				bad++;
			}
		}
		const db_jp *dr = db_jp_get(x, "dtype_ref"), *dt = db_jp_get(x, "dtype_target");
		if (dr && strcmp(dr->str, db_dtype_name(p->dtype_ref)))
			bad++;
		if (dt && strcmp(dt->str, db_dtype_name(p->dtype_tgt)))
			bad++;
	}
	/* nothing unpaired in these layouts: both sides dump the same stages */
	for (size_t k = 0; k < c->n_pairs; k++)
		if (c->pairs[k].status != DB_ST_OK) {
			print_error("%s: pair %zu %s: %s\n", name, k, c->pairs[k].f.stage,
			            db_status_name(c->pairs[k].status));
			bad++;
		}
	assert_int_equal(missing, 0);
	assert_int_equal(bad, 0);
	db_compare_free(c);
	db_jp_free(exp);
}

static void t_sglang_v1(void **s) { (void)s; check_layout("sglang_v1", "ref", "target"); }
static void t_sglang_v2(void **s) { (void)s; check_layout("sglang_v2", "ref", "target"); }
static void t_fwd_hook(void **s) { (void)s; check_layout("fwd_hook", "ref", "target"); }
static void t_atom_hooks(void **s) { (void)s; check_layout("atom_hooks", "ref", "target"); }
static void t_atom_fwd(void **s) { (void)s; check_layout("atom_fwd", NULL, NULL); }
/* hooks and ref_ files in one folder: the prefix-less hooks are the target */
static void t_atom_onedir(void **s) { (void)s; check_layout("atom_onedir", NULL, NULL); }
static void t_atom_weights(void **s) { (void)s; check_layout("atom_weights", NULL, NULL); }
static void t_miles(void **s) { (void)s; check_layout("miles", "baseline", "target"); }
static void t_generic_st(void **s) { (void)s; check_layout("generic_st", "ref", "target"); }
static void t_generic_npy(void **s) { (void)s; check_layout("generic_npy", "ref", "target"); }
static void t_generic_npz(void **s) { (void)s; check_layout("generic_npz", "ref", "target"); }

/* The first divergence of the fixture run is layer 2's o_proj (target
 * flips the sign of half its columns); Miles: in phase fwd_only. */
static void t_first_divergence(void **s)
{
	(void)s;
	db_compare *c = cu_run(FIXTURES "/layouts/sglang_v1/ref",
	                        FIXTURES "/layouts/sglang_v1/target", NULL, NULL, 0);
	long i = db_first_divergence(c, NULL, NULL, -2);
	assert_true(i >= 0);
	assert_int_equal(c->pairs[i].f.layer, 2);
	assert_string_equal(c->pairs[i].f.stage, "attn.o_proj");
	db_compare_free(c);

	c = cu_run(FIXTURES "/layouts/miles/baseline", FIXTURES "/layouts/miles/target", NULL,
	            NULL, 0);
	assert_int_equal(c->n_phases, 3);
	assert_string_equal(c->phases[0], "inference");
	assert_string_equal(c->phases[1], "fwd_only");
	assert_string_equal(c->phases[2], "fwd_bwd");
	i = db_first_divergence(c, NULL, NULL, -2);
	assert_true(i >= 0);
	assert_string_equal(c->pairs[i].f.phase, "fwd_only");
	assert_int_equal(db_first_divergence(c, "inference", NULL, -2), -1);
	db_compare_free(c);
}

/* ---- determinism ------------------------------------------------------- */

static void same_results(const db_compare *a, const db_compare *b)
{
	assert_int_equal(a->n_pairs, b->n_pairs);
	for (size_t i = 0; i < a->n_pairs; i++) {
		assert_int_equal(a->pairs[i].status, b->pairs[i].status);
		assert_int_equal(a->pairs[i].band, b->pairs[i].band);
		const double x[] = {a->pairs[i].m.cos, a->pairs[i].m.rel, a->pairs[i].m.rel_l2,
		                    a->pairs[i].m.rel_diff, a->pairs[i].m.max_abs, a->pairs[i].m.mean_abs};
		const double y[] = {b->pairs[i].m.cos, b->pairs[i].m.rel, b->pairs[i].m.rel_l2,
		                    b->pairs[i].m.rel_diff, b->pairs[i].m.max_abs, b->pairs[i].m.mean_abs};
		assert_memory_equal(x, y, sizeof x);
		assert_int_equal(a->pairs[i].m.argmax, b->pairs[i].m.argmax);
	}
}

static void t_threads_identical(void **s)
{
	(void)s;
	const char *r = FIXTURES "/layouts/fwd_hook/ref", *t = FIXTURES "/layouts/fwd_hook/target";
	db_compare *a = cu_open(r, t, NULL, NULL, 1), *b = cu_open(r, t, NULL, NULL, 3);
	db_compare *d = cu_open(r, t, NULL, NULL, 2);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(d);
	db_compare_run(a);
	db_compare_run(b);
	/* one pair at a time in this thread, the rest in the background */
	for (size_t i = 0; i < d->n_pairs; i += 7)
		db_compare_pair(d, &d->pairs[i]);
	assert_int_equal(db_compare_start(d), 0);
	while (!db_compare_finished(d))
		sched_yield();
	db_compare_stop(d);
	same_results(a, b);
	same_results(a, d);
	db_compare_free(a);
	db_compare_free(b);
	db_compare_free(d);
}

/* A pair bigger than one chunk: split over workers, merged in chunk order;
 * equal to the metrics of the whole tensors. */
static void t_big_pair_chunks(void **s)
{
	(void)s;
	scratch sc;
	scratch_open(&sc);
	long n = 2500003;       /* > DB_CHUNK_ELEMS, odd */
	float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
	assert_non_null(x);
	assert_non_null(y);
	for (long i = 0; i < n; i++) {
		x[i] = (float)sin((double)i * 0.001) * 3.0f;
		y[i] = x[i] + (i % 1000 == 0 ? 0.01f : 0.0f);
	}
	y[1234567] = 7.0f;
	assert_int_equal(cu_npy(sc.ref, "layer0.h.npy", "<f4", 1, &n, x, 0), 0);
	assert_int_equal(cu_npy(sc.tgt, "layer0.h.npy", "<f4", 1, &n, y, 0), 0);
	db_compare *a = cu_run(sc.ref, sc.tgt, "generic", NULL, 1);
	db_compare *b = cu_run(sc.ref, sc.tgt, "generic", NULL, 3);
	assert_int_equal(a->n_pairs, 1);
	same_results(a, b);
	assert_int_equal(a->pairs[0].m.argmax, 1234567);
	db_file *fx, *fy;
	char px[1100], py[1100];
	snprintf(px, sizeof px, "%s/layer0.h.npy", sc.ref);
	snprintf(py, sizeof py, "%s/layer0.h.npy", sc.tgt);
	assert_int_equal(db_file_open(px, &fx, NULL), 0);
	assert_int_equal(db_file_open(py, &fy, NULL), 0);
	db_metrics m;
	assert_int_equal(db_metrics_reference(&fx->entries[0].t, &fy->entries[0].t, &m, NULL), 0);
	metrics_close(&m, &a->pairs[0].m);
	assert_true(m.max_abs == a->pairs[0].m.max_abs);
	db_file_close(fx);
	db_file_close(fy);
	db_compare_free(a);
	db_compare_free(b);
	free(x);
	free(y);
	scratch_close(&sc);
}

/* ---- bad input --------------------------------------------------------- */

static void t_corrupt_file(void **s)
{
	(void)s;
	scratch sc;
	scratch_open(&sc);
	char victim[2048];
	assert_int_equal(cu_copy_tree(FIXTURES "/layouts/sglang_v1/ref", sc.ref), 0);
	assert_int_equal(cu_copy_tree(FIXTURES "/layouts/sglang_v1/target", sc.tgt), 0);
	snprintf(victim, sizeof victim, "%s/sglang_dump_1700000100.0/"
	         "forward_pass_id=0___rank=1___name=hidden_out___dump_index=29___layer_id=1.pt", sc.tgt);
	struct stat st;
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(truncate(victim, st.st_size / 2), 0);
	db_compare *c = cu_run(sc.ref, sc.tgt, NULL, NULL, 0);
	size_t errors = 0, ok = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->status == DB_ST_ERROR) {
			errors++;
			assert_int_equal(p->f.layer, 1);
			assert_string_equal(p->f.stage, "hidden_out");
			assert_int_equal(p->f.rank, 1);
			assert_non_null(strstr(p->error, "dump_index=29"));
		} else {
			ok += p->status == DB_ST_OK;
		}
	}
	assert_int_equal(errors, 1);
	assert_int_equal(ok, c->n_pairs - 1);
	assert_true(db_first_divergence(c, NULL, NULL, -2) >= 0);
	db_compare_free(c);
	scratch_close(&sc);
}

static void t_empty_and_missing(void **s)
{
	(void)s;
	scratch sc;
	scratch_open(&sc);
	const char *a = sc.ref, *b = sc.tgt;
	char junk[1100];
	cu_mkdirs(a);
	cu_mkdirs(b);
	db_compare_opts o = {.cache_dir = ""};
	db_compare *c = NULL;
	db_err err = {{0}};
	assert_int_equal(db_compare_open(a, b, &o, &c, &err), -1);
	assert_null(c);
	assert_true(strlen(err.msg) > 0);
	/* a profile given: still no tensors -> error, never an empty pass */
	o.profile = "generic";
	err.msg[0] = 0;
	assert_int_equal(db_compare_open(a, b, &o, &c, &err), -1);
	assert_non_null(strstr(err.msg, "no tensors"));
	/* files no pattern parses */
	snprintf(junk, sizeof junk, "%s/readme.txt", a);
	assert_int_equal(tu_write(junk, "hi\n", 3), 0);
	assert_int_equal(db_compare_open(a, b, &o, &c, &err), -1);
	o.profile = NULL;
	snprintf(junk, sizeof junk, "%s/missing", sc.dir);
	assert_int_equal(db_compare_open(junk, b, &o, &c, &err), -1);
	assert_non_null(strstr(err.msg, "missing"));
	/* a filter matching nothing is an error too */
	o.filter = "^no_such_stage$";
	assert_int_equal(db_compare_open(FIXTURES "/layouts/sglang_v1/ref",
	                                 FIXTURES "/layouts/sglang_v1/target", &o, &c, &err), -1);
	assert_non_null(strstr(err.msg, "filter"));
	o.filter = "([";
	assert_int_equal(db_compare_open(FIXTURES "/layouts/sglang_v1/ref",
	                                 FIXTURES "/layouts/sglang_v1/target", &o, &c, &err), -1);
	scratch_close(&sc);
}

/* FIFOs, devices and symlink loops are listed as skipped, never opened. */
static void t_special_files(void **s)
{
	(void)s;
	scratch sc;
	scratch_open(&sc);
	const char *rd = sc.ref;
	char p[2048];
	assert_int_equal(cu_copy_tree(FIXTURES "/layouts/generic_npy/ref", rd), 0);
	snprintf(p, sizeof p, "%s/layer9.fifo_out.npy", rd);
	assert_int_equal(mkfifo(p, 0644), 0);
	snprintf(p, sizeof p, "%s/loop", rd);
	assert_int_equal(symlink(".", p), 0);
	snprintf(p, sizeof p, "%s/dangling.npy", rd);
	assert_int_equal(symlink("nowhere.npy", p), 0);
	db_profile *pr;
	assert_int_equal(db_profile_load("generic", &pr, NULL), 0);
	db_index *ix;
	assert_int_equal(db_index_scan(rd, pr, NULL, &ix, NULL), 0);
	int fifo = 0, loop = 0, dangling = 0;
	for (size_t i = 0; i < ix->n_skipped; i++) {
		fifo += strstr(ix->skipped[i], "fifo_out") && strstr(ix->skipped[i], "FIFO");
		loop += !strncmp(ix->skipped[i], "loop", 4);
		dangling += !strncmp(ix->skipped[i], "dangling", 8);
	}
	assert_int_equal(fifo, 1);
	assert_int_equal(loop, 1);
	assert_int_equal(dangling, 1);
	assert_int_equal(ix->n_items, 60);     /* the fixture's 60 stage files */
	for (size_t i = 0; i < ix->n_items; i++)
		assert_null(ix->items[i].err);
	db_index_free(ix);
	db_profile_free(pr);
	scratch_close(&sc);
}

/* ---- unsharding, occurrences, statuses --------------------------------- */

static const char shard_yaml[] =
	"name: t-shard\n"
	"path: '^(?:r(?<rank>\\d+)/)?layer(?<layer>\\d+)\\.(?<stage>[a-z0-9_]+?)(?:_(?<order>\\d+))?\\.npy$'\n"
	"shard:\n"
	"  - {stage: '^cat$', dim: -1, how: concat}\n"
	"  - {stage: '^cat0$', dim: 0, how: concat}\n"
	"  - {stage: '^psum$', dim: 0, how: sum}\n";

static char *write_profile(const char *dir)
{
	static char path[1100];
	snprintf(path, sizeof path, "%s/t-shard.yaml", dir);
	assert_int_equal(tu_write(path, shard_yaml, sizeof shard_yaml - 1), 0);
	return path;
}

static void expect_metrics(const db_pair *p, const double *x, const double *y, long n)
{
	db_tensor tx = {0}, ty = {0};
	tx.dtype = ty.dtype = DB_DT_F64;
	tx.ndim = ty.ndim = 1;
	tx.shape[0] = ty.shape[0] = n;
	tx.stride[0] = ty.stride[0] = 1;
	tx.data = (const uint8_t *)x;
	ty.data = (const uint8_t *)y;
	tx.file_offset = ty.file_offset = -1;
	db_metrics m;
	assert_int_equal(db_metrics_reference(&tx, &ty, &m, NULL), 0);
	assert_int_equal(p->status, DB_ST_OK);
	metrics_close(&m, &p->m);
	assert_int_equal(m.argmax, p->m.argmax);
}

static const db_pair *find_pair(const db_compare *c, const char *stage, int rank, bool merged,
                                int occ)
{
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (!strcmp(p->f.stage, stage) && p->merged == merged && p->occurrence == occ &&
		    (merged || p->f.rank == rank))
			return p;
	}
	return NULL;
}

/* Unsharded reference vs a TP=2 target (uneven concat along the last dim,
 * one shard Fortran-ordered, i.e. a strided view; concat along dim 0; sum
 * of partials), and sharded vs sharded. */
static void t_unshard(void **s)
{
	(void)s;
	scratch sc;
	scratch_open(&sc);
	const char *prof = write_profile(sc.dir), *rd = sc.ref, *td = sc.tgt;
	enum { R = 4, C = 6 };
	float X[R][C], Y[R][C], A[R][C], B[R][C];
	double xd[R * C], yd[R * C], ysum[R * C];
	for (int i = 0; i < R; i++)
		for (int j = 0; j < C; j++) {
			X[i][j] = (float)(i * C + j) * 0.25f - 2.0f;
			Y[i][j] = X[i][j] + ((i + j) % 3 == 0 ? 0.125f : 0.0f);
			A[i][j] = (float)(i - j) * 0.5f;
			B[i][j] = Y[i][j] - A[i][j];
		}
	long full[2] = {R, C};
	/* reference: unsharded, rank-less */
	assert_int_equal(cu_npy(rd, "layer0.cat.npy", "<f4", 2, full, X, 0), 0);
	assert_int_equal(cu_npy(rd, "layer0.cat0.npy", "<f4", 2, full, X, 0), 0);
	assert_int_equal(cu_npy(rd, "layer0.psum.npy", "<f4", 2, full, X, 0), 0);
	/* target: rank 0 holds columns 0..1, rank 1 columns 2..5 (Fortran) */
	float c0[R][2], c1f[4 * R];
	for (int i = 0; i < R; i++)
		for (int j = 0; j < 2; j++)
			c0[i][j] = Y[i][j];
	for (int j = 0; j < 4; j++)
		for (int i = 0; i < R; i++)
			c1f[j * R + i] = Y[i][2 + j];
	long s0[2] = {R, 2}, s1[2] = {R, 4};
	assert_int_equal(cu_npy(td, "r0/layer0.cat.npy", "<f4", 2, s0, c0, 0), 0);
	assert_int_equal(cu_npy(td, "r1/layer0.cat.npy", "<f4", 2, s1, c1f, 1), 0);
	long r0[2] = {1, C}, r1[2] = {R - 1, C};
	assert_int_equal(cu_npy(td, "r0/layer0.cat0.npy", "<f4", 2, r0, Y[0], 0), 0);
	assert_int_equal(cu_npy(td, "r1/layer0.cat0.npy", "<f4", 2, r1, Y[1], 0), 0);
	assert_int_equal(cu_npy(td, "r0/layer0.psum.npy", "<f4", 2, full, A, 0), 0);
	assert_int_equal(cu_npy(td, "r1/layer0.psum.npy", "<f4", 2, full, B, 0), 0);
	for (int i = 0; i < R * C; i++) {
		xd[i] = X[i / C][i % C];
		yd[i] = Y[i / C][i % C];
		ysum[i] = (double)A[i / C][i % C] + (double)B[i / C][i % C];
	}
	db_compare *c = cu_run(rd, td, prof, NULL, 2);
	/* the per-rank pairs cannot line up with one full tensor: only the
	 * merged pairs remain */
	assert_int_equal(c->n_pairs, 3);
	const db_pair *p = find_pair(c, "cat", -1, true, 0);
	assert_non_null(p);
	assert_int_equal(p->n_tgt_shards, 2);
	assert_int_equal(p->n_ref_shards, 1);
	assert_int_equal(p->shape_tgt[1], C);
	expect_metrics(p, xd, yd, R * C);
	p = find_pair(c, "cat0", -1, true, 0);
	assert_non_null(p);
	expect_metrics(p, xd, yd, R * C);
	p = find_pair(c, "psum", -1, true, 0);
	assert_non_null(p);
	expect_metrics(p, xd, ysum, R * C);
	db_compare_free(c);

	/* both sides sharded: per-rank pairs kept, plus the merged one (the
	 * reverse case too: swap ref and target) */
	db_compare *d = cu_run(td, td, prof, NULL, 1); /* same folder, no side group: itself */
	assert_int_equal(db_first_divergence(d, NULL, NULL, -2), -1);
	p = find_pair(d, "psum", -1, true, 0);
	assert_non_null(p);
	assert_true(p->m.max_abs == 0.0);
	db_compare_free(d);
	d = cu_run(td, rd, prof, NULL, 1);
	p = find_pair(d, "cat", -1, true, 0);
	assert_non_null(p);
	expect_metrics(p, yd, xd, R * C);
	db_compare_free(d);
	scratch_close(&sc);
}

static void t_statuses_and_occurrence(void **s)
{
	(void)s;
	scratch sc;
	scratch_open(&sc);
	const char *prof = write_profile(sc.dir), *rd = sc.ref, *td = sc.tgt;
	float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 2, 3, 4, 5, 7};
	double ad[6] = {1, 2, 3, 4, 5, 6};
	long s23[2] = {2, 3}, s32[2] = {3, 2}, s6 = 6;
	/* repeated name: order 0 and 1 are the 1st and 2nd dump of "h" */
	assert_int_equal(cu_npy(rd, "layer0.h_0.npy", "<f4", 1, &s6, a, 0), 0);
	assert_int_equal(cu_npy(rd, "layer0.h_1.npy", "<f4", 1, &s6, b, 0), 0);
	assert_int_equal(cu_npy(td, "layer0.h_0.npy", "<f4", 1, &s6, a, 0), 0);
	assert_int_equal(cu_npy(td, "layer0.h_1.npy", "<f4", 1, &s6, a, 0), 0);
	/* same numel, another shape: a mismatch */
	assert_int_equal(cu_npy(rd, "layer0.sh_2.npy", "<f4", 2, s23, a, 0), 0);
	assert_int_equal(cu_npy(td, "layer0.sh_2.npy", "<f4", 2, s32, a, 0), 0);
	/* one side only */
	assert_int_equal(cu_npy(rd, "layer0.gone_3.npy", "<f4", 1, &s6, a, 0), 0);
	assert_int_equal(cu_npy(td, "layer0.new_4.npy", "<f4", 1, &s6, a, 0), 0);
	/* another dtype, same values: compared after casting, flagged */
	assert_int_equal(cu_npy(rd, "layer0.dt_5.npy", "<f4", 1, &s6, a, 0), 0);
	assert_int_equal(cu_npy(td, "layer0.dt_5.npy", "<f8", 1, &s6, ad, 0), 0);
	db_compare *c = cu_run(rd, td, prof, NULL, 0);
	assert_int_equal(c->n_pairs, 6);
	const db_pair *h0 = find_pair(c, "h", 0, false, 0), *h1 = find_pair(c, "h", 0, false, 1);
	assert_null(h0);        /* rank-less layout */
	h0 = find_pair(c, "h", -1, false, 0);
	h1 = find_pair(c, "h", -1, false, 1);
	assert_non_null(h0);
	assert_non_null(h1);
	assert_true(h0->seq < h1->seq);
	assert_int_equal(h0->status, DB_ST_OK);
	assert_true(h0->m.max_abs == 0.0);
	assert_true(h1->m.max_abs == 1.0);
	assert_int_equal(h1->m.argmax, 5);
	assert_int_equal(find_pair(c, "sh", -1, false, 0)->status, DB_ST_SHAPE_MISMATCH);
	assert_int_equal(find_pair(c, "gone", -1, false, 0)->status, DB_ST_REF_ONLY);
	assert_int_equal(find_pair(c, "new", -1, false, 0)->status, DB_ST_TARGET_ONLY);
	const db_pair *dt = find_pair(c, "dt", -1, false, 0);
	assert_int_equal(dt->status, DB_ST_OK);
	assert_true(dt->dtype_differs);
	assert_true(dt->m.max_abs == 0.0);
	assert_int_equal(dt->band, DB_BAND_OK);
	/* execution order follows the dump order group */
	for (size_t i = 1; i < c->n_pairs; i++)
		assert_true(c->pairs[i - 1].seq < c->pairs[i].seq);
	assert_string_equal(c->pairs[0].f.stage, "h");
	assert_string_equal(c->pairs[c->n_pairs - 1].f.stage, "dt");
	/* the first divergence is the 2nd dump of h */
	assert_int_equal(db_first_divergence(c, NULL, NULL, -2), (long)(h1 - c->pairs));
	db_compare_free(c);
	scratch_close(&sc);
}

static void t_filter(void **s)
{
	(void)s;
	db_compare *c = cu_open(FIXTURES "/layouts/sglang_v1/ref",
	                         FIXTURES "/layouts/sglang_v1/target", NULL, "^attn\\.", 0);
	assert_non_null(c);
	assert_true(c->n_pairs > 0);
	for (size_t i = 0; i < c->n_pairs; i++)
		assert_int_equal(strncmp(c->pairs[i].f.stage, "attn.", 5), 0);
	db_compare_free(c);
}

static void t_rescan_keeps_results(void **s)
{
	(void)s;
	db_compare *c = cu_run(FIXTURES "/layouts/atom_hooks/ref",
	                        FIXTURES "/layouts/atom_hooks/target", NULL, NULL, 0);
	double cos5 = c->pairs[5].m.cos;
	db_err err;
	assert_int_equal(db_compare_rescan(c, &err), 0);
	assert_true(db_compare_finished(c));
	assert_true(c->pairs[5].m.cos == cos5);
	db_compare_free(c);
}

/* The metrics cache: a reopened tree is served from it, bitwise equal; a
 * changed file is recomputed; a corrupt cache file is ignored. */
static db_compare *open_cached(const char *r, const char *t, const char *cache)
{
	db_compare_opts o = {.cache_dir = cache};
	db_compare *c = NULL;
	db_err err;
	if (db_compare_open(r, t, &o, &c, &err) != 0)
		print_error("%s\n", err.msg);
	assert_non_null(c);
	return c;
}

/* open_cached, run to the end; *n_cached: pairs served from the cache. */
static db_compare *run_cached(const char *r, const char *t, const char *cache, size_t *n_cached)
{
	db_compare *c = open_cached(r, t, cache);
	db_compare_run(c);
	*n_cached = atomic_load(&c->n_cached);
	return c;
}

static void t_cache(void **s)
{
	(void)s;
	scratch sc;
	scratch_open(&sc);
	const char *rd = sc.ref, *td = sc.tgt;
	char cd[1024], victim[1100];
	size_t n_cached;
	snprintf(cd, sizeof cd, "%s/cache/dumpbisect", sc.dir);
	assert_int_equal(cu_copy_tree(FIXTURES "/layouts/generic_npy/ref", rd), 0);
	assert_int_equal(cu_copy_tree(FIXTURES "/layouts/generic_npy/target", td), 0);
	db_compare *a = run_cached(rd, td, cd, &n_cached);
	assert_int_equal(n_cached, 0);
	db_compare *b = open_cached(rd, td, cd);    /* written when a run ends */
	assert_int_equal(db_compare_start(b), 0);
	db_compare_stop(b);
	assert_true(db_compare_finished(b));        /* every pair from the cache */
	assert_int_equal(atomic_load(&b->n_cached), b->n_pairs);
	same_results(a, b);
	db_compare_free(b);

	/* change one file (same size, new bytes, new mtime): only it recomputes */
	snprintf(victim, sizeof victim, "%s/layer0.hidden_in.npy", td);
	size_t n;
	char *bytes = tu_slurp(victim, &n);
	assert_non_null(bytes);
	bytes[n - 2] ^= 0x01;     /* a mantissa bit of the last float */
	assert_int_equal(unlink(victim), 0);
	assert_int_equal(tu_write(victim, bytes, n), 0);
	struct timespec ts[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
	assert_int_equal(utimensat(AT_FDCWD, victim, ts, 0), 0);
	free(bytes);
	b = run_cached(rd, td, cd, &n_cached);
	assert_int_equal(n_cached, b->n_pairs - 1);
	const db_pair *p = find_layer_stage(b, 0, "hidden_in");
	assert_non_null(p);
	assert_true(p->m.max_abs > 0.0);    /* the new bytes were read */
	db_compare_free(b);
	db_compare_free(a);

	/* a corrupt cache file is ignored (and rewritten) */
	char cf[1400] = "";
	DIR *dd = opendir(cd);
	assert_non_null(dd);
	struct dirent *de;
	int files = 0;
	while ((de = readdir(dd)))
		if (strstr(de->d_name, ".cache")) {
			snprintf(cf, sizeof cf, "%s/%s", cd, de->d_name);
			files++;
		}
	closedir(dd);
	assert_int_equal(files, 1);
	bytes = tu_slurp(cf, &n);
	assert_non_null(bytes);
	assert_true(n > 100);
	bytes[n / 2] ^= 0x01;
	assert_int_equal(tu_write(cf, bytes, n), 0);
	free(bytes);
	b = run_cached(rd, td, cd, &n_cached);
	assert_int_equal(n_cached, 0);
	assert_true(db_compare_finished(b));
	db_compare_free(b);
	b = run_cached(rd, td, cd, &n_cached);
	assert_int_equal(n_cached, b->n_pairs);
	db_compare_free(b);

	/* the entry cache of the index: a file rewritten with another shape is
	 * read again, never taken from it */
	float six[6] = {1, 2, 3, 4, 5, 6};
	long s23[2] = {2, 3};
	assert_int_equal(cu_npy(td, "layer0.hidden_in.npy", "<f4", 2, s23, six, 0), 0);
	b = open_cached(rd, td, cd);
	p = find_layer_stage(b, 0, "hidden_in");
	assert_non_null(p);
	assert_int_equal(p->status, DB_ST_SHAPE_MISMATCH);
	assert_int_equal(p->shape_tgt[1], 3);
	db_compare_free(b);
	scratch_close(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_sglang_v1),
		cmocka_unit_test(t_sglang_v2),
		cmocka_unit_test(t_fwd_hook),
		cmocka_unit_test(t_atom_hooks),
		cmocka_unit_test(t_atom_onedir),
		cmocka_unit_test(t_atom_weights),
		cmocka_unit_test(t_atom_fwd),
		cmocka_unit_test(t_miles),
		cmocka_unit_test(t_generic_st),
		cmocka_unit_test(t_generic_npy),
		cmocka_unit_test(t_generic_npz),
		cmocka_unit_test(t_first_divergence),
		cmocka_unit_test(t_threads_identical),
		cmocka_unit_test(t_big_pair_chunks),
		cmocka_unit_test(t_corrupt_file),
		cmocka_unit_test(t_empty_and_missing),
		cmocka_unit_test(t_special_files),
		cmocka_unit_test(t_unshard),
		cmocka_unit_test(t_statuses_and_occurrence),
		cmocka_unit_test(t_filter),
		cmocka_unit_test(t_rescan_keeps_results),
		cmocka_unit_test(t_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
