/* compare's CI gate (gate.h): rules judge each pair, the allow-lists let
 * failures and skips through, replicated ranks must agree; the verdicts go
 * out as a JSONL stream or under the table, and make the exit status. */
#include "gate.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd_util.h"
#include "db_esc.h"
#include "db_export.h"
#include "db_re.h"
#include "db_replicas.h"

typedef struct tally {
	size_t passed, failed, skipped, allowed_failed, allowed_skipped, replicas_checked;
	size_t replica_failed, replica_allowed;
	size_t first1;          /* 1 + the index of the first pair failed or skipped
	                           unallowed (execution order); 0 none */
} tally;

typedef struct verdict {
	db_gate gate;
	int rule;
	bool allowed;
	const char *allowed_by;         /* the allow-list regex, or NULL */
} verdict;

/* The allow-list REGEX found in one of the pair's names: its stage, its
 * label ("L5 attn_output rank 1 pass 0") or a side's file. res: l's
 * regexes compiled. */
static int allowed(const db_cmd *cmd, const db_optlist *l, void *const *res, const char *stage,
                   const char *label, const char *f1, const char *f2, const char **by)
{
	*by = NULL;
	for (size_t i = 0; l && i < l->n; i++) {
		const char *subj[] = {stage, label, f1, f2};
		int m = 0;
		db_err err = {{0}};
		for (int k = 0; k < 4 && !m; k++)
			if (subj[k] && (m = db_re_search(res[i], l->v[i], subj[k], NULL, &err)) < 0)
				db_cmd_error(cmd, "--%s: %s", l->name, err.msg);
		if (m < 0)
			return -1;
		if (m) {
			*by = l->v[i];
			return 1;
		}
	}
	return 0;
}

static int judge(const db_cmd *cmd, const db_compare *c, const db_gate_cfg *g, const db_pair *p,
                 verdict *v)
{
	db_err err = {{0}};
	memset(v, 0, sizeof *v);
	v->rule = -1;
	if (!g->rules) {        /* jsonl without rules: the bands judge, as compare's exit */
		v->gate = p->status == DB_ST_REF_ONLY || p->status == DB_ST_TARGET_ONLY ||
		          p->status == DB_ST_NOT_COMPARABLE ? DB_GATE_SKIPPED
		          : db_pair_diverges(p) ? DB_GATE_FAILED : DB_GATE_PASSED;
		return 0;
	}
	if (db_rules_judge(g->rules, p, &v->gate, &v->rule, &err) < 0) {
		db_cmd_error(cmd, "%s", err.msg);
		return -1;
	}
	if (v->gate == DB_GATE_PASSED)
		return 0;
	if (v->gate == DB_GATE_NO_RULE) {   /* checked before; a stage that appeared late */
		db_cmd_error(cmd, "no rule of %s matches stage '%s' (add a catch-all EXPR rule)",
		             g->rules_from, db_esc(p->f.stage));
		return -1;
	}
	char lab[512];
	db_pair_label(p, lab, sizeof lab);
	char *rn = db_item_name(p->ref), *tn = db_item_name(p->tgt);
	bool sk = v->gate == DB_GATE_SKIPPED;
	int a = allowed(cmd, sk ? g->allow_skipped : g->allow_failed,
	                sk ? g->re_skipped : g->re_failed, p->f.stage, lab, rn, tn, &v->allowed_by);
	free(rn);
	free(tn);
	(void)c;
	if (a < 0)
		return -1;
	v->allowed = a == 1;
	return 0;
}

static void count(tally *t, const verdict *v)
{
	if (v->gate == DB_GATE_PASSED)
		t->passed++;
	else if (v->gate == DB_GATE_SKIPPED)
		*(v->allowed ? &t->allowed_skipped : &t->skipped) += 1;
	else
		*(v->allowed ? &t->allowed_failed : &t->failed) += 1;
}

static int exit_of(const tally *t)
{
	return t->failed || t->skipped || t->replica_failed ? 1 : 0;
}

typedef struct stage_at {
	const char *stage;      /* interned: one pointer per name */
	size_t i;               /* its first pair */
} stage_at;

static int by_stage(const void *a, const void *b)
{
	const stage_at *x = a, *y = b;
	if (x->stage != y->stage)
		return (uintptr_t)x->stage < (uintptr_t)y->stage ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

static int by_index(const void *a, const void *b)
{
	const stage_at *x = a, *y = b;
	return (x->i > y->i) - (x->i < y->i);
}

int db_gate_check(const db_cmd *cmd, const db_compare *c, db_gate_cfg *g)
{
	const db_optlist *ls[] = {g->allow_failed, g->allow_skipped};
	void **res[] = {g->re_failed, g->re_skipped};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; ls[k] && i < ls[k]->n; i++) {
			int ec;
			PCRE2_SIZE eo;
			pcre2_code *re = pcre2_compile((PCRE2_SPTR)ls[k]->v[i], PCRE2_ZERO_TERMINATED,
			                               PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &ec, &eo, NULL);
			if (!re) {
				PCRE2_UCHAR m[256];
				pcre2_get_error_message(ec, m, sizeof m);
				return db_cmd_usage_error(cmd, "--%s '%s': column %zu: %s", ls[k]->name,
				                          ls[k]->v[i], (size_t)eo + 1, (char *)m);
			}
			res[k][i] = re;
		}
	if (!g->rules || db_rules_catch_all(g->rules))
		return 0;
	/* SGLang's rule: a stage no rule speaks for is an error, said before
	 * anything is measured (pairs only one side has are skips, not it);
	 * each stage judged once, named in the order it first comes */
	stage_at *v = malloc((c->n_pairs ? c->n_pairs : 1) * sizeof *v);
	if (!v)
		return db_cmd_error(cmd, "out of memory");
	size_t n = 0, d = 0, missing = 0;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->status != DB_ST_REF_ONLY && p->status != DB_ST_TARGET_ONLY &&
		    p->status != DB_ST_NOT_COMPARABLE && (!n || v[n - 1].stage != p->f.stage))
			v[n++] = (stage_at){p->f.stage, i};
	}
	qsort(v, n, sizeof *v, by_stage);
	for (size_t k = 0; k < n; k++) {
		if (k && v[k].stage == v[k - 1].stage)
			continue;
		db_pair q = c->pairs[v[k].i];
		q.status = DB_ST_OK;
		db_gate gt;
		int rule;
		db_err err = {{0}};
		if (db_rules_judge(g->rules, &q, &gt, &rule, &err) < 0) {
			free(v);
			return db_cmd_error(cmd, "%s", err.msg);
		}
		if (gt == DB_GATE_NO_RULE)
			v[d++] = v[k];  /* d <= k: the kept ones move down */
	}
	missing = d;
	qsort(v, d, sizeof *v, by_index);
	if (missing)
		fprintf(stderr, "dumpbisect compare: no rule of %s matches these stages (add "
		        "'REGEX: EXPR' for them, or a catch-all 'EXPR' last):\n", g->rules_from);
	for (size_t k = 0; k < d && k < 10; k++)
		fprintf(stderr, "  %s\n", db_esc(v[k].stage));
	if (missing > 10)
		fprintf(stderr, "  (%zu more)\n", missing - 10);
	free(v);
	return missing ? 2 : 0;
}

void db_gate_free(db_gate_cfg *g)
{
	for (size_t i = 0; i < DB_OPTLIST_MAX; i++) {
		pcre2_code_free(g->re_failed[i]);
		pcre2_code_free(g->re_skipped[i]);
		g->re_failed[i] = g->re_skipped[i] = NULL;
	}
}

/* ---- the JSONL stream ---------------------------------------------------- */

static const char *verdict_word(const verdict *v)
{
	if (v->gate == DB_GATE_PASSED)
		return "passed";
	if (v->allowed)
		return "allowed";
	return v->gate == DB_GATE_SKIPPED ? "skipped" : "failed";
}

static void pair_line(FILE *out, const db_compare *c, const db_gate_cfg *g, size_t i,
                      const verdict *v)
{
	const db_pair *p = &c->pairs[i];
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (m) {
		db_export_pair_json(m, c, p);
		fclose(m);
	}
	fprintf(out, "{\"type\": \"pair\", \"index\": %zu, \"verdict\": \"%s\", \"passed\": %s, "
	        "\"allowed\": %s, \"rule\": ", i, verdict_word(v),
	        v->gate == DB_GATE_PASSED ? "true" : "false", v->allowed ? "true" : "false");
	db_json_str(out, v->rule >= 0 ? db_rules_text(g->rules, (size_t)v->rule)
	                 : !g->rules && v->gate != DB_GATE_SKIPPED ? "band:ok" : NULL);
	fputs(", \"allowed_by\": ", out);
	db_json_str(out, v->allowed_by);
	/* then the fields of compare's JSON for the pair (its leading '{' off) */
	if (buf && len > 1)
		fprintf(out, ", %s\n", buf + 1);
	else
		fputs("}\n", out);
	free(buf);
	fflush(out);
}

/* The replicated-rank check: its findings as lines (or under the table),
 * counted into t. -1 after an error message. */
static int replicas(const db_cmd *cmd, const db_compare *c, const db_gate_cfg *g, FILE *out,
                    bool jsonl, bool quiet, tally *t)
{
	db_replica *r;
	size_t n;
	db_err err = {{0}};
	if (db_replicas_check(c, DB_REPLICA_ATOL, &r, &n, &err) < 0) {
		db_cmd_error(cmd, "%s", err.msg);
		return -1;
	}
	t->replicas_checked = n;
	size_t shown = 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i].passed)
			continue;
		char lab[400], *fb = db_item_name(r[i].base), *fo = db_item_name(r[i].other);
		const db_item *it = r[i].base;
		int l = snprintf(lab, sizeof lab, it->f.layer >= 0 ? "L%d %s" : "%.0d%s",
		                 it->f.layer >= 0 ? it->f.layer : 0, it->f.stage);
		if (*it->f.pass && l > 0 && (size_t)l < sizeof lab)
			snprintf(lab + l, sizeof lab - (size_t)l, " pass %s", it->f.pass);
		const char *by;
		int a = allowed(cmd, g->allow_failed, g->re_failed, it->f.stage, lab, fb, fo, &by);
		if (a < 0) {
			free(fb);
			free(fo);
			free(r);
			return -1;
		}
		*(a ? &t->replica_allowed : &t->replica_failed) += 1;
		if (jsonl) {
			fprintf(out, "{\"type\": \"replica\", \"verdict\": \"%s\", \"passed\": false, "
			        "\"allowed\": %s, \"side\": \"%s\", \"phase\": ", a ? "allowed" : "failed",
			        a ? "true" : "false", r[i].side);
			db_json_field(out, it->f.phase, false);
			fputs(", \"pass\": ", out);
			db_json_field(out, it->f.pass, true);
			fputs(", \"layer\": ", out);
			if (it->f.layer >= 0)
				fprintf(out, "%d", it->f.layer);
			else
				fputs("null", out);
			fputs(", \"stage\": ", out);
			db_json_str(out, it->f.stage);
			fprintf(out, ", \"ranks\": [%d, %d], \"max_abs\": ", it->f.rank, r[i].other->f.rank);
			db_json_num(out, r[i].max_abs);
			fprintf(out, ", \"atol\": %g, \"why\": ", DB_REPLICA_ATOL);
			db_json_str(out, r[i].why);
			fputs(", \"replicated_by\": ", out);
			db_json_str(out, r[i].by);
			fputs(", \"files\": [", out);
			db_json_str(out, fb);
			fputs(", ", out);
			db_json_str(out, fo);
			fputs("]}\n", out);
			fflush(out);
		} else if (!quiet && shown++ < 20) {
			fprintf(out, "  replica %s: %s: rank %d differs from rank %d (%s; %s)%s\n",
			        r[i].side, db_esc(lab), r[i].other->f.rank, it->f.rank, db_esc(r[i].why),
			        db_esc(r[i].by), a ? " [allowed]" : "");
		}
		free(fb);
		free(fo);
	}
	free(r);
	return 0;
}

static void summary_line(FILE *out, const db_gate_cfg *g, const tally *t, size_t pairs)
{
	fprintf(out, "{\"type\": \"summary\", \"passed\": %zu, \"failed\": %zu, \"skipped\": %zu, "
	        "\"allowed\": %zu, \"allowed_failed\": %zu, \"allowed_skipped\": %zu, "
	        "\"pairs\": %zu, \"replicas_checked\": %zu, \"replica_failed\": %zu, "
	        "\"replica_allowed\": %zu, \"exit\": %d, \"first_failure\": ",
	        t->passed, t->failed + t->replica_failed, t->skipped,
	        t->allowed_failed + t->allowed_skipped + t->replica_allowed, t->allowed_failed,
	        t->allowed_skipped, pairs, t->replicas_checked, t->replica_failed,
	        t->replica_allowed, exit_of(t));
	if (t->first1)
		fprintf(out, "%zu", t->first1 - 1);
	else
		fputs("null", out);
	fputs(", \"rules\": [", out);
	for (size_t i = 0; i < db_rules_count(g->rules); i++) {
		fputs(i ? ", " : "", out);
		db_json_str(out, db_rules_text(g->rules, i));
	}
	fputs("], \"rules_from\": ", out);
	db_json_str(out, g->rules_from);
	fputs("}\n", out);
	fflush(out);
}

int db_gate_jsonl(const db_cmd *cmd, db_compare *c, const db_gate_cfg *g, FILE *out)
{
	tally t = {0};
	bool pool = db_compare_start(c) == 0;
	struct timespec ts = {0, 1000 * 1000};
	int rc = 0;
	for (size_t i = 0; i < c->n_pairs && rc == 0; i++) {
		db_pair *p = &c->pairs[i];
		/* in execution order, each as soon as it is measured: this thread
		 * takes a pair no worker has started */
		for (;;) {
			db_compare_pair(c, p);
			if (atomic_load_explicit(&p->state, memory_order_acquire) == DB_PAIR_DONE)
				break;
			if (pool)
				nanosleep(&ts, NULL);
		}
		verdict v;
		if (judge(cmd, c, g, p, &v) < 0) {
			rc = 2;
			break;
		}
		count(&t, &v);
		if (!t.first1 && v.gate != DB_GATE_PASSED && !v.allowed)
			t.first1 = i + 1;
		pair_line(out, c, g, i, &v);
	}
	if (pool)
		db_compare_stop(c);
	if (rc == 0 && g->rules && replicas(cmd, c, g, out, true, false, &t) < 0)
		rc = 2;
	if (rc)
		return rc;
	summary_line(out, g, &t, c->n_pairs);
	return ferror(out) ? 2 : exit_of(&t);
}

int db_gate_text(const db_cmd *cmd, db_compare *c, const db_gate_cfg *g, FILE *out, bool quiet)
{
	tally t = {0};
	size_t shown = 0;
	long first = -1;        /* the first pair the gate fails, execution order */
	if (!quiet)
		fprintf(out, "\ngate (%s: %zu rule%s):\n", g->rules_from, db_rules_count(g->rules),
		        db_rules_count(g->rules) == 1 ? "" : "s");
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		verdict v;
		if (judge(cmd, c, g, p, &v) < 0)
			return 2;
		count(&t, &v);
		if (first < 0 && v.gate != DB_GATE_PASSED && !v.allowed)
			first = (long)i;
		if (quiet || v.gate == DB_GATE_PASSED || shown++ >= 20)
			continue;
		char lab[512];
		db_pair_label(p, lab, sizeof lab);
		fprintf(out, "  %s %s: ", verdict_word(&v), lab);
		if (p->status == DB_ST_OK)
			fprintf(out, "rel %.4e cos %.8f max_abs %.3g", p->m.rel, p->m.cos, p->m.max_abs);
		else
			fputs(db_status_name(p->status), out);
		if (v.rule >= 0)
			fprintf(out, " by '%s'", db_esc(db_rules_text(g->rules, (size_t)v.rule)));
		if (v.allowed_by)
			fprintf(out, " (allowed by '%s')", db_esc(v.allowed_by));
		fputc('\n', out);
	}
	size_t notpass = t.failed + t.skipped + t.allowed_failed + t.allowed_skipped;
	if (!quiet && notpass > 20)
		fprintf(out, "  (%zu more)\n", notpass - 20);
	if (replicas(cmd, c, g, out, false, quiet, &t) < 0)
		return 2;
	if (!quiet && first >= 0) {
		char lab[512];
		db_pair_label_cell(c, &c->pairs[first], lab, sizeof lab);
		fprintf(out, "gate: first failure: %s\n", lab);
	}
	if (!quiet)
		fprintf(out, "gate: %s: %zu passed, %zu failed, %zu skipped, %zu allowed; %zu "
		        "replicated rank%s checked, %zu differ\n", exit_of(&t) ? "FAIL" : "PASS",
		        t.passed, t.failed + t.replica_failed, t.skipped,
		        t.allowed_failed + t.allowed_skipped + t.replica_allowed, t.replicas_checked,
		        t.replicas_checked == 1 ? "" : "s", t.replica_failed + t.replica_allowed);
	return exit_of(&t);
}
