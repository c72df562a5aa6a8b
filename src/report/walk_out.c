/* The intra-layer walk as Markdown for report.md; see db_export.h. The
 * rows and their roles are the bisect's (bisect/bisect_walk.c): this file
 * only formats them, as bisect_report.c does for the text output. */
#include "db_export.h"

#include <math.h>
#include <stdio.h>

#include "db_esc.h"

/* "0.0165", "-" (NaN: not measured), "inf". */
static const char *num(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v))
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, "%.3g", v);
	return buf;
}

void db_export_walk_md(FILE *f, const db_bisect_result *r)
{
	if (!r || !r->n_walk)
		return;
	char l[32], a[32], b[32], c[32], d[32];
	fputs("\nIntra-layer walk", f);
	if (r->has_first_bad)
		fprintf(f, " of %s", db_layer_label(r->first_bad_layer, l, sizeof l));
	fputs(" (error = relative L2, received from the previous comparable stage and "
	      "left; amplification = out / in; SQNR = -20 log10(out)):\n\n"
	      "| sub-stage | cos | rel | band | error in | error out | amplification | SQNR dB "
	      "| role |\n|---|---|---|---|---|---|---|---|---|\n", f);
	for (size_t i = 0; i < r->n_walk; i++) {
		const db_substage_row *w = &r->walk[i];
		fputs(w->culprit ? "| **" : "| ", f);
		db_esc_md_cell(w->stage, f);
		fputs(w->culprit ? "** | " : " | ", f);
		if (w->one_side || w->role == DB_ROLE_NOT_COMPARABLE) {
			/* in its place, with why, and no numbers it does not have */
			fputs("- | - | - | - | - | - | - | ", f);
			fputs(db_stage_role_name(w->role), f);
			fputs(": ", f);
			db_esc_md_cell(w->one_side ? w->one_side : w->reason ? w->reason : "no reason given", f);
			fputs(" |\n", f);
			continue;
		}
		char cs[32];
		snprintf(cs, sizeof cs, w->stats_only ? "stats only" : "%.8f", w->cos);
		fprintf(f, "%s | %.4g | %s | %s | %s | %s | %s | %s%s%s |\n", cs, w->rel,
		        db_band_name(w->band), num(w->err_in, a, sizeof a),
		        num(w->err_out, b, sizeof b), num(w->amp, c, sizeof c),
		        isinf(w->sqnr_db) ? "inf" : (snprintf(d, sizeof d, "%.1f", w->sqnr_db), d),
		        w->culprit ? "**" : "", db_stage_role_name(w->role),
		        w->culprit ? "** (culprit)" : "");
	}
	if (r->at_or_before) {
		fputs("\nThe culprit is at or before ", f);
		db_esc_md_text(r->first_bad_substage ? r->first_bad_substage : r->first_bad_stage, f);
		fputs(": ", f);
		db_esc_md_text(r->at_or_before, f);
		fputs(" before it could not be compared.\n", f);
	}
}
