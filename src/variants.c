#include "db_variants.h"

#include <stdlib.h>
#include <string.h>

#include "db_bisect.h"
#include "db_export.h"
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
		long fd = db_first_divergence(c, NULL, NULL, -2);
		fputs(", \"first_divergence\": ", out);
		if (fd >= 0)
			fprintf(out, "%ld", fd);
		else
			fputs("null", out);
		fputs(", \"first_divergent_phase\": ", out);
		db_json_str(out, fd >= 0 ? c->pairs[fd].f.phase : NULL);
		long fb = db_first_beyond_drift(c);
		fputs(", \"first_beyond_drift\": ", out);
		if (fb >= 0)
			fprintf(out, "%ld", fb);
		else
			fputs("null", out);
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
