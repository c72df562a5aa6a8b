/* One pair's verdict and its words: see db_verdict.h. */
#include "db_verdict.h"

#include <stdatomic.h>
#include <stdio.h>

void db_pair_verdict(const db_pair *p, db_judgement *out)
{
	*out = (db_judgement){.diverges = false, .by = DB_JUDGED_PENDING, .band = DB_BAND_NONE,
	                    .word = "-"};
	if (atomic_load_explicit(&((db_pair *)p)->state, memory_order_acquire) != DB_PAIR_DONE)
		return;
	out->diverges = db_pair_diverges(p);
	out->band = p->band;
	if (p->status != DB_ST_OK) {
		out->by = DB_JUDGED_STATUS;
		out->word = db_status_name(p->status);
		return;
	}
	if (p->band == DB_BAND_INPUTS) {
		out->by = DB_JUDGED_BAND;
		out->word = db_band_name(p->band);
		return;
	}
	if (db_pair_judged_bitwise(p)) {
		out->by = DB_JUDGED_BITWISE;
		if (!out->diverges)
			out->word = "bit-identical";
		else if (p->band <= DB_BAND_DRIFT)
			out->word = "bits differ";
		else
			out->word = db_band_name(p->band);
		return;
	}
	if (p->noise == DB_NOISE_WITHIN || p->noise == DB_NOISE_BEYOND) {
		out->by = DB_JUDGED_NOISE;
		out->word = p->noise == DB_NOISE_BEYOND ? "beyond noise" : "within noise";
		return;
	}
	out->by = DB_JUDGED_BAND;
	out->word = db_band_name(p->band);
}

const char *db_verdict_word(const db_pair *p)
{
	db_judgement v;
	db_pair_verdict(p, &v);
	return v.word;
}

char *db_verdict_text(const db_pair *p, char *buf, size_t len)
{
	if (!len)
		return buf;
	db_judgement v;
	db_pair_verdict(p, &v);
	if (v.by == DB_JUDGED_NOISE)
		snprintf(buf, len, "%s x%.3g (floor %.2e)", v.word, p->noise_ratio, p->noise_floor);
	else if (v.by == DB_JUDGED_BITWISE && v.diverges)
		snprintf(buf, len, "%s (max |diff| %.3g)", v.word, p->m.max_abs);
	else
		snprintf(buf, len, "%s", v.word);
	return buf;
}

const char *db_judge_key(db_judge j)
{
	switch (j) {
	case DB_JUDGED_STATUS: return "status";
	case DB_JUDGED_BAND: return "band";
	case DB_JUDGED_NOISE: return "noise";
	case DB_JUDGED_BITWISE: return "bitwise";
	default: return "pending";
	}
}
