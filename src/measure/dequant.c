/* Dequantized pairs (dequant.h): each side's logical elements decoded into
 * the worker's buffers a segment at a time (codes times their block's
 * scale, times the global scale), measured like any pair, and held to the
 * floor rounding sets: an element is beyond it when it misses the other
 * side by more than one step of its code's grid (times the scale) plus a
 * bf16 rounding of the value — a full step, twice what round-to-nearest
 * costs, so another rounding mode or a bf16 reference stays inside. */
#include "dequant.h"
#include "db_dequant.h"
#include "db_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics_gather.h"

static int64_t numel_of(const db_tensor *t)
{
	return db_tensor_numel(t);
}

int db_qview_open(db_wctx *w, const db_index *ix, const db_qgroup *g, db_qview *q,
                  db_err *err)
{
	memset(q, 0, sizeof *q);
	q->g = g;
	q->s2 = 1.0;
	const db_quant_rule *r = g->rule;
	/* scale2 first: its tensor is read once, the others stay borrowed */
	if (g->scale2) {
		const db_tensor *t = NULL;
		if (db_wctx_tensor(w, ix, g->scale2, &t, NULL, err) != 0)
			return -1;
		if (numel_of(t) != 1)
			return db_err_set(err, NULL, g->scale2->key, -1, "%s holds %lld values, not one",
			                  r->scale2, (long long)numel_of(t));
		q->s2 = db_quant_scale_value(r, t->dtype, t->data, t->swap);
	}
	if (db_wctx_tensor(w, ix, g->scale, &q->scale, NULL, err) != 0 ||
	    (g->zero && db_wctx_tensor(w, ix, g->zero, &q->zero, NULL, err) != 0) ||
	    (g->gidx && db_wctx_tensor(w, ix, g->gidx, &q->gidx, NULL, err) != 0) ||
	    db_wctx_tensor(w, ix, g->codes, &q->codes, NULL, err) != 0)
		return -1;
	db_dtype dt = q->codes->dtype;
	int ncodes = r->values == DB_QV_E2M1 || r->values == DB_QV_INT4 ? 16 : 256;
	for (int c = 0; c < ncodes; c++) {
		q->lut[c] = db_quant_code_value(dt, r->values, (unsigned)c);
		if (r->values == DB_QV_INT4)
			q->lut[c] += r->offset;
		q->step[c] = db_quant_code_step(dt, r->values, q->lut[c]);
	}
	for (int k = 0; k < 8; k++)
		q->npos[r->order[k]] = (uint8_t)k;
	for (int d = 0; d < g->ndim; d++)
		q->nblk[d] = (g->shape[d] + g->block[d] - 1) / g->block[d];
	return 0;
}

void db_qview_through(db_qview *q, const db_xform *xf)
{
	bool scales = xf && xf->kind == DB_XF_E8M0;
	q->xf = scales ? NULL : xf;
	q->sxf = scales ? xf : NULL;
}

static double elem(const db_tensor *t, int64_t flat, bool contig)
{
	const uint8_t *p = t->data + (contig ? flat * (int64_t)db_dtype_size(t->dtype)
	                                     : db_tensor_elem_offset(t, flat));
	return db_decode1_f64(t->dtype, p, t->swap);
}

void db_qview_fill(const db_qview *q, int64_t b, int64_t n, double *v, double *tol)
{
	const db_qgroup *g = q->g;
	const db_quant_rule *r = g->rule;
	if (r->values == DB_QV_INT4) {
		db_qview_fill_int4(q, b, n, v, tol);
		return;
	}
	const db_tensor *ct = q->codes, *st = q->scale;
	bool ccontig = db_tensor_is_contiguous(ct), scontig = db_tensor_is_contiguous(st);
	bool zcontig = q->zero && db_tensor_is_contiguous(q->zero);
	bool packed = r->values == DB_QV_E2M1;
	int nd = g->ndim;
	int64_t cols = nd ? g->shape[nd - 1] : 1;
	int64_t snumel = numel_of(st);
	/* coordinates of element b, then carried element by element */
	int64_t coord[DB_MAX_DIMS] = {0};
	int64_t rest = b;
	for (int d = nd - 1; d >= 0; d--) {
		coord[d] = g->shape[d] ? rest % g->shape[d] : 0;
		rest = g->shape[d] ? rest / g->shape[d] : 0;
	}
	int64_t last_s = -1;
	double s = 1, z = 0;
	for (int64_t i = 0; i < n; i++) {
		int64_t f = b + i;
		unsigned code;
		if (packed) {
			int64_t row = f / cols, c = f % cols;
			int64_t byte = row * (cols / 2) + c / 2;
			if (q->xf)
				byte = db_xform_index(q->xf, ct->ndim, ct->shape, byte);
			const uint8_t *p = ct->data + (ccontig ? byte : db_tensor_elem_offset(ct, byte));
			bool high = (c & 1) ^ r->high_first;
			code = high ? *p >> 4 : *p & 15u;
		} else {
			int64_t at = q->xf ? db_xform_index(q->xf, ct->ndim, ct->shape, f) : f;
			code = *(ct->data + (ccontig ? at : db_tensor_elem_offset(ct, at)));
		}
		int64_t sf = 0;
		if (snumel != 1)
			for (int d = 0; d < nd; d++)
				sf = sf * q->nblk[d] + coord[d] / g->block[d];
		if (sf != last_s) {
			int64_t at = q->sxf ? db_xform_index(q->sxf, st->ndim, st->shape, sf) : sf;
			s = db_quant_scale_value(r, st->dtype, st->data + (scontig ? at * (int64_t)
			                         db_dtype_size(st->dtype) : db_tensor_elem_offset(st, at)),
			                         st->swap) * q->s2;
			if (r->invert)
				s = 1 / s;
			z = q->zero ? elem(q->zero, snumel == 1 ? 0 : sf, zcontig) : 0;
			last_s = sf;
		}
		double cv = q->lut[code];
		v[i] = (cv - z) * s;
		if (tol)
			tol[i] = q->step[code] * fabs(s);
		for (int d = nd - 1; d >= 0; d--) {
			if (++coord[d] < g->shape[d])
				break;
			coord[d] = 0;
		}
	}
}

int db_side_fill(db_wctx *w, const db_index *ix, const db_item *it, const db_xform *xf,
                 int64_t i, int64_t n, double *v, double *tol, db_err *err)
{
	if (it->quant) {
		db_qview q;
		if (db_qview_open(w, ix, it->quant, &q, err) != 0)
			return -1;
		db_qview_through(&q, xf);
		db_qview_fill(&q, i, n, v, tol);
		return 0;
	}
	const db_tensor *t = NULL;
	if (db_wctx_tensor(w, ix, it, &t, NULL, err) != 0)
		return -1;
	if (xf) {
		for (int64_t k = 0; k < n; k++)
			v[k] = db_decode1_f64(t->dtype, t->data + db_tensor_elem_offset(t,
			                      db_xform_index(xf, t->ndim, t->shape, i + k)), t->swap);
	} else {
		bool contig = db_tensor_is_contiguous(t);
		db_walker wk;
		if (!contig)
			db_walker_seek(&wk, t, i);
		db_gather(t, contig, &wk, i, n, v);
	}
	for (int64_t k = 0; k < n; k++)
		tol[k] = 0;
	return 0;
}

typedef struct sample_job {
	db_wctx *w;
	const db_index *ix;
	const db_item *it;
	const db_xform *xf;
	const int64_t *idx;
	int n;
	double *v;
	db_err *err;
} sample_job;

static int sample_read(void *arg)
{
	const sample_job *j = arg;
	const db_item *it = j->it;
	db_qview q;
	if (it->quant && db_qview_open(j->w, j->ix, it->quant, &q, j->err) != 0)
		return -1;
	const db_tensor *t = NULL;
	if (!it->quant && db_wctx_tensor(j->w, j->ix, it, &t, NULL, j->err) != 0)
		return -1;
	if (it->quant)
		db_qview_through(&q, j->xf);
	for (int k = 0; k < j->n; k++) {
		if (it->quant)
			db_qview_fill(&q, j->idx[k], 1, &j->v[k], NULL);
		else
			j->v[k] = db_decode1_f64(t->dtype, t->data + db_tensor_elem_offset(t,
			                         db_xform_index(j->xf, t->ndim, t->shape, j->idx[k])), t->swap);
	}
	return 0;
}

/* Guarded here, whoever calls: the transform vote runs from a cache lookup
 * and a hint with no guard of their own, under the vote's lock (a SIGBUS
 * let through killed the process, issue 37). A fault closes w's files:
 * every caller samples before it holds a tensor of w. */
int db_side_sample(db_wctx *w, const db_index *ix, const db_item *it, const db_xform *xf,
                   const int64_t *idx, int n, double *v, db_err *err)
{
	sample_job j = {w, ix, it, xf, idx, n, v, err};
	return db_wctx_run(w, sample_read, &j, err);
}

double db_qview_scale_at(const db_qview *q, int64_t f)
{
	const db_qgroup *g = q->g;
	const db_tensor *st = q->scale;
	if (g->rule->values == DB_QV_INT4)
		return db_qview_scale_int4(q, f);
	int64_t sf = 0, coord[DB_MAX_DIMS];
	for (int d = g->ndim - 1; d >= 0; d--) {
		coord[d] = g->shape[d] ? f % g->shape[d] : 0;
		f = g->shape[d] ? f / g->shape[d] : 0;
	}
	if (numel_of(st) != 1)
		for (int d = 0; d < g->ndim; d++)
			sf = sf * q->nblk[d] + coord[d] / g->block[d];
	if (q->sxf)
		sf = db_xform_index(q->sxf, st->ndim, st->shape, sf);
	double s = db_quant_scale_value(g->rule, st->dtype, st->data +
	                                db_tensor_elem_offset(st, sf), st->swap) * q->s2;
	return g->rule->invert ? 1 / s : s;
}

db_band db_quant_band(db_band b, const db_metrics *m)
{
	if (!m->q_n || b == DB_BAND_NONE || b == DB_BAND_INPUTS || m->nonfinite_mismatch)
		return b;
	/* beyond: an element far past any rounding, more than a few in ten
	 * thousand past one step, or a block whose scale is off */
	bool beyond = m->q_worst > 8 || (double)m->q_beyond > 1e-4 * (double)m->q_n ||
	              m->q_blocks_off > 0;
	if (!beyond)
		return b > DB_BAND_DRIFT ? DB_BAND_DRIFT : b;
	return b < DB_BAND_ALGO ? DB_BAND_ALGO : b;
}

/* ---- what it did, for people and JSON ---------------------------------- */

bool db_merged_quant(const db_pair *p)
{
	if (!p->merged)
		return false;
	for (size_t i = 0; i < p->n_ref_shards; i++)
		if (p->ref_shards[i]->quant)
			return true;
	for (size_t i = 0; i < p->n_tgt_shards; i++)
		if (p->tgt_shards[i]->quant)
			return true;
	return false;
}

bool db_pair_dequantized(const db_pair *p)
{
	return (p->ref && p->ref->quant) || (p->tgt && p->tgt->quant) || db_merged_quant(p);
}

const db_qgroup *db_pair_qgrid(const db_pair *p)
{
	if (p->merged) {
		if (p->n_tgt_shards && p->tgt_shards[0]->quant)
			return p->tgt_shards[0]->quant;
		return p->n_ref_shards ? p->ref_shards[0]->quant : NULL;
	}
	if (p->tgt && p->tgt->quant)
		return p->tgt->quant;
	return p->ref ? p->ref->quant : NULL;
}

bool db_pair_qblock_coords(const db_pair *p, int64_t i, int *nd, int64_t *coord)
{
	const db_qgroup *g = db_pair_qgrid(p);
	if (!g || i < 0 || g->ndim != p->ndim_ref)
		return false;
	*nd = g->ndim;
	for (int d = g->ndim - 1; d >= 0; d--) {
		int64_t b = g->block[d] > 0 ? g->block[d] : 1;
		int64_t nb = (p->shape_ref[d] + b - 1) / b;
		coord[d] = nb > 0 ? i % nb : 0;
		i = nb > 0 ? i / nb : 0;
	}
	return true;
}

const db_qgroup *db_pair_qgroup(const db_pair *p, bool ref)
{
	const db_item *it = ref ? p->ref : p->tgt;
	return it ? it->quant : NULL;
}

bool db_pair_within_floor(const db_pair *p)
{
	return p->status == DB_ST_OK && p->m.q_n &&
	       db_quant_band(DB_BAND_SCRAMBLE, &p->m) == DB_BAND_DRIFT;
}

/* "nvfp4 (weight_scale, weight_scale_2)" */
static int group_text(const db_qgroup *g, char *buf, size_t len)
{
	const db_quant_rule *r = g->rule;
	return snprintf(buf, len, "%s (%s%s%s%s%s)", r->name, r->scale, r->scale2 ? ", " : "",
	                r->scale2 ? r->scale2 : "", r->zero ? ", " : "", r->zero ? r->zero : "");
}

const char *db_pair_dequant_note(const db_pair *p, char *buf, size_t len)
{
	buf[0] = 0;
	if (!db_pair_dequantized(p) || len < 2)
		return buf;
	size_t n = 0;
	for (int s = 0; s < 2; s++) {
		const db_qgroup *g = db_pair_qgroup(p, s == 0);
		if (!g || n >= len)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s ", n ? ", " : "", s ? "target" : "ref");
		if (n < len)
			n += (size_t)group_text(g, buf + n, len - n);
	}
	if (n >= len || p->status != DB_ST_OK || !p->m.q_n)
		return buf;
	if (db_pair_within_floor(p)) {
		snprintf(buf + n, len - n, ": within its rounding floor");
		return buf;
	}
	n += (size_t)snprintf(buf + n, len - n, ": %llu of %llu elements beyond one step (worst "
	                      "%.3g steps)", (unsigned long long)p->m.q_beyond,
	                      (unsigned long long)p->m.q_n, p->m.q_worst);
	int nd;
	int64_t co[DB_MAX_DIMS];
	if (n < len && p->m.q_blocks_off && db_pair_qblock_coords(p, p->m.q_block_at, &nd, co)) {
		n += (size_t)snprintf(buf + n, len - n, "; %llu of %llu scale blocks off, worst (",
		                      (unsigned long long)p->m.q_blocks_off,
		                      (unsigned long long)p->m.q_blocks);
		for (int d = 0; d < nd && n < len; d++)
			n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? ", " : "", (long long)co[d]);
		if (n < len)
			snprintf(buf + n, len - n, ") at %.4g x the reference", p->m.q_block_slope);
	}
	return buf;
}

static void json_group(FILE *out, const db_qgroup *g)
{
	if (!g) {
		fputs("null", out);
		return;
	}
	fputs("{\"rule\": ", out);
	db_json_str(out, g->rule->name);
	fputs(", \"codes\": ", out);
	db_json_str(out, db_dtype_name(g->codes->dtype));
	const db_item *cs[] = {g->scale, g->scale2, g->zero};
	const char *names[] = {"scale", "scale2", "zero"};
	for (int i = 0; i < 3; i++) {
		fprintf(out, ", \"%s\": ", names[i]);
		db_json_str(out, cs[i] ? cs[i]->key : NULL);
	}
	fputs(", \"block\": [", out);
	for (int d = 0; d < g->ndim; d++)
		fprintf(out, "%s%lld", d ? ", " : "", (long long)g->block[d]);
	fputs("]}", out);
}

void db_pair_dequant_json(FILE *out, const db_pair *p)
{
	fputs("{\"ref\": ", out);
	json_group(out, db_pair_qgroup(p, true));
	fputs(", \"target\": ", out);
	json_group(out, db_pair_qgroup(p, false));
	if (p->status == DB_ST_OK && p->m.q_n) {
		fprintf(out, ", \"floor_n\": %llu, \"beyond\": %llu, \"worst_steps\": ",
		        (unsigned long long)p->m.q_n, (unsigned long long)p->m.q_beyond);
		if (isfinite(p->m.q_worst))
			fprintf(out, "%.17g", p->m.q_worst);
		else
			fputs("null", out);
		fprintf(out, ", \"worst_at\": %lld, \"blocks\": %llu, \"blocks_off\": %llu, "
		        "\"worst_block\": ", (long long)p->m.q_worst_at,
		        (unsigned long long)p->m.q_blocks, (unsigned long long)p->m.q_blocks_off);
		int nd;
		int64_t co[DB_MAX_DIMS];
		if (p->m.q_blocks_off && db_pair_qblock_coords(p, p->m.q_block_at, &nd, co)) {
			fputc('[', out);
			for (int d = 0; d < nd; d++)
				fprintf(out, "%s%lld", d ? ", " : "", (long long)co[d]);
			fputs("], \"worst_block_slope\": ", out);
			db_json_num(out, p->m.q_block_slope);
		} else {
			fputs("null", out);
		}
		fprintf(out, ", \"within_floor\": %s", db_pair_within_floor(p) ? "true" : "false");
	}
	fputc('}', out);
}
