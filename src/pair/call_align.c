/* Aligning two runs' calls inside each layer (call_align.h): a weighted
 * longest common subsequence over the entries of one (phase, pass, rank,
 * layer), an entry matching another of the same name (call counters left
 * out) with weight 2 when the shapes agree too, 1 when only the name does.
 * The common head and tail are matched first, so only the part where the
 * runs differ costs a table; a part too large for a table is aligned in
 * linear space (Hirschberg). */
#include "call_align.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

void db_call_name(const char *stage, char *buf, size_t len)
{
	size_t o = 0;
	for (const char *s = stage; *s && o + 1 < len; s++) {
		if (*s == '#' && s[1] >= '0' && s[1] <= '9') {
			const char *e = s + 1;
			while (*e >= '0' && *e <= '9')
				e++;
			if (!*e || *e == '.') {
				s = e - 1;
				continue;
			}
		}
		buf[o++] = *s;
	}
	buf[o] = 0;
}

typedef struct tok {
	uint64_t h;             /* hash of the name without counters */
	char *name;
	const db_item *it;
} tok;

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static int weight(const tok *a, const tok *b)
{
	if (a->h != b->h || strcmp(a->name, b->name))
		return 0;
	if (a->it->ndim != b->it->ndim)
		return 1;
	for (int d = 0; d < a->it->ndim; d++)
		if (a->it->shape[d] != b->it->shape[d])
			return 1;
	return 2;
}

static int make_tok(tok *t, const db_item *it)
{
	char b[DB_CALL_NAME_MAX];
	db_call_name(it->f.stage, b, sizeof b);
	t->it = it;
	t->h = fnv(b);
	return (t->name = strdup(b)) ? 0 : -1;
}

/* One group's two sides: tok arrays and the indices of its entries. */
typedef struct side2 {
	const tok *rt, *tt;
	const size_t *rx, *tx;
	long *tmatch;
} side2;

static int w_at(const side2 *g, size_t i, size_t j)
{
	return weight(&g->rt[g->rx[i]], &g->tt[g->tx[j]]);
}

/* The table over r[i0, i0+a) x t[j0, j0+b) and its traceback (ties go to
 * the latest match, as a diff's); tmatch of matched entries set. -1 OOM. */
static int dp_block(const side2 *g, size_t i0, size_t a, size_t j0, size_t b)
{
	size_t w = b + 1;
	int32_t *S = calloc((a + 1) * w, sizeof *S);
	if (!S)
		return -1;
	for (size_t i = 1; i <= a; i++)
		for (size_t j = 1; j <= b; j++) {
			int32_t best = S[(i - 1) * w + j] > S[i * w + j - 1] ? S[(i - 1) * w + j] : S[i * w + j - 1];
			int k = w_at(g, i0 + i - 1, j0 + j - 1);
			if (k && S[(i - 1) * w + j - 1] + k > best)
				best = S[(i - 1) * w + j - 1] + k;
			S[i * w + j] = best;
		}
	for (size_t i = a, j = b; i && j;) {
		int k = w_at(g, i0 + i - 1, j0 + j - 1);
		if (k && S[i * w + j] == S[(i - 1) * w + j - 1] + k) {
			g->tmatch[g->tx[j0 + j - 1]] = (long)g->rx[i0 + i - 1];
			i--, j--;
		} else if (S[i * w + j] == S[(i - 1) * w + j]) {
			i--;
		} else {
			j--;
		}
	}
	free(S);
	return 0;
}

/* F[j], j = 0..b: the best score of r[i0, i1) against t[j0, j0 + j). */
static void fwd_row(const side2 *g, size_t i0, size_t i1, size_t j0, size_t b, int32_t *F)
{
	memset(F, 0, (b + 1) * sizeof *F);
	for (size_t i = i0; i < i1; i++) {
		int32_t diag = 0;
		for (size_t j = 1; j <= b; j++) {
			int32_t up = F[j], best = up > F[j - 1] ? up : F[j - 1];
			int k = w_at(g, i, j0 + j - 1);
			if (k && diag + k > best)
				best = diag + k;
			diag = up;
			F[j] = best;
		}
	}
}

/* B[j], j = 0..b: the best score of r[i0, i1) against t[j0 + j, j0 + b). */
static void bwd_row(const side2 *g, size_t i0, size_t i1, size_t j0, size_t b, int32_t *B)
{
	memset(B, 0, (b + 1) * sizeof *B);
	for (size_t i = i1; i-- > i0;) {
		int32_t diag = 0;
		for (size_t j = b; j-- > 0;) {
			int32_t up = B[j], best = up > B[j + 1] ? up : B[j + 1];
			int k = w_at(g, i, j0 + j);
			if (k && diag + k > best)
				best = diag + k;
			diag = up;
			B[j] = best;
		}
	}
}

/* Blocks up to this many cells take the table; larger ones are split. */
#define LEAF_CELLS ((size_t)1 << 16)

/* Hirschberg's split: r's middle row meets t where the forward and the
 * backward scores sum best; each half is aligned on its own. Space O(b),
 * time about twice the table's. F, B: b + 1 each (reused down the calls). */
static int hirsch(const side2 *g, size_t i0, size_t a, size_t j0, size_t b, int32_t *F,
                  int32_t *B)
{
	if (!a || !b)
		return 0;
	if (a == 1 || a * b <= LEAF_CELLS)
		return dp_block(g, i0, a, j0, b);
	size_t mid = a / 2;
	fwd_row(g, i0, i0 + mid, j0, b, F);
	bwd_row(g, i0 + mid, i0 + a, j0, b, B);
	size_t cut = 0;
	for (size_t j = 1; j <= b; j++)
		if (F[j] + B[j] >= F[cut] + B[cut])
			cut = j;
	if (hirsch(g, i0, mid, j0, cut, F, B) < 0)
		return -1;
	return hirsch(g, i0 + mid, a - mid, j0 + cut, b - cut, F, B);
}

/* Align r[0..n) with t[0..m) (indices into the callers' arrays in rx, tx);
 * tmatch as in db_align_calls. *budget: cells the alignment may still
 * spend. 1 when past it (the group pairs by names), -1 on OOM. */
static int align_group(const tok *rt, const size_t *rx, size_t n, const tok *tt, const size_t *tx,
                       size_t m, long *tmatch, uint64_t *budget)
{
	size_t lo = 0;
	while (lo < n && lo < m && weight(&rt[rx[lo]], &tt[tx[lo]]) == 2)
		lo++;
	size_t hn = n, hm = m;
	while (hn > lo && hm > lo && weight(&rt[rx[hn - 1]], &tt[tx[hm - 1]]) == 2)
		hn--, hm--;
	for (size_t i = 0; i < lo; i++)
		tmatch[tx[i]] = (long)rx[i];
	for (size_t i = 0; i < n - hn; i++)
		tmatch[tx[hm + i]] = (long)rx[hn + i];
	size_t a = hn - lo, b = hm - lo;
	for (size_t j = 0; j < b; j++)
		tmatch[tx[lo + j]] = -1;
	if (!a || !b)
		return 0;
	side2 g = {rt, tt, rx, tx, tmatch};
	if (a <= DB_ALIGN_CELLS / b)    /* the table: small enough to hold */
		return dp_block(&g, lo, a, lo, b);
	/* Larger: in linear space (issue 37: past 2^22 cells, ~2,048 calls a
	 * layer, the calls were paired by their counters, and one insert made
	 * 3,001 false shape mismatches in 3,000 calls). Time still grows as
	 * a x b: bounded by the budget, past which the group says so. */
	if (a > *budget / 2 / b)
		return 1;
	*budget -= 2 * (uint64_t)a * b;
	int32_t *F = malloc((b + 1) * sizeof *F), *B = malloc((b + 1) * sizeof *B);
	int rc = F && B ? hirsch(&g, lo, a, lo, b, F, B) : -1;
	free(F);
	free(B);
	return rc;
}

static void group_key(const db_ifields *f, char *k, size_t len)
{
	snprintf(k, len, "%s\x1f%s\x1f%d\x1f%d", f->phase, f->pass, f->rank, f->layer);
}

int db_align_calls(const db_item *const *ri, size_t nri, const db_item *const *ti, size_t nti,
                   long *tmatch, bool *aligned, bool *ref_aligned, db_align_fallback *fb)
{
	uint64_t budget = DB_ALIGN_BUDGET;
	if (fb)
		memset(fb, 0, sizeof *fb);
	int rc = -1;
	db_strmap groups;
	db_strmap_init(&groups);
	tok *rt = calloc(nri + 1, sizeof *rt), *tt = calloc(nti + 1, sizeof *tt);
	size_t *rg = malloc((nri + 1) * sizeof *rg), *tg = malloc((nti + 1) * sizeof *tg);
	size_t *rx = malloc((nri + 1) * sizeof *rx), *tx = malloc((nti + 1) * sizeof *tx);
	size_t ng = 0;
	if (!rt || !tt || !rg || !tg || !rx || !tx)
		goto out;
	for (size_t i = 0; i < nti; i++) {
		tmatch[i] = -1;
		aligned[i] = false;
	}
	for (size_t i = 0; ref_aligned && i < nri; i++)
		ref_aligned[i] = false;
	/* the groups, numbered in the reference's order */
	for (size_t i = 0; i < nri; i++) {
		char k[128];
		bool added;
		group_key(&ri[i]->f, k, sizeof k);
		size_t *g = db_strmap_put(&groups, k, ng, &added);
		if (!g || make_tok(&rt[i], ri[i]))
			goto out;
		ng += added;
		rg[i] = *g;
	}
	for (size_t i = 0; i < nti; i++) {
		char k[128];
		group_key(&ti[i]->f, k, sizeof k);
		size_t *g = db_strmap_get(&groups, k);
		tg[i] = g ? *g : SIZE_MAX;
		if (g && make_tok(&tt[i], ti[i]))
			goto out;
	}
	/* each group's entries in order (counting sort by group) */
	size_t *rs = calloc(ng + 1, sizeof *rs), *ts = calloc(ng + 1, sizeof *ts);
	if (!rs || !ts) {
		free(rs);
		free(ts);
		goto out;
	}
	for (size_t i = 0; i < nri; i++)
		rs[rg[i] + 1]++;
	for (size_t i = 0; i < nti; i++)
		if (tg[i] != SIZE_MAX)
			ts[tg[i] + 1]++;
	for (size_t g = 0; g < ng; g++) {
		rs[g + 1] += rs[g];
		ts[g + 1] += ts[g];
	}
	size_t *rp = malloc((ng + 1) * sizeof *rp), *tp = malloc((ng + 1) * sizeof *tp);
	if (!rp || !tp) {
		free(rp);
		free(tp);
		free(rs);
		free(ts);
		goto out;
	}
	memcpy(rp, rs, (ng + 1) * sizeof *rp);
	memcpy(tp, ts, (ng + 1) * sizeof *tp);
	for (size_t i = 0; i < nri; i++)
		rx[rp[rg[i]]++] = i;
	for (size_t i = 0; i < nti; i++)
		if (tg[i] != SIZE_MAX)
			tx[tp[tg[i]]++] = i;
	rc = 0;
	for (size_t g = 0; g < ng && rc >= 0; g++) {
		size_t n = rs[g + 1] - rs[g], m = ts[g + 1] - ts[g];
		if (!m)
			continue;
		rc = align_group(rt, rx + rs[g], n, tt, tx + ts[g], m, tmatch, &budget);
		if (rc == 0) {
			for (size_t j = 0; j < m; j++)
				aligned[tx[ts[g] + j]] = true;
			for (size_t j = 0; ref_aligned && j < n; j++)
				ref_aligned[rx[rs[g] + j]] = true;
		} else if (rc == 1) {
			for (size_t j = 0; j < m; j++)
				tmatch[tx[ts[g] + j]] = -1;
			if (fb) {
				fb->groups++;
				fb->calls += n + m;
				if ((uint64_t)n * m > (uint64_t)fb->ref_calls * fb->tgt_calls) {
					fb->ref_calls = n;
					fb->tgt_calls = m;
				}
			}
			rc = 0;
		}
	}
	free(rp);
	free(tp);
	free(rs);
	free(ts);
out:
	for (size_t i = 0; rt && i < nri; i++)
		free(rt[i].name);
	for (size_t i = 0; tt && i < nti; i++)
		free(tt[i].name);
	free(rt);
	free(tt);
	free(rg);
	free(tg);
	free(rx);
	free(tx);
	db_strmap_free(&groups);
	return rc;
}
