/* Hints for dequantized and transformed weights (quant_hints.h): which
 * loader bug the data proves. Each one is tried on a sample of the pair
 * (up to QH_SAMPLE elements) under its hypothesis and holds when the
 * sample then matches the reference (relative L2 below 0.35, the bar a
 * layout transform must clear in xform.c) while as read it does not:
 *   not_transformed  the dump's transform was applied to every weight, and
 *                    this one matched only as stored (xform.c decided);
 *   scale_inverted   the worst scale block's slope is its scale squared
 *                    (1/s stored where s was meant), within 5 %;
 *   nibbles_swapped  packed FP4 read with the other nibble first;
 *   to_not_view      the codes are the reference's codes converted as
 *                    numbers (.to(float8) of the uint8 view): each target
 *                    value is the fp8 nearest to the code the reference
 *                    quantizes to, times the scale, for 90 % of the sample;
 *   pack_order       int4 words read in another nibble order (sequential,
 *                    or even elements then odd as AWQ packs) match;
 *   zero_off_by_one  int4 zero points read one higher or lower match: here
 *                    "match" is the error's RMS below half of it as read,
 *                    since a one-step shift leaves relative L2 near 0.4;
 *   scale_block      blocks whose scale is off otherwise (qblocks.c). */
#include "quant_hints.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_dequant.h"
#include "dequant.h"
#include "xform.h"

#define QH_SAMPLE 4096
#define QH_GOOD 0.35

static double rel_l2(const double *x, const double *y, int n)
{
	double dd = 0, xx = 0;
	for (int i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]))
			continue;
		dd += (y[i] - x[i]) * (y[i] - x[i]);
		xx += x[i] * x[i];
	}
	return xx > 0 ? sqrt(dd / xx) : dd > 0 ? INFINITY : 0;
}

typedef struct sample {
	int n;
	int64_t idx[QH_SAMPLE];
	double x[QH_SAMPLE], y[QH_SAMPLE];
} sample;

/* Evenly spread over the pair; x the reference, y the target as read. */
static int take(const db_compare *c, db_wctx *w, const db_pair *p, const db_xform *xr,
                const db_xform *xf, sample *s)
{
	s->n = p->numel < QH_SAMPLE ? (int)p->numel : QH_SAMPLE;
	for (int i = 0; i < s->n; i++)
		s->idx[i] = (int64_t)((uint64_t)i * (p->numel / (uint64_t)s->n));
	db_err e;
	if (db_side_sample(w, c->ref, p->ref, xr, s->idx, s->n, s->x, &e) != 0 ||
	    db_side_sample(w, c->tgt, p->tgt, xf, s->idx, s->n, s->y, &e) != 0)
		return -1;
	return 0;
}

static bool nibbles_swapped(const db_compare *c, db_wctx *w, const db_pair *p,
                            const db_xform *xf, const sample *s)
{
	const db_qgroup *g = p->tgt->quant;
	if (!g || g->err || g->rule->values != DB_QV_E2M1)
		return false;
	db_quant_rule r2 = *g->rule;
	r2.high_first = !r2.high_first;
	db_qgroup g2 = *g;
	g2.rule = &r2;
	db_item it2 = *p->tgt;
	it2.quant = &g2;
	double *y = malloc(QH_SAMPLE * sizeof *y);
	db_err e;
	bool ok = y && db_side_sample(w, c->tgt, &it2, xf, s->idx, s->n, y, &e) == 0 &&
	          rel_l2(s->x, y, s->n) < QH_GOOD;
	free(y);
	return ok;
}

/* The sample of the target read under rule r2 instead of its own. */
static double rel_under(const db_compare *c, db_wctx *w, const db_pair *p, const db_xform *xf,
                        const sample *s, const db_quant_rule *r2)
{
	db_qgroup g2 = *p->tgt->quant;
	g2.rule = r2;
	db_item it2 = *p->tgt;
	it2.quant = &g2;
	double *y = malloc(QH_SAMPLE * sizeof *y);
	db_err e;
	double rel = y && db_side_sample(w, c->tgt, &it2, xf, s->idx, s->n, y, &e) == 0
	             ? rel_l2(s->x, y, s->n) : INFINITY;
	free(y);
	return rel;
}

static bool pack_order(const db_compare *c, db_wctx *w, const db_pair *p, const db_xform *xf,
                       const sample *s, db_hint *h)
{
	const db_qgroup *g = p->tgt->quant;
	if (!g || g->err || g->rule->values != DB_QV_INT4)
		return false;
	static const uint8_t orders[][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 2, 4, 6, 1, 3, 5, 7},
	                                    {0, 4, 1, 5, 2, 6, 3, 7}};
	for (size_t k = 0; k < sizeof orders / sizeof *orders; k++) {
		if (!memcmp(orders[k], g->rule->order, 8))
			continue;
		db_quant_rule r2 = *g->rule;
		memcpy(r2.order, orders[k], 8);
		if (rel_under(c, w, p, xf, s, &r2) < QH_GOOD) {
			h->ndim = 8;
			for (int i = 0; i < 8; i++)
				h->perm[i] = orders[k][i];
			return true;
		}
	}
	return false;
}

static bool zero_off_by_one(const db_compare *c, db_wctx *w, const db_pair *p,
                            const db_xform *xf, const sample *s, db_hint *h)
{
	const db_qgroup *g = p->tgt->quant;
	if (!g || g->err || g->rule->values != DB_QV_INT4 || !g->zero)
		return false;
	double as_read = rel_l2(s->x, s->y, s->n);
	for (int by = -1; by <= 1; by += 2) {
		db_quant_rule r2 = *g->rule;
		r2.zero_offset += by;
		if (rel_under(c, w, p, xf, s, &r2) < 0.5 * as_read) {
			h->by = by;
			return true;
		}
	}
	return false;
}

static bool to_not_view(const db_compare *c, db_wctx *w, const db_pair *p, const db_xform *xf,
                        const sample *s)
{
	const db_qgroup *g = p->tgt->quant;
	if (!g || g->err || g->rule->values != DB_QV_FP8 || g->zero)
		return false;
	db_qview q;
	db_err e;
	if (db_qview_open(w, c->tgt, g, &q, &e) != 0)
		return false;
	db_qview_through(&q, xf);
	db_dtype dt = q.codes->dtype;
	int match = 0, tried = 0;
	for (int i = 0; i < s->n; i++) {
		double sc = db_qview_scale_at(&q, s->idx[i]);
		if (!isfinite(s->x[i]) || !isfinite(sc) || sc == 0)
			continue;
		tried++;
		uint8_t code = db_quant_nearest_fp8(dt, s->x[i] / sc);
		uint8_t as_num = db_quant_nearest_fp8(dt, (double)code);
		double want = db_decode1_f64(dt, &as_num, false) * sc;
		match += fabs(s->y[i] - want) <= 1e-9 * fabs(want);
	}
	return tried >= 16 && match >= 0.9 * tried;
}

/* The worst block's slope is its scale squared (or its inverse). */
typedef struct inv_job {
	const db_compare *c;
	db_wctx *w;
	const db_pair *p;
} inv_job;

/* 1 when the worst block's slope is its scale squared (its scale read
 * from the mapping: under db_wctx_run's guard, issue 37). */
static int scale_read(void *arg)
{
	const inv_job *j = arg;
	const db_pair *p = j->p;
	const db_qgroup *g = p->tgt->quant;
	int nd;
	int64_t co[DB_MAX_DIMS];
	if (!db_pair_qblock_coords(p, p->m.q_block_at, &nd, co))
		return 0;
	db_qview q;
	db_err e;
	if (db_qview_open(j->w, j->c->tgt, g, &q, &e) != 0)
		return 0;
	int64_t f = 0;
	for (int d = 0; d < nd; d++)
		f = f * g->shape[d] + co[d] * g->block[d];
	double s = fabs(db_qview_scale_at(&q, f)), k = p->m.q_block_slope;
	if (!(s > 0) || !isfinite(s) || !(k > 0))
		return 0;
	/* 1/s stored for s: y = x * s_stored^2; the inverse when the rule divides */
	return fabs(k / (s * s) - 1) < 0.05 || fabs(k * s * s - 1) < 0.05;
}

static bool scale_inverted(const db_compare *c, db_wctx *w, const db_pair *p)
{
	const db_qgroup *g = p->merged ? NULL : p->tgt->quant;
	if (!g || g->err || !p->m.q_blocks_off)
		return false;
	inv_job j = {c, w, p};
	db_err e;
	return db_wctx_run(w, scale_read, &j, &e) == 1;
}

static void set_block(const db_pair *p, db_hint *h)
{
	h->blocks_off = p->m.q_blocks_off;
	if (!db_pair_qblock_coords(p, p->m.q_block_at, &h->block_nd, h->block))
		h->block_nd = 0;
}

bool db_quant_hint(const db_compare *c, const db_pair *p, db_hint *h)
{
	const db_xform *xf = db_pair_xform(c, p, NULL), *xr = NULL;
	if (!xf && !db_pair_dequantized(p))
		return false;
	bool onref = xf && db_pair_xform_on_ref(c, p);
	if (db_pair_not_transformed(c, p)) {
		h->kind = DB_HINT_NOT_TRANSFORMED;
		h->transform = xf ? xf->name : NULL;
		return true;
	}
	if (p->status != DB_ST_OK || db_pair_within_floor(p) || !p->ref || !p->tgt)
		return true;
	db_wctx w;
	if (db_wctx_init(&w, 8) != 0)
		return true;
	sample *s = malloc(sizeof *s);
	if (scale_inverted(c, &w, p)) {
		h->kind = DB_HINT_SCALE_INVERTED;
		set_block(p, h);
	} else if (s && !p->merged && p->tgt->quant) {
		if (onref) {
			xr = xf;        /* the target as stored: the hypotheses read it so */
			xf = NULL;
		}
		bool read = take(c, &w, p, xr, xf, s) == 0;
		bool far = read && rel_l2(s->x, s->y, s->n) >= QH_GOOD;
		if (far && nibbles_swapped(c, &w, p, xf, s))
			h->kind = DB_HINT_NIBBLES_SWAPPED;
		else if (far && to_not_view(c, &w, p, xf, s))
			h->kind = DB_HINT_TO_NOT_VIEW;
		else if (far && pack_order(c, &w, p, xf, s, h))
			h->kind = DB_HINT_PACK_ORDER;
		else if (read && zero_off_by_one(c, &w, p, xf, s, h))
			h->kind = DB_HINT_ZERO_OFF_BY_ONE;
	}
	if (h->kind == DB_HINT_NONE && p->m.q_blocks_off) {
		h->kind = DB_HINT_SCALE_BLOCK;
		set_block(p, h);
	}
	free(s);
	db_wctx_free(&w);
	return true;
}

static int block_str(const db_hint *h, char *buf, size_t len)
{
	int n = snprintf(buf, len, "(");
	for (int d = 0; d < h->block_nd && n < (int)len; d++)
		n += snprintf(buf + n, len - (size_t)n, "%s%lld", d ? ", " : "", (long long)h->block[d]);
	if (n < (int)len)
		n += snprintf(buf + n, len - (size_t)n, ")");
	return n;
}

void db_quant_hint_json(FILE *out, const db_hint *h)
{
	switch (h->kind) {
	case DB_HINT_NOT_TRANSFORMED:
		fprintf(out, ", \"transform\": \"%s\"", h->transform ? h->transform : "");
		break;
	case DB_HINT_SCALE_INVERTED:
	case DB_HINT_SCALE_BLOCK:
		fputs(", \"block\": [", out);
		for (int d = 0; d < h->block_nd; d++)
			fprintf(out, "%s%lld", d ? ", " : "", (long long)h->block[d]);
		fprintf(out, "], \"blocks_off\": %llu", (unsigned long long)h->blocks_off);
		break;
	case DB_HINT_PACK_ORDER:
		fputs(", \"order\": [", out);
		for (int d = 0; d < h->ndim; d++)
			fprintf(out, "%s%d", d ? ", " : "", h->perm[d]);
		fputc(']', out);
		break;
	case DB_HINT_ZERO_OFF_BY_ONE:
		fprintf(out, ", \"by\": %lld", (long long)h->by);
		break;
	default:
		break;
	}
}

void db_quant_hint_text(const db_hint *h, bool ascii, char *buf, size_t len)
{
	char b[200];
	block_str(h, b, sizeof b);
	switch (h->kind) {
	case DB_HINT_NOT_TRANSFORMED:
		snprintf(buf, len, "not_transformed: matches the reference only as stored; the "
		         "dump's other weights are %s", h->transform ? h->transform : "transformed");
		break;
	case DB_HINT_SCALE_INVERTED:
		snprintf(buf, len, "scale_inverted: block %s is its scale squared %s the reference "
		         "(1/s stored for s)", b, ascii ? "x" : "×");
		break;
	case DB_HINT_NIBBLES_SWAPPED:
		snprintf(buf, len, "nibbles_swapped: FP4 read with the other nibble first matches");
		break;
	case DB_HINT_TO_NOT_VIEW:
		snprintf(buf, len, "to_not_view: the codes are the reference's codes converted as "
		         "numbers (.to() where .view() was meant)");
		break;
	case DB_HINT_PACK_ORDER: {
		char o[40];
		int n = 0;
		for (int d = 0; d < h->ndim && d < 8; d++)
			n += snprintf(o + n, sizeof o - (size_t)n, "%s%d", d ? " " : "", h->perm[d]);
		snprintf(buf, len, "pack_order: int4 words read in the nibble order %s match", o);
		break;
	}
	case DB_HINT_ZERO_OFF_BY_ONE:
		snprintf(buf, len, "zero_off_by_one: the zero points read one %s match (%s)",
		         h->by > 0 ? "higher" : "lower", h->by > 0 ? "a v1 checkpoint's +1 not applied"
		         : "stored without v1's -1, or read with a +1 they do not need");
		break;
	case DB_HINT_SCALE_BLOCK:
		snprintf(buf, len, "scale_block: %llu scale blocks off, worst %s",
		         (unsigned long long)h->blocks_off, b);
		break;
	default:
		snprintf(buf, len, "%s", "");
		break;
	}
}
