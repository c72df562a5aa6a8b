/* Aligning two runs' calls inside each layer (call_align.h): a weighted
 * longest common subsequence over the entries of one (phase, pass, rank,
 * layer), an entry matching another of the same name (call counters left
 * out) with weight 2 when the shapes agree too, 1 when only the name does.
 * The common head and tail are matched first, so only the part where the
 * runs differ costs a table. */
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

/* Align r[0..n) with t[0..m) (indices into the callers' arrays in rx, tx);
 * tmatch as in db_align_calls. 1 when too big to align, -1 on OOM. */
static int align_group(const tok *rt, const size_t *rx, size_t n, const tok *tt, const size_t *tx,
                       size_t m, long *tmatch)
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
	if (!a || !b) {
		for (size_t j = 0; j < b; j++)
			tmatch[tx[lo + j]] = -1;
		return 0;
	}
	if (a > DB_ALIGN_CELLS / b)
		return 1;
	size_t w = b + 1;
	int32_t *S = calloc((a + 1) * w, sizeof *S);
	if (!S)
		return -1;
	for (size_t i = 1; i <= a; i++)
		for (size_t j = 1; j <= b; j++) {
			int32_t best = S[(i - 1) * w + j] > S[i * w + j - 1] ? S[(i - 1) * w + j] : S[i * w + j - 1];
			int k = weight(&rt[rx[lo + i - 1]], &tt[tx[lo + j - 1]]);
			if (k && S[(i - 1) * w + j - 1] + k > best)
				best = S[(i - 1) * w + j - 1] + k;
			S[i * w + j] = best;
		}
	for (size_t j = 0; j < b; j++)
		tmatch[tx[lo + j]] = -1;
	for (size_t i = a, j = b; i && j;) {
		int k = weight(&rt[rx[lo + i - 1]], &tt[tx[lo + j - 1]]);
		if (k && S[i * w + j] == S[(i - 1) * w + j - 1] + k) {
			tmatch[tx[lo + j - 1]] = (long)rx[lo + i - 1];
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

static void group_key(const db_ifields *f, char *k, size_t len)
{
	snprintf(k, len, "%s\x1f%s\x1f%d\x1f%d", f->phase, f->pass, f->rank, f->layer);
}

int db_align_calls(const db_item *const *ri, size_t nri, const db_item *const *ti, size_t nti,
                   long *tmatch, bool *aligned, bool *ref_aligned)
{
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
		rc = align_group(rt, rx + rs[g], n, tt, tx + ts[g], m, tmatch);
		if (rc == 0) {
			for (size_t j = 0; j < m; j++)
				aligned[tx[ts[g] + j]] = true;
			for (size_t j = 0; ref_aligned && j < n; j++)
				ref_aligned[rx[rs[g] + j]] = true;
		} else if (rc == 1) {
			for (size_t j = 0; j < m; j++)
				tmatch[tx[ts[g] + j]] = -1;
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
