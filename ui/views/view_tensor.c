/* The tensors of one pair: shape, dtypes, per-side statistics, the largest
 * |diff| with coordinates, and the error per row (dim 0, tokens) as a
 * sparkline so "first tokens right, later ones drift" shows at a glance.
 * A quantized weight shows its dequantized values, the companions it was
 * dequantized with and the scale block that is off (db_dequant.h).
 * A merged pair whose other side is whole (TP 1 vs TP 2) says so and shows
 * its worst shard against its slice of the whole (db_rank_split.h).
 * Files are read by a worker thread; the view is busy until it is done. */
#include "base/app.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "db_token.h"
#include "db_bus.h"
#include "db_dequant.h"
#include "db_grid.h"
#include "db_rank_split.h"
#include "db_reader.h"
#include "db_slot.h"
#include "db_calls.h"
#include "base/draw.h"

#define TOPK 10
#define MAX_ROWS 1000000

struct tensor {
	size_t pair;                    /* the pair shown (a rank of a merged pair) */
	char note[256];
	pthread_t th;
	bool started;
	atomic_bool done;
	/* results, written by the worker before done */
	char err[1024];
	db_stats sx, sy;
	bool have_x, have_y, same_numel;
	int ndim;
	int64_t shape[DB_MAX_DIMS];
	int ntop;
	int64_t top_idx[TOPK];
	double top_abs[TOPK], top_x[TOPK], top_y[TOPK];
	double *rows;
	int64_t n_rows;
	/* --align tokens: rows is the error per token over the whole aligned
	 * sequence (db_token_curve), this pair's own tokens tok_lo.. */
	bool tok_curve;
	int64_t tok_lo, tok_len, tok_bad;      /* tok_bad: db_pair_bad_token's, -1 */
	char *path_x, *path_y;
	db_compare *cmp;
	bool deq;                       /* the numbers are the dequantized values' */
	char block_note[256];
	char companions[8][160];
	int n_companions;
	/* what a statistics-only dumper (msprobe) wrote instead of the values */
	db_tstat tx, ty;
	bool has_tx, has_ty;
	char frame_ref[384], frame_tgt[384];    /* the Python frame of the call */
	/* a merged pair across layouts: the shard shown against its slice of
	 * the whole (split_k >= 0), set by the worker */
	bool split;
	bool sliced;                    /* split_pick chose a shard */
	char split_note[320], split_note2[160];
	long split_k;
	int split_dim;
	int64_t split_lo, split_len;
	bool whole_ref;
};

/* A dequantized or transformed pair: every number from db_pair_qreport. */
static void work_quant(struct tensor *s, const db_pair *p)
{
	db_qreport r;
	db_err e = {{0}};
	s->deq = true;
	s->ndim = p->ndim_ref;
	memcpy(s->shape, p->shape_ref, sizeof s->shape);
	if (db_pair_qreport(s->cmp, p, &r, &e) != 0) {
		snprintf(s->err, sizeof s->err, "%s", e.msg);
		return;
	}
	s->sx = r.sx;
	s->sy = r.sy;
	s->have_x = s->have_y = s->same_numel = p->status == DB_ST_OK;
	s->ntop = r.ntop;
	memcpy(s->top_idx, r.top_idx, sizeof s->top_idx);
	memcpy(s->top_abs, r.top_abs, sizeof s->top_abs);
	memcpy(s->top_x, r.top_x, sizeof s->top_x);
	memcpy(s->top_y, r.top_y, sizeof s->top_y);
	s->rows = r.rows;               /* taken over */
	s->n_rows = r.n_rows;
	r.rows = NULL;
	s->n_companions = r.n_companions;
	memcpy(s->companions, r.companions, sizeof s->companions);
	db_qreport_block_note(s->cmp, p, &r, !draw_utf8, s->block_note, sizeof s->block_note);
	db_qreport_free(&r);
}

static const db_entry *open_entry(const db_index *ix, const db_item *it, db_file **f,
                                  char **path, char *err, size_t errlen)
{
	*path = db_index_path(ix, it);
	db_err e = {{0}};
	if (!*path || db_file_open(*path, f, &e) < 0) {
		snprintf(err, errlen, "%s", e.msg[0] ? e.msg : "out of memory");
		return NULL;
	}
	const db_entry *en = db_file_find(*f, it->key);
	if (!en)
		snprintf(err, errlen, "%s: no entry '%s'", *path, it->key);
	else if (en->err)
		snprintf(err, errlen, "%s", en->err);
	return en && !en->err ? en : NULL;
}

/* What the view shows, read from the two mappings (under a guard). */
struct look {
	struct tensor *s;
	const db_pair *p;
	const db_entry *ex, *ey;
	bool slice_x, slice_y;          /* that side is the whole: take the split's slice */
};

/* The slice [lo, lo + len) of t along dim: a strided view, no copy. */
static db_tensor slice_of(const db_tensor *t, int dim, int64_t lo, int64_t len)
{
	db_tensor v = *t;
	v.shape[dim] = len;
	v.data = t->data + (size_t)(lo * t->stride[dim]) * db_dtype_size(t->dtype);
	v.file_offset = -1;
	return v;
}

static int look_at(void *arg)
{
	struct look *lk = arg;
	struct tensor *s = lk->s;
	const db_pair *p = lk->p;
	const db_entry *ex = lk->ex, *ey = lk->ey;
	db_err e = {{0}};
	db_tensor tx = ex ? ex->t : (db_tensor){0}, ty = ey ? ey->t : (db_tensor){0};
	if (lk->slice_x)
		tx = slice_of(&tx, s->split_dim, s->split_lo, s->split_len);
	if (lk->slice_y)
		ty = slice_of(&ty, s->split_dim, s->split_lo, s->split_len);
	if (ex && db_stats_compute(&tx, &s->sx, &e) == 0)
		s->have_x = true;
	if (ey && db_stats_compute(&ty, &s->sy, &e) == 0)
		s->have_y = true;
	if (ex && ex->t.st) {
		s->tx = *ex->t.st;
		s->has_tx = true;
	}
	if (ey && ey->t.st) {
		s->ty = *ey->t.st;
		s->has_ty = true;
	}
	const db_tensor *shape_of = ex ? &tx : ey ? &ty : NULL;
	if (shape_of) {
		s->ndim = shape_of->ndim;
		memcpy(s->shape, shape_of->shape, sizeof s->shape);
	}
	/* a batch slot: the element-wise parts on the longer side's block */
	int64_t slot = atomic_load(&((db_pair *)p)->slot.start);
	if (ex && ey && p->slot.side && slot >= 0) {
		db_tensor *big = p->slot.side == 1 ? &tx : &ty, v;
		db_slot_view(big, p->slot.dim, slot, p->slot.len, &v);
		*big = v;
	}
	/* a whole against one partial sum or fused shard is no comparison */
	if (ex && ey && (!s->split || s->sliced) && db_tensor_numel(&tx) == db_tensor_numel(&ty) &&
	    db_dtype_comparable(tx.dtype) && db_dtype_comparable(ty.dtype)) {
		s->same_numel = true;
		s->ntop = db_topk_diff(&tx, &ty, TOPK, s->top_idx, s->top_abs);
		for (int i = 0; i < s->ntop; i++) {
			int64_t ox = db_tensor_elem_offset(&tx, s->top_idx[i]);
			int64_t oy = db_tensor_elem_offset(&ty, s->top_idx[i]);
			s->top_x[i] = db_decode1_f64(tx.dtype, tx.data + ox, tx.swap);
			s->top_y[i] = db_decode1_f64(ty.dtype, ty.data + oy, ty.swap);
		}
		int64_t rows = tx.ndim > 0 ? tx.shape[0] : 1;
		if (rows > MAX_ROWS)
			rows = MAX_ROWS;
		s->rows = malloc((size_t)(rows > 0 ? rows : 1) * sizeof *s->rows);
		if (s->rows)
			s->n_rows = db_row_rel_l2(&tx, &ty, s->rows, rows);
	}
	return 0;
}

/* msprobe's tensor task: the entry names the file holding its tensor
 * (dump_tensor_data/ beside the dump): that file's one tensor, or NULL. */
static const db_entry *data_entry(const db_index *ix, const char *dump_path, const db_entry *en,
                                  db_file **f)
{
	*f = NULL;
	if (!en || !en->t.st || !en->t.st->data || !dump_path)
		return NULL;
	const char *slash = strrchr(dump_path, '/');
	size_t dl = slash ? (size_t)(slash - dump_path + 1) : 0;
	char *p = malloc(dl + 17 + strlen(en->t.st->data) + 1);
	if (!p)
		return NULL;
	memcpy(p, dump_path, dl);
	strcpy(p + dl, "dump_tensor_data/");
	strcat(p, en->t.st->data);
	db_err e = {{0}};
	const db_entry *d = NULL;
	/* a link out of the tree is not followed (the pair's error says so) */
	if (db_index_data_inside(ix, p, &e) == 0 && db_file_open(p, f, &e) == 0 &&
	    (*f)->n_entries == 1 && !(*f)->entries[0].err &&
	    (*f)->entries[0].t.data)
		d = &(*f)->entries[0];
	free(p);
	return d;
}

/* A merged pair across layouts: the worst shard against its slice of the
 * whole (the other side's item in *ix / *iy); false when the ranks cannot
 * be told apart (the note says why). */
static bool split_pick(struct tensor *s, const db_pair *p, const db_item **ix,
                       const db_item **iy)
{
	db_rank_part *parts = NULL;
	char why[256];
	db_err e = {{0}};
	long n = db_pair_rank_split(s->cmp, p, &parts, why, sizeof why, &e);
	if (n <= 0) {
		snprintf(s->split_note, sizeof s->split_note, "merged tensor, ranks not separable: "
		         "%.250s", n < 0 ? e.msg : why);
		return false;
	}
	long k = 0;
	for (long i = 1; i < n; i++)
		if (parts[i].band > parts[k].band ||
		    (parts[i].band == parts[k].band && parts[i].m.cos < parts[k].m.cos))
			k = i;
	s->whole_ref = p->n_ref_shards <= 1;
	int nd = p->ndim_ref >= 0 ? p->ndim_ref : p->ndim_tgt;
	s->split_dim = p->unshard.dim < 0 ? p->unshard.dim + nd : p->unshard.dim;
	s->split_k = k;
	s->split_lo = parts[k].lo;
	s->split_len = parts[k].len;
	if (s->whole_ref)
		*iy = p->tgt_shards[k];
	else
		*ix = p->ref_shards[k];
	size_t o = (size_t)snprintf(s->split_note, sizeof s->split_note,
	                            "merged tensor: the %s's %zu shards (ranks",
	                            s->whole_ref ? "target" : "reference", (size_t)n);
	for (long i = 0; i < n && o < sizeof s->split_note; i++)
		o += (size_t)snprintf(s->split_note + o, sizeof s->split_note - o, " %d", parts[i].rank);
	if (o < sizeof s->split_note)
		snprintf(s->split_note + o, sizeof s->split_note - o, ") concatenated along dim %d, "
		         "against the %s's whole", s->split_dim, s->whole_ref ? "reference" : "target");
	snprintf(s->split_note2, sizeof s->split_note2, "showing rank %d, the worst shard, against "
	         "its slice [%lld, %lld) of the whole (a: every rank)", parts[k].rank,
	         (long long)parts[k].lo, (long long)(parts[k].lo + parts[k].len));
	free(parts);
	return true;
}

static void *work(void *arg)
{
	struct tensor *s = arg;
	const db_pair *p = &s->cmp->pairs[s->pair];
	if (db_pair_dequantized(p) || db_pair_xform_name(s->cmp, p)) {
		work_quant(s, p);
		atomic_store(&s->done, true);
		return NULL;
	}
	db_file *fx = NULL, *fy = NULL;
	const db_entry *ex = NULL, *ey = NULL;
	const db_index *ixr = s->cmp->ref, *ixt = s->cmp->tgt ? s->cmp->tgt : s->cmp->ref;
	const db_item *ix = p->ref, *iy = p->tgt;
	if (s->split)
		s->sliced = split_pick(s, p, &ix, &iy);
	if (ix)
		ex = open_entry(ixr, ix, &fx, &s->path_x, s->err, sizeof s->err);
	if (iy && !s->err[0])
		ey = open_entry(ixt, iy, &fy, &s->path_y, s->err, sizeof s->err);
	db_file *dx = NULL, *dy = NULL;  /* the tensors themselves, when both are dumped */
	const db_entry *tx = data_entry(s->cmp->ref, s->path_x, ex, &dx),
	               *ty = data_entry(s->cmp->tgt, s->path_y, ey, &dy);
	if (tx && ty) {
		ex = tx;
		ey = ty;
	}
	struct look lk = {s, p, ex, ey, s->sliced && s->whole_ref, s->sliced && !s->whole_ref};
	const void *at = NULL;
	if (db_bus_run(look_at, &lk, &at) == DB_BUS_FAULT) {
		/* a file shrank under its mapping while read (db_bus.h) */
		const db_file *ff = fx && at >= (const void *)fx->map &&
		                    at < (const void *)(fx->map + fx->map_size) ? fx : fy;
		snprintf(s->err, sizeof s->err, "%s: file changed while read (it shrank under its "
		         "mapping); rescan", ff && ff->path ? ff->path : "?");
	}
	db_file_close(fx);
	db_file_close(fy);
	db_file_close(dx);
	db_file_close(dy);
	if (s->cmp->profile && s->cmp->profile->pair_calls)    /* the dump records stacks */
		db_call_frames(s->cmp, p, s->frame_ref, s->frame_tgt, sizeof s->frame_ref);
	double *curve;
	int64_t lo, len, n = p->slot.tokens ? db_token_curve(s->cmp, s->pair, &curve, &lo, &len) : 0;
	if (n > 0) {    /* the curve over the aligned tokens, not this pass's few rows */
		free(s->rows);
		s->rows = curve;
		s->n_rows = n;
		s->tok_curve = true;
		s->tok_lo = lo;
		s->tok_len = len;
		db_token_at bt;
		s->tok_bad = db_pair_bad_token(s->cmp, s->pair, &bt) == 1 ? bt.token : -1;
	}
	atomic_store(&s->done, true);
	return NULL;
}

static int tensor_open(struct view *v, struct tui *t)
{
	struct tensor *s = v->priv;
	s->cmp = t->cmp;
	s->pair = v->pair;
	const db_pair *p = &t->cmp->pairs[v->pair];
	if (p->merged && !db_pair_dequantized(p)) {
		/* A merged pair has no single file: show its worst rank (merged
		 * quantized shards are dequantized and shown whole). */
		size_t *rp = NULL, n = db_rank_pairs(t->cmp, v->pair, &rp), best = DB_NO_PAIR;
		for (size_t i = 0; i < n; i++) {
			const db_pair *q = &t->cmp->pairs[rp[i]];
			if (best == DB_NO_PAIR || q->band > t->cmp->pairs[best].band ||
			    (q->band == t->cmp->pairs[best].band && q->m.cos < t->cmp->pairs[best].m.cos))
				best = rp[i];
		}
		free(rp);
		s->split = !n && ((p->n_ref_shards <= 1 && p->n_tgt_shards >= 2) ||
		                  (p->n_tgt_shards <= 1 && p->n_ref_shards >= 2));
		if (best != DB_NO_PAIR) {
			s->pair = best;
			snprintf(s->note, sizeof s->note,
			         "merged tensor: showing rank %d, the worst shard (a ranks)",
			         t->cmp->pairs[best].f.rank);
		}
	}
	const db_pair *sp = &t->cmp->pairs[s->pair];
	if (sp->slot.side && atomic_load(&((db_pair *)sp)->slot.start) >= 0) {
		char sn[128];
		snprintf(s->note, sizeof s->note, "%s: top |diff| and rows on it",
		         db_slot_str(sp, sn, sizeof sn));
	}
	atomic_init(&s->done, false);
	if (pthread_create(&s->th, NULL, work, s) != 0) {
		tui_msg(t, true, "cannot start a thread");
		return -1;
	}
	s->started = true;
	return 0;
}

static void tensor_done(struct view *v, struct tui *t)
{
	struct tensor *s = v->priv;
	if (s->started)
		pthread_join(s->th, NULL);
	free(s->rows);
	free(s->path_x);
	free(s->path_y);
}

static bool tensor_busy(struct view *v)
{
	struct tensor *s = v->priv;
	return s->started && !atomic_load(&s->done);
}

/* Coordinates of flat index flat; a slice's are the whole's (the split's
 * start added along its dim), as the status line's max_abs says them. */
static void coords(const struct tensor *s, int64_t flat, char *buf, size_t len)
{
	int64_t idx[DB_MAX_DIMS];
	int ndim = s->ndim;
	for (int d = ndim - 1; d >= 0; d--) {
		int64_t n = s->shape[d] > 0 ? s->shape[d] : 1;
		idx[d] = flat % n;
		flat /= n;
	}
	if (s->sliced && s->split_dim >= 0 && s->split_dim < ndim)
		idx[s->split_dim] += s->split_lo;
	size_t o = (size_t)snprintf(buf, len, "[");
	for (int d = 0; d < ndim && o < len; d++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? ", " : "", (long long)idx[d]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

static void stats_line(WINDOW *w, int y, int W, const char *side, const db_stats *st,
                       const char *shape, const char *dtype)
{
	draw_textf(w, y, 0, W, C_DEFAULT, 0,
	           "%-7s %-16s %-9s %11.4g %11.4g %11.4g %11.4g %6llu %6llu", side, shape, dtype,
	           st->min, st->max, st->mean, st->std, (unsigned long long)st->nan,
	           (unsigned long long)st->inf);
}

/* Mean of rows[a, b). */
static double mean_of(const double *v, int64_t a, int64_t b)
{
	double s = 0;
	int64_t n = 0;
	for (int64_t i = a; i < b; i++)
		if (isfinite(v[i]))
			s += v[i], n++;
	return n ? s / (double)n : NAN;
}

static void draw_sparkline(struct tensor *s, WINDOW *w, int y, int W)
{
	static const char *const blocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
	static const char ascii[] = " .:-=+*#%@";
	int64_t n = s->n_rows;
	int width = W - 10;
	if (width < 8 || n <= 0)
		return;
	if (n < width)
		width = (int)n;
	/* log scale between the smallest positive and the largest value */
	double lo = INFINITY, hi = 0;
	for (int64_t i = 0; i < n; i++) {
		double x = s->rows[i];
		if (isfinite(x) && x > 0) {
			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
	}
	/* small relative spread (all rows equally off) stays visibly flat */
	if (hi > 0 && lo > hi * 1e-3)
		lo = hi * 1e-3;
	draw_text(w, y, 0, 9, C_DIM, 0, "rows");
	for (int c = 0; c < width; c++) {
		int64_t a = n * c / width, b = n * (c + 1) / width;
		if (b <= a)
			b = a + 1;
		double mx = 0;
		bool bad = false;
		for (int64_t i = a; i < b && i < n; i++) {
			if (!isfinite(s->rows[i]))
				bad = bad || !s->tok_curve;     /* a token no pass holds: none */
			else if (s->rows[i] > mx)
				mx = s->rows[i];
		}
		int level = 0, levels = draw_utf8 ? 8 : 10;
		if (bad)
			level = levels - 1;
		else if (mx > 0 && hi > lo)
			level = (int)((log10(mx) - log10(lo)) / (log10(hi) - log10(lo)) * (levels - 1) + 0.5);
		else if (mx > 0)
			level = levels - 1;
		if (level < 0)
			level = 0;
		if (level >= levels)
			level = levels - 1;
		enum tui_color col = mx > 0.1 || bad ? C_MARK : mx > 0.01 ? C_HILITE
		                     : mx > 0 || !s->tok_curve ? C_GOOD : C_DIM;
		if (draw_utf8)
			draw_text(w, y, 9 + c, 1, col, 0, blocks[level]);
		else
			draw_textf(w, y, 9 + c, 1, col, 0, "%c", ascii[level]);
	}
	draw_textf(w, y + 1, 9, W - 9, C_DIM, 0, "0");
	char last[32];
	snprintf(last, sizeof last, "%lld", (long long)(n - 1));
	int lw = (int)strlen(last);
	if (width > lw + 2)
		draw_text(w, y + 1, 9 + width - lw, lw, C_DIM, 0, last);
}

static void stat_cell(WINDOW *w, int y, int x, bool has, double v)
{
	char b[24];
	if (has)
		snprintf(b, sizeof b, "%12.5g", v);
	else
		snprintf(b, sizeof b, "%12s", "-");
	draw_text(w, y, x, 12, C_DEFAULT, 0, b);
}

/* Statistics-only pairs: the dumper's Max, Min, Mean, Norm (and md5) side
 * by side with their relative differences (what the pair was measured on),
 * and why there is nothing element-wise to show. */
static void stats_only_draw(WINDOW *w, int y, int W, const struct tensor *s, const db_pair *p)
{
	draw_text(w, y++, 0, W, C_HILITE, A_BOLD,
	          "statistics only: the dump holds these numbers for this tensor, not its values");
	draw_textf(w, y++, 0, W, C_DIM, A_BOLD, "%-9s %12s %12s %12s %12s  %s", "", "Max", "Min",
	           "Mean", "Norm", "md5 (CRC-32)");
	const db_tstat *st[2] = {s->has_tx ? &s->tx : NULL, s->has_ty ? &s->ty : NULL};
	const char *side[2] = {"ref", "target"};
	for (int k = 0; k < 2; k++, y++) {
		draw_text(w, y, 0, 9, C_DEFAULT, 0, side[k]);
		if (!st[k]) {
			draw_text(w, y, 10, W - 10, C_DIM, 0, (k ? p->tgt : p->ref)
			          ? "(the tensor itself: see above)" : "(missing)");
			continue;
		}
		stat_cell(w, y, 10, st[k]->has_max, st[k]->max);
		stat_cell(w, y, 23, st[k]->has_min, st[k]->min);
		stat_cell(w, y, 36, st[k]->has_mean, st[k]->mean);
		stat_cell(w, y, 49, st[k]->has_norm, st[k]->norm);
		if (st[k]->has_crc)
			draw_textf(w, y, 63, W - 63, C_DEFAULT, 0, "%08x", st[k]->crc);
		else
			draw_text(w, y, 63, W - 63, C_DIM, 0, "-");
	}
	if (p->status == DB_ST_OK && draw_pair_done(p) && p->m.stats_only) {
		draw_text(w, y, 0, 9, C_DIM, 0, "rel diff");
		for (int k = 0; k < 4; k++)
			stat_cell(w, y, 10 + 13 * k, p->m.st_rel[k] == p->m.st_rel[k], p->m.st_rel[k]);
		draw_text(w, y, 63, W - 63, p->m.md5_eq == 0 ? C_MARK : C_DEFAULT, 0,
		          p->m.md5_eq < 0 ? "-" : p->m.md5_eq ? "equal" : "differ");
	}
	y += 2;
	draw_text(w, y++, 0, W, C_DIM, 0, "No element-wise view (largest differences, rows): "
	          "a side holds statistics only, so the pair is measured on them.");
	draw_text(w, y, 0, W, C_DIM, 0, "Dump the tensors themselves (msprobe: task tensor) to see "
	          "where they differ.");
}

static void tensor_draw(struct view *v, struct tui *t, WINDOW *w, int y0, int h)
{
	struct tensor *s = v->priv;
	int W = getmaxx(w), y = y0;
	char lab[300];
	tui_pair_label(t, s->pair, lab, sizeof lab);
	int x = draw_text(w, y, 0, W, C_DEFAULT, A_BOLD, "Tensor ");
	draw_text(w, y, x, W - x, C_DEFAULT, A_BOLD, lab);
	y++;
	if (s->note[0])
		draw_text(w, y++, 0, W, C_HILITE, 0, s->note);
	if (!atomic_load(&s->done)) {
		draw_text(w, y + 1, 0, W, C_PENDING, 0, "reading the files…");
		return;
	}
	const db_pair *p = &t->cmp->pairs[s->pair];
	if (s->split_note[0])
		draw_text(w, y++, 0, W, C_HILITE, 0, s->split_note);
	if (s->split_note2[0])
		draw_text(w, y++, 0, W, C_HILITE, 0, s->split_note2);
	if (s->err[0])
		draw_textf(w, y++, 0, W, C_ERROR, 0, "error: %s", s->err);
	if (s->frame_ref[0] && !strcmp(s->frame_ref, s->frame_tgt)) {
		draw_textf(w, y++, 0, W, C_DIM, 0, "made at: %s", s->frame_ref);
	} else if (s->frame_ref[0] || s->frame_tgt[0]) {
		draw_textf(w, y++, 0, W, C_DIM, 0, "made at: reference %s",
		           s->frame_ref[0] ? s->frame_ref : "-");
		draw_textf(w, y++, 0, W, C_DIM, 0, "         target    %s",
		           s->frame_tgt[0] ? s->frame_tgt : "-");
	}
	y++;
	draw_textf(w, y++, 0, W, C_DIM, A_BOLD, "%-7s %-16s %-9s %11s %11s %11s %11s %6s %6s",
	           "side", "shape", "dtype", "min", "max", "mean", "std", "nan", "inf");
	char shx[64], shy[64];
	tui_item_shape(p->ref, shx, sizeof shx);
	tui_item_shape(p->tgt, shy, sizeof shy);
	if (s->sliced) {                /* the shard and its slice: one shape */
		db_item sh = {.ndim = s->ndim};
		memcpy(sh.shape, s->shape, sizeof sh.shape);
		tui_item_shape(&sh, shx, sizeof shx);
		memcpy(shy, shx, sizeof shy);
	}
	if (s->have_x)
		stats_line(w, y, W, "ref", &s->sx, shx, db_dtype_name(p->ref->dtype));
	else
		draw_text(w, y, 0, W, C_MISSING, 0, p->ref ? "ref     (unreadable)" : "ref     (missing)");
	y++;
	if (s->have_y)
		stats_line(w, y, W, "target", &s->sy, shy, db_dtype_name(p->tgt->dtype));
	else
		draw_text(w, y, 0, W, C_MISSING, 0,
		          p->tgt ? "target  (unreadable)" : "target  (missing)");
	y++;
	if (s->deq) {
		char dq[400];
		draw_textf(w, y++, 0, W, C_DIM, 0, "dequantized: %s",
		           db_pair_dequant_note(p, dq, sizeof dq)[0] ? dq : "read through the layout");
		for (int i = 0; i < s->n_companions && y < y0 + h - 8; i++)
			draw_textf(w, y++, 0, W, C_DIM, 0, "  %s", s->companions[i]);
		if (s->block_note[0])
			draw_text(w, y++, 0, W, C_MARK, A_BOLD, s->block_note);
	}
	y++;
	if (s->has_tx || s->has_ty) {
		stats_only_draw(w, y, W, s, p);
		return;
	}
	if (!s->same_numel) {
		draw_text(w, y, 0, W, C_SHAPE, 0, "the two sides cannot be compared element-wise");
		return;
	}
	int room = h - (y - y0) - 6;    /* keep the sparkline (3) and the status (2) */
	int ntop = s->ntop < room - 1 ? s->ntop : room - 1;
	if (ntop > 0) {
		draw_textf(w, y++, 0, W, C_DIM, A_BOLD, "%-4s %-12s %-18s %12s %12s %12s", "top",
		           "flat index", "coordinates", "ref", "target", "|diff|");
		for (int i = 0; i < ntop; i++) {
			char c[96];
			coords(s, s->top_idx[i], c, sizeof c);
			draw_textf(w, y++, 0, W, C_DEFAULT, 0, "%-4d %-12lld %-18s %12.5g %12.5g %12.5g",
			           i + 1, (long long)s->top_idx[i], c, s->top_x[i], s->top_y[i],
			           s->top_abs[i]);
		}
		y++;
	}
	if (s->tok_curve && y + 3 <= y0 + h - 2) {
		int64_t n = s->n_rows, worst = -1, first = s->tok_bad;   /* compare's rule */
		for (int64_t i = 0; i < n; i++)
			if (isfinite(s->rows[i]) && (worst < 0 || s->rows[i] > s->rows[worst]))
				worst = i;
		char c[16] = "-";
		if (worst >= 0)
			fmt_sci(s->rows[worst], c, sizeof c, 8);
		x = draw_textf(w, y, 0, W, C_DIM, A_BOLD, "error per token (aligned sequence, rel_l2), "
		               "%lld tokens: ", (long long)n);
		x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, "this pass %lld..%lld, worst token %lld "
		                "(%s)", (long long)s->tok_lo, (long long)(s->tok_lo + s->tok_len - 1),
		                (long long)worst, c);
		if (first >= 0)
			draw_textf(w, y, x, W - x, C_HILITE, A_BOLD, "  first off: token %lld",
			           (long long)first);
		else
			draw_text(w, y, x, W - x, C_DIM, 0, "  no token of this pass off by itself");
		draw_sparkline(s, w, y + 1, W);
	} else if (s->n_rows > 0 && y + 3 <= y0 + h - 2) {
		int64_t n = s->n_rows, q = n >= 4 ? n / 4 : 1;
		double first = mean_of(s->rows, 0, q), last = mean_of(s->rows, n - q, n);
		int64_t worst = 0;
		for (int64_t i = 1; i < n; i++)
			if (s->rows[i] > s->rows[worst] || !isfinite(s->rows[i]))
				worst = i;
		char a[16], b[16], c[16];
		fmt_sci(first, a, sizeof a, 8);
		fmt_sci(last, b, sizeof b, 8);
		fmt_sci(s->rows[worst], c, sizeof c, 8);
		x = draw_textf(w, y, 0, W, C_DIM, A_BOLD, "error per row (dim 0, rel_l2), %lld rows: ",
		               (long long)n);
		x += draw_textf(w, y, x, W - x, C_DEFAULT, 0, "first quarter %s, last quarter %s, "
		                "worst row %lld (%s)", a, b, (long long)worst, c);
		if (n >= 4 && isfinite(first) && isfinite(last) && last > 10 * first && last > 1e-3)
			draw_text(w, y, x, W - x, C_HILITE, A_BOLD, G("  → later rows drift", "  -> later rows drift"));
		draw_sparkline(s, w, y + 1, W);
	}
	tui_draw_pair_status(t, w, y0 + h - 2, s->pair);
}

static size_t tensor_selected(struct view *v, struct tui *t)
{
	struct tensor *s = v->priv;
	return s->pair;
}

static void tensor_note(struct view *v, struct tui *t, FILE *out)
{
	struct tensor *s = v->priv;
	if (!atomic_load(&s->done) || !s->same_numel)
		return;
	for (int i = 0; s->deq && i < s->n_companions; i++)
		fprintf(out, "Dequantized with %s\n", s->companions[i]);
	if (s->block_note[0])
		fprintf(out, "Scale blocks: %s\n\n", s->block_note);
	fprintf(out, "| top | index | ref | target | abs diff |\n|---|---|---|---|---|\n");
	for (int i = 0; i < s->ntop; i++) {
		char c[96];
		coords(s, s->top_idx[i], c, sizeof c);
		fprintf(out, "| %d | %s | %.6g | %.6g | %.6g |\n", i + 1, c, s->top_x[i], s->top_y[i],
		        s->top_abs[i]);
	}
	if (s->n_rows > 0) {
		fprintf(out, "\nPer-row rel_l2 (dim 0):");
		for (int64_t i = 0; i < s->n_rows && i < 64; i++)
			fprintf(out, " %.3g", s->rows[i]);
		fprintf(out, "%s\n", s->n_rows > 64 ? " …" : "");
	}
}

const struct view_ops tensor_view = {
	.name = "tensor",
	.keymap = KM_GENERIC,
	.private_size = sizeof(struct tensor),
	.open = tensor_open,
	.draw = tensor_draw,
	.done = tensor_done,
	.busy = tensor_busy,
	.selected = tensor_selected,
	.note_data = tensor_note,
};
