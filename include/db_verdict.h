/* The verdict on one pair, worded once (issue 33). Whether the pair
 * diverges (db_pair_diverges), what judged it and the word every surface
 * prints for it: compare's table and headline, bisect, the workbench,
 * report.md and JSON all call db_pair_verdict, so a pair never reads
 * "drift" in one place and "beyond noise" in another.
 *
 * The rule, in order:
 *   - not measured yet: "-"; a status other than ok: the status name;
 *   - judged bitwise (db_pair_judged_bitwise: a slot of one batch,
 *     --slots, or a pair of a comparison of the prompt run alone against
 *     a batch whose first layer is bit-identical, decided by the
 *     comparison and kept on the pair): "bit-identical" or, when a bit
 *     differs, "bits differ" (a band worse than drift keeps its name);
 *   - a noise floor (--noise) decides: "within noise" or "beyond noise"
 *     (db_noise_judge also moves the band: within = ok, beyond = algo at
 *     least, so glyphs and colours say the same);
 *   - else the band's name ("ok", "drift", "algo", "bug", ...).
 * Tools building rules on the verdict (CI gates) take db_verdict.diverges
 * and db_judgement.word from here. */
#ifndef DB_VERDICT_H
#define DB_VERDICT_H
#include <stdbool.h>
#include <stddef.h>
#include "db_compare.h"

typedef enum db_judge {
	DB_JUDGED_PENDING = 0,  /* not measured yet */
	DB_JUDGED_STATUS,       /* missing, shape, error, not comparable */
	DB_JUDGED_BAND,         /* the profile's bands on rel */
	DB_JUDGED_NOISE,        /* the noise run's floor */
	DB_JUDGED_BITWISE       /* slots of one batch, or the prompt alone against
	                           a batch: any bit that differs */
} db_judge;

typedef struct db_judgement {
	bool diverges;          /* == db_pair_diverges(p) */
	db_judge by;
	db_band band;           /* the band its glyph and colour show */
	const char *word;       /* static string, see above */
} db_judgement;

void db_pair_verdict(const db_pair *p, db_judgement *out);
/* db_pair_verdict's word alone (static). */
const char *db_verdict_word(const db_pair *p);
/* The word and what backs it: "beyond noise x9.42e+04 (floor 5.75e-07)",
 * "bits differ (max |diff| 6e-07)", "bug"; into buf, returned. */
char *db_verdict_text(const db_pair *p, char *buf, size_t len);
/* "noise", "bitwise", "band", "status" or "pending": JSON's judged_by of a pair. */
const char *db_judge_key(db_judge j);

/* What a comparison compared (issue 33): a claim about "every pair" must
 * not cover pairs that were never measured. Over computed pairs. */
#define DB_TALLY_REASONS 4
typedef struct db_tally {
	size_t pairs, ok, diverge, not_comparable, pending;
	size_t nothing;         /* measured, no number on both sides (statistics
	                           NaN or null: band none): neither ok nor bad */
	/* the not comparable pairs' reasons (the text before the first ": "
	 * of the pair's error), the first DB_TALLY_REASONS distinct ones */
	size_t n_reasons;
	struct {
		char why[200];
		size_t n;
		long first;     /* its first pair */
	} reason[DB_TALLY_REASONS];
} db_tally;
void db_compare_tally(const db_compare *c, db_tally *t);
/* The sentence for a comparison with no divergence, one for every surface:
 * "no divergence: every pair is in the ok band", or, when some pairs could
 * not be compared, "no divergence among the pairs compared: 296 ok; 16 not
 * comparable: fused per-rank output across layouts (1 vs 2 ranks) (16, e.g.
 * L0 self_attn.qkv_proj)"; the noise and slot runs' own words. Into buf,
 * returned. */
char *db_no_divergence_text(const db_compare *c, char *buf, size_t len);

#endif
