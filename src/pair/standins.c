/* A file that could not be read (truncated, still being written) has no
 * entries: its index holds one error item, under the profile's default
 * stage when the names come from the entries. Paired as it is, its tensors
 * look missing on that side: ref_only rows, a layout change across ranks
 * ("fused per-rank output across layouts (2 vs 1 ranks)") and an error
 * under a stage the tree does not have. Instead the error stands in for
 * each entry of the other side's file of the same phase, pass and rank
 * (and layer, when the path names one): one error pair per real stage,
 * named as the tree names it; the other ranks are compared as before
 * (issue 33). */
#include "standins.h"

#include <stdlib.h>
#include <string.h>

#include "companions.h"
#include "pairkey.h"

/* e, a file-level error item, and x, an entry of the other side that e's
 * file would have held. */
static bool stands_for(const db_item *e, const db_item *x)
{
	return !x->err && x->key && x->key[0] && x->f.phase == e->f.phase &&
	       x->f.pass == e->f.pass && x->f.rank == e->f.rank &&
	       (e->f.layer < 0 || x->f.layer == e->f.layer);
}

/* Replace side's file-level error items by their stand-ins (into *sets).
 * An entry the side has already (the hook writes pass N's last outputs
 * into file N+1) is not stood in for. -1 on OOM. */
static int one_side(const db_item ***side, size_t *n, const db_item *const *other, size_t no,
                    db_qset **sets)
{
	size_t n_err = 0;
	for (size_t i = 0; i < *n; i++)
		n_err += (*side)[i]->err && !((*side)[i]->key && (*side)[i]->key[0]);
	if (!n_err)
		return 0;       /* the common case: nothing to look up */
	db_pkmap have;
	db_pkmap_init(&have);
	bool *sub = calloc(no + 1, sizeof *sub);        /* other[k] stood in for */
	bool *gone = calloc(*n + 1, sizeof *gone);      /* side[i] replaced */
	int rc = sub && gone && db_pkmap_reserve(&have, *n) == 0 ? 0 : -1;
	for (size_t i = 0; i < *n && rc == 0; i++) {
		db_pkey k = db_pkey_of(&(*side)[i]->f, (*side)[i]->occurrence);
		if (!db_pkmap_put(&have, &k, i, NULL))
			rc = -1;
	}
	size_t extra = 0;
	for (size_t i = 0; i < *n && rc == 0; i++) {
		const db_item *e = (*side)[i];
		if (!e->err || (e->key && e->key[0]))
			continue;
		for (size_t k = 0; k < no; k++) {
			db_pkey pk = db_pkey_of(&other[k]->f, other[k]->occurrence);
			if (sub[k] || !stands_for(e, other[k]) || db_pkmap_get(&have, &pk))
				continue;
			sub[k] = gone[i] = true;
			extra++;
		}
	}
	db_pkmap_free(&have);
	db_qset *s = rc == 0 && extra ? calloc(1, sizeof *s) : NULL;
	const db_item **out = s ? malloc((*n + extra + 1) * sizeof *out) : NULL;
	if (s) {
		s->items = calloc(extra + 1, sizeof *s->items);
		s->groups = calloc(extra + 1, sizeof *s->groups);
	}
	if (rc != 0 || (extra && (!s || !out || !s->items || !s->groups))) {
		if (s) {
			free(s->items);
			free(s->groups);
		}
		free(s);
		free(out);
		free(sub);
		free(gone);
		return -1;
	}
	if (!extra) {
		free(sub);
		free(gone);
		return 0;
	}
	size_t m = 0;
	for (size_t i = 0; i < *n; i++) {
		const db_item *e = (*side)[i];
		if (!gone[i]) {
			out[m++] = e;
			continue;
		}
		for (size_t k = 0; k < no; k++) {
			const db_item *x = other[k];
			if (!sub[k] || !stands_for(e, x))
				continue;
			sub[k] = false;         /* one stand-in per entry */
			db_item *it = &s->items[s->n++];
			*it = *e;               /* e's file, size, error and order */
			it->key = x->key;       /* strings borrowed from the indexes */
			it->f = x->f;
			it->f.side = e->f.side;
			it->occurrence = x->occurrence;
			it->quant = NULL;
			it->has_st = false;
			out[m++] = it;
		}
	}
	free(sub);
	free(gone);
	free(*side);
	*side = out;
	*n = m;
	s->next = *sets;
	*sets = s;
	return 0;
}

int db_error_standins(db_compare *c, const db_item ***ri, size_t *nri, const db_item ***ti,
                      size_t *nti)
{
	db_qset *qs = c->quant;
	int rc = one_side(ti, nti, *ri, *nri, &qs);
	if (rc == 0)
		rc = one_side(ri, nri, *ti, *nti, &qs);
	c->quant = qs;
	return rc;
}
