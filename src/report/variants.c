#include "db_variants.h"

#include <stdlib.h>
#include <string.h>

#include "db_bisect.h"
#include "db_export.h"
#include "db_grid.h"
#include "db_json.h"

int db_variants_open(const char *ref, const char *const *tgts, size_t n,
                     const db_compare_opts *o, db_variants *out, db_err *err)
{
	out->n = 0;
	out->v = calloc(n ? n : 1, sizeof *out->v);
	if (!out->v)
		return db_err_set(err, NULL, NULL, -1, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (db_compare_open(ref, tgts[i], o, &out->v[i], err) < 0) {
			/* name the variant: the message alone says not which */
			char msg[sizeof err->msg];
			memcpy(msg, err->msg, sizeof msg);
			int l = snprintf(err->msg, sizeof err->msg, "variant %zu (%.200s): ", i + 1,
			                 tgts[i]);
			if (l > 0 && (size_t)l < sizeof err->msg)
				snprintf(err->msg + l, sizeof err->msg - (size_t)l, "%.*s",
				         (int)(sizeof err->msg - (size_t)l - 1), msg);
			db_variants_free(out);
			return -1;
		}
		out->n++;
	}
	return 0;
}

void db_variants_free(db_variants *vs)
{
	for (size_t i = 0; i < vs->n; i++)
		db_compare_free(vs->v[i]);
	free(vs->v);
	vs->v = NULL;
	vs->n = 0;
}

void db_variant_count(const db_compare *c, db_variant_counts *k)
{
	memset(k, 0, sizeof *k);
	k->pairs = c->n_pairs;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->status == DB_ST_OK) {
			if (atomic_load_explicit(&p->state, memory_order_acquire) != DB_PAIR_DONE)
				continue;
			if (db_pair_diverges(p))
				k->diverge++;
			else
				k->ok++;
		} else if (p->status == DB_ST_ERROR) {
			k->error++;
		} else if (p->status != DB_ST_NOT_COMPARABLE) {
			k->missing++;
		}
	}
}

static bool sel(const db_pair *p, const char *phase, const char *pass)
{
	return (!phase || !*phase || !strcmp(p->f.phase, phase)) &&
	       (!pass || !*pass || !strcmp(p->f.pass, pass));
}

/* Worse of two computed rank pairs: not ok, then higher band, then lower cos. */
static bool worse(const db_pair *a, const db_pair *b)
{
	if ((a->status != DB_ST_OK) != (b->status != DB_ST_OK))
		return a->status != DB_ST_OK;
	if (a->band != b->band)
		return a->band > b->band;
	return a->m.cos < b->m.cos;
}

long db_variant_probe_pair(const db_compare *c, const char *phase, const char *pass,
                           const char *stage, int layer)
{
	const char *st = db_probe_stage_at(c, phase, pass, stage, layer);
	if (!st)
		return -1;
	long best = -1;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->f.layer != layer || p->occurrence || strcmp(p->f.stage, st) ||
		    !sel(p, phase, pass) || !p->ref || !p->tgt)
			continue;
		if (p->f.rank < 0)
			return (long)i;
		bool done = atomic_load_explicit(&p->state, memory_order_acquire) == DB_PAIR_DONE;
		if (best < 0 || (done && worse(p, &c->pairs[best])))
			best = (long)i;
	}
	return best;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

size_t db_variants_layers(const db_variants *vs, int **layers)
{
	size_t n = 0, cap = 0;
	int *l = NULL;
	for (size_t v = 0; v < vs->n; v++)
		for (size_t i = 0; i < vs->v[v]->n_pairs; i++) {
			int x = vs->v[v]->pairs[i].f.layer;
			if (x < 0)
				continue;
			bool seen = false;
			for (size_t k = 0; k < n && !seen; k++)
				seen = l[k] == x;
			if (seen)
				continue;
			if (n == cap) {
				int *nl = realloc(l, (cap = cap ? 2 * cap : 16) * sizeof *l);
				if (!nl) {
					free(l);
					*layers = NULL;
					return 0;
				}
				l = nl;
			}
			l[n++] = x;
		}
	if (n)
		qsort(l, n, sizeof *l, cmp_int);
	*layers = l;
	return n;
}

int db_variants_json(FILE *out, const db_variants *vs)
{
	fputs("{\"variants\": [", out);
	for (size_t v = 0; v < vs->n; v++) {
		const db_compare *c = vs->v[v];
		fputs(v ? ",\n" : "\n", out);
		fputs("{\"target\": ", out);
		db_json_str(out, c->tgt_root);
		fputs(", \"ref\": ", out);
		db_json_str(out, c->ref_root);
		fputs(", \"profile\": ", out);
		db_json_str(out, c->profile ? c->profile->name : NULL);
		db_export_divergence_json(out, c);
		db_variant_counts k;
		db_variant_count(c, &k);
		fprintf(out, ", \"counts\": {\"pairs\": %zu, \"ok\": %zu, \"diverge\": %zu, "
		        "\"missing\": %zu, \"error\": %zu}", k.pairs, k.ok, k.diverge, k.missing,
		        k.error);
		fputs(", \"pairs\": [", out);
		for (size_t i = 0; i < c->n_pairs; i++) {
			fputs(i ? ",\n  " : "\n  ", out);
			db_export_pair_json(out, c, &c->pairs[i]);
		}
		fputs("\n]}", out);
	}
	fputs("\n]}\n", out);
	return ferror(out) ? -1 : 0;
}

int db_variants_matrix(const db_variants *vs, const char *phase, const char *pass,
                       const char *stage, bool compute, size_t skip, db_variant_matrix *m)
{
	memset(m, 0, sizeof *m);
	m->n = vs->n;
	if (!vs->n)
		return 0;
	if (stage) {
		snprintf(m->stage, sizeof m->stage, "%s", stage);
	} else {
		char *st = NULL, why[256];
		db_probe_how how;
		db_err err = {{0}};
		if (db_bisect_choose_probe(vs->v[0], phase, pass, NULL, &st, &how, why, sizeof why,
		                           &err) == 0)
			snprintf(m->stage, sizeof m->stage, "%s", st);
		else
			snprintf(m->stage, sizeof m->stage, "%s", DB_PROBE_LAST);
		free(st);
	}
	m->n_layers = db_variants_layers(vs, &m->layers);
	if (!m->n_layers)
		return 0;
	m->pair = malloc(m->n_layers * vs->n * sizeof *m->pair);
	if (!m->pair) {
		free(m->layers);
		m->layers = NULL;
		return -1;
	}
	for (size_t l = 0; l < m->n_layers; l++)
		for (size_t v = 0; v < vs->n; v++) {
			db_compare *c = vs->v[v];
			long p = db_variant_probe_pair(c, phase, pass, m->stage, m->layers[l]);
			m->pair[l * vs->n + v] = p;
			if (p >= 0 && compute && v != skip)
				db_compare_pair(c, &c->pairs[p]);
		}
	return 0;
}

void db_variant_matrix_free(db_variant_matrix *m)
{
	free(m->layers);
	free(m->pair);
	memset(m, 0, sizeof *m);
}

const db_pair *db_variant_cell(const db_variants *vs, const db_variant_matrix *m, size_t l,
                               size_t v)
{
	long p = m->pair[l * m->n + v];
	return p >= 0 ? &vs->v[v]->pairs[p] : NULL;
}

static bool done(const db_pair *p)
{
	return atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire) == DB_PAIR_DONE;
}

char *db_variant_fixed_by(const db_variants *vs, const db_variant_matrix *m, size_t l,
                          char *buf, size_t len)
{
	bool any_bad = false;
	for (size_t v = 0; v < m->n; v++) {
		const db_pair *p = db_variant_cell(vs, m, l, v);
		any_bad |= p && (p->status != DB_ST_OK || (done(p) && db_pair_diverges(p)));
	}
	size_t n = 0;
	buf[0] = 0;
	for (size_t v = 0; any_bad && v < m->n && n < len; v++) {
		const db_pair *p = db_variant_cell(vs, m, l, v);
		if (p && p->status == DB_ST_OK && done(p) && !db_pair_diverges(p))
			n += (size_t)snprintf(buf + n, len - n, "%s%zu", n ? " " : "", v + 1);
	}
	return buf;
}

/* "0.907335 bug", "shape_mismatch", "-" (not dumped), "…" (pending). */
static void cell_text(const db_pair *p, char *buf, size_t len)
{
	if (!p)
		snprintf(buf, len, "-");
	else if (p->status != DB_ST_OK)
		snprintf(buf, len, "%s", db_status_name(p->status));
	else if (!done(p))
		snprintf(buf, len, "...");
	else
		snprintf(buf, len, "%.6f %s", p->m.cos, db_band_name(p->band));
}

int db_variants_md(FILE *out, const db_variants *vs, const db_variant_matrix *m)
{
	fprintf(out, "Probe `%s` per layer and variant (cos; band):\n\n", m->stage);
	for (size_t v = 0; v < vs->n; v++)
		fprintf(out, "- variant %zu: `%s`\n", v + 1, vs->v[v]->tgt_root);
	fputs("\n| layer |", out);
	for (size_t v = 0; v < vs->n; v++)
		fprintf(out, " %zu |", v + 1);
	fputs(" ok in |\n|---|", out);
	for (size_t v = 0; v < vs->n; v++)
		fputs("---|", out);
	fputs("---|\n", out);
	for (size_t l = 0; l < m->n_layers; l++) {
		fprintf(out, "| L%d |", m->layers[l]);
		for (size_t v = 0; v < vs->n; v++) {
			char c[64];
			cell_text(db_variant_cell(vs, m, l, v), c, sizeof c);
			fprintf(out, " %s |", c);
		}
		char fb[128];
		fprintf(out, " %s |\n", db_variant_fixed_by(vs, m, l, fb, sizeof fb));
	}
	return ferror(out) ? -1 : 0;
}

int db_variants_text(FILE *out, const db_variants *vs, const db_variant_matrix *m)
{
	fprintf(out, "probe %s per layer (cos, band; ok in: the variants ok where another is "
	        "bad)\n%-6s", m->stage, "layer");
	for (size_t v = 0; v < vs->n; v++) {
		char h[32];
		snprintf(h, sizeof h, "variant %zu", v + 1);
		fprintf(out, " %-22s", h);
	}
	fputs(" ok in\n", out);
	for (size_t l = 0; l < m->n_layers; l++) {
		char line[4096];
		size_t o = (size_t)snprintf(line, sizeof line, "L%-5d", m->layers[l]);
		for (size_t v = 0; v < vs->n && o < sizeof line; v++) {
			char c[64];
			cell_text(db_variant_cell(vs, m, l, v), c, sizeof c);
			o += (size_t)snprintf(line + o, sizeof line - o, " %-22s", c);
		}
		char fb[128];
		if (o < sizeof line)
			snprintf(line + o, sizeof line - o, " %s",
			         db_variant_fixed_by(vs, m, l, fb, sizeof fb));
		/* no trailing blanks when no variant fixes the layer */
		size_t e = strlen(line);
		while (e && line[e - 1] == ' ')
			line[--e] = 0;
		fprintf(out, "%s\n", line);
	}
	return ferror(out) ? -1 : 0;
}
