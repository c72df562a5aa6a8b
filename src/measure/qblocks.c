/* Per scale block statistics of a dequantized pair (dequant.h): a wrong
 * scale that moves every element of its block by less than one step (a TP
 * rank holding another rank's scales, a scale a few percent off) passes the
 * element floor but not the block's slope Σxy/Σxx, which rounding leaves
 * at 1 within its noise sqrt(Σ x² tol² / 12) / Σx² (uniform rounding over
 * a full step). A block is off when its slope leaves 1 by more than 8 such
 * sigmas plus 1e-3. */
#include "dequant.h"
#include "xform.h"
#include "db_dequant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QB_MAX_BLOCKS ((size_t)1 << 22)

void db_qblocks_free(db_qblocks *qb)
{
	free(qb->sxy);
	free(qb->sxx);
	free(qb->syy);
	free(qb->var);
	memset(qb, 0, sizeof *qb);
}

int db_qblocks_compute(db_compare *c, db_wctx *w, const db_pair *p, db_qblocks *qb, db_err *err)
{
	memset(qb, 0, sizeof *qb);
	const db_qgroup *g = db_pair_qgrid(p);
	if (!g || g->err || p->status != DB_ST_OK || p->ndim_ref != g->ndim)
		return 0;
	qb->ndim = g->ndim;
	size_t n = 1;
	for (int d = 0; d < g->ndim; d++) {
		qb->block[d] = g->block[d] > 0 ? g->block[d] : 1;
		qb->nblk[d] = (p->shape_ref[d] + qb->block[d] - 1) / qb->block[d];
		n *= (size_t)(qb->nblk[d] > 0 ? qb->nblk[d] : 1);
	}
	if (n > QB_MAX_BLOCKS || n < 1)
		return 0;
	qb->sxy = calloc(n, sizeof *qb->sxy);
	qb->sxx = calloc(n, sizeof *qb->sxx);
	qb->syy = calloc(n, sizeof *qb->syy);
	qb->var = calloc(n, sizeof *qb->var);
	if (!qb->sxy || !qb->sxx || !qb->syy || !qb->var) {
		db_qblocks_free(qb);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	qb->n = n;
	double *x = w->buf[0], *y = w->buf[1], *tol = w->buf[2];
	int nd = g->ndim;
	const db_xform *xf = db_pair_xform(c, p, w);
	for (int64_t pos = 0; pos < (int64_t)p->numel;) {
		int64_t k = db_dequant_values(c, w, p, xf, pos, (int64_t)p->numel - pos, x, y, tol, err);
		if (k < 0) {
			db_qblocks_free(qb);
			return -1;
		}
		int64_t coord[DB_MAX_DIMS], f = pos;
		for (int d = nd - 1; d >= 0; d--) {
			coord[d] = p->shape_ref[d] ? f % p->shape_ref[d] : 0;
			f = p->shape_ref[d] ? f / p->shape_ref[d] : 0;
		}
		for (int64_t i = 0; i < k; i++) {
			size_t b = 0;
			for (int d = 0; d < nd; d++)
				b = b * (size_t)qb->nblk[d] + (size_t)(coord[d] / qb->block[d]);
			if (isfinite(x[i]) && isfinite(y[i])) {
				qb->sxy[b] += x[i] * y[i];
				qb->sxx[b] += x[i] * x[i];
				qb->syy[b] += y[i] * y[i];
				qb->var[b] += x[i] * x[i] * tol[i] * tol[i] / 12;
			}
			for (int d = nd - 1; d >= 0; d--) {
				if (++coord[d] < p->shape_ref[d])
					break;
				coord[d] = 0;
			}
		}
		pos += k;
	}
	return 0;
}

bool db_qblock_off(const db_qblocks *qb, size_t i, double *slope)
{
	double sxx = qb->sxx[i];
	if (sxx <= 0) {
		*slope = qb->syy[i] > 0 ? INFINITY : 1;
		return qb->syy[i] > 0;
	}
	double k = qb->sxy[i] / sxx, sigma = sqrt(qb->var[i]) / sxx;
	*slope = k;
	return fabs(k - 1) > 8 * sigma + 1e-3;
}

typedef struct qb_job {
	db_compare *c;
	db_wctx *w;
	const db_pair *p;
	db_qblocks *qb;
	db_err *err;
} qb_job;

static int qb_run(void *arg)
{
	qb_job *j = arg;
	return db_qblocks_compute(j->c, j->w, j->p, j->qb, j->err);
}

/* In a worker, after the pair: its files are read again, guarded (a file
 * that shrank meanwhile leaves the blocks unsettled, as any error does). */
void db_qblocks_settle(db_compare *c, db_pair *p)
{
	db_metrics *m = &p->m;
	m->q_blocks = m->q_blocks_off = 0;
	m->q_block_at = -1;
	m->q_block_slope = 1;
	if (!m->q_n)
		return;
	db_wctx w;
	if (db_wctx_init(&w, 8) != 0)
		return;
	db_qblocks qb = {0};
	db_err e;
	qb_job j = {c, &w, p, &qb, &e};
	if (db_wctx_run(&w, qb_run, &j, &e) == 0 && qb.n) {
		m->q_blocks = qb.n;
		double worst = 0;
		for (size_t i = 0; i < qb.n; i++) {
			double k;
			if (!db_qblock_off(&qb, i, &k))
				continue;
			m->q_blocks_off++;
			double dev = isfinite(k) && k > 0 ? fabs(log(k)) : INFINITY;
			if (m->q_block_at < 0 || dev > worst) {
				worst = dev;
				m->q_block_at = (int64_t)i;
				m->q_block_slope = k;
			}
		}
	}
	db_qblocks_free(&qb);
	db_wctx_free(&w);
}
