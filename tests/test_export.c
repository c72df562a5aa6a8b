/* The export's heatmap (db_export_ctx.grid): the grid the caller passes,
 * the workbench's own, is what heatmap.svg and report.md show, as it is,
 * whatever the selection fields say; without one the export builds the
 * grid of the selection (the headless export). On the demo dumps (two
 * ranks). */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cmp_util.h"
#include "db_export.h"
#include "db_grid_cache.h"

#define DEMO FIXTURES "/demo/"

struct files {
	char *dir, *md, *svg;
};

/* Export x into a scratch directory and read report.md and heatmap.svg. */
static struct files export_files(const db_export_ctx *x)
{
	struct files f = {cu_tmpdir(), NULL, NULL};
	assert_non_null(f.dir);
	char out[1024], path[1100];
	snprintf(out, sizeof out, "%s/out", f.dir);
	db_err err = {{0}};
	if (db_export_all(x, out, &err) != 0)
		fail_msg("db_export_all: %s", err.msg);
	size_t n;
	snprintf(path, sizeof path, "%s/report.md", out);
	f.md = tu_read(path, &n);
	snprintf(path, sizeof path, "%s/heatmap.svg", out);
	f.svg = tu_read(path, &n);
	return f;
}

static void files_free(struct files *f)
{
	cu_rm_rf(f->dir);
	free(f->dir);
	free(f->md);
	free(f->svg);
}

/* The line of report.md's heatmap table for row label. */
static char *md_row(const char *md, const char *label)
{
	char want[128];
	snprintf(want, sizeof want, "\n| %s |", label);
	const char *table = strstr(md, "\n## Heatmap\n");
	assert_non_null(table);
	const char *l = strstr(table, want);
	if (!l)
		fail_msg("no row %s in report.md's heatmap", label);
	l++;
	return strndup(l, strcspn(l, "\n"));
}

/* The all-ranks selection, but rank 1's grid with one cell holding another
 * pair: the files show that grid, cell for cell. An export that built its
 * own grid from the selection shows the worst rank per cell instead. */
static void t_grid_as_given(void **s)
{
	(void)s;
	db_compare *c = cu_run(DEMO "ref", DEMO "target", NULL, NULL, 0);
	int *ranks;
	assert_int_equal(db_ranks(c, &ranks), 2);
	db_grid_cache *gc = db_grid_cache_new();
	assert_non_null(gc);
	db_grid g;
	assert_int_equal(db_grid_cache_build(gc, c, NULL, NULL, ranks[1], &g), 0);

	/* a layer row's first cell now holds a pair of another row whose cos
	 * reads differently */
	size_t r = g.first_layer_row, q = DB_NO_PAIR;
	assert_true(g.n_layer_rows > 1 && g.n_cols > 0);
	const db_pair *p0 = &c->pairs[g.rows[r].cells[0]];
	char cos0[32], cosq[32];
	snprintf(cos0, sizeof cos0, "%.4f", p0->m.cos);
	for (size_t i = 0; i < c->n_pairs && q == DB_NO_PAIR; i++) {
		snprintf(cosq, sizeof cosq, "%.4f", c->pairs[i].m.cos);
		if (c->pairs[i].status == DB_ST_OK && strcmp(cosq, cos0))
			q = i;
	}
	assert_true(q != DB_NO_PAIR);
	g.rows[r].cells[0] = q;

	db_export_ctx x = {.c = c, .view = true, .rank = DB_RANK_ANY, .grid = &g};
	struct files f = export_files(&x);
	tu_has_all(f.md, "cos and band per cell, rank 1.", NULL);
	assert_null(strstr(f.md, "else the worst rank (rN)"));
	tu_has_all(f.svg, ", rank 1</text>", NULL);
	char *row = md_row(f.md, g.rows[r].label);
	char cell[64];
	snprintf(cell, sizeof cell, "| %s %s |", cosq,
	         c->pairs[q].band == DB_BAND_NONE ? "-" : db_band_name(c->pairs[q].band));
	if (!strstr(row, cell))
		fail_msg("row %s: want %s in %s", g.rows[r].label, cell, row);
	free(row);
	files_free(&f);

	/* the grid is borrowed: the export leaves it as it was */
	assert_int_equal(g.rows[r].cells[0], q);
	assert_int_equal(g.rank, ranks[1]);
	db_grid_free(&g);
	db_grid_cache_free(gc);
	free(ranks);
	db_compare_free(c);
}

/* No grid given: the export builds the selection's (here rank 1's), the
 * same as the workbench's builder gives. */
static void t_grid_built(void **s)
{
	(void)s;
	db_compare *c = cu_run(DEMO "ref", DEMO "target", NULL, NULL, 0);
	int *ranks;
	assert_int_equal(db_ranks(c, &ranks), 2);
	db_export_ctx x = {.c = c, .view = true, .rank = ranks[1]};
	struct files f = export_files(&x);
	tu_has_all(f.md, "cos and band per cell, rank 1.", NULL);
	tu_has_all(f.svg, ", rank 1</text>", NULL);

	db_grid_cache *gc = db_grid_cache_new();
	db_grid g;
	assert_int_equal(db_grid_cache_build(gc, c, NULL, NULL, ranks[1], &g), 0);
	x.grid = &g;
	struct files h = export_files(&x);
	assert_string_equal(f.md, h.md);
	assert_string_equal(f.svg, h.svg);
	files_free(&f);
	files_free(&h);
	db_grid_free(&g);
	db_grid_cache_free(gc);
	free(ranks);
	db_compare_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_grid_as_given),
		cmocka_unit_test(t_grid_built),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
