/* Token alignment (--align, compare/align_tokens.c) and the first bad token
 * (db_token.h) as text (compare's header and verdict) and JSON. */
#include "db_export.h"

#include <math.h>
#include <stdio.h>

#include "db_esc.h"
#include "db_json.h"
#include "db_token.h"
#include "pair/align_items.h"

void db_align_text(FILE *out, const db_compare *c)
{
	if (c->align_whole)
		fprintf(out, "aligned by token: %s\n", db_esc(c->align_note));
	else if (c->align_note[0])
		fprintf(out, "token alignment: %s\n", db_esc(c->align_note));
}

static const char *whole_name(const db_compare *c)
{
	return c->align_whole == 1 ? "reference" : "target";
}

void db_align_md(FILE *out, const db_compare *c, long long token)
{
	if (!c->align_whole)
		return;
	fputs("- aligned by token: ", out);
	db_esc_md_text(c->align_note, out);
	if (token >= 0)
		fprintf(out, "; the culprit's first bad token: %lld", token);
	fputc('\n', out);
}

void db_token_text(FILE *out, const db_compare *c, long i, bool beyond)
{
	db_token_at t;
	if (i < 0 || (beyond ? db_first_beyond_drift_token(c, i, &t)
	                     : db_first_divergence_token(c, i, &t)) != 1)
		return;
	const db_pair *p = &c->pairs[i];
	const db_align_vitem *v = db_align_vitem_of(c, c->align_whole == 1 ? p->ref : p->tgt);
	fprintf(out, "  first bad token%s: %lld", beyond ? " beyond drift" : "", (long long)t.token);
	if (v && p->slot.tokens && v->g->exact)
		fprintf(out, " of the aligned sequence (%s pass %s, its row %lld of %lld; the %s's "
		        "pass %s holds every token)", c->align_whole == 1 ? "target" : "reference",
		        db_esc(p->f.pass), (long long)t.row, (long long)t.n_rows, whole_name(c),
		        db_esc(v->g->whole_pass));
	else if (v && p->slot.tokens) {   /* a request among the rows of a (packed) batch */
		const db_align_step *st = &v->g->steps[v->k];
		char rows[64];
		if (st->len == 1)
			snprintf(rows, sizeof rows, "it at row %lld", (long long)st->start);
		else
			snprintf(rows, sizeof rows, "them at rows %lld-%lld", (long long)st->start,
			         (long long)(st->start + st->len - 1));
		fprintf(out, " of the aligned sequence (%s pass %s, its row %lld of %lld; the %s's "
		        "pass %s holds %s of %lld)", c->align_whole == 1 ? "target" : "reference",
		        db_esc(p->f.pass), (long long)t.row, (long long)t.n_rows, whole_name(c),
		        db_esc(v->g->whole_pass), rows, (long long)v->g->n_tokens);
	}
	else
		fprintf(out, " (row %lld of %lld along dim %d)", (long long)t.row, (long long)t.n_rows,
		        t.dim);
	fprintf(out, ": rel %.4e max |diff| %.4g [%s]\n", t.rel, t.max_abs, db_band_name(t.band));
}

static int token_of(const db_compare *c, long i, bool beyond, db_token_at *t)
{
	return i < 0 ? 0 : beyond ? db_first_beyond_drift_token(c, i, t)
	                          : db_first_divergence_token(c, i, t);
}

/* The target's pass and row of token t of pair i: the whole pass's row
 * when the target is the one pass of an alignment, else its own. */
static void target_place(FILE *out, const db_compare *c, long i, const db_token_at *t)
{
	const db_pair *p = &c->pairs[i];
	const db_align_vitem *v = c->align_whole == 2 ? db_align_vitem_of(c, p->tgt) : NULL;
	fputs(", \"target_pass\": ", out);
	db_json_field(out, v ? v->g->whole_pass : p->f.pass, true);
	fprintf(out, ", \"target_row\": %lld", (long long)(v && p->slot.tokens ? t->token : t->row));
}

void db_token_fields_json(FILE *out, const db_compare *c, long i, bool beyond)
{
	db_token_at t;
	if (token_of(c, i, beyond, &t) != 1) {
		fputs(", \"token\": null, \"target_pass\": null, \"target_row\": null", out);
		return;
	}
	fprintf(out, ", \"token\": %lld", (long long)t.token);
	target_place(out, c, i, &t);
}

static void token_json(FILE *out, const db_compare *c, long i, bool beyond)
{
	db_token_at t;
	if (token_of(c, i, beyond, &t) != 1) {
		fputs("null", out);
		return;
	}
	const db_pair *p = &c->pairs[i];
	fprintf(out, "{\"token\": %lld, \"pass\": ", (long long)t.token);
	db_json_field(out, p->f.pass, true);
	fprintf(out, ", \"row\": %lld, \"rows\": %lld, \"dim\": %d, \"severity\": ",
	        (long long)t.row, (long long)t.n_rows, t.dim);
	db_json_str(out, db_band_name(t.band));
	fputs(", \"rel\": ", out);
	db_json_num(out, t.rel);
	target_place(out, c, i, &t);
	fputc('}', out);
}

void db_align_json(FILE *out, const db_compare *c, long fd, long fb)
{
	fputs(", \"alignment\": ", out);
	if (c->align_whole) {
		fputs("{\"by\": \"tokens\", \"whole\": ", out);
		db_json_str(out, whole_name(c));
		fputs(", \"how\": ", out);
		db_json_str(out, c->align_note);
		fputc('}', out);
	} else {
		fputs("{\"by\": \"passes\", \"why\": ", out);
		db_json_str(out, c->align_note[0] ? c->align_note : NULL);
		fputc('}', out);
	}
	fputs(", \"first_divergence_token\": ", out);
	token_json(out, c, fd, false);
	fputs(", \"first_beyond_drift_token\": ", out);
	token_json(out, c, fb, true);
}
