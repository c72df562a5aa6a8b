/* What a comparison compared, and the words when nothing diverges: see
 * db_verdict.h (issue 33: no "every pair is ok" beside pairs that were
 * never compared). */
#include "db_verdict.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "db_noise.h"

void db_compare_tally(const db_compare *c, db_tally *t)
{
	memset(t, 0, sizeof *t);
	t->pairs = c->n_pairs;
	for (size_t i = 0; i < c->n_pairs; i++) {
		const db_pair *p = &c->pairs[i];
		if (atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire) !=
		    DB_PAIR_DONE) {
			t->pending++;
			continue;
		}
		if (p->status == DB_ST_OK && p->band == DB_BAND_NONE) {
			t->nothing++;
			continue;
		}
		if (p->status != DB_ST_NOT_COMPARABLE) {
			if (db_pair_diverges(p))
				t->diverge++;
			else
				t->ok++;
			continue;
		}
		t->not_comparable++;
		const char *e = p->error ? p->error : "no reason given";
		const char *colon = strstr(e, ": ");
		int len = colon ? (int)(colon - e) : (int)strlen(e);
		size_t k = 0;
		while (k < t->n_reasons && (strncmp(t->reason[k].why, e, (size_t)len) ||
		                            t->reason[k].why[len]))
			k++;
		if (k < t->n_reasons) {
			t->reason[k].n++;
		} else if (k < DB_TALLY_REASONS) {
			snprintf(t->reason[k].why, sizeof t->reason[k].why, "%.*s", len, e);
			t->reason[k].n = 1;
			t->reason[k].first = (long)i;
			t->n_reasons++;
		}
	}
}

char *db_no_divergence_text(const db_compare *c, char *buf, size_t len)
{
	if (!len)
		return buf;
	db_tally t;
	db_compare_tally(c, &t);
	const char *noise = db_noise_root(c);
	if (!t.not_comparable && t.nothing) {
		snprintf(buf, len, "no divergence%s among the pairs compared; %zu pair%s had nothing "
		         "to compare (statistics NaN or null on both sides)", noise ? " beyond noise" : "",
		         t.nothing, t.nothing == 1 ? "" : "s");
		return buf;
	}
	if (!t.not_comparable) {
		if (noise)
			snprintf(buf, len, "no divergence beyond noise: every pair is within %g x its "
			         "noise floor (or in the ok band where %s has none)",
			         c->profile->thresholds.noise_k, noise);
		else if (c->slots_alone)
			snprintf(buf, len, "no divergence: every slot is bit-identical to the prompt run "
			         "alone");
		else if (c->n_slots)
			snprintf(buf, len, "no divergence: every slot is bit-identical to slot 0");
		else
			snprintf(buf, len, "no divergence: every pair is in the ok band");
		return buf;
	}
	const char *ok = noise ? "within noise or ok" : c->n_slots ? "bit-identical" : "ok";
	size_t l = (size_t)snprintf(buf, len, "no divergence%s among the pairs compared: %zu %s; "
	                            "%zu not comparable:", noise ? " beyond noise" : "", t.ok, ok,
	                            t.not_comparable);
	for (size_t k = 0; k < t.n_reasons && l < len; k++) {
		const db_pair *p = &c->pairs[t.reason[k].first];
		char at[300];
		if (p->f.layer >= 0)
			snprintf(at, sizeof at, "L%d %s", p->f.layer, p->f.stage);
		else
			snprintf(at, sizeof at, "%s", p->f.stage);
		l += (size_t)snprintf(buf + l, len - l, "%s %s (%zu, e.g. %s)", k ? ";" : "",
		                      t.reason[k].why, t.reason[k].n, at);
	}
	size_t shown = 0;
	for (size_t k = 0; k < t.n_reasons; k++)
		shown += t.reason[k].n;
	if (shown < t.not_comparable && l < len)
		l += (size_t)snprintf(buf + l, len - l, "; %zu more", t.not_comparable - shown);
	if (t.nothing && l < len)
		snprintf(buf + l, len - l, "; %zu pair%s had nothing to compare (statistics NaN or "
		         "null on both sides)", t.nothing, t.nothing == 1 ? "" : "s");
	return buf;
}
