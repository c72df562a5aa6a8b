/* The hunt's record in an export: every bisect of the session that has
 * steps (one per phase and pass, the found one first), and the marks with
 * their whole place (phase, pass, layer, stage, rank), in report.md and in
 * metrics.json. */
#include "db_export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_esc.h"
#include "db_json.h"
#include "db_notes.h"

#define MAX_BISECTS 4096

/* "phase P, pass N" ("pass N" without a phase; "-" without either). */
static void place_md(FILE *f, const char *phase, const char *pass)
{
	bool ph = phase && *phase, pa = pass && *pass;
	if (ph) {
		fputs("phase ", f);
		db_esc_md_text(phase, f);
	}
	if (ph && pa)
		fputs(", ", f);
	if (pa) {
		fputs("pass ", f);
		db_esc_md_text(pass, f);
	}
	if (!ph && !pa)
		fputs("-", f);
}

int db_export_pick_bisect(const db_session *s, db_compare *c, db_bisect_run **run,
                          db_bisect_result *res, const db_session **which, db_err *err)
{
	const db_session *first = NULL;
	*run = NULL;
	*which = NULL;
	if (!s || !db_session_bisects(s, &first, 1))
		return 0;
	if (db_session_run_open(first, c, true, run, err) < 0)
		return -1;
	if (db_bisect_analyze(*run, res, err) < 0) {
		db_bisect_run_free(*run);
		*run = NULL;
		return -1;
	}
	*which = first;
	return 1;
}

/* The bisects of s other than the one x shows first, in their order. */
static size_t others(const db_export_ctx *x, const db_session **v, size_t cap)
{
	const db_session *shown = x->bisect_of ? x->bisect_of : x->s;
	size_t n = x->s ? db_session_bisects(x->s, v, cap) : 0, k = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] != shown || !x->b)
			v[k++] = v[i];
	return k;
}

void db_export_bisects_md(FILE *f, const db_export_ctx *x)
{
	const db_session *shown = x->bisect_of ? x->bisect_of : x->s;
	const db_session **v = malloc(MAX_BISECTS * sizeof *v);
	size_t n = v ? others(x, v, MAX_BISECTS) : 0;
	bool titled = n > 0 && shown;
	if (x->b && x->b->n_steps) {
		if (titled) {
			fputs("### ", f);
			place_md(f, shown->phase, shown->pass);
			fputs("\n\n", f);
		}
		char *md = db_md_bisect(x->b, x->res);
		if (md)
			fputs(md, f);
		free(md);
	} else if (!n) {
		fputs("No bisect steps recorded.\n", f);
	}
	for (size_t i = 0; i < n; i++) {
		db_bisect sm;
		db_err err;
		fputs(i || (x->b && x->b->n_steps) ? "\n### " : "### ", f);
		place_md(f, v[i]->phase, v[i]->pass);
		fputs("\n\n", f);
		if (db_session_to_bisect(v[i], &sm, &err) < 0) {
			fputs("Its log cannot be replayed: ", f);
			db_esc_md_text(err.msg, f);
			fputs(".\n", f);
			continue;
		}
		char *md = db_md_bisect(&sm, NULL);
		if (md)
			fputs(md, f);
		free(md);
		db_bisect_free(&sm);
	}
	free(v);
}

void db_export_marks_md(FILE *f, const db_session *s)
{
	char l1[32];
	if (!s || !s->n_marks) {
		fputs("No marks.\n", f);
		return;
	}
	fputs("| phase | pass | layer | stage | rank | status | text |\n"
	      "|---|---|---|---|---|---|---|\n", f);
	for (size_t i = 0; i < s->n_marks; i++) {
		const db_mark *m = &s->marks[i];
		fputs("| ", f);
		/* unknown (an old mark that could not be placed): on every pass */
		db_esc_md_text(!m->phase && !m->pass ? "any" : m->phase && *m->phase ? m->phase : "-", f);
		fputs(" | ", f);
		db_esc_md_text(!m->phase && !m->pass ? "any" : m->pass && *m->pass ? m->pass : "-", f);
		fprintf(f, " | %s | ", m->layer >= 0 ? db_layer_label(m->layer, l1, sizeof l1) : "model");
		if (m->stage)
			db_esc_md_cell(m->stage, f);
		else
			fputs("(row)", f);
		fputs(" | ", f);
		if (m->rank >= 0)
			fprintf(f, "%d", m->rank);
		else
			fputs("all", f);
		fprintf(f, " | %s | ", db_mark_status_name(m->status));
		db_esc_md_text(m->text, f);
		fputs(" |\n", f);
	}
}

static void json_layer(FILE *f, int layer)
{
	if (layer == DB_LAYER_FINAL)
		fputs("\"final\"", f);
	else
		fprintf(f, "%d", layer);
}

static void json_str_or_null(FILE *f, const char *s)
{
	if (s)
		db_json_str(f, s);
	else
		fputs("null", f);
}

static void bisect_json(FILE *f, const db_session *b, const db_bisect *sm)
{
	fputs("{\"phase\": ", f);
	db_json_str(f, b->phase ? b->phase : "");
	fputs(", \"pass\": ", f);
	db_json_str(f, b->pass ? b->pass : "");
	fputs(", \"probe\": ", f);
	json_str_or_null(f, b->probe);
	fprintf(f, ", \"state\": \"%s\", \"first_bad_layer\": ",
	        sm ? db_bisect_phase_name(sm->phase) : "unreadable");
	if (sm && sm->phase == DB_BP_FOUND && sm->first_bad >= 0)
		json_layer(f, sm->layers[sm->first_bad]);
	else
		fputs("null", f);
	fputs(", \"steps\": [", f);
	for (size_t i = 0; i < b->n_steps; i++) {
		const db_bisect_step *st = &b->steps[i];
		fputs(i ? ", {\"layer\": " : "{\"layer\": ", f);
		json_layer(f, st->layer);
		fprintf(f, ", \"verdict\": \"%s\", \"by\": \"%s\", \"auto\": \"%s\", \"cos\": ",
		        db_verdict_name(st->verdict), st->by_user ? "user" : "auto",
		        db_verdict_name(st->auto_verdict));
		db_json_num(f, st->cos);
		fputs(", \"rel\": ", f);
		db_json_num(f, st->rel);
		fprintf(f, ", \"band\": \"%s\"}", db_band_name(st->band));
	}
	fputs("]}", f);
}

void db_export_record_json(FILE *f, const db_export_ctx *x)
{
	const db_session *s = x->s;
	fputs(", \"marks\": [", f);
	for (size_t i = 0; s && i < s->n_marks; i++) {
		const db_mark *m = &s->marks[i];
		fputs(i ? ", {\"phase\": " : "{\"phase\": ", f);
		json_str_or_null(f, m->phase);
		fputs(", \"pass\": ", f);
		json_str_or_null(f, m->pass);
		fputs(", \"layer\": ", f);
		json_layer(f, m->layer);
		fputs(", \"stage\": ", f);
		json_str_or_null(f, m->stage);
		fputs(", \"rank\": ", f);
		if (m->rank >= 0)
			fprintf(f, "%d", m->rank);
		else
			fputs("\"all\"", f);
		fprintf(f, ", \"status\": \"%s\", \"text\": ", db_mark_status_name(m->status));
		db_json_str(f, m->text ? m->text : "");
		fprintf(f, ", \"time\": %lld}", (long long)m->time);
	}
	fputs("], \"bisects\": [", f);
	const db_session **v = s ? malloc(MAX_BISECTS * sizeof *v) : NULL;
	size_t n = v ? db_session_bisects(s, v, MAX_BISECTS) : 0;
	/* the one report.md centres on first, then the others in their order */
	const db_session *shown = x->bisect_of ? x->bisect_of : s;
	for (size_t i = 0; i < n; i++)
		if (v[i] == shown) {
			memmove(&v[1], &v[0], i * sizeof *v);
			v[0] = shown;
		}
	for (size_t i = 0; i < n; i++) {
		db_bisect sm;
		db_err err;
		bool ok = db_session_to_bisect(v[i], &sm, &err) == 0;
		if (i)
			fputs(", ", f);
		bisect_json(f, v[i], ok ? &sm : NULL);
		if (ok)
			db_bisect_free(&sm);
	}
	fputs("]", f);
	free(v);
}
