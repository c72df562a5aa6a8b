/* Calls only one side makes, as findings (db_calls.h). Read from the
 * pairs alone: a run is the one-sided pairs between two paired ones of the
 * same phase, pass, rank and layer, in the order pairing put them. And the
 * Python frame that made a call, from the dumper's stack record. */
#include "db_calls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_index.h"
#include "db_reader.h"
#include "pair/call_align.h"
#include "read/msprobe_stack.h"

static bool one_sided(const db_pair *p)
{
	return p->status == DB_ST_REF_ONLY || p->status == DB_ST_TARGET_ONLY;
}

static bool same_group(const db_pair *a, const db_pair *b)
{
	return a->f.rank == b->f.rank && a->f.layer == b->f.layer && !strcmp(a->f.pass, b->f.pass) &&
	       !strcmp(a->f.phase, b->f.phase);
}

typedef struct sbuf { char *s; size_t len, n; } sbuf;

static void put(sbuf *b, const char *fmt, const char *arg)
{
	if (b->n + 1 >= b->len)
		return;
	int w = snprintf(b->s + b->n, b->len - b->n, fmt, arg);
	if (w > 0)
		b->n = b->n + (size_t)w < b->len ? b->n + (size_t)w : b->len - 1;
}

/* The names of the run's calls on one side, ", " between them. */
static void names(sbuf *b, const db_compare *c, size_t a, size_t e, db_status st)
{
	bool any = false;
	for (size_t i = a; i < e; i++) {
		if (c->pairs[i].status != st)
			continue;
		char nm[DB_CALL_NAME_MAX];
		db_call_name(c->pairs[i].f.stage, nm, sizeof nm);
		put(b, any ? ", %s" : "%s", nm);
		any = true;
	}
}

void db_call_where(const db_pair *p, char *buf, size_t len)
{
	sbuf b = {buf, len, 0};
	char n[32];
	buf[0] = 0;
	if (p->f.phase[0])
		put(&b, "%s ", p->f.phase);
	if (p->f.pass[0])
		put(&b, "pass %s ", p->f.pass);
	snprintf(n, sizeof n, "rank %d ", p->f.rank);
	if (p->f.rank >= 0)
		put(&b, "%s", n);
	snprintf(n, sizeof n, "L%d", p->f.layer);
	put(&b, "%s", p->f.layer >= 0 ? n : "model");
}

/* name without its output numbers ("a.b.0.1" -> "a.b"): the call itself */
static size_t call_len(const char *nm)
{
	size_t l = strlen(nm);
	for (;;) {
		size_t k = l;
		while (k > 0 && nm[k - 1] >= '0' && nm[k - 1] <= '9')
			k--;
		if (k == l || k < 2 || nm[k - 1] != '.')
			return l;
		l = k - 1;
	}
}

/* The run is one call on both sides that gave another number of outputs:
 * its name into nm, the counts into *nr, *nt. */
static bool arity_only(const db_compare *c, size_t a, size_t e, char *nm, size_t len, size_t *nr,
                       size_t *nt)
{
	size_t bl = 0;
	*nr = *nt = 0;
	for (size_t k = a; k < e; k++) {
		char x[DB_CALL_NAME_MAX];
		db_call_name(c->pairs[k].f.stage, x, sizeof x);
		size_t l = call_len(x);
		if (k == a) {
			bl = l < len ? l : len - 1;
			memcpy(nm, x, bl);
			nm[bl] = 0;
		} else if (l != bl || memcmp(nm, x, l)) {
			return false;
		}
		*(c->pairs[k].status == DB_ST_REF_ONLY ? nr : nt) += 1;
	}
	return *nr && *nt;
}

bool db_call_finding(const db_compare *c, size_t i, char *buf, size_t len, size_t *first)
{
	if (!c->profile || !c->profile->pair_calls || i >= c->n_pairs || !one_sided(&c->pairs[i]) ||
	    !len)
		return false;
	const db_pair *p = &c->pairs[i];
	size_t a = i, e = i + 1;
	while (a > 0 && one_sided(&c->pairs[a - 1]) && same_group(&c->pairs[a - 1], p))
		a--;
	while (e < c->n_pairs && one_sided(&c->pairs[e]) && same_group(&c->pairs[e], p))
		e++;
	bool r = false, t = false;
	for (size_t k = a; k < e; k++) {
		r |= c->pairs[k].status == DB_ST_REF_ONLY;
		t |= c->pairs[k].status == DB_ST_TARGET_ONLY;
	}
	const db_pair *before = a > 0 && same_group(&c->pairs[a - 1], p) ? &c->pairs[a - 1] : NULL;
	const db_pair *after = e < c->n_pairs && same_group(&c->pairs[e], p) ? &c->pairs[e] : NULL;
	char where[300];
	char nm[DB_CALL_NAME_MAX];
	if (after) {
		db_call_name(after->f.stage, nm, sizeof nm);
		snprintf(where, sizeof where, "before %s", nm);
	} else if (before) {
		db_call_name(before->f.stage, nm, sizeof nm);
		snprintf(where, sizeof where, "after %s", nm);
	} else {
		snprintf(where, sizeof where, "in this layer");
	}
	sbuf b = {buf, len, 0};
	buf[0] = 0;
	size_t nr, nt;
	if (arity_only(c, a, e, nm, sizeof nm, &nr, &nt)) {
		char cnt[96];
		snprintf(cnt, sizeof cnt, " gives %zu output%s in the target, %zu in the reference", nt,
		         nt == 1 ? "" : "s", nr);
		put(&b, "%s", nm);
		put(&b, "%s", cnt);
		if (first)
			*first = a;
		return true;
	}
	put(&b, "%s", "target calls ");
	if (t && r) {
		names(&b, c, a, e, DB_ST_TARGET_ONLY);
		put(&b, "%s", " where the reference calls ");
		names(&b, c, a, e, DB_ST_REF_ONLY);
		put(&b, " (%s)", where);
	} else if (t) {
		names(&b, c, a, e, DB_ST_TARGET_ONLY);
		put(&b, ", which the reference does not (%s)", where);
	} else {
		b.n = 0;
		put(&b, "%s", "target does not call ");
		names(&b, c, a, e, DB_ST_REF_ONLY);
		put(&b, " (the reference does, %s)", where);
	}
	if (first)
		*first = a;
	return true;
}

/* one side's frame: the item's call (its entry's statistics name it) */
static bool frame_of(const db_index *ix, const db_item *it, char *buf, size_t len)
{
	buf[0] = 0;
	if (!ix || !it)
		return false;
	char *path = db_index_path(ix, it);
	db_file *f = NULL;
	db_err e = {{0}};
	bool ok = false;
	if (path && db_file_open(path, &f, &e) == 0) {
		const db_entry *en = db_file_find(f, it->key);
		if (en && !en->err && en->t.st && en->t.st->call)
			ok = db_msprobe_frame(path, en->t.st->call, buf, len) == 0;
		db_file_close(f);
	}
	free(path);
	if (!ok)
		buf[0] = 0;
	return ok;
}

bool db_call_frames(const db_compare *c, const db_pair *p, char *ref, char *tgt, size_t len)
{
	if (!len)
		return false;
	bool r = frame_of(c->ref, p->ref, ref, len);
	bool t = frame_of(c->tgt ? c->tgt : c->ref, p->tgt, tgt, len);
	return r || t;
}
