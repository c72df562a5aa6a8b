/* --align: two runs of the same tokens batched differently (issue 35). A
 * generation runs a prompt as a prefill and then one decode step per token;
 * a trainer's recompute, or a second request over the whole sequence, runs
 * all of them in one pass. Paired by pass name, the prefill faces the first
 * rows of the whole pass and every decode step faces nothing. Here the
 * passes are lined up from the data: in one phase, when one side has one
 * pass with token rows and the other several whose token counts add up to
 * it, the several are rows start..start+len-1 of the one, in pass order.
 * A pass's token count is the length of its positions (else input_ids), else
 * the token dim of its first layer tensor; where both sides dumped positions
 * (input_ids), their concatenation must equal the whole pass's, or the
 * passes are not the same tokens and nothing is aligned. The plan goes to
 * pairing (pair/align_items.h), which copies the whole pass's items once per
 * step. */
#include "db_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_reader.h"
#include "pair/align_items.h"
#include "pair/compare_priv.h"
#include "slots_priv.h"
#include "util/strmap.h"

const char *db_align_mode_name(int m)
{
	return m == DB_ALIGN_TOKENS ? "tokens" : m == DB_ALIGN_PASSES ? "passes" : "auto";
}

int db_align_mode_parse(const char *s)
{
	if (!strcmp(s, "auto"))
		return DB_ALIGN_AUTO;
	if (!strcmp(s, "tokens"))
		return DB_ALIGN_TOKENS;
	if (!strcmp(s, "passes") || !strcmp(s, "none"))
		return DB_ALIGN_PASSES;
	return -1;
}

/* One (phase, pass) of one side. */
typedef struct ppass {
	const char *phase, *pass;       /* interned */
	const db_item *pos, *ids;       /* positions, input_ids (1-D), first found */
	const db_item *cu;              /* cu_seqlens(_q): a packed batch's samples */
	int64_t rows;                   /* token dim of its first layer tensor, -1 */
} ppass;

typedef struct pside {
	ppass *p;
	size_t n, cap;
	db_strmap at;           /* the interned (phase, pass) pointers -> index */
} pside;

static ppass *pass_of(pside *s, const db_item *it)
{
	/* by a map: a linear search was items x passes (20k passes: 0.7 s) */
	char k[48];
	snprintf(k, sizeof k, "%p\x1f%p", (const void *)it->f.phase, (const void *)it->f.pass);
	size_t *at = db_strmap_get(&s->at, k);
	if (at)
		return &s->p[*at];
	if (!db_strmap_put(&s->at, k, s->n, NULL))
		return NULL;
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 16;
		ppass *np = realloc(s->p, nc * sizeof *np);
		if (!np)
			return NULL;
		s->p = np;
		s->cap = nc;
	}
	ppass *p = &s->p[s->n++];
	memset(p, 0, sizeof *p);
	p->phase = it->f.phase;
	p->pass = it->f.pass;
	p->rows = -1;
	return p;
}

/* An integer tensor of one row of values: every dim but one is 1. */
static bool flat(const db_item *it)
{
	int big = 0;
	for (int i = 0; i < it->ndim; i++)
		big += it->shape[i] != 1;
	return it->ndim >= 1 && big <= 1 && db_slots_is_int(it->dtype);
}

static int64_t numel_of(const db_item *it)
{
	int64_t n = 1;
	for (int i = 0; i < it->ndim; i++)
		n *= it->shape[i];
	return n;
}

/* The values of a flat integer tensor into *v (malloc'd); its length, or -1. */
static int64_t load_flat(const db_index *ix, const db_item *it, int64_t **v)
{
	*v = NULL;
	if (!it || it->err || !flat(it))
		return -1;
	char *path = db_index_path(ix, it);
	db_file *f = NULL;
	db_err err = {{0}};
	int64_t n = -1;
	if (path && db_file_open(path, &f, &err) == 0) {
		const db_entry *en = db_file_find(f, it->key);
		int64_t m = en && !en->err ? db_tensor_numel(&en->t) : -1;
		if (m >= 0 && m == numel_of(it) && (*v = malloc((size_t)(m + 1) * sizeof **v))) {
			n = m;
			for (int64_t i = 0; i < n; i++)
				(*v)[i] = (int64_t)db_decode1_f64(en->t.dtype,
				                                  en->t.data + db_tensor_elem_offset(&en->t, i),
				                                  en->t.swap);
		}
		db_file_close(f);
	}
	free(path);
	return n;
}

static int list_passes(const db_compare *c, const db_index *ix, pside *s)
{
	memset(s, 0, sizeof *s);
	db_strmap_init(&s->at);
	for (size_t i = 0; i < ix->n_items; i++) {
		const db_item *it = &ix->items[i];
		if (it->err || !it->f.pass[0])
			continue;
		ppass *p = pass_of(s, it);
		if (!p)
			return -1;
		bool one_d = it->ndim == 1 && db_slots_is_int(it->dtype);
		if (one_d && !p->pos && db_slots_named(it->f.stage, "positions"))
			p->pos = it;
		else if (flat(it) && !p->ids && (db_slots_named(it->f.stage, "input_ids") ||
		                                 db_profile_is_input_ids(c->profile, it->f.stage)))
			p->ids = it;    /* [t] or [1, t] (a trainer's packed batch) */
		else if (one_d && !p->cu && (db_slots_named(it->f.stage, "cu_seqlens_q") ||
		                             db_slots_named(it->f.stage, "cu_seqlens")))
			p->cu = it;     /* THD packing: [0, t0, t0+t1, ...] */
		else if (p->rows < 0 && it->f.layer >= 0 && it->ndim >= 1 &&
		         !db_slots_is_int(it->dtype)) {
			int d = c->profile ? db_profile_token_dim(c->profile, it->f.stage) : -1;
			p->rows = it->shape[d >= 0 && d < it->ndim ? d : 0];
		}
	}
	return 0;
}

static int64_t count_of(const ppass *p)
{
	return p->pos ? p->pos->shape[0] : p->ids ? numel_of(p->ids) : p->rows;
}

static const char *pass_name(const void *s, size_t i)
{
	return ((const pside *)s)->p[i].pass;
}

/* Indices of s's passes of phase with a token count, in pass order. */
static size_t phase_passes(const pside *s, const char *phase, size_t *out)
{
	size_t m = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].phase == phase && count_of(&s->p[i]) > 0)
			out[m++] = i;
	db_sort_passes(out, m, pass_name, s);
	return m;
}

/* The steps' field (positions: 1, input_ids: 0) concatenated equals the
 * whole pass's: 1 yes, 0 no (*at: the first token that differs), -1 not
 * dumped on every pass of both sides. */
static int same_tokens(const db_compare *c, int whole, const ppass *w, const pside *s,
                       const size_t *idx, size_t n, bool pos, int64_t *at)
{
	const db_item *wi = pos ? w->pos : w->ids;
	if (!wi)
		return -1;
	for (size_t k = 0; k < n; k++)
		if (!(pos ? s->p[idx[k]].pos : s->p[idx[k]].ids))
			return -1;
	const db_index *wix = whole == 1 ? c->ref : c->tgt, *six = whole == 1 ? c->tgt : c->ref;
	int64_t *wv = NULL;
	int64_t wn = load_flat(wix, wi, &wv), off = 0;
	int rc = wn > 0 ? 1 : -1;
	for (size_t k = 0; k < n && rc == 1; k++) {
		int64_t *v = NULL;
		int64_t m = load_flat(six, pos ? s->p[idx[k]].pos : s->p[idx[k]].ids, &v);
		if (m < 0)
			rc = -1;
		for (int64_t i = 0; i < m && rc == 1; i++)
			if (off + i >= wn || v[i] != wv[off + i]) {
				*at = off + i;
				rc = 0;
			}
		off += m > 0 ? m : 0;
		free(v);
	}
	if (rc == 1 && off != wn) {
		*at = off;
		rc = 0;
	}
	free(wv);
	return rc;
}

static const char *side_name(int s)
{
	return s == 1 ? "reference" : "target";
}

/* Try phase ph with side `whole` as the one pass. 1 aligned (group added to
 * a), 0 not (why in note when it says something), -1 OOM. */
static int try_phase(db_compare *c, db_align *a, int whole, const pside *ps, const char *ph,
                     size_t *wi, size_t *si, char *note, size_t nl)
{
	const pside *W = &ps[whole - 1], *S = &ps[2 - whole];
	size_t nw = phase_passes(W, ph, wi), ns = phase_passes(S, ph, si);
	if (nw != 1 || ns < 2)
		return 0;
	const ppass *w = &W->p[wi[0]];
	int64_t total = 0, n_tok = count_of(w);
	for (size_t k = 0; k < ns; k++)
		total += count_of(&S->p[si[k]]);
	const char *by = w->pos ? "positions" : w->ids ? "input_ids" : "token rows";
	if (total != n_tok) {
		snprintf(note, nl, "not aligned: the %s's %zu passes hold %lld tokens, the %s's pass "
		         "%s %lld (%s)", side_name(3 - whole), ns, (long long)total, side_name(whole),
		         w->pass, (long long)n_tok, by);
		return 0;
	}
	for (int pos = 1; pos >= 0; pos--) {
		int64_t at = -1;
		if (same_tokens(c, whole, w, S, si, ns, pos, &at) == 0) {
			snprintf(note, nl, "not aligned: the %s's passes concatenated differ from the %s's "
			         "pass %s in %s at token %lld", side_name(3 - whole), side_name(whole),
			         w->pass, pos ? "positions" : "input_ids", (long long)at);
			return 0;
		}
	}
	db_align_group *ng = realloc(a->g, (a->n_g + 1) * sizeof *ng);
	if (!ng)
		return -1;
	a->g = ng;
	db_align_group *g = &a->g[a->n_g];
	memset(g, 0, sizeof *g);
	if (!(g->steps = calloc(ns, sizeof *g->steps)))
		return -1;
	a->n_g++;
	g->phase = ph;
	g->whole_pass = w->pass;
	g->n_tokens = n_tok;
	g->n_steps = ns;
	g->exact = true;
	int64_t off = 0;
	size_t o = 0;
	o += (size_t)snprintf(note + o, nl - o, "%s: %s passes %s-%s (", by, side_name(3 - whole),
	                      S->p[si[0]].pass, S->p[si[ns - 1]].pass);
	for (size_t k = 0; k < ns; k++) {
		g->steps[k].pass = S->p[si[k]].pass;
		g->steps[k].start = off;
		g->steps[k].len = count_of(&S->p[si[k]]);
		off += g->steps[k].len;
		if (o < nl && (k < 6 || k + 1 == ns))
			o += (size_t)snprintf(note + o, nl - o, "%s%lld", k ? "+" : "",
			                      (long long)g->steps[k].len);
		else if (o < nl && k == 6)
			o += (size_t)snprintf(note + o, nl - o, "+...");
	}
	if (o < nl)
		snprintf(note + o, nl - o, " tokens) = %s pass %s (%lld)", side_name(whole), w->pass,
		         (long long)n_tok);
	return 1;
}

/* By request: side 3-whole generated several sequences (each a prefill and
 * its decode steps: a request starts where the positions start again at
 * 0, or, without positions, at a pass of several tokens), side `whole` ran
 * them in fewer passes (a trainer's packed micro-batches). A request is
 * the rows of a whole pass that begin with its input_ids: where that pass
 * dumped cu_seqlens (THD packing), at the start of one of its samples (a
 * micro-batch of several samples; the padding is a sample of its own that
 * no request begins), else at the first place after the rows the requests
 * before it took. After a request's rows come the last response token
 * the engine never ran and the padding: compared with nothing. Only when
 * the whole side has fewer passes and a request has two passes or more (a
 * generation), so that runs batched alike are never paired any other way
 * than by name. 1 aligned (one group per whole pass matched), 0 not (why in
 * note), -1 OOM. */
typedef struct seqs {
	int64_t **wv, *wn;      /* each whole pass's input_ids and its length */
	int64_t **cu, *ncu;     /* its cu_seqlens (NULL: not dumped) */
	int64_t *cursor;        /* without cu_seqlens: its first row not taken */
	bool **seg_used;        /* with: its samples taken */
	size_t *req, *pass_of;  /* request r's first pass (in si); its whole pass (in wi) */
	int64_t *at, *len;      /* request r's first row in that pass, its token count */
	int64_t *cat;           /* a request's input_ids concatenated */
} seqs;

static void seqs_free(seqs *q, size_t nw)
{
	for (size_t k = 0; k < nw; k++) {
		free(q->wv ? q->wv[k] : NULL);
		free(q->cu ? q->cu[k] : NULL);
		free(q->seg_used ? q->seg_used[k] : NULL);
	}
	free(q->wv);
	free(q->wn);
	free(q->cu);
	free(q->ncu);
	free(q->cursor);
	free(q->seg_used);
	free(q->req);
	free(q->pass_of);
	free(q->at);
	free(q->len);
	free(q->cat);
}

/* The row where whole pass k holds the len tokens of cat, taking it; -1 none. */
static int64_t take_rows(seqs *q, size_t k, const int64_t *cat, int64_t len)
{
	const int64_t *w = q->wv[k];
	if (q->cu[k]) {
		for (int64_t j = 0; j + 1 < q->ncu[k]; j++) {
			int64_t s = q->cu[k][j], e = q->cu[k][j + 1];
			if (!q->seg_used[k][j] && s >= 0 && e <= q->wn[k] && e - s >= len &&
			    !memcmp(w + s, cat, (size_t)len * sizeof *cat)) {
				q->seg_used[k][j] = true;
				return s;
			}
		}
		return -1;
	}
	/* no samples dumped: the first place after the requests before it (a
	 * packed sample is followed by the token the engine never ran) */
	for (int64_t s = q->cursor[k]; s + len <= q->wn[k]; s++)
		if (!memcmp(w + s, cat, (size_t)len * sizeof *cat)) {
			q->cursor[k] = s + len;
			return s;
		}
	return -1;
}

static int try_sequences(db_compare *c, db_align *a, int whole, const pside *ps,
                         const char *ph, size_t *wi, size_t *si, char *note, size_t nl)
{
	const pside *W = &ps[whole - 1], *S = &ps[2 - whole];
	size_t nw = phase_passes(W, ph, wi), ns = phase_passes(S, ph, si);
	if (nw < 1 || nw >= ns)
		return 0;       /* runs batched alike have as many passes a side */
	const db_index *wix = whole == 1 ? c->ref : c->tgt, *six = whole == 1 ? c->tgt : c->ref;
	int rc = 0;
	seqs q;
	memset(&q, 0, sizeof q);
	q.wv = calloc(nw, sizeof *q.wv);
	q.wn = calloc(nw, sizeof *q.wn);
	q.cu = calloc(nw, sizeof *q.cu);
	q.ncu = calloc(nw, sizeof *q.ncu);
	q.cursor = calloc(nw, sizeof *q.cursor);
	q.seg_used = calloc(nw, sizeof *q.seg_used);
	q.req = calloc(ns + 1, sizeof *q.req);
	q.pass_of = calloc(ns + 1, sizeof *q.pass_of);
	q.at = calloc(ns + 1, sizeof *q.at);
	q.len = calloc(ns + 1, sizeof *q.len);
	if (!q.wv || !q.wn || !q.cu || !q.ncu || !q.cursor || !q.seg_used || !q.req || !q.pass_of ||
	    !q.at || !q.len) {
		rc = -1;
		goto out;
	}
	for (size_t k = 0; k < nw; k++) {
		if ((q.wn[k] = load_flat(wix, W->p[wi[k]].ids, &q.wv[k])) < 0)
			goto out;       /* a whole pass without input_ids: nothing to match */
		if ((q.ncu[k] = load_flat(wix, W->p[wi[k]].cu, &q.cu[k])) < 2) {
			free(q.cu[k]);
			q.cu[k] = NULL;
		} else if (!(q.seg_used[k] = calloc((size_t)q.ncu[k], sizeof **q.seg_used))) {
			rc = -1;
			goto out;
		}
	}
	/* the requests: req[r] = the index (in si) of request r's first pass */
	size_t nr = 0, longest = 0, total = 0;
	for (size_t k = 0; k < ns; k++) {
		const ppass *p = &S->p[si[k]];
		if (!p->ids)
			goto out;
		int64_t *pv = NULL;
		bool starts = k == 0;
		if (!starts && p->pos && load_flat(six, p->pos, &pv) > 0)
			starts = pv[0] == 0;
		else if (!starts && !p->pos)
			starts = numel_of(p->ids) > 1;
		free(pv);
		if (starts)
			q.req[nr++] = k;
		if (k + 1 - q.req[nr - 1] > longest)
			longest = k + 1 - q.req[nr - 1];
		total += (size_t)numel_of(p->ids);
	}
	q.req[nr] = ns;
	if (longest < 2 || !(q.cat = malloc((total + 1) * sizeof *q.cat))) {
		rc = longest < 2 ? 0 : -1;
		goto out;
	}
	for (size_t r = 0; r < nr; r++) {
		int64_t len = 0;
		for (size_t k = q.req[r]; k < q.req[r + 1]; k++) {
			int64_t *v = NULL, m = load_flat(six, S->p[si[k]].ids, &v);
			if (m > 0)
				memcpy(q.cat + len, v, (size_t)m * sizeof *v);
			len += m > 0 ? m : 0;
			free(v);
		}
		int64_t at = -1;
		size_t k = 0;
		for (; k < nw && (at = take_rows(&q, k, q.cat, len)) < 0; k++)
			;
		if (k == nw) {
			snprintf(note, nl, "not aligned: the %s's request of passes %s-%s (%lld tokens) "
			         "begins no %s of the %s (input_ids%s)", side_name(3 - whole),
			         S->p[si[q.req[r]]].pass, S->p[si[q.req[r + 1] - 1]].pass, (long long)len,
			         q.cu[0] ? "packed sample" : "pass", side_name(whole),
			         q.cu[0] ? ", cu_seqlens" : "");
			goto out;
		}
		q.pass_of[r] = k;
		q.at[r] = at;
		q.len[r] = len;
	}
	/* every request found its rows: one group per whole pass, its steps the
	 * passes of the requests it holds, in the stepping side's order */
	size_t o = (size_t)snprintf(note, nl, "input_ids%s, by request:",
	                            q.cu[0] ? " and cu_seqlens" : ""), said = 0;
	for (size_t k = 0; k < nw; k++) {
		size_t n = 0, in_k = 0;
		for (size_t r = 0; r < nr; r++) {
			n += q.pass_of[r] == k ? q.req[r + 1] - q.req[r] : 0;
			in_k += q.pass_of[r] == k;
		}
		if (!n)
			continue;
		db_align_group *ng = realloc(a->g, (a->n_g + 1) * sizeof *ng);
		if (!ng) {
			rc = -1;
			goto out;
		}
		a->g = ng;
		db_align_group *g = &a->g[a->n_g];
		memset(g, 0, sizeof *g);
		if (!(g->steps = calloc(n, sizeof *g->steps))) {
			rc = -1;
			goto out;
		}
		a->n_g++;
		g->phase = ph;
		g->whole_pass = W->p[wi[k]].pass;
		g->n_tokens = q.wn[k];
		int64_t held = 0;
		for (size_t r = 0; r < nr; r++) {
			if (q.pass_of[r] != k)
				continue;
			int64_t off = q.at[r];
			for (size_t j = q.req[r]; j < q.req[r + 1]; j++) {
				const ppass *p = &S->p[si[j]];
				db_align_step *st = &g->steps[g->n_steps++];
				st->pass = p->pass;
				st->start = off;
				st->len = numel_of(p->ids);
				off += st->len;
			}
			held += q.len[r];
			if (o >= nl)
				continue;
			o += (size_t)snprintf(note + o, nl - o, "%s %s passes %s-%s (%lld tokens) = %s "
			                      "pass %s", said++ ? ";" : "",
			                      side_name(3 - whole), S->p[si[q.req[r]]].pass,
			                      S->p[si[q.req[r + 1] - 1]].pass, (long long)q.len[r],
			                      side_name(whole), g->whole_pass);
			if (o < nl && (in_k > 1 || q.at[r]))
				o += (size_t)snprintf(note + o, nl - o, " rows %lld-%lld",
				                      (long long)q.at[r], (long long)(q.at[r] + q.len[r] - 1));
		}
		g->exact = held == g->n_tokens;
		if (o < nl)
			o += (size_t)snprintf(note + o, nl - o, " (%lld rows%s)", (long long)g->n_tokens,
			                      g->exact ? "" : ", the rest compared with nothing");
	}
	rc = 1;
out:
	seqs_free(&q, nw);
	return rc;
}

int db_align_prepare(db_compare *c, int mode, db_err *err)
{
	c->align = NULL;
	c->align_whole = 0;
	c->align_note[0] = 0;
	if (mode == DB_ALIGN_PASSES) {
		snprintf(c->align_note, sizeof c->align_note, "--align passes: passes paired by name");
		return 0;
	}
	const db_cmp_priv *pr = c->priv;
	if (pr->n_slots || !c->ref || !c->tgt || c->ref == c->tgt)
		return 0;       /* --slots aligns passes its own way (slots_alone.c) */
	pside ps[2];
	memset(ps, 0, sizeof ps);
	db_align *a = calloc(1, sizeof *a);
	size_t *wi = NULL, *si = NULL;
	int rc = -1;
	if (!a || list_passes(c, c->ref, &ps[0]) || list_passes(c, c->tgt, &ps[1]))
		goto oom;
	size_t most = ps[0].n > ps[1].n ? ps[0].n : ps[1].n;
	wi = malloc((most + 1) * sizeof *wi);
	si = malloc((most + 1) * sizeof *si);
	if (!wi || !si)
		goto oom;
	char why[384] = "", note[384];
	/* each phase once, in the reference's order; the whole side is the one
	 * the first aligned phase found (a second orientation is left as is) */
	const char *done[64];   /* phases tried (a tree has a few) */
	size_t n_done = 0;
	for (size_t i = 0; i < ps[0].n; i++) {
		const char *ph = ps[0].p[i].phase;
		bool seen = false;
		for (size_t j = 0; j < n_done && !seen; j++)
			seen = done[j] == ph;
		if (seen)
			continue;
		if (n_done < sizeof done / sizeof done[0])
			done[n_done++] = ph;
		for (int whole = 1; whole <= 2; whole++) {
			if (a->whole && a->whole != whole)
				continue;
			note[0] = 0;
			int r = try_phase(c, a, whole, ps, ph, wi, si, note, sizeof note);
			if (r == 0) {
				char n2[384] = "";
				r = try_sequences(c, a, whole, ps, ph, wi, si, n2, sizeof n2);
				if (r == 1 || (n2[0] && !note[0]))
					snprintf(note, sizeof note, "%s", n2);
			}
			if (r < 0)
				goto oom;
			if (r == 1) {
				a->whole = whole;
				if (!c->align_note[0])
					snprintf(c->align_note, sizeof c->align_note, "%s", note);
				break;
			}
			if (note[0] && !why[0])
				snprintf(why, sizeof why, "%s", note);
		}
	}
	if (!a->n_g) {
		db_align_free(a);
		a = NULL;
		snprintf(c->align_note, sizeof c->align_note, "%s", why);
		if (mode == DB_ALIGN_TOKENS) {
			rc = db_err_set(err, NULL, NULL, -1, "--align tokens: no side's passes add up to "
			                "one pass of the other side%s%s", why[0] ? ": " : "", why);
			goto out;
		}
	}
	c->align = a;
	c->align_whole = a ? a->whole : 0;
	a = NULL;
	rc = 0;
	goto out;
oom:
	rc = db_err_set(err, NULL, NULL, -1, "out of memory");
out:
	db_align_free(a);
	free(wi);
	free(si);
	for (int k = 0; k < 2; k++) {
		free(ps[k].p);
		db_strmap_free(&ps[k].at);
	}
	return rc;
}
