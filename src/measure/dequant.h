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
	const db_tensor *codes, *scale, *zero;
	double s2;                      /* the global factor (1 when none) */
	double lut[256], step[256];     /* code -> value, and its step */
	int64_t nblk[DB_MAX_DIMS];      /* scale elements along each logical dim */
} db_qview;

int db_qview_open(db_wctx *w, const db_index *ix, const db_qgroup *g, db_qview *q,
                  db_err *err);
/* Logical elements [b, b + n) into v, each one's quantization step (the
 * code's step times its scale) into tol (NULL: not wanted). */
void db_qview_fill(const db_qview *q, int64_t b, int64_t n, double *v, double *tol);
/* Elements [b, e) of a pair one or both of whose sides are dequantized. */
int db_dequant_accum(db_compare *c, db_wctx *w, const db_pair *p, int64_t b, int64_t e,
                     db_accum *a, db_err *err);
/* The band once the floor is known: a pair within its quantization floor
 * is never worse than drift; one beyond it is never better than algo. */
db_band db_quant_band(db_band b, const db_metrics *m);

#endif
