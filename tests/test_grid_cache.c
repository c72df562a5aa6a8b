/* The indexed grid (db_grid_cache.h) against db_grid_build and
 * db_grid_worst_ranks from scratch: every phase, pass and rank (and "all")
 * of the fixture layouts, one cache reused across them the way the rank
 * keys step; while metrics arrive; after a rescan that adds ranks. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmp_util.h"
#include "db_cell.h"
#include "db_grid.h"
#include "db_grid_cache.h"
#include "npz_util.h"

#define LAYOUT(x) FIXTURES "/layouts/" x

static void same_grid(const db_grid *a, const db_grid *b)
{
	assert_string_equal(a->phase, b->phase);
	assert_string_equal(a->pass, b->pass);
	assert_int_equal(a->rank, b->rank);
	assert_int_equal(a->n_cols, b->n_cols);
	for (size_t k = 0; k < a->n_cols; k++)
		assert_string_equal(a->cols[k], b->cols[k]);
	assert_int_equal(a->n_rows, b->n_rows);
	assert_int_equal(a->first_layer_row, b->first_layer_row);
	assert_int_equal(a->n_layer_rows, b->n_layer_rows);
	for (size_t r = 0; r < a->n_rows; r++) {
		assert_int_equal(a->rows[r].layer, b->rows[r].layer);
		assert_string_equal(a->rows[r].label, b->rows[r].label);
		for (size_t k = 0; k < (a->n_cols ? a->n_cols : 1); k++)
			assert_int_equal(a->rows[r].cells[k], b->rows[r].cells[k]);
	}
}

/* One selection both ways, then the worst-rank pass both ways; twice, as
 * the cache keeps the all-ranks grid and a settled pass. */
static void check_sel(db_compare *c, db_grid_cache *gc, const char *phase, const char *pass,
                      int rank)
{
	for (int round = 0; round < 2; round++) {
		db_grid a, b;
		assert_int_equal(db_grid_build(c, phase, pass, rank, &a), 0);
		assert_int_equal(db_grid_cache_build(gc, c, phase, pass, rank, &b), 0);
		same_grid(&a, &b);
		bool sa, sb;
		bool ca = db_grid_worst_ranks(c, &a, &sa);
		bool cb = db_grid_cache_worst_ranks(gc, c, &b, &sb);
		assert_int_equal(ca, cb);
		assert_int_equal(sa, sb);
		same_grid(&a, &b);
		db_grid_free(&a);
		db_grid_free(&b);
	}
}

/* Every phase (and the default), pass (and the default) and rank: all,
 * merged, each rank up and back down, one that is not there. Returns the
 * number of selections checked. */
static size_t check_all(db_compare *c, db_grid_cache *gc)
{
	int *ranks;
	size_t nr = db_ranks(c, &ranks), n = 0;
	for (size_t ph = 0; ph <= c->n_phases; ph++) {
		const char *phase = ph ? c->phases[ph - 1] : NULL;
		char **passes;
		size_t np = db_passes(c, phase, &passes);
		for (size_t pa = 0; pa <= np; pa++) {
			const char *pass = pa ? passes[pa - 1] : NULL;
			check_sel(c, gc, phase, pass, DB_RANK_ANY);
			for (size_t k = 0; k < nr; k++)
				check_sel(c, gc, phase, pass, ranks[k]);
			for (size_t k = nr; k-- > 0;)
				check_sel(c, gc, phase, pass, ranks[k]);
			check_sel(c, gc, phase, pass, DB_RANK_ANY);
			check_sel(c, gc, phase, pass, -1);
			check_sel(c, gc, phase, pass, 12345);
			n += 2 * nr + 4;
		}
		for (size_t pa = 0; pa < np; pa++)
			free(passes[pa]);
		free(passes);
	}
	free(ranks);
	return n;
}

static const char *const trees[][2] = {
	{LAYOUT("atom_fwd"), NULL},
	{LAYOUT("atom_hooks/ref"), LAYOUT("atom_hooks/target")},
	{LAYOUT("atom_onedir"), NULL},
	{LAYOUT("atom_weights"), NULL},
	{LAYOUT("fwd_hook/ref"), LAYOUT("fwd_hook/target")},
	{LAYOUT("sglang_v1/ref"), LAYOUT("sglang_v1/target")},
	{LAYOUT("sglang_v2/ref"), LAYOUT("sglang_v2/target")},
	{LAYOUT("miles/baseline"), LAYOUT("miles/target")},
	{LAYOUT("generic_npz/ref"), LAYOUT("generic_npz/target")},
	{FIXTURES "/bisect/signflip_tp2/ref", FIXTURES "/bisect/signflip_tp2/target"},
	{FIXTURES "/bisect/layerclass/ref", FIXTURES "/bisect/layerclass/target"},
	{FIXTURES "/realdump_mixed/hook_hybrid/ref", FIXTURES "/realdump_mixed/hook_hybrid/target"},
	{FIXTURES "/realdump_mixed/hybrid/ref", FIXTURES "/realdump_mixed/hybrid/target"},
};

/* Computed trees; one cache for all of them (each open reindexes). */
static void t_every_selection(void **s)
{
	(void)s;
	db_grid_cache *gc = db_grid_cache_new();
	assert_non_null(gc);
	for (size_t t = 0; t < sizeof trees / sizeof *trees; t++) {
		db_compare *c = cu_run(trees[t][0], trees[t][1], NULL, NULL, 0);
		assert_true(check_all(c, gc) > 0);
		db_compare_free(c);
	}
	db_grid_cache_free(gc);
}

/* Metrics arriving: the same index while pairs finish one by one, last
 * first; the kept grids take their worst ranks the same way. */
static void t_metrics_arrive(void **s)
{
	(void)s;
	static const size_t sharded[] = {4, 5, 9};     /* fwd_hook, sglang_v1, signflip */
	for (size_t t = 0; t < sizeof sharded / sizeof *sharded; t++) {
		db_compare *c = cu_open(trees[sharded[t]][0], trees[sharded[t]][1], NULL, NULL, 0);
		assert_non_null(c);
		db_grid_cache *gc = db_grid_cache_new();
		db_grid a, b;
		assert_int_equal(db_grid_build(c, NULL, NULL, DB_RANK_ANY, &a), 0);
		assert_int_equal(db_grid_cache_build(gc, c, NULL, NULL, DB_RANK_ANY, &b), 0);
		check_all(c, gc);
		for (size_t i = c->n_pairs; i-- > 0;) {
			db_compare_pair(c, &c->pairs[i]);
			bool sa, sb;
			bool ca = db_grid_worst_ranks(c, &a, &sa);
			assert_int_equal(ca, db_grid_cache_worst_ranks(gc, c, &b, &sb));
			assert_int_equal(sa, sb);
			same_grid(&a, &b);
			if (i % 7 == 0)
				check_all(c, gc);
		}
		check_all(c, gc);
		db_grid_free(&a);
		db_grid_free(&b);
		db_grid_cache_free(gc);
		db_compare_free(c);
	}
}

/* A rescan that adds a rank, a layer and a stage: the cache used before
 * it gives the grids of the new pairs. */
static void t_rescan(void **s)
{
	(void)s;
	char *dir = cu_tmpdir();
	assert_non_null(dir);
	char ref[1024], tgt[1024], prof[1024];
	snprintf(ref, sizeof ref, "%s/ref", dir);
	snprintf(tgt, sizeof tgt, "%s/tgt", dir);
	cu_mkdirs(ref);
	cu_mkdirs(tgt);
	static const char *const r0[] = {"layers.0.a", "layers.0.m", "layers.1.a", "layers.1.m",
	                                 "final"};
	static const char *const r1[] = {"layers.0.a", "layers.0.m", "layers.1.a", "layers.1.m"};
	static const char *const r2[] = {"layers.0.a", "layers.0.x", "layers.0.m", "layers.1.a",
	                                 "layers.1.m", "layers.2.a", "layers.2.m"};
	cu_npz(ref, "r0.npz", r0, sizeof r0 / sizeof *r0, (const float[2]){1, 1});
	cu_npz(tgt, "r0.npz", r0, sizeof r0 / sizeof *r0, (const float[2]){1, 1});
	cu_npz(ref, "r1.npz", r1, sizeof r1 / sizeof *r1, (const float[2]){1, 1});
	cu_npz(tgt, "r1.npz", r1, sizeof r1 / sizeof *r1, (const float[2]){-1, -1});
	snprintf(prof, sizeof prof, "%s/ranks.yaml", dir);
	static const char y[] = "name: ranks\n"
	                        "path: '^r(?<rank>\\d+)\\.npz$'\n"
	                        "key: '^(layers\\.(?<layer>\\d+)\\.)?(?<stage>.+)$'\n";
	assert_int_equal(cu_write(prof, y, sizeof y - 1), 0);
	db_compare *c = cu_run(ref, tgt, prof, NULL, 0);
	db_grid_cache *gc = db_grid_cache_new();
	check_all(c, gc);
	cu_npz(ref, "r2.npz", r2, sizeof r2 / sizeof *r2, (const float[2]){1, 1});
	cu_npz(tgt, "r2.npz", r2, sizeof r2 / sizeof *r2, (const float[2]){2, 2});
	db_err err;
	assert_int_equal(db_compare_rescan(c, &err), 0);
	db_compare_run(c);
	int *ranks;
	assert_int_equal(db_ranks(c, &ranks), 3);
	free(ranks);
	check_all(c, gc);
	db_grid g;
	assert_int_equal(db_grid_cache_build(gc, c, NULL, NULL, 2, &g), 0);
	assert_int_equal(g.n_layer_rows, 3);
	assert_int_equal(g.n_cols, 3);
	db_grid_free(&g);
	db_grid_cache_free(gc);
	db_compare_free(c);
	cu_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_every_selection),
		cmocka_unit_test(t_metrics_arrive),
		cmocka_unit_test(t_rescan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
