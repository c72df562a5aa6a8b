/* The layer bisect state machine: pure, no I/O. All derived state is
 * recomputed from the step log (see db_bisect.h). */
#include "db_bisect.h"

#include "db_rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect_priv.h"
#include "db_dequant.h"

const char *db_verdict_name(db_verdict v)
{
	switch (v) {
	case DB_V_GOOD: return "good";
	case DB_V_BAD: return "bad";
	case DB_V_SKIP: return "skip";
	default: return "none";
	}
}

bool db_verdict_parse(const char *s, db_verdict *v)
{
	static const db_verdict all[] = {DB_V_GOOD, DB_V_BAD, DB_V_SKIP, DB_V_NONE};
	for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++)
		if (!strcmp(s, db_verdict_name(all[i]))) {
			*v = all[i];
			return all[i] != DB_V_NONE;
		}
	*v = DB_V_NONE;
	return false;
}

/* ------------------------------------------------------------ predicate */

void db_predicate_default(db_predicate *p)
{
	p->rules = NULL;
	p->kind = DB_PRED_BAND;
	p->worst_good = DB_BAND_OK;
	p->cos_min = NAN;
	p->rel_max = NAN;
	p->beyond_drift = false;
}

db_verdict db_predicate_eval(const db_predicate *p, const db_metrics *m,
                             db_band b)
{
	if (b == DB_BAND_NONE)
		return DB_V_NONE;
	if (p->kind == DB_PRED_BAND)
		return b > p->worst_good ? DB_V_BAD : DB_V_GOOD;
	if (isnan(m->cos) || m->nonfinite_mismatch > 0)
		return DB_V_BAD;
	if (!isnan(p->cos_min) && m->cos < p->cos_min)
		return DB_V_BAD;
	if (!isnan(p->rel_max) && !(m->rel <= p->rel_max))
		return DB_V_BAD;
	return DB_V_GOOD;
}

/* Machine epsilon of a float dtype (2^-mantissa bits); 0 for others. */
static double dtype_eps(db_dtype d)
{
	switch (d) {
	case DB_DT_BF16: return 0x1p-7;
	case DB_DT_F16: return 0x1p-10;
	case DB_DT_F32: return 0x1p-23;
	case DB_DT_F64: return 0x1p-52;
	case DB_DT_F8_E4M3FN: case DB_DT_F8_E4M3FNUZ: return 0x1p-3;
	case DB_DT_F8_E5M2: case DB_DT_F8_E5M2FNUZ: return 0x1p-2;
	default: return 0;
	}
}

db_verdict db_predicate_eval_pair(const db_predicate *pr, const db_pair *p, bool strict)
{
	if (pr->kind == DB_PRED_RULES) {        /* the CI gate's rules, and nothing else */
		db_gate g;
		int rule;
		if (atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire) != DB_PAIR_DONE ||
		    db_rules_judge(pr->rules, p, &g, &rule, NULL) < 0)
			return DB_V_NONE;
		return g == DB_GATE_PASSED ? DB_V_GOOD : g == DB_GATE_FAILED ? DB_V_BAD : DB_V_NONE;
	}
	if (pr->kind == DB_PRED_BAND && pr->worst_good == DB_BAND_OK &&
	    (p->noise == DB_NOISE_WITHIN || p->noise == DB_NOISE_BEYOND))
		return p->noise == DB_NOISE_BEYOND ? DB_V_BAD : DB_V_GOOD;
	/* a slot of the same prompt in one batch: any bit off is bad (the
	 * default predicate; --cos / --rel / --band still choose) */
	if (pr->kind == DB_PRED_BAND && pr->worst_good == DB_BAND_OK &&
	    db_pair_judged_bitwise(p) && p->status == DB_ST_OK)
		return p->m.byte_equal == 1.0 ? DB_V_GOOD : DB_V_BAD;
	/* no noise run: a pair across layouts (TP 1 vs 2, a replica or an
	 * unsharded merge) drifts by reduction order, a few ulps of the
	 * largest value of the coarser dtype (bf16: 2-4 x 2^-8 of max|x|, the
	 * drift band); the default predicate takes up to 4 ulps as that drift.
	 * In float32 the drift band is 1e5 ulps away: still bad there. */
	bool across = p->replica || (p->merged && p->n_ref_shards != p->n_tgt_shards);
	double eps = dtype_eps(p->dtype_ref) > dtype_eps(p->dtype_tgt) ? dtype_eps(p->dtype_ref)
	                                                               : dtype_eps(p->dtype_tgt);
	if (pr->kind == DB_PRED_BAND && pr->worst_good == DB_BAND_OK && across &&
	    p->status == DB_ST_OK && p->band == DB_BAND_DRIFT && p->m.rel <= 4 * eps)
		return DB_V_GOOD;
	/* one rule with compare: where it names the first divergence beyond
	 * drift (the first divergence of the pass only drifts: bf16 engine
	 * against trainer), that drift is not where the bug is */
	if (pr->kind == DB_PRED_BAND && pr->worst_good == DB_BAND_OK && pr->beyond_drift &&
	    p->status == DB_ST_OK && p->band == DB_BAND_DRIFT)
		return DB_V_GOOD;
	/* a dequantized weight within its rounding floor differs by rounding
	 * only, as a pair across layouts by reduction order: the default
	 * predicate takes it as good (compare's first beyond drift agrees) */
	if (pr->kind == DB_PRED_BAND && pr->worst_good == DB_BAND_OK && db_pair_within_floor(p))
		return DB_V_GOOD;
	if (strict && p->band > DB_BAND_OK && p->band != DB_BAND_NONE)
		return DB_V_BAD;
	return db_predicate_eval(pr, &p->m, p->band);
}

static int parse_band(const char *s, db_band *b)
{
	static const db_band all[] = {DB_BAND_OK, DB_BAND_DRIFT, DB_BAND_ALGO,
	                              DB_BAND_BUG, DB_BAND_SCRAMBLE, DB_BAND_INPUTS};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (!strcmp(s, db_band_name(all[i]))) {
			*b = all[i];
			return 0;
		}
	return -1;
}

int db_predicate_parse(const char *s, db_predicate *p, db_err *err)
{
	db_predicate_default(p);
	if (!s || !*s)
		return db_err_set(err, NULL, NULL, -1, "empty predicate");
	if (!strncmp(s, "pass-if:", 8)) {
		p->kind = DB_PRED_RULES;
		if (!(p->rules = db_rules_intern(s + 8, err))) {
			db_predicate_default(p);
			return -1;
		}
		return 0;
	}
	if (!strncmp(s, "band:", 5)) {
		if (parse_band(s + 5, &p->worst_good) < 0)
			return db_err_set(err, NULL, NULL, -1,
			                  "predicate '%s': unknown band (ok, drift, algo, bug, scramble)", s);
		return 0;
	}
	p->kind = DB_PRED_THRESH;
	const char *q = s;
	while (*q) {
		char *end;
		double v;
		if (!strncmp(q, "cos<", 4)) {
			v = strtod(q + 4, &end);
			if (end == q + 4 || !isfinite(v))
				goto bad;
			p->cos_min = v;
		} else if (!strncmp(q, "rel>", 4)) {
			v = strtod(q + 4, &end);
			if (end == q + 4 || !isfinite(v) || v < 0)
				goto bad;
			p->rel_max = v;
		} else {
			goto bad;
		}
		q = end;
		if (*q == ',')
			q++;
		else if (*q)
			goto bad;
	}
	if (isnan(p->cos_min) && isnan(p->rel_max))
		goto bad;
	return 0;
bad:
	db_predicate_default(p);
	return db_err_set(err, NULL, NULL, -1,
	                  "predicate '%s': expected band:NAME, cos<X, rel>Y or cos<X,rel>Y", s);
}

char *db_predicate_str(const db_predicate *p, char *buf, size_t len)
{
	if (!len)
		return buf;
	if (p->kind == DB_PRED_BAND) {
		snprintf(buf, len, "band:%s", db_band_name(p->worst_good));
		return buf;
	}
	if (p->kind == DB_PRED_RULES) {
		int k = snprintf(buf, len, "pass-if:");
		if (k > 0 && (size_t)k < len && !db_rules_str(p->rules, buf + k, len - (size_t)k))
			buf[k] = '\0';        /* too long for buf: the caller's buffer says */
		return buf;
	}
	buf[0] = '\0';
	if (!isnan(p->cos_min))
		snprintf(buf, len, "cos<%.17g", p->cos_min);
	if (!isnan(p->rel_max)) {
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, "%srel>%.17g", n ? "," : "", p->rel_max);
	}
	return buf;
}

/* -------------------------------------------------------- state machine */

const char *db_bisect_phase_name(db_bisect_phase p)
{
	switch (p) {
	case DB_BP_BOUND: return "bound";
	case DB_BP_SEARCH: return "search";
	case DB_BP_FOUND: return "found";
	case DB_BP_ONLY_SKIPPED: return "only-skipped";
	case DB_BP_NO_BAD: return "no-bad";
	case DB_BP_CONTRADICTORY: return "contradictory";
	case DB_BP_EMPTY: return "empty";
	}
	return "?";
}

const char *db_layer_label(int layer, char *buf, size_t len)
{
	if (layer == DB_LAYER_FINAL)
		snprintf(buf, len, "final");
	else if (layer < 0)
		snprintf(buf, len, "input");
	else
		snprintf(buf, len, "L%d", layer);
	return buf;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

long db_bisect_index(const db_bisect *b, int layer)
{
	size_t lo = 0, hi = b->n_layers;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->layers[mid] < layer)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->n_layers && b->layers[lo] == layer ? (long)lo : -1;
}

static int ceil_log2(size_t n)
{
	int k = 0;
	while (((size_t)1 << k) < n && k < 62)
		k++;
	return k;
}

/* The latest step of candidate i, NULL when none. */
static const db_bisect_step *latest_step(const db_bisect *b, long i)
{
	long s = b->idx->last[i];
	return s >= 0 ? &b->steps[s] : NULL;
}

/* Appends the skipped layers strictly inside (good, bad) whose skip was
 * (not_dumped) or was not (a judgement) for want of data, as ranges
 * "L9–L11, L13"; returns how many it listed (it stops once buf is full). */
static size_t skipped_ranges(const db_bisect *b, bool not_dumped, char *buf, size_t len)
{
	size_t n = 0, o = strlen(buf);
	long run = -1;          /* index where the current range started */
	for (long i = b->good + 1; i <= b->bad && !(n && o + 1 >= len); i++) {
		const db_bisect_step *s = i < b->bad ? latest_step(b, i) : NULL;
		bool in = s && s->verdict == DB_V_SKIP &&
		          (s->auto_verdict == DB_V_NONE) == not_dumped;
		bool joins = in && run >= 0 && b->layers[i] == b->layers[i - 1] + 1;
		if (run >= 0 && !joins) {
			/* close the range run..i-1 */
			char a[32], c[32];
			db_layer_label(b->layers[run], a, sizeof a);
			db_layer_label(b->layers[i - 1], c, sizeof c);
			if (o < len)
				o += (size_t)snprintf(buf + o, len - o, "%s%s%s%s", n ? ", " : "", a,
				                      run < i - 1 ? "–" : "", run < i - 1 ? c : "");
			n++;
			run = -1;
		}
		if (in && run < 0)
			run = i;
	}
	return n;
}

/* ONLY_SKIPPED: the layers the first bad one may be, and why each inside
 * is unknown: "one of L9..L12 (L9–L11 not dumped)". Only a dumped layer
 * skipped by a judgement is called "skipped". */
static void only_skipped_msg(db_bisect *b)
{
	char l1[32], l2[32], nd[96] = "", sk[96] = "";
	size_t n_nd = skipped_ranges(b, true, nd, sizeof nd);
	size_t n_sk = skipped_ranges(b, false, sk, sizeof sk);
	snprintf(b->msg, sizeof b->msg, "one of %s..%s (%s%s%s%s%s)",
	         db_layer_label(b->layers[b->good + 1], l1, sizeof l1),
	         db_layer_label(b->layers[b->bad], l2, sizeof l2),
	         nd, n_nd ? " not dumped" : "", n_nd && n_sk ? "; " : "", sk,
	         n_sk ? " skipped" : "");
}

/* The unskipped candidate nearest to m inside [lo, hi] (the lower one of
 * two as near), -1 when none. */
static long nearest_unskipped(const db_bisect_idx *x, long lo, long hi, long m)
{
	size_t n = x->n;
	long p = -1, q = -1, pm = m < hi ? m : hi, qm = m + 1 > lo ? m + 1 : lo;
	size_t c;
	if (pm >= lo && (c = db_bidx_count(x->unsk, n, lo, pm)))
		p = db_bidx_kth(x->unsk, n, db_bidx_count(x->unsk, n, 0, lo - 1) + c);
	if (qm <= hi && db_bidx_count(x->unsk, n, qm, hi))
		q = db_bidx_kth(x->unsk, n, db_bidx_count(x->unsk, n, 0, qm - 1) + 1);
	if (p < 0 || q < 0)
		return p < 0 ? q : p;
	return m - p <= q - m ? p : q;
}

/* Every derived field from the candidates' latest verdicts (b->idx): the
 * bounds, the proposal, the counts. O(log n) but for the message of an
 * ONLY_SKIPPED end. */
static void recompute(db_bisect *b)
{
	char l1[32], l2[32];
	b->next = -1;
	b->first_bad = -1;
	b->bad = -1;
	b->good = b->start_good;
	b->n_remaining = 0;
	b->n_skipped_inside = 0;
	b->probes_left = 0;
	b->msg[0] = '\0';
	if (!b->n_layers) {
		b->phase = DB_BP_EMPTY;
		snprintf(b->msg, sizeof b->msg, "no layers to bisect");
		return;
	}
	const db_bisect_idx *x = b->idx;
	if (!x || x->n != b->n_layers) {
		b->phase = DB_BP_EMPTY;
		snprintf(b->msg, sizeof b->msg, "out of memory");
		return;
	}
	size_t n = x->n;
	size_t n_good = db_bidx_count(x->good, n, 0, (long)n - 1);
	long last_good = n_good ? db_bidx_kth(x->good, n, n_good) : -1;
	if (last_good > b->good)
		b->good = last_good;
	if (db_bidx_count(x->bad, n, 0, (long)n - 1))
		b->bad = db_bidx_kth(x->bad, n, 1);
	if (b->bad >= 0 && b->good >= b->bad) {
		b->phase = DB_BP_CONTRADICTORY;
		if (b->good == b->start_good && x->v[b->good] != DB_V_GOOD)
			snprintf(b->msg, sizeof b->msg,
			         "contradictory bounds: %s is bad but the start good bound is %s",
			         db_layer_label(b->layers[b->bad], l1, sizeof l1),
			         db_layer_label(b->layers[b->good], l2, sizeof l2));
		else
			snprintf(b->msg, sizeof b->msg,
			         "contradictory bounds: %s is good but %s before it is bad",
			         db_layer_label(b->layers[b->good], l1, sizeof l1),
			         db_layer_label(b->layers[b->bad], l2, sizeof l2));
		return;
	}
	if (b->bad < 0) {
		/* Bound check: the last layer not yet judged, from the end. */
		size_t left = db_bidx_count(x->unsk, n, b->good + 1, (long)n - 1);
		if (!left) {
			b->phase = DB_BP_NO_BAD;
			if (b->good == (long)n - 1)
				snprintf(b->msg, sizeof b->msg,
				         "the last layer, %s, is good: nothing went wrong, nothing to bisect",
				         db_layer_label(b->layers[b->good], l1, sizeof l1));
			else
				snprintf(b->msg, sizeof b->msg,
				         "no bad layer: %s good, every later layer skipped",
				         b->good >= 0 ? db_layer_label(b->layers[b->good], l1, sizeof l1)
				                      : "input");
			return;
		}
		long cand = db_bidx_kth(x->unsk, n, db_bidx_count(x->unsk, n, 0, (long)n - 1));
		b->phase = DB_BP_BOUND;
		b->next = cand;
		b->n_remaining = left;
		/* one probe for the bound, then the search over the rest */
		b->probes_left = 1 + ceil_log2(b->n_remaining);
		snprintf(b->msg, sizeof b->msg, "checking the last layer, %s, first: the search needs a bad end",
		         db_layer_label(b->layers[cand], l1, sizeof l1));
		return;
	}
	long m = (b->good + b->bad) / 2;
	if (b->good + b->bad < 0)
		m = -1; /* floor for good = -1, bad = 0 */
	long lo = b->good + 1, hi = b->bad - 1;
	b->n_remaining = db_bidx_count(x->unsk, n, lo, hi);
	b->n_skipped_inside = (size_t)(hi - lo + 1) - b->n_remaining;
	long best = b->n_remaining ? nearest_unskipped(x, lo, hi, m) : -1;
	b->probes_left = ceil_log2(b->n_remaining + 1);
	if (best >= 0) {
		b->phase = DB_BP_SEARCH;
		b->next = best;
		snprintf(b->msg, sizeof b->msg, "between %s (good) and %s (bad): %zu left, ~%d probes",
		         b->good >= 0 ? db_layer_label(b->layers[b->good], l1, sizeof l1) : "input",
		         db_layer_label(b->layers[b->bad], l2, sizeof l2),
		         b->n_remaining, b->probes_left);
	} else if (b->n_skipped_inside) {
		b->phase = DB_BP_ONLY_SKIPPED;
		only_skipped_msg(b);
	} else {
		b->phase = DB_BP_FOUND;
		b->first_bad = b->bad;
		snprintf(b->msg, sizeof b->msg, "first bad layer: %s",
		         db_layer_label(b->layers[b->bad], l1, sizeof l1));
	}
}

int db_bisect_init(db_bisect *b, const int *layers, size_t n, long good_layer,
                   db_err *err)
{
	memset(b, 0, sizeof *b);
	if (n) {
		b->layers = malloc(n * sizeof *b->layers);
		if (!b->layers)
			return db_err_set(err, NULL, NULL, -1, "out of memory");
		memcpy(b->layers, layers, n * sizeof *layers);
		qsort(b->layers, n, sizeof *b->layers, cmp_int);
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (!k || b->layers[k - 1] != b->layers[i])
				b->layers[k++] = b->layers[i];
		b->n_layers = k;
	}
	b->start_good = DB_GOOD_BEFORE;
	if (good_layer != DB_GOOD_BEFORE)
		for (size_t i = 0; i < b->n_layers; i++)
			if (b->layers[i] <= good_layer)
				b->start_good = (long)i;
	if (db_bidx_build(b) < 0) {
		free(b->layers);
		memset(b, 0, sizeof *b);
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	}
	recompute(b);
	return 0;
}

int db_bisect_add_layers(db_bisect *b, const int *layers, size_t n, db_err *err)
{
	size_t k = b->n_layers;
	int *v = malloc((k + n + 1) * sizeof *v);
	if (!v)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	memcpy(v, b->layers, k * sizeof *v);
	for (size_t i = 0; i < n; i++)
		if (db_bisect_index(b, layers[i]) < 0)
			v[k++] = layers[i];
	if (k == b->n_layers) {
		free(v);
		return 0;
	}
	long good = b->start_good >= 0 ? b->layers[b->start_good] : DB_GOOD_BEFORE;
	qsort(v, k, sizeof *v, cmp_int);
	/* new layers added twice in one call: once */
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	free(b->layers);
	b->layers = v;
	b->n_layers = u;
	/* the start bound stays on its layer; the steps name layers, not
	 * indices, so they keep their meaning */
	b->start_good = good == DB_GOOD_BEFORE ? DB_GOOD_BEFORE : db_bisect_index(b, (int)good);
	int rc = db_bidx_build(b) < 0 ? db_err_set(err, NULL, NULL, -1, "out of memory") : 0;
	recompute(b);
	return rc;
}

void db_bisect_free(db_bisect *b)
{
	free(b->layers);
	free(b->steps);
	db_bidx_free(b->idx);
	memset(b, 0, sizeof *b);
}

/* Checks s and appends it without recomputing: -1 with err. */
static int append_step(db_bisect *b, const db_bisect_step *s, db_err *err)
{
	char l[32];
	long ix = db_bisect_index(b, s->layer);
	if (ix < 0)
		return db_err_set(err, NULL, NULL, -1, "%s is not a bisect candidate",
		                  db_layer_label(s->layer, l, sizeof l));
	if (s->verdict != DB_V_GOOD && s->verdict != DB_V_BAD && s->verdict != DB_V_SKIP)
		return db_err_set(err, NULL, NULL, -1, "%s: a step needs good, bad or skip",
		                  db_layer_label(s->layer, l, sizeof l));
	if (!b->idx && db_bidx_build(b) < 0)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	if (b->n_steps == b->cap_steps) {
		size_t cap = b->cap_steps ? 2 * b->cap_steps : 16;
		db_bisect_step *ns = realloc(b->steps, cap * sizeof *ns);
		if (!ns)
			return db_err_set(err, NULL, NULL, -1, "out of memory");
		b->steps = ns;
		b->cap_steps = cap;
	}
	b->steps[b->n_steps++] = *s;
	db_bidx_set(b->idx, (size_t)ix, s->verdict, (long)b->n_steps - 1);
	return 0;
}

int db_bisect_record(db_bisect *b, const db_bisect_step *s, db_err *err)
{
	if (append_step(b, s, err) < 0)
		return -1;
	recompute(b);
	return 0;
}

int db_bisect_replay(db_bisect *b, const db_bisect_step *steps, size_t n, size_t *bad,
                     db_err *err)
{
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		if ((rc = append_step(b, &steps[i], err)) < 0 && bad)
			*bad = i;
	recompute(b);
	return rc;
}

/* After steps were dropped: the latest verdicts from the log again. */
static void rebuild(db_bisect *b)
{
	db_bidx_build(b);       /* OOM: idx NULL, recompute says so */
	recompute(b);
}

bool db_bisect_undo(db_bisect *b)
{
	if (!b->n_steps)
		return false;
	b->n_steps--;
	rebuild(b);
	return true;
}

void db_bisect_reset(db_bisect *b)
{
	b->n_steps = 0;
	rebuild(b);
}

db_verdict db_bisect_layer_verdict(const db_bisect *b, int layer)
{
	long ix = db_bisect_index(b, layer);
	if (ix >= 0 && b->idx)
		return b->idx->v[ix];
	for (size_t i = b->n_steps; i-- > 0;)
		if (b->steps[i].layer == layer)
			return b->steps[i].verdict;
	return DB_V_NONE;
}

bool db_bisect_done(const db_bisect *b)
{
	return b->phase != DB_BP_BOUND && b->phase != DB_BP_SEARCH;
}
