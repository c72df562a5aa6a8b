/* Helpers for test_compare.c, test_grid.c and test_index_snap.c: comparing
 * two trees, scratch trees of .npy files written here (format: numpy's v1
 * header + raw little-endian data), the layouts' expected.json. Define
 * _XOPEN_SOURCE 700 before any include (nftw); include after <cmocka.h>. */
#ifndef CMP_UTIL_H
#define CMP_UTIL_H
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_compare.h"
#include "util/json_parse.h"
#include "lib/test_util.h"

#define CU_FN static __attribute__((unused))

/* Names older tests use for the lib/test_util.h helpers. */
#define cu_rm_rf tu_rm_rf
#define cu_write tu_write
#define cu_slurp tu_slurp

/* The comparison of ref and tgt (no metrics cache), or NULL with the
 * reason printed. Caller frees with db_compare_free. */
CU_FN db_compare *cu_open(const char *ref, const char *tgt, const char *profile,
                          const char *filter, int threads)
{
	db_compare_opts o = {.profile = profile, .filter = filter, .threads = threads,
	                     .cache_dir = ""};
	db_compare *c = NULL;
	db_err err = {{0}};
	if (db_compare_open(ref, tgt, &o, &c, &err) != 0) {
		print_error("db_compare_open(%s, %s): %s\n", ref, tgt ? tgt : "-", err.msg);
		return NULL;
	}
	return c;
}

/* cu_open that must succeed, run to the end. */
CU_FN db_compare *cu_run(const char *ref, const char *tgt, const char *profile,
                         const char *filter, int threads)
{
	db_compare *c = cu_open(ref, tgt, profile, filter, threads);
	assert_non_null(c);
	db_compare_run(c);
	return c;
}

/* A fresh scratch directory, malloc'd (caller removes it with cu_rm_rf
 * and frees the name). */
CU_FN char *cu_tmpdir(void)
{
	char d[512];
	return tu_mkdtemp(d, sizeof d, "cmp") ? NULL : strdup(d);
}

CU_FN void cu_mkdirs(const char *path)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *s = buf + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(buf, 0755);
			*s = '/';
		}
	mkdir(buf, 0755);
}

/* dir/rel as a float32 (descr "<f4") or float64 ("<f8") .npy; data in
 * memory order (C order, or Fortran order when fortran). */
CU_FN int cu_npy(const char *dir, const char *rel, const char *descr, int ndim,
                  const long *shape, const void *data, int fortran)
{
	char path[1024], hdr[256], shp[128] = "";
	size_t n = 0, numel = 1;
	for (int i = 0; i < ndim; i++) {
		n += (size_t)snprintf(shp + n, sizeof shp - n, "%ld,%s", shape[i],
		                      i + 1 < ndim ? " " : "");
		numel *= (size_t)shape[i];
	}
	if (ndim > 1)
		shp[strlen(shp) - 1] = 0;   /* "(2, 3)"; one dim keeps "(4,)" */
	int h = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }",
	                 descr, fortran ? "True" : "False", shp);
	int total = 10 + h + 1;
	int pad = (64 - total % 64) % 64;
	size_t isz = descr[2] == '8' ? 8 : 4;
	size_t len = (size_t)(total + pad) + numel * isz;
	unsigned char *b = malloc(len);
	if (!b)
		return -1;
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	unsigned hl = (unsigned)(h + pad + 1);
	b[8] = (unsigned char)(hl & 0xff);
	b[9] = (unsigned char)(hl >> 8);
	memcpy(b + 10, hdr, (size_t)h);
	memset(b + 10 + h, ' ', (size_t)pad);
	b[10 + h + pad] = '\n';
	memcpy(b + total + pad, data, numel * isz);
	snprintf(path, sizeof path, "%s/%s", dir, rel);
	char d[1024];
	snprintf(d, sizeof d, "%s", path);
	char *slash = strrchr(d, '/');
	if (slash) {
		*slash = 0;
		cu_mkdirs(d);
	}
	int rc = cu_write(path, b, len);
	free(b);
	return rc;
}

/* Copy the regular files of src (recursively) into dst. */
static const char *cu_copy_src, *cu_copy_dst;

CU_FN int cu_copy_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	char out[2048];
	snprintf(out, sizeof out, "%s%s", cu_copy_dst, p + strlen(cu_copy_src));
	if (flag == FTW_D) {
		cu_mkdirs(out);
		return 0;
	}
	if (flag != FTW_F)
		return 0;
	FILE *in = fopen(p, "rb"), *o = fopen(out, "wb");
	int rc = in && o ? 0 : -1;
	char buf[65536];
	size_t n;
	while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
		rc = fwrite(buf, 1, n, o) == n ? 0 : -1;
	if (in)
		fclose(in);
	if (o && fclose(o) != 0)
		rc = -1;
	return rc;
}

CU_FN int cu_copy_tree(const char *src, const char *dst)
{
	cu_copy_src = src;
	cu_copy_dst = dst;
	return nftw(src, cu_copy_one, 16, FTW_PHYS);
}

/* Does pair p carry the fields of an expected.json pair? */
CU_FN int cu_pair_is(const db_pair *p, const db_jp *e)
{
	const db_jp *ph = db_jp_get(e, "phase"), *pa = db_jp_get(e, "pass");
	const db_jp *rk = db_jp_get(e, "rank"), *ly = db_jp_get(e, "layer");
	const db_jp *st = db_jp_get(e, "stage");
	if (ph->type == DB_JP_NULL ? p->f.phase[0] != 0 : strcmp(ph->str, p->f.phase))
		return 0;
	if (pa->type == DB_JP_NULL) {
		if (p->f.pass[0])
			return 0;
	} else if (!p->f.pass[0] || strtoll(p->f.pass, NULL, 10) != (long long)pa->num) {
		return 0;
	}
	if (rk->type == DB_JP_NULL ? !(p->merged || p->f.rank < 0)
	                           : p->merged || p->f.rank != (int)rk->num)
		return 0;
	if (ly->type == DB_JP_NULL ? p->f.layer >= 0 : p->f.layer != (int)ly->num)
		return 0;
	return !strcmp(st->str, p->f.stage);
}

CU_FN int cu_close(double want, double got)
{
	if (want != want || got != got)
		return want != want && got != got;
	double d = want > got ? want - got : got - want;
	double m = want < 0 ? -want : want;
	return d <= 1e-9 * m || d <= 1e-12;
}

#endif
