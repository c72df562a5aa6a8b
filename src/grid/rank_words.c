/* The rank part of a pair's name (db_rank_words.h). */
#include "db_rank_words.h"

#include <stdio.h>
#include <stdlib.h>

#include "db_grid.h"

bool db_every_rank_diverges(const db_compare *c, size_t pair, size_t *n)
{
	const db_pair *p = &c->pairs[pair];
	size_t *rp = NULL, k = 0, bad = 0;
	if (!p->merged && p->f.rank >= 0)
		k = db_rank_pairs(c, pair, &rp);
	for (size_t i = 0; i < k; i++)
		bad += db_pair_diverges(&c->pairs[rp[i]]);
	free(rp);
	if (n)
		*n = k;
	return k >= 2 && bad == k;
}

const char *db_rank_words_of(const db_pair *p, char *buf, size_t len)
{
	if (p->merged)
		snprintf(buf, len, "(merged ranks)");
	else if (p->slot.side == DB_SLOT_IN_TREE && p->slot.ranked)
		snprintf(buf, len, "rank %d slot %d", p->slot.rank, p->slot.k);
	else if (p->slot.side == DB_SLOT_IN_TREE)
		snprintf(buf, len, "slot %d", p->slot.k);
	else if (p->f.rank >= 0)
		snprintf(buf, len, "rank %d", p->f.rank);
	else if (len)
		buf[0] = '\0';
	return buf;
}

const char *db_rank_words(const db_compare *c, size_t pair, char *buf, size_t len)
{
	const db_pair *p = &c->pairs[pair];
	size_t n;
	if (!db_every_rank_diverges(c, pair, &n))
		return db_rank_words_of(p, buf, len);
	snprintf(buf, len, "every %s (of %zu)", p->slot.side == DB_SLOT_IN_TREE ? "slot" : "rank", n);
	return buf;
}
