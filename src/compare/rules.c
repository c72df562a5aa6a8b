/* The CI gate's rules: "REGEX: EXPR" parsed once into a small tree of
 * nodes, judged per pair (db_rules.h). The grammar, lowest precedence
 * first:
 *   or   := and ("or" and)*
 *   and  := not ("and" not)*
 *   not  := "not" not | "(" or ")" | side OP side
 *   side := METRIC | NUMBER        OP := < <= > >= == !=
 * "&&", "||" and "!" are taken for and, or, not (Python's and C's habits). */
#include "db_rules.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <math.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_re.h"

enum { N_OR, N_AND, N_NOT, N_CMP };
enum { OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE };

typedef struct side {
	int var;                /* -1: the number */
	double num;
} side;

typedef struct node {
	int kind, op;
	int a, b;               /* children (OR, AND: both; NOT: a) */
	side l, r;              /* CMP */
} node;

typedef struct rule_s {
	char *text;             /* as given */
	char *pattern;          /* NULL: every stage */
	pcre2_code *re;
	node *nodes;
	int root;
} rule_t;

struct db_rules {
	rule_t *v;
	size_t n, cap;
};

static const char *const var_names[DB_RM_N] = {
#define DB_RULE_M(n) #n,
	DB_RULE_METRICS(DB_RULE_M)
#undef DB_RULE_M
};

/* ---- parsing ----------------------------------------------------------- */

typedef struct parser {
	const char *s;          /* the expression */
	size_t p;               /* position in s */
	size_t col0;            /* column of s[0] in the rule's text, 0-based */
	node *nodes;
	size_t n, cap;
	db_err *err;
	const char *text;       /* the whole rule, for messages */
	int depth;
} parser;

static int fail(parser *ps, size_t at, const char *what)
{
	return db_err_set(ps->err, NULL, NULL, -1, "rule '%s': column %zu: %s", ps->text,
	                  ps->col0 + at + 1, what);
}

static void blanks(parser *ps)
{
	while (ps->s[ps->p] == ' ' || ps->s[ps->p] == '\t')
		ps->p++;
}

static int new_node(parser *ps, node n)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 8;
		node *v = realloc(ps->nodes, cap * sizeof *v);
		if (!v)
			return db_err_set(ps->err, NULL, NULL, -1, "out of memory");
		ps->nodes = v;
		ps->cap = cap;
	}
	ps->nodes[ps->n] = n;
	return (int)ps->n++;
}

static size_t word_len(const char *s)
{
	size_t n = 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

/* The word at the position is w (and not the start of a longer name). */
static bool keyword(parser *ps, const char *w)
{
	size_t n = strlen(w);
	return !strncmp(ps->s + ps->p, w, n) && word_len(ps->s + ps->p) == n;
}

static int var_of(const char *s, size_t n)
{
	const char pre[] = "downcast_";
	size_t k = sizeof pre - 1, off = 0;
	if (n > k && !strncmp(s, pre, k))
		off = k;
	for (int i = 0; i < DB_RM_N; i++)
		if (strlen(var_names[i]) == n - off && !strncmp(s + off, var_names[i], n - off))
			return off ? DB_RM_N + i : i;
	return -1;
}

static int parse_side(parser *ps, side *out)
{
	blanks(ps);
	const char *s = ps->s + ps->p;
	size_t n = word_len(s);
	if (n && (isalpha((unsigned char)*s) || *s == '_')) {
		out->var = var_of(s, n);
		if (out->var < 0) {
			char m[300];
			snprintf(m, sizeof m, "unknown metric '%.*s' (rel, cos, max_abs, mean_abs, "
			         "rel_l2, rel_diff, byte_equal, or one of them after downcast_)",
			         (int)(n < 64 ? n : 64), s);
			return fail(ps, ps->p, m);
		}
		ps->p += n;
		return 0;
	}
	char *end;
	double v = strtod(s, &end);
	/* strtod takes "inf", "nan" and hex: a number here is decimal */
	if (end == s || !(isdigit((unsigned char)*s) || *s == '.' || *s == '-' || *s == '+') ||
	    isnan(v) || isalpha((unsigned char)*end) || *end == '_' ||
	    memchr(s, 'x', (size_t)(end - s)) || memchr(s, 'X', (size_t)(end - s)))
		return fail(ps, ps->p, *s ? "expected a metric name or a number"
		                          : "expected a metric name or a number, found the end");
	out->var = -1;
	out->num = v;
	ps->p += (size_t)(end - s);
	return 0;
}

static int parse_op(parser *ps)
{
	blanks(ps);
	const char *s = ps->s + ps->p;
	static const struct { const char *t; int op; } ops[] = {
		{"<=", OP_LE}, {">=", OP_GE}, {"==", OP_EQ}, {"!=", OP_NE}, {"<", OP_LT}, {">", OP_GT},
	};
	for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
		size_t n = strlen(ops[i].t);
		if (!strncmp(s, ops[i].t, n)) {
			ps->p += n;
			return ops[i].op;
		}
	}
	return fail(ps, ps->p, *s ? "expected a comparison (< <= > >= == !=)"
	                          : "expected a comparison (< <= > >= == !=), found the end");
}

static int parse_or(parser *ps);

static int parse_not(parser *ps)
{
	blanks(ps);
	if (++ps->depth > 100)
		return fail(ps, ps->p, "nested too deep");
	int r;
	if (keyword(ps, "not") || (ps->s[ps->p] == '!' && ps->s[ps->p + 1] != '=')) {
		ps->p += ps->s[ps->p] == '!' ? 1 : 3;
		int a = parse_not(ps);
		r = a < 0 ? -1 : new_node(ps, (node){.kind = N_NOT, .a = a});
	} else if (ps->s[ps->p] == '(') {
		size_t open = ps->p++;
		r = parse_or(ps);
		blanks(ps);
		if (r >= 0 && ps->s[ps->p] != ')')
			r = fail(ps, ps->p, ps->s[ps->p] ? "expected ')' or and / or"
			                                 : "expected ')', found the end");
		else if (r >= 0)
			ps->p++;
		(void)open;
	} else {
		node n = {.kind = N_CMP};
		if (parse_side(ps, &n.l) < 0 || (n.op = parse_op(ps)) < 0 || parse_side(ps, &n.r) < 0)
			r = -1;
		else if (n.l.var < 0 && n.r.var < 0)
			r = fail(ps, ps->p, "a comparison of two numbers: name a metric");
		else
			r = new_node(ps, n);
	}
	ps->depth--;
	return r;
}

static int parse_and(parser *ps)
{
	int a = parse_not(ps);
	for (;;) {
		if (a < 0)
			return -1;
		blanks(ps);
		if (keyword(ps, "and"))
			ps->p += 3;
		else if (!strncmp(ps->s + ps->p, "&&", 2))
			ps->p += 2;
		else
			return a;
		int b = parse_not(ps);
		a = b < 0 ? -1 : new_node(ps, (node){.kind = N_AND, .a = a, .b = b});
	}
}

static int parse_or(parser *ps)
{
	int a = parse_and(ps);
	for (;;) {
		if (a < 0)
			return -1;
		blanks(ps);
		if (keyword(ps, "or"))
			ps->p += 2;
		else if (!strncmp(ps->s + ps->p, "||", 2))
			ps->p += 2;
		else
			return a;
		int b = parse_and(ps);
		a = b < 0 ? -1 : new_node(ps, (node){.kind = N_OR, .a = a, .b = b});
	}
}

/* expr (col0: its column in text) into nodes / root. */
static int parse_expr(const char *text, const char *expr, size_t col0, node **nodes, int *root,
                      db_err *err)
{
	parser ps = {.s = expr, .col0 = col0, .err = err, .text = text};
	int r = parse_or(&ps);
	blanks(&ps);
	if (r >= 0 && ps.s[ps.p])
		r = fail(&ps, ps.p, ps.s[ps.p] == ')' ? "')' without '('"
		                                      : "expected and / or, or the end");
	if (r < 0) {
		free(ps.nodes);
		return -1;
	}
	*nodes = ps.nodes;
	*root = r;
	return 0;
}

/* ---- evaluation ---------------------------------------------------------- */

static double side_val(const side *s, const double *v)
{
	return s->var < 0 ? s->num : v[s->var];
}

static bool eval(const node *nodes, int i, const double *v)
{
	const node *n = &nodes[i];
	switch (n->kind) {
	case N_OR: return eval(nodes, n->a, v) || eval(nodes, n->b, v);
	case N_AND: return eval(nodes, n->a, v) && eval(nodes, n->b, v);
	case N_NOT: return !eval(nodes, n->a, v);
	default: break;
	}
	double l = side_val(&n->l, v), r = side_val(&n->r, v);
	switch (n->op) {         /* NaN: every comparison false (IEEE, as Python) */
	case OP_LT: return l < r;
	case OP_LE: return l <= r;
	case OP_GT: return l > r;
	case OP_GE: return l >= r;
	case OP_EQ: return l == r;
	default: return !isnan(l) && !isnan(r) && l != r;
	}
}

int db_rules_eval_expr(const char *expr, const double *v, bool *out, db_err *err)
{
	node *nodes;
	int root;
	if (parse_expr(expr, expr, 0, &nodes, &root, err) < 0)
		return -1;
	*out = eval(nodes, root, v);
	free(nodes);
	return 0;
}

/* ---- the rule list ------------------------------------------------------- */

db_rules *db_rules_new(void)
{
	return calloc(1, sizeof(db_rules));
}

void db_rules_free(db_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].text);
		free(r->v[i].pattern);
		pcre2_code_free(r->v[i].re);
		free(r->v[i].nodes);
	}
	free(r->v);
	free(r);
}

/* Longer rules are refused: a rule comes from a command line or a shared
 * profile, and its tree is evaluated by recursion. */
#define RULE_MAX 4096

int db_rules_add(db_rules *r, const char *text, db_err *err)
{
	if (strlen(text) > RULE_MAX)
		return db_err_set(err, NULL, NULL, -1, "rule '%.60s...': longer than %d characters",
		                  text, RULE_MAX);
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4;
		rule_t *v = realloc(r->v, cap * sizeof *v);
		if (!v)
			return db_err_set(err, NULL, NULL, -1, "out of memory");
		r->v = v;
		r->cap = cap;
	}
	rule_t ru = {0};
	/* the expression has no ':', so the last one ends the regex */
	const char *colon = strrchr(text, ':');
	const char *expr = colon ? colon + 1 : text;
	if (colon) {
		const char *a = text, *b = colon;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (a == b)
			return db_err_set(err, NULL, NULL, -1, "rule '%s': column %zu: an empty regex "
			                  "before ':' (leave out 'REGEX:' for every stage)", text,
			                  (size_t)(colon - text) + 1);
		if (!(ru.pattern = strndup(a, (size_t)(b - a))))
			return db_err_set(err, NULL, NULL, -1, "out of memory");
		int ec;
		PCRE2_SIZE eo;
		/* names need not be UTF-8: such a byte never matches */
		ru.re = pcre2_compile((PCRE2_SPTR)ru.pattern, PCRE2_ZERO_TERMINATED,
		                      PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &ec, &eo, NULL);
		if (!ru.re) {
			PCRE2_UCHAR m[256];
			pcre2_get_error_message(ec, m, sizeof m);
			db_err_set(err, NULL, NULL, -1, "rule '%s': column %zu: regex '%s': %s", text,
			           (size_t)(a - text) + (size_t)eo + 1, ru.pattern, (char *)m);
			free(ru.pattern);
			return -1;
		}
	}
	if (parse_expr(text, expr, (size_t)(expr - text), &ru.nodes, &ru.root, err) < 0 ||
	    !(ru.text = strdup(text))) {
		if (ru.nodes)
			db_err_set(err, NULL, NULL, -1, "out of memory");
		free(ru.pattern);
		pcre2_code_free(ru.re);
		free(ru.nodes);
		return -1;
	}
	r->v[r->n++] = ru;
	return 0;
}

size_t db_rules_count(const db_rules *r)
{
	return r ? r->n : 0;
}

const char *db_rules_text(const db_rules *r, size_t i)
{
	return i < r->n ? r->v[i].text : NULL;
}

bool db_rules_catch_all(const db_rules *r)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (!r->v[i].re)
			return true;
	return false;
}

void db_rules_values(const db_pair *p, double *v)
{
	const db_metrics *m = &p->m;
	const double plain[DB_RM_N] = {m->rel, m->cos, m->max_abs, m->mean_abs, m->rel_l2,
	                               m->rel_diff, m->byte_equal};
	for (int i = 0; i < DB_RM_N; i++)
		v[i] = v[DB_RM_N + i] = plain[i];
	if (m->dc_dtype) {      /* the dtypes differ: measured again after the cast */
		const double dc[DB_RM_N] = {m->dc.rel, m->dc.cos, m->dc.max_abs, m->dc.mean_abs,
		                            m->dc.rel_l2, m->dc.rel_diff, m->dc.byte_equal};
		memcpy(v + DB_RM_N, dc, sizeof dc);
	}
}

const char *db_gate_name(db_gate g)
{
	static const char *const n[] = {"passed", "failed", "skipped", "no_rule"};
	return (unsigned)g < 4 ? n[g] : "?";
}

int db_rules_judge(const db_rules *r, const db_pair *p, db_gate *gate, int *rule, db_err *err)
{
	*rule = -1;
	switch (p->status) {
	case DB_ST_REF_ONLY: case DB_ST_TARGET_ONLY: case DB_ST_NOT_COMPARABLE:
		*gate = DB_GATE_SKIPPED;
		return 0;
	case DB_ST_OK:
		break;
	default:                /* unreadable, or shapes that do not agree */
		*gate = DB_GATE_FAILED;
		return 0;
	}
	for (size_t i = 0; i < r->n; i++) {
		const rule_t *ru = &r->v[i];
		if (ru->re) {
			int m = db_re_search(ru->re, ru->pattern, p->f.stage, NULL, err);
			if (m < 0)
				return -1;
			if (!m)
				continue;
		}
		double v[DB_RULE_NVARS];
		db_rules_values(p, v);
		/* a nonfinite value where the other side has a number is a bug
		 * whatever the sums left out of it say */
		bool ok = eval(ru->nodes, ru->root, v) && !p->m.nonfinite_mismatch;
		*gate = ok ? DB_GATE_PASSED : DB_GATE_FAILED;
		*rule = (int)i;
		return 0;
	}
	*gate = DB_GATE_NO_RULE;
	return 0;
}

/* ---- the text form and shared copies ------------------------------------ */

bool db_rules_str(const db_rules *r, char *buf, size_t len)
{
	if (!len)
		return false;
	size_t l = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < r->n; i++) {
		int k = snprintf(buf + l, len - l, "%s%s", i ? "\n" : "", r->v[i].text);
		if (k < 0 || (size_t)k >= len - l)
			return false;
		l += (size_t)k;
	}
	return true;
}

typedef struct interned {
	struct interned *next;
	char *text;
	db_rules *rules;
} interned;

/* reachable from here for the process's life (a predicate is a value that
 * sessions copy freely; its rules are never freed under it) */
static interned *kept;
static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;

const db_rules *db_rules_intern(const char *text, db_err *err)
{
	pthread_mutex_lock(&kept_mu);
	for (interned *k = kept; k; k = k->next)
		if (!strcmp(k->text, text)) {
			pthread_mutex_unlock(&kept_mu);
			return k->rules;
		}
	pthread_mutex_unlock(&kept_mu);
	db_rules *r = db_rules_new();
	interned *k = calloc(1, sizeof *k);
	char *copy = strdup(text), *line = copy;
	if (!r || !k || !copy)
		goto oom;
	while (line) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (*line && db_rules_add(r, line, err) < 0)
			goto fail;
		line = nl ? nl + 1 : NULL;
	}
	if (!r->n) {
		db_err_set(err, NULL, NULL, -1, "no rule");
		goto fail;
	}
	free(copy);
	copy = NULL;
	if (!(k->text = strdup(text)))
		goto oom;
	k->rules = r;
	pthread_mutex_lock(&kept_mu);
	k->next = kept;
	kept = k;
	pthread_mutex_unlock(&kept_mu);
	return r;
oom:
	db_err_set(err, NULL, NULL, -1, "out of memory");
fail:
	free(copy);
	free(k);
	db_rules_free(r);
	return NULL;
}
