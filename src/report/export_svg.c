/* The heatmap as SVG: one row per model-level stage and layer, one column
 * per top-level stage, cells coloured by band with the cos printed, marked
 * cells outlined. Colours match the TUI's severity order; the cells are
 * the grid's as given (db_export_grid: chosen as the screen chooses). */
#include "db_export.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "db_esc.h"

#define CELL_W 92
#define CELL_H 22
#define LABEL_W 150
#define HEAD_H 56

static const char *band_fill(db_band b)
{
	switch (b) {
	case DB_BAND_OK: return "#2e7d32";
	case DB_BAND_DRIFT: return "#f9a825";
	case DB_BAND_ALGO: return "#ef6c00";
	case DB_BAND_BUG: return "#c62828";
	case DB_BAND_SCRAMBLE: return "#6a1b9a";
	case DB_BAND_INPUTS: return "#1565c0";
	default: return "#bdbdbd";
	}
}

/* Foreign names as XML text: db_esc's rule first (an SVG must be valid
 * UTF-8 and is shown by viewers that honour bidi controls), then the XML
 * entities. */
static void xml_text(FILE *f, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char ch[DB_ESC_CHAR_MAX];
	while (n > 0) {
		size_t k = db_esc_char(s, n, ch);
		switch (ch[0]) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputs(ch, f);
		}
		s += k, n -= k;
	}
}

/* The mark on a cell of grid g (its phase, pass and rank; a row mark or
 * one on a sub-stage of the cell counts): as the workbench draws it. */
static const db_mark *mark_on(const db_session *s, const db_grid *g, int layer,
                              const char *stage)
{
	long i = db_session_mark_at(s, g->phase, g->pass, layer, stage,
	                            g->rank == DB_RANK_ANY ? -1 : g->rank, true);
	return i >= 0 ? &s->marks[i] : NULL;
}

static void cell(FILE *f, const db_compare *c, size_t pi, double x, double y,
                 const char *title, const db_mark *mk)
{
	const db_pair *p = pi != DB_NO_PAIR ? &c->pairs[pi] : NULL;
	db_band b = p && p->status == DB_ST_OK ? p->band : DB_BAND_NONE;
	fputs("<g><title>", f);
	xml_text(f, title);
	if (p && !p->merged && p->f.rank >= 0)
		fprintf(f, " rank %d", p->f.rank);
	if (p && p->status == DB_ST_OK && p->m.stats_only)
		fprintf(f, ": statistics only, rel %.4g (%s)", p->m.rel, db_band_name(b));
	else if (p && p->status == DB_ST_OK)
		fprintf(f, ": cos %.8f rel %.4g (%s)", p->m.cos, p->m.rel, db_band_name(b));
	else if (p)
		fprintf(f, ": %s", db_status_name(p->status));
	if (mk) {
		fprintf(f, " [%s: ", db_mark_status_name(mk->status));
		xml_text(f, mk->text);
		fputc(']', f);
	}
	fprintf(f, "</title><rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"%s\"",
	        x, y, CELL_W - 2, CELL_H - 2, p ? band_fill(b) : "#f5f5f5");
	if (mk)
		fputs(" stroke=\"#1565c0\" stroke-width=\"3\"", f);
	fputs("/>", f);
	if (p) {
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" class=\"v\">", x + (CELL_W - 2) / 2.0,
		        y + CELL_H - 7.0);
		if (p->status == DB_ST_OK && p->m.stats_only)
			fputs("stats", f);       /* no cos: the dump holds statistics */
		else if (p->status == DB_ST_OK && isfinite(p->m.cos))
			fprintf(f, "%.6f", p->m.cos);
		else if (p->status == DB_ST_OK)
			fputs("nan", f);
		else
			fputs(db_status_name(p->status), f);
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
}

int db_export_svg(FILE *f, const db_compare *c, const db_grid *g,
                  const db_session *s)
{
	size_t ncols = g->n_cols ? g->n_cols : 1;
	int w = LABEL_W + (int)ncols * CELL_W + 10, h = HEAD_H + (int)g->n_rows * CELL_H + 60;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n", w, h, w, h);
	fputs("<style>.v{text-anchor:middle;fill:#fff}.l{text-anchor:end}.h{text-anchor:middle}</style>\n", f);
	fputs("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n", f);
	fprintf(f, "<text x=\"4\" y=\"14\">phase ");
	xml_text(f, g->phase && *g->phase ? g->phase : "-");
	fputs(", pass ", f);
	xml_text(f, g->pass && *g->pass ? g->pass : "-");
	if (g->rank == DB_RANK_ANY)
		fputs(", all ranks: merged where sharded, else the worst rank</text>\n", f);
	else
		fprintf(f, ", rank %d</text>\n", g->rank);
	for (size_t k = 0; k < g->n_cols; k++) {
		/* horizontal, on two staggered lines: renderers agree on that */
		double x = LABEL_W + k * CELL_W + (CELL_W - 2) / 2.0;
		double y = HEAD_H - 8.0 - (k % 2 ? 0 : 14.0);
		fprintf(f, "<text class=\"h\" x=\"%.0f\" y=\"%.0f\"><title>", x, y);
		xml_text(f, g->cols[k]);
		fputs("</title>", f);
		char shortname[28];
		snprintf(shortname, sizeof shortname, "%s", g->cols[k]);
		xml_text(f, shortname);
		fputs("</text>\n", f);
	}
	for (size_t r = 0; r < g->n_rows; r++) {
		const db_grid_row *row = &g->rows[r];
		double y = HEAD_H + r * CELL_H;
		fprintf(f, "<text class=\"l\" x=\"%d\" y=\"%.0f\">", LABEL_W - 6, y + CELL_H - 7.0);
		xml_text(f, row->label);
		fputs("</text>\n", f);
		if (row->layer < 0) {
			char title[300];
			snprintf(title, sizeof title, "%s", row->label);
			cell(f, c, row->cells[0], LABEL_W, y, title, mark_on(s, g, -1, row->label));
			continue;
		}
		for (size_t k = 0; k < g->n_cols; k++) {
			char title[400];
			snprintf(title, sizeof title, "%s %s", row->label, g->cols[k]);
			cell(f, c, row->cells[k], LABEL_W + k * (double)CELL_W, y, title,
			     mark_on(s, g, row->layer, g->cols[k]));
		}
	}
	/* legend */
	double ly = HEAD_H + g->n_rows * CELL_H + 12.0;
	static const db_band bands[] = {DB_BAND_OK, DB_BAND_DRIFT, DB_BAND_ALGO, DB_BAND_BUG,
	                                DB_BAND_SCRAMBLE};
	for (size_t i = 0; i < 5; i++) {
		double x = 4 + i * 80.0;
		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
		        "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", x, ly, band_fill(bands[i]), x + 16,
		        ly + 10, db_band_name(bands[i]));
	}
	/* the colours are bands; the verdicts may be another judge's */
	char jb[1024];
	fprintf(f, "<text x=\"4\" y=\"%.0f\">verdicts judged by: ", ly + 30);
	xml_text(f, db_judged_by_text(c, jb, sizeof jb));
	fputs("</text>\n", f);
	for (size_t i = 0; i < c->n_pairs; i++)
		if (c->pairs[i].status == DB_ST_OK && c->pairs[i].m.stats_only) {
			fprintf(f, "<text x=\"4\" y=\"%.0f\">stats: statistics only (the dump holds Max, "
			        "Min, Mean, Norm, not the values): coloured by the rel measured on them</text>\n",
			        ly + 46);
			break;
		}
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}
