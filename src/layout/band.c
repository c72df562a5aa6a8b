/* Severity bands: thresholds, classification, names and table glyphs.
 * The defaults (db_thresholds_default) live with the profile parser that
 * applies them, in profile_yaml.c. */
#include "db_metrics.h"

#include <math.h>

#include "db_profile.h"

static db_band band_cos(double cos, const db_thresholds *t)
{
	if (cos > t->ok_cos)
		return DB_BAND_OK;
	if (cos > t->drift_cos)
		return DB_BAND_DRIFT;
	if (cos > t->algo_cos)
		return DB_BAND_ALGO;
	return DB_BAND_BUG;
}

/* NaN rel (cannot happen for finite sums) falls through to bug. */
static db_band band_rel(double rel, const db_thresholds *t)
{
	if (rel < t->ok_rel)
		return DB_BAND_OK;
	if (rel < t->drift_rel)
		return DB_BAND_DRIFT;
	if (rel < t->algo_rel)
		return DB_BAND_ALGO;
	return DB_BAND_BUG;
}

db_band db_band_of(const db_metrics *m, const db_thresholds *t)
{
	if (!m || !t)
		return DB_BAND_NONE;
	if (m->stats_only) {
		if (m->md5_eq == 1)
			return DB_BAND_OK;      /* the same bytes */
		if (isnan(m->rel))
			return DB_BAND_NONE;    /* no statistic on both sides */
		db_band b = m->rel <= t->stats_ok_rel ? DB_BAND_OK
		          : m->rel <= t->stats_drift_rel ? DB_BAND_DRIFT
		          : m->rel <= t->stats_algo_rel ? DB_BAND_ALGO : DB_BAND_BUG;
		/* other bytes with the same statistics: drift at least */
		return m->md5_eq == 0 && b < DB_BAND_DRIFT ? DB_BAND_DRIFT : b;
	}
	if (isnan(m->cos))
		return DB_BAND_BUG;     /* one side all zeros, the other not */
	if (m->cos <= t->scramble_cos)
		return DB_BAND_SCRAMBLE;
	db_band bc = band_cos(m->cos, t), br = band_rel(m->rel, t);
	db_band b = bc > br ? bc : br;  /* the worse wins ("trust rel") */
	if (m->nonfinite_mismatch > 0 && b < DB_BAND_BUG)
		b = DB_BAND_BUG;
	return b;
}

db_band db_band_for(const db_profile *p, const char *stage, const db_metrics *m)
{
	db_band b = db_band_of(m, &p->thresholds);
	/* the regex last: most pairs are equal or not token ids */
	if (b != DB_BAND_NONE && (m->stats_only ? m->rel > 0 || m->md5_eq == 0 : !(m->max_abs == 0) ||
	                                m->nonfinite_mismatch > 0) &&
	    db_profile_is_input_ids(p, stage))
		b = DB_BAND_INPUTS;
	return b;
}

const char *db_band_name(db_band b)
{
	switch (b) {
	case DB_BAND_OK: return "ok";
	case DB_BAND_DRIFT: return "drift";
	case DB_BAND_ALGO: return "algo";
	case DB_BAND_BUG: return "bug";
	case DB_BAND_SCRAMBLE: return "scramble";
	case DB_BAND_INPUTS: return "inputs_differ";
	default: return "-";
	}
}

const char *db_band_glyph(db_band b, int utf8)
{
	switch (b) {
	case DB_BAND_OK: return utf8 ? "\u2713" : ".";
	case DB_BAND_DRIFT: return "~";
	case DB_BAND_ALGO: return utf8 ? "\u2717" : "x";
	case DB_BAND_BUG: return utf8 ? "\u2717\u2717" : "X";
	case DB_BAND_SCRAMBLE: return utf8 ? "\u203c" : "#";
	case DB_BAND_INPUTS: return utf8 ? "\u2260" : "!";
	default: return "-";
	}
}
