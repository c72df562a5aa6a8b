/* The first bad token of a pair (issue 35): the verdict in token terms.
 * A pair's rows along its token dim are measured one by one, each with the
 * same metrics and bands as the pair; the first row that leaves the band
 * the pair was judged by is the first bad token. With token alignment
 * (--align) the row's place is counted in the aligned sequence (the whole
 * pass's rows), so "token 14" names the same token on both sides. */
#ifndef DB_TOKEN_H
#define DB_TOKEN_H
#include <stdbool.h>
#include <stdint.h>
#include "db_compare.h"

typedef struct db_token_at {
	int64_t token;          /* row in the aligned sequence (no alignment: the row) */
	int64_t row;            /* row within the pair's own pass */
	int64_t n_rows;         /* rows of the pair's own pass */
	int dim;                /* the token dim */
	db_band band;           /* the row's band */
	double rel;             /* the row's rel */
	double max_abs;         /* the row's max |diff| */
} db_token_at;

/* Row criteria: bitwise (the first row not bit-identical: the bit-identical
 * regime, batch slots) or the first row whose band is worse than upto
 * (DB_BAND_OK for a first divergence, DB_BAND_DRIFT beyond drift); when no
 * row leaves it by itself (the error spread thin over many rows), the
 * worst row. Reads the pair's tensors a row at a time. 1 found (*out), 0
 * none (a pair not ok, statistics only, or no token rows), -1 a read error. */
int db_pair_first_token(const db_compare *c, const db_pair *p, bool bitwise, db_band upto,
                        db_token_at *out);
/* For c's first divergence (db_first_divergence(c, NULL, NULL, -2)) and
 * its first beyond drift: the pair's criteria as it was judged. 1 found,
 * 0 none. */
int db_first_divergence_token(const db_compare *c, long fd, db_token_at *out);
int db_first_beyond_drift_token(const db_compare *c, long fb, db_token_at *out);

/* Pair i's first bad token as compare words its divergences: bitwise for
 * the bit-identical regime's pair (and batch slots), else the first row
 * worse than drift when the pair is beyond drift, the first out of ok when
 * it drifts. 1 found, 0 none (a pair in the ok band, no row off by itself),
 * -1 a read error. The tensor view's "first off". */
int db_pair_bad_token(const db_compare *c, size_t i, db_token_at *out);

/* The error per token of pair i over the whole aligned sequence (--align
 * tokens, db_slot.tokens): each token's rel_l2 from the pair of the pass
 * that holds it (the same phase, layer, stage, rank and occurrence), NaN
 * where no such pair is computed. The tensor view's curve. *out (malloc'd,
 * caller frees) gets the rows of the whole pass's token dim, *lo and *len
 * pair i's own rows among them. The count, 0 when pair i is not aligned by
 * token, -1 on OOM or a read error. */
int64_t db_token_curve(const db_compare *c, size_t i, double **out, int64_t *lo,
                       int64_t *len);

#endif
