/* Writing an export's four files as one (db_export_all): each staged (its
 * content written and fsynced to a temp file), and renamed over the old one
 * only when all four are, report.md last; all stamped with one generation. */
#include "db_export.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db_atomic.h"
#include "db_json.h"

typedef struct wctx {
	const db_export_ctx *x;         /* its grid set */
	int which;
} wctx;

/* metrics.json as compare --format json prints it, with the export's
 * generation as its first member. */
static int metrics_json_stamped(FILE *f, const db_export_ctx *x)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return -1;
	int rc = db_export_metrics_json(m, x->c);
	if (fclose(m) != 0 || rc < 0 || len < 1 || buf[0] != '{') {
		free(buf);
		return -1;
	}
	fputs("{\"export_generation\": ", f);
	db_json_str(f, x->generation);
	db_export_record_json(f, x);    /* the session's marks and bisects */
	fputs(", ", f);
	fwrite(buf + 1, 1, len - 1, f);
	free(buf);
	return ferror(f) ? -1 : 0;
}

static int write_one(FILE *f, void *ctx, db_err *err)
{
	wctx *w = ctx;
	int rc;
	switch (w->which) {
	case 0: rc = db_export_report_md(f, w->x); break;
	case 1:
		if (w->x->generation)   /* before <svg>: there is no XML declaration */
			fprintf(f, "<!-- dumpbisect export generation %s -->\n", w->x->generation);
		rc = db_export_svg(f, w->x->c, w->x->grid, w->x->s);
		break;
	case 2:
		rc = w->x->generation ? metrics_json_stamped(f, w->x)
		                      : db_export_metrics_json(f, w->x->c);
		break;
	default: rc = db_export_metrics_csv(f, w->x->c); break;
	}
	if (rc < 0)
		return db_err_set(err, NULL, NULL, -1, "write: %s", strerror(errno));
	return 0;
}

/* "20261127T091954Z-3f2a1b7c": when, and a part that tells two exports of
 * one second apart. */
static const char *generation(char *buf, size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, len, "%Y%m%dT%H%M%SZ", &tm);
	uint64_t h = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 32;
	snprintf(buf + n, len - n, "-%08x", (unsigned)(h >> 32));
	return buf;
}

int db_export_all(const db_export_ctx *x, const char *out_dir, db_err *err)
{
	if (mkdir(out_dir, 0755) < 0 && errno != EEXIST)
		return db_err_set(err, out_dir, NULL, -1, "cannot create the export directory: %s",
		                  strerror(errno));
	/* one grid for the SVG and report.md's table: the caller's, else built */
	db_export_ctx xg = *x;
	xg.out_dir = out_dir;
	db_grid g;
	if (!x->grid) {
		if (db_export_grid(x, &g) < 0)
			return db_err_set(err, out_dir, NULL, -1,
			                  "cannot build the heatmap grid (out of memory?)");
		xg.grid = &g;
	}
	char gen[64];
	xg.generation = generation(gen, sizeof gen);
	/* report.md last: the others it names are in place before it is */
	static const char *const names[] = {"heatmap.svg", "metrics.json", "metrics.csv", "report.md"};
	static const int which[] = {1, 2, 3, 0};
	db_atomic_staged st[4];
	int n_staged = 0, rc = 0;
	for (int i = 0; i < 4 && rc == 0; i++) {
		size_t n = strlen(out_dir) + strlen(names[i]) + 2;
		char *path = malloc(n);
		if (!path) {
			rc = db_err_set(err, out_dir, NULL, -1, "out of memory");
			break;
		}
		snprintf(path, n, "%s/%s", out_dir, names[i]);
		wctx w = {&xg, which[i]};
		rc = db_atomic_stage(path, write_one, &w, &st[i], err);
		n_staged += rc == 0;
		free(path);
	}
	/* all four written, or none renamed: the previous export stays whole */
	if (rc < 0) {
		for (int i = 0; i < n_staged; i++)
			db_atomic_discard(&st[i]);
	} else {
		size_t done;
		rc = db_atomic_commit_all(st, 4, &done, err);
		if (rc < 0 && done > 0 && done < 4) {
			size_t l = strlen(err->msg);
			snprintf(err->msg + l, sizeof err->msg - l, " (the files before it are of "
			         "generation %s; report.md and the rest are the previous export's)", gen);
		}
	}
	if (!x->grid)
		db_grid_free(&g);
	return rc;
}
