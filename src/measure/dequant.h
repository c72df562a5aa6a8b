/* Dequantizing a grouped weight (db_quant.h) piece by piece, and the floor
 * its rounding sets. Private to measure/. */
#ifndef DB_DEQUANT_H
#define DB_DEQUANT_H
#include <stdint.h>

#include "db_quant.h"
#include "pair/compare_priv.h"

/* A group's tensors, opened. Borrowed from the worker's files: valid until
 * the worker opens other files. */
typedef struct db_qview {
	const db_qgroup *g;
	const db_tensor *codes, *scale, *zero, *gidx;
	const db_xform *xf;             /* the codes are read through it; NULL none */
	const db_xform *sxf;            /* the scales are read through it; NULL none */
	double s2;                      /* the global factor (1 when none) */
	double lut[256], step[256];     /* code -> value, and its step */
	int64_t nblk[DB_MAX_DIMS];      /* scale elements along each logical dim */
	uint8_t npos[8];                /* int4: the nibble holding element k of eight */
} db_qview;

int db_qview_open(db_wctx *w, const db_index *ix, const db_qgroup *g, db_qview *q,
                  db_err *err);
/* Read q through xf: its codes, or its scales for a scale transform. */
void db_qview_through(db_qview *q, const db_xform *xf);
/* The factor (scale, global scale, inverted if the rule says) logical
 * element f is multiplied by. */
double db_qview_scale_at(const db_qview *q, int64_t f);
/* Logical elements [b, b + n) into v, each one's quantization step (the
 * code's step times its scale) into tol (NULL: not wanted). */
void db_qview_fill(const db_qview *q, int64_t b, int64_t n, double *v, double *tol);
/* db_qview_fill and db_qview_scale_at for int4 words (dequant_int4.c). */
void db_qview_fill_int4(const db_qview *q, int64_t b, int64_t n, double *v, double *tol);
double db_qview_scale_int4(const db_qview *q, int64_t f);
/* Flat elements [at, at + n) of item it into v: dequantized with their
 * steps into tol, or decoded as stored (tol 0); its stored elements read
 * through xf (NULL none). */
int db_side_fill(db_wctx *w, const db_index *ix, const db_item *it, const db_xform *xf,
                 int64_t at, int64_t n, double *v, double *tol, db_err *err);
/* A merged pair with a quantized shard on either side. */
bool db_merged_quant(const db_pair *p);
/* Logical elements from pos of pair p (dequantized, merged, or its target
 * read through xf) into x and y, each one's floor into tol: at most n and
 * at most DB_SEG_ELEMS, fewer where a shard ends. The count, or -1 with
 * err (dequant_pair.c; uses the worker's buf[3]). */
int64_t db_dequant_values(db_compare *c, db_wctx *w, const db_pair *p, const db_xform *xf,
                          int64_t pos, int64_t n, double *x, double *y, double *tol, db_err *err);
/* Elements [b, e) of such a pair into a, with the floor (dequant_pair.c). */
int db_dequant_accum(db_compare *c, db_wctx *w, const db_pair *p, const db_xform *xf,
                     int64_t b, int64_t e, db_accum *a, db_err *err);
/* Logical elements idx[0..n) of item it (dequantized when it has a
 * group), its stored elements read through xf (NULL none), into v. */
int db_side_sample(db_wctx *w, const db_index *ix, const db_item *it, const db_xform *xf,
                   const int64_t *idx, int n, double *v, db_err *err);
/* Per scale block of a dequantized pair (qblocks.c): slope of target on
 * reference, its rounding noise, magnitudes. The grid is the target's
 * group's (else the reference's; merged pairs: the first shard's, every
 * shard split on block bounds). */
typedef struct db_qblocks {
	int ndim;
	int64_t nblk[DB_MAX_DIMS], block[DB_MAX_DIMS];
	size_t n;
	double *sxy, *sxx, *syy, *var;
} db_qblocks;
/* n 0 when the pair has no grid (or too many blocks); -1 with err. */
int db_qblocks_compute(db_compare *c, db_wctx *w, const db_pair *p, db_qblocks *qb, db_err *err);
void db_qblocks_free(db_qblocks *qb);
/* Block i's slope leaves 1 by more than rounding explains. */
bool db_qblock_off(const db_qblocks *qb, size_t i, double *slope);
/* Fill p->m's block fields (a second pass over the pair; before its band). */
void db_qblocks_settle(db_compare *c, db_pair *p);
/* The band once the floor is known: a pair within its quantization floor
 * is never worse than drift; one beyond it is never better than algo. */
db_band db_quant_band(db_band b, const db_metrics *m);

#endif
