/* The tensor view's numbers for a dequantized or transformed pair
 * (db_dequant.h): one pass over the dequantized values for the statistics,
 * the largest |diff| and the error per row, the block pass of qblocks.c for
 * each scale block's slope. */
#include "db_dequant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_hints.h"
#include "dequant.h"
#include "xform.h"

#define QR_MAX_ROWS 1000000

typedef struct welford { uint64_t n, nan, inf; double mean, m2, sum, min, max; } welford;

static void wf_add(welford *w, double v)
{
	if (isnan(v)) {
		w->nan++;
		return;
	}
	if (isinf(v)) {
		w->inf++;
		return;
	}
	w->n++;
	w->sum += v;
	double d = v - w->mean;
	w->mean += d / (double)w->n;
	w->m2 += d * (v - w->mean);
	if (w->n == 1 || v < w->min)
		w->min = v;
	if (w->n == 1 || v > w->max)
		w->max = v;
}

static void wf_out(const welford *w, db_stats *s)
{
	s->n = w->n;
	s->nan = w->nan;
	s->inf = w->inf;
	s->sum = w->sum;
	s->min = w->n ? w->min : NAN;
	s->max = w->n ? w->max : NAN;
	s->mean = w->n ? w->mean : NAN;
	s->std = w->n ? sqrt(w->m2 / (double)w->n) : NAN;
}

/* Keep the k largest |diff| (ties: the lower index, which came first). */
static void top_add(db_qreport *r, int64_t i, double x, double y)
{
	double d = fabs(y - x);
	if (!isfinite(d) || (r->ntop == DB_QREPORT_TOP && d <= r->top_abs[r->ntop - 1]))
		return;
	int k = r->ntop < DB_QREPORT_TOP ? r->ntop++ : DB_QREPORT_TOP - 1;
	while (k > 0 && r->top_abs[k - 1] < d) {
		r->top_abs[k] = r->top_abs[k - 1];
		r->top_idx[k] = r->top_idx[k - 1];
		r->top_x[k] = r->top_x[k - 1];
		r->top_y[k] = r->top_y[k - 1];
		k--;
	}
	r->top_abs[k] = d;
	r->top_idx[k] = i;
	r->top_x[k] = x;
	r->top_y[k] = y;
}

static void companion(db_qreport *r, const char *side, const char *what, const db_item *it)
{
	if (!it || r->n_companions >= 8)
		return;
	char sh[96];
	int o = snprintf(sh, sizeof sh, "[");
	for (int d = 0; d < it->ndim && o < (int)sizeof sh; d++)
		o += snprintf(sh + o, sizeof sh - (size_t)o, "%s%lld", d ? ", " : "", (long long)it->shape[d]);
	if (o < (int)sizeof sh)
		snprintf(sh + o, sizeof sh - (size_t)o, "]");
	snprintf(r->companions[r->n_companions++], sizeof r->companions[0], "%s %s %s %s %s",
	         side, what, it->key && it->key[0] ? it->key : it->path, db_dtype_name(it->dtype), sh);
}

static void companions_of(db_qreport *r, const char *side, const db_qgroup *g)
{
	if (!g)
		return;
	companion(r, side, "scale", g->scale);
	companion(r, side, "scale2", g->scale2);
	companion(r, side, "zero", g->zero);
	for (int i = 0; i < g->n_also; i++)
		companion(r, side, "also", g->also[i]);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

typedef struct qr_job {
	db_compare *c;
	const db_pair *p;
	db_qreport *r;
	db_wctx *w;
	db_err *err;
} qr_job;

/* The numbers, read from the pair's files (under db_wctx_run's guard). */
static int qreport_read(void *arg)
{
	qr_job *j = arg;
	db_compare *c = j->c;
	const db_pair *p = j->p;
	db_qreport *r = j->r;
	db_wctx *w = j->w;
	db_err *err = j->err;
	const db_xform *xf = db_pair_xform(c, p, w);
	int64_t numel = (int64_t)p->numel, rows = p->ndim_ref > 0 ? p->shape_ref[0] : 1;
	int64_t per = rows > 0 ? numel / rows : 0;
	if (rows > QR_MAX_ROWS)
		rows = QR_MAX_ROWS;
	double *rdd = calloc((size_t)(rows > 0 ? rows : 1), sizeof *rdd);
	r->rows = calloc((size_t)(rows > 0 ? rows : 1), sizeof *r->rows);
	welford wx = {0}, wy = {0};
	int rc = rdd && r->rows ? 0 : db_err_set(err, NULL, NULL, -1, "out of memory");
	double *x = w->buf[0], *y = w->buf[1], *tol = w->buf[2];
	for (int64_t pos = 0; rc == 0 && pos < numel;) {
		int64_t n = db_dequant_values(c, w, p, xf, pos, numel - pos, x, y, tol, err);
		if (n < 0) {
			rc = -1;
			break;
		}
		for (int64_t k = 0; k < n; k++) {
			wf_add(&wx, x[k]);
			wf_add(&wy, y[k]);
			top_add(r, pos + k, x[k], y[k]);
			int64_t row = per > 0 ? (pos + k) / per : 0;
			if (row < rows && isfinite(x[k]) && isfinite(y[k])) {
				rdd[row] += (y[k] - x[k]) * (y[k] - x[k]);
				r->rows[row] += x[k] * x[k];
			}
		}
		pos += n;
	}
	if (rc == 0) {
		wf_out(&wx, &r->sx);
		wf_out(&wy, &r->sy);
		for (int64_t i = 0; i < rows; i++)
			r->rows[i] = r->rows[i] > 0 ? sqrt(rdd[i] / r->rows[i]) : rdd[i] > 0 ? INFINITY : 0;
		r->n_rows = rows;
	}
	free(rdd);
	db_qblocks qb;
	if (rc == 0 && db_qblocks_compute(c, w, p, &qb, err) == 0 && qb.n) {
		r->block_nd = qb.ndim;
		memcpy(r->nblk, qb.nblk, sizeof r->nblk);
		r->n_blocks = qb.n;
		r->slope = malloc(qb.n * sizeof *r->slope);
		double *sorted = malloc(qb.n * sizeof *sorted);
		size_t ns = 0;
		double worst = 0;
		for (size_t i = 0; r->slope && i < qb.n; i++) {
			double k;
			bool off = db_qblock_off(&qb, i, &k);
			r->slope[i] = qb.sxx[i] > 0 ? k : NAN;
			if (sorted && isfinite(r->slope[i]))
				sorted[ns++] = r->slope[i];
			if (!off)
				continue;
			r->n_off++;
			double dev = isfinite(k) && k > 0 ? fabs(log(k)) : INFINITY;
			if (r->worst < 0 || dev > worst) {
				worst = dev;
				r->worst = (int64_t)i;
			}
		}
		if (sorted && ns) {
			qsort(sorted, ns, sizeof *sorted, cmp_d);
			r->neighbours = sorted[ns / 2];
		}
		free(sorted);
		db_qblocks_free(&qb);
	}
	return rc;
}

int db_pair_qreport(db_compare *c, const db_pair *p, db_qreport *r, db_err *err)
{
	memset(r, 0, sizeof *r);
	r->worst = -1;
	r->neighbours = NAN;
	companions_of(r, "ref", p->merged ? NULL : db_pair_qgroup(p, true));
	companions_of(r, "target", p->merged ? NULL : db_pair_qgroup(p, false));
	if (p->merged && p->n_tgt_shards)
		companions_of(r, "target rank 0", p->tgt_shards[0]->quant);
	if (p->status != DB_ST_OK)
		return 0;
	db_wctx w;
	if (db_wctx_init(&w, 8) != 0)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	qr_job j = {c, p, r, &w, err};
	int rc = db_wctx_run(&w, qreport_read, &j, err);
	db_wctx_free(&w);
	if (rc != 0)
		db_qreport_free(r);
	return rc;
}

void db_qreport_free(db_qreport *r)
{
	free(r->rows);
	free(r->slope);
	r->rows = r->slope = NULL;
	r->n_rows = 0;
	r->n_blocks = 0;
}

const char *db_qreport_block_note(const db_compare *c, const db_pair *p, const db_qreport *r,
                                  bool ascii, char *buf, size_t len)
{
	buf[0] = 0;
	if (r->worst < 0 || !r->slope)
		return buf;
	int64_t co[DB_MAX_DIMS], i = r->worst;
	for (int d = r->block_nd - 1; d >= 0; d--) {
		co[d] = r->nblk[d] > 0 ? i % r->nblk[d] : 0;
		i = r->nblk[d] > 0 ? i / r->nblk[d] : 0;
	}
	size_t n = (size_t)snprintf(buf, len, "block (");
	for (int d = 0; d < r->block_nd && n < len; d++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? ", " : "", (long long)co[d]);
	double k = r->slope[r->worst], ratio = isfinite(r->neighbours) && r->neighbours != 0
	                                           ? k / r->neighbours : k;
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, ") is %.3g%s its neighbours", ratio,
		                      ascii ? "x" : "×");
	db_hint h;
	db_pair_hint(c, p, &h);
	if (n < len && h.kind == DB_HINT_SCALE_INVERTED)
		snprintf(buf + n, len - n, ": scale inverted?");
	else if (n < len && r->n_off > 1)
		snprintf(buf + n, len - n, " (%zu of %zu blocks off)", r->n_off, r->n_blocks);
	return buf;
}
