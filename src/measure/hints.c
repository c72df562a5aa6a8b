/* Root-cause hints (db_hints.h). */
#include "db_hints.h"
#include "hint_values.h"
#include "quant_hints.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "pair/compare_priv.h"
#include "db_json.h"
#include "db_profile.h"

#define CLOSE DB_HINT_CLOSE
/* a factor within this of 1 is drift, not a scale */
#define SCALE_MIN 0.02
/* fewer values than this have no direction to speak of (a [1, 1] gate is
 * always "cos 1"): no scale or sign flip claimed */
#define SCALE_MIN_N 16

static const char *const kind_names[] = {
	[DB_HINT_NONE] = "none",
	[DB_HINT_INPUTS_DIFFER] = "inputs_differ",
	[DB_HINT_NAN_ORIGIN] = "nan_origin",
	[DB_HINT_ZEROS] = "zeros",
	[DB_HINT_PARTIAL_SUM] = "partial_sum",
	[DB_HINT_SIGN_FLIP] = "sign_flip",
	[DB_HINT_SCALE] = "scale",
	[DB_HINT_TRANSPOSED] = "transposed",
	[DB_HINT_SHIFT] = "shift",
	[DB_HINT_ROWS_PERMUTED] = "rows_permuted",
	[DB_HINT_BATCH_SLOT] = "batch_slot",
	[DB_HINT_NOT_TRANSFORMED] = "not_transformed",
	[DB_HINT_SCALE_INVERTED] = "scale_inverted",
	[DB_HINT_NIBBLES_SWAPPED] = "nibbles_swapped",
	[DB_HINT_TO_NOT_VIEW] = "to_not_view",
	[DB_HINT_SCALE_BLOCK] = "scale_block",
	[DB_HINT_PACK_ORDER] = "pack_order",
	[DB_HINT_ZERO_OFF_BY_ONE] = "zero_off_by_one",
};

const char *db_hint_kind_name(db_hint_kind k)
{
	return k <= DB_HINT_ZERO_OFF_BY_ONE ? kind_names[k] : "none";
}


/* ---- from the metrics alone ------------------------------------------- */

static bool nonfinite_tgt(const db_pair *q)
{
	return q->status == DB_ST_OK && q->m.nonfinite_mismatch && q->m.nan_tgt + q->m.inf_tgt;
}

/* The least seq of a pair with NaN/Inf in its target, found once every
 * pair is computed (then kept: a NaN run past its origin asks this of
 * every later pair, a pass over all pairs each); INT64_MIN while some pair
 * is not computed. */
static int64_t nan_first_seq(const db_compare *c)
{
	_Atomic int64_t *memo = db_cells_nan_memo(c);
	int64_t first = memo ? atomic_load(memo) : INT64_MIN;
	if (first != INT64_MIN || !memo)
		return first;
	first = INT64_MAX;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *q = &c->pairs[i];
		if (q->status != DB_ST_OK)
			continue;
		if (atomic_load_explicit(&((db_pair *)q)->state, memory_order_acquire) != DB_PAIR_DONE)
			return INT64_MIN;
		if (nonfinite_tgt(q) && q->seq < first)
			first = q->seq;
	}
	atomic_store(memo, first);
	return first;
}

static bool nan_origin(const db_compare *c, const db_pair *p, db_hint *h)
{
	if (!nonfinite_tgt(p))
		return false;
	int64_t first = nan_first_seq(c);
	if (first != INT64_MIN) {
		/* p has NaN/Inf: it is the origin when none comes before it */
		if (p->seq != first)
			return false;
		h->kind = DB_HINT_NAN_ORIGIN;
		h->nan = p->m.nan_tgt;
		h->inf = p->m.inf_tgt;
		return true;
	}
	/* an earlier pair with NaN/Inf (or one not computed yet: we cannot
	 * tell) takes the origin */
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *q = &c->pairs[i];
		if (q == p || q->seq >= p->seq || q->status != DB_ST_OK)
			continue;
		if (atomic_load_explicit(&((db_pair *)q)->state, memory_order_acquire) != DB_PAIR_DONE)
			return false;
		if (q->m.nonfinite_mismatch && q->m.nan_tgt + q->m.inf_tgt)
			return false;
	}
	h->kind = DB_HINT_NAN_ORIGIN;
	h->nan = p->m.nan_tgt;
	h->inf = p->m.inf_tgt;
	return true;
}

/* y ≡ 0 and x ≢ 0: rel_l2 = ‖x‖/‖x‖ = 1 and rel_diff = Σx²/Σx² = 1 with a
 * zero norm (cos NaN), which only y = 0 gives (see db_metrics.h). */
static bool zeros(const db_pair *p, db_hint *h)
{
	const db_metrics *m = &p->m;
	if (p->status != DB_ST_OK || !m->n || m->cos == m->cos || m->rel_l2 != 1.0 ||
	    m->rel_diff != 1.0)
		return false;
	h->kind = DB_HINT_ZEROS;
	return true;
}

/* k = Σxy/Σxx = cos·‖y‖/‖x‖, with ‖y‖²/‖x‖² = rel_l2²/rel_diff − 1 (both
 * are Σ(y−x)² over Σx² and Σ(x²+y²)); y − kx is the part of y no factor
 * explains, ‖y − kx‖/‖y‖ = sin of the angle. */
static bool scale(const db_pair *p, db_hint *h)
{
	const db_metrics *m = &p->m;
	if (p->status != DB_ST_OK || m->n < SCALE_MIN_N || m->nonfinite_mismatch || !isfinite(m->cos) ||
	    !isfinite(m->rel_l2) || !(m->rel_diff > 0))
		return false;
	double r2 = m->rel_l2 * m->rel_l2 / m->rel_diff - 1.0;
	if (!(r2 > 0) || sqrt(fmax(0.0, 1.0 - m->cos * m->cos)) > CLOSE)
		return false;
	double k = m->cos * sqrt(r2);
	if (fabs(k + 1.0) <= SCALE_MIN) {
		h->kind = DB_HINT_SIGN_FLIP;
		h->factor = k;
		return true;
	}
	if (fabs(k - 1.0) <= SCALE_MIN)
		return false;
	h->kind = DB_HINT_SCALE;
	h->factor = k;
	return true;
}

/* ---- from the values --------------------------------------------------- */

/* How many ranks (at least 2) of p's cell, those keep(q, p) accepts, have
 * tensors on one side (tgt_side: the target's) that sum to p's tensor on
 * the other side; 0 when they do not or cannot be read. The partial-sum
 * hint and db_replica_settle share it. */
static int ranks_sum_to(const db_compare *c, const db_pair *p, bool tgt_side,
                        bool (*keep)(const db_pair *q, const db_pair *p))
{
	size_t nm;
	const size_t *m = db_cell_pairs(c, p, &nm);
	const db_index *one = tgt_side ? c->ref : c->tgt, *many = tgt_side ? c->tgt : c->ref;
	int64_t n = 0, nq;
	double *x = NULL, *sum = NULL;
	int ranks = 0;
	for (size_t k = 0; k < nm; k++) {
		const db_pair *q = &c->pairs[m[k]];
		if (!keep(q, p))
			continue;
		double *y = NULL;
		if ((!x && !(x = db_hint_load(one, tgt_side ? p->ref : p->tgt, &n))) ||
		    !(y = db_hint_load(many, tgt_side ? q->tgt : q->ref, &nq)) || nq != n) {
			free(y);
			ranks = 0;
			break;
		}
		if (!sum) {
			sum = y;
		} else {
			for (int64_t i = 0; i < n; i++)
				sum[i] += y[i];
			free(y);
		}
		ranks++;
	}
	int r = ranks >= 2 && db_hint_close(sum, x, n) ? ranks : 0;
	free(x);
	free(sum);
	return r;
}

static bool computed_target(const db_pair *q, const db_pair *p)
{
	(void)p;
	return q->status == DB_ST_OK && q->tgt;
}

/* Per-rank targets of p's cell that sum to p's reference. */
static bool partial_sum(const db_compare *c, const db_pair *p, db_hint *h)
{
	if (p->merged || p->f.rank < 0 || p->status != DB_ST_OK || !p->ref)
		return false;
	int ranks = db_hint_psum(c, p);
	if (ranks < 0)
		ranks = ranks_sum_to(c, p, true, computed_target);
	if (ranks) {
		h->kind = DB_HINT_PARTIAL_SUM;
		h->ranks = ranks;
	}
	return ranks > 0;
}

static bool same_replica(const db_pair *q, const db_pair *p)
{
	return q->replica == p->replica;
}

void db_replica_settle(const db_compare *c, db_pair *p)
{
	/* not published yet: its band says whether it diverges */
	if (!p->replica || p->status != DB_ST_OK || p->band <= DB_BAND_OK)
		return;
	bool many_tgt = p->replica == 2;
	/* one answer per cell: every rank of it asks the same question */
	_Atomic int *memo = db_cell_replica_memo(c, p);
	int ranks = memo ? atomic_load(memo) : -1;
	if (ranks < 0) {
		ranks = ranks_sum_to(c, p, many_tgt, same_replica);
		if (memo)
			atomic_store(memo, ranks);
	}
	if (ranks) {
		char msg[600];
		snprintf(msg, sizeof msg, "the %s's %d ranks sum to the %s: a per-rank partial sum, "
		         "not a replica (a shard rule {stage: '^%s$', how: sum} compares the sum); a "
		         "missing all-reduce only if the next stage diverges",
		         many_tgt ? "target" : "reference", ranks, many_tgt ? "reference" : "target",
		         p->f.stage);
		p->status = DB_ST_NOT_COMPARABLE;
		p->band = DB_BAND_NONE;
		free(p->error);
		p->error = strdup(msg);
	}
}


void db_pair_hint(const db_compare *c, const db_pair *p, db_hint *h)
{
	memset(h, 0, sizeof *h);
	/* --slots: the label names the slot; both sides are one tensor */
	if (p->slot.side == DB_SLOT_IN_TREE)
		return;
	bool slot = p->slot.side && p->status == DB_ST_OK;
	if (!db_pair_diverges(p) && !slot)
		return;
	if (c->profile && db_profile_is_input_ids(c->profile, p->f.stage) &&
	    db_pair_diverges(p) &&
	    (p->status == DB_ST_SHAPE_MISMATCH || (p->status == DB_ST_OK && p->band == DB_BAND_INPUTS))) {
		h->kind = DB_HINT_INPUTS_DIFFER;
		h->differ = p->status == DB_ST_OK && p->m.byte_equal == p->m.byte_equal
		                    ? (int64_t)llround((1.0 - p->m.byte_equal) * (double)p->numel)
		                    : -1;
		return;
	}
	if (slot) {     /* measured on a slot: the other hints read whole tensors */
		h->kind = DB_HINT_BATCH_SLOT;
		h->slot_side = p->slot.side;
		h->slot_dim = p->slot.dim;
		h->slot_start = atomic_load(&((db_pair *)p)->slot.start);
		h->slot_len = p->slot.len;
		h->slot_given = p->slot.given;
		h->slot_tokens = p->slot.tokens;
		return;
	}
	if ((p->status != DB_ST_OK && p->status != DB_ST_SHAPE_MISMATCH) || p->m.stats_only)
		return;         /* statistics only: every hint below reads the values */
	if (db_quant_hint(c, p, h))     /* weights read dequantized or transformed */
		return;
	if (nan_origin(c, p, h) || zeros(p, h) || partial_sum(c, p, h) || scale(p, h))
		return;
	db_hint_from_values(c, p, h);
}

void db_hint_json(FILE *out, const db_hint *h)
{
	if (h->kind == DB_HINT_NONE) {
		fputs("null", out);
		return;
	}
	fputs("{\"kind\": ", out);
	db_json_str(out, db_hint_kind_name(h->kind));
	switch (h->kind) {
	case DB_HINT_SCALE:
	case DB_HINT_SIGN_FLIP:
		fputs(", \"factor\": ", out);
		db_json_num(out, h->factor);
		break;
	case DB_HINT_SHIFT:
		fprintf(out, ", \"dim\": 0, \"by\": %lld", (long long)h->by);
		break;
	case DB_HINT_ROWS_PERMUTED:
		fprintf(out, ", \"dim\": 0, \"moved\": %lld", (long long)h->moved);
		break;
	case DB_HINT_TRANSPOSED:
		fputs(", \"perm\": [", out);
		for (int d = 0; d < h->ndim; d++)
			fprintf(out, "%s%d", d ? ", " : "", h->perm[d]);
		fputc(']', out);
		break;
	case DB_HINT_PARTIAL_SUM:
		fprintf(out, ", \"ranks\": %d", h->ranks);
		break;
	case DB_HINT_NAN_ORIGIN:
		fprintf(out, ", \"nan\": %llu, \"inf\": %llu", (unsigned long long)h->nan,
		        (unsigned long long)h->inf);
		break;
	case DB_HINT_INPUTS_DIFFER:
		if (h->differ >= 0)
			fprintf(out, ", \"differ\": %lld", (long long)h->differ);
		else
			fputs(", \"differ\": null", out);
		break;
	case DB_HINT_BATCH_SLOT:
		fprintf(out, ", \"side\": \"%s\", \"dim\": %d, \"start\": ",
		        h->slot_side == 1 ? "ref" : "target", h->slot_dim);
		if (h->slot_start >= 0)
			fprintf(out, "%lld", (long long)h->slot_start);
		else
			fputs("null", out);
		fprintf(out, ", \"len\": %lld, \"given\": %s", (long long)h->slot_len,
		        h->slot_given ? "true" : "false");
		if (h->slot_tokens)
			fputs(", \"tokens\": true", out);
		break;
	default:
		db_quant_hint_json(out, h);
		break;
	}
	fputc('}', out);
}

char *db_hint_text(const db_hint *h, bool ascii, char *buf, size_t len)
{
	const char *ap = ascii ? "~" : "≈", *x = ascii ? "x" : "×";
	size_t l = 0;
	switch (h->kind) {
	case DB_HINT_NONE:
		snprintf(buf, len, "%s", "");
		break;
	case DB_HINT_SCALE:
		snprintf(buf, len, "scale: target %s %.4g %s ref", ap, h->factor, x);
		break;
	case DB_HINT_SIGN_FLIP:
		snprintf(buf, len, "sign_flip: target %s -ref", ap);
		break;
	case DB_HINT_SHIFT:
		snprintf(buf, len, "shift: target row i %s ref row i%+lld (dim 0, by %lld)", ap,
		         (long long)-h->by, (long long)h->by);
		break;
	case DB_HINT_ROWS_PERMUTED:
		snprintf(buf, len, "rows_permuted: the same rows along dim 0 in another order "
		         "(%lld moved)", (long long)h->moved);
		break;
	case DB_HINT_TRANSPOSED:
		l = (size_t)snprintf(buf, len, "transposed: target %s ref.permute(", ap);
		for (int d = 0; d < h->ndim && l < len; d++)
			l += (size_t)snprintf(buf + l, len - l, "%s%d", d ? ", " : "", h->perm[d]);
		if (l < len)
			snprintf(buf + l, len - l, ")");
		break;
	case DB_HINT_PARTIAL_SUM:
		snprintf(buf, len, "partial_sum: the %d ranks' targets sum to the ref "
		         "(a missing all-reduce?)", h->ranks);
		break;
	case DB_HINT_ZEROS:
		snprintf(buf, len, "zeros: the target is all zeros");
		break;
	case DB_HINT_NAN_ORIGIN:
		snprintf(buf, len, "nan_origin: NaN/Inf first appear here (%llu NaN, %llu Inf)",
		         (unsigned long long)h->nan, (unsigned long long)h->inf);
		break;
	case DB_HINT_INPUTS_DIFFER:
		if (h->differ >= 0)
			snprintf(buf, len, "inputs_differ: %lld token ids differ", (long long)h->differ);
		else
			snprintf(buf, len, "inputs_differ: the token ids have another shape");
		break;
	case DB_HINT_NOT_TRANSFORMED: case DB_HINT_SCALE_INVERTED: case DB_HINT_NIBBLES_SWAPPED:
	case DB_HINT_TO_NOT_VIEW: case DB_HINT_SCALE_BLOCK: case DB_HINT_PACK_ORDER:
	case DB_HINT_ZERO_OFF_BY_ONE:
		db_quant_hint_text(h, ascii, buf, len);
		break;
	case DB_HINT_BATCH_SLOT:
		if (h->slot_tokens)
			snprintf(buf, len, "aligned by token: %s rows [%lld:%lld] of its one pass",
			         h->slot_side == 1 ? "ref" : "target", (long long)h->slot_start,
			         (long long)(h->slot_start + h->slot_len));
		else if (h->slot_start >= 0)
			snprintf(buf, len, "batch slot: %s dim %d [%lld:%lld]",
			         h->slot_side == 1 ? "ref" : "target", h->slot_dim,
			         (long long)h->slot_start, (long long)(h->slot_start + h->slot_len));
		else
			snprintf(buf, len, "batch slot: %s dim %d, %lld long",
			         h->slot_side == 1 ? "ref" : "target", h->slot_dim,
			         (long long)h->slot_len);
		break;
	}
	return buf;
}
