/* The culprit's first bad token (issue 35): bisect names a layer and a
 * stage of one pass; here the pair behind them gives the token where the
 * runs part, counted in the aligned sequence when the passes are aligned by
 * token (db_token.h), so the verdict reads "L4 attn_pre_o_proj, pass 3,
 * token 14". */
#include "bisect_priv.h"

#include <string.h>

#include "db_token.h"

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

void db_bisect_token(db_bisect_run *r, db_bisect_result *res)
{
	const db_compare *c = r->c;
	long first = -1, any = -1;
	if (!c->align_whole)    /* a token of its own pass says little; aligned, it names one */
		return;
	/* the sub-stage the walk named, else the stage */
	const char *st = res->first_bad_substage ? res->first_bad_substage : res->first_bad_stage;
	for (size_t i = 0; i < c->n_pairs && first < 0; i++) {
		const db_pair *p = &c->pairs[i];
		if (p->f.layer != res->first_bad_layer || strcmp(p->f.stage, st) ||
		    (r->phase && !same(p->f.phase, r->phase)) || (r->pass && !same(p->f.pass, r->pass)) ||
		    p->status != DB_ST_OK)
			continue;
		if (any < 0)
			any = (long)i;
		if (db_pair_diverges(p))
			first = (long)i;
	}
	if (first < 0)
		first = any;
	/* a culprit worse than drift (bf16 engine against trainer drifts in
	 * every row): its first row beyond drift */
	db_token_at t;
	if (first < 0)
		return;
	const db_pair *p = &c->pairs[first];
	if (p->status == DB_ST_OK && p->band > DB_BAND_DRIFT
	    ? db_first_beyond_drift_token(c, first, &t) != 1
	    : db_first_divergence_token(c, first, &t) != 1)
		return;
	res->has_token = true;
	res->token = t.token;
	res->token_row = t.row;
	res->token_rows = t.n_rows;
}
