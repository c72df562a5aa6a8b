/* The "/" filter on stage names: a PCRE2 regex, smart case, through the
 * core's bounded matching (db_re.h); col_match caches which grid columns
 * pass (a column also passes when one of its sub-stages matches). */
#include "app.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_profile.h"
#include "db_re.h"

/* 1 match, 0 none, -1 the regex hit its limit (e set). */
static int filter_search(const struct tui *t, const char *s, db_err *e)
{
	return db_re_search(t->filter_re, t->filter_pat, s, NULL, e);
}

bool tui_filter_match(const struct tui *t, const char *s)
{
	if (!t->filter_re)
		return true;
	db_err e;
	/* every name on screen was tried when the filter was set (a limit
	 * hit refuses it there); one that hits it later stays shown */
	return filter_search(t, s, &e) != 0;
}

/* col_match for the grid; -1 (e set) when the filter hit its limit on a
 * column or a pair's stage. */
static int compute_col_match(struct tui *t, db_err *e)
{
	free(t->col_match);
	t->col_match = NULL;
	t->col_match_gen = t->grid_gen;
	if (!t->filter_re || !t->have_grid)
		return 0;
	t->col_match = calloc(t->grid.n_cols ? t->grid.n_cols : 1, sizeof *t->col_match);
	if (!t->col_match)
		return 0;
	int rc;
	for (size_t c = 0; c < t->grid.n_cols; c++) {
		if ((rc = filter_search(t, t->grid.cols[c], e)) < 0)
			return -1;
		t->col_match[c] = rc == 1;
	}
	/* A column also passes when one of its sub-stages matches. */
	for (size_t i = 0; i < t->cmp->n_pairs; i++) {
		const char *st = t->cmp->pairs[i].f.stage;
		if ((rc = filter_search(t, st, e)) < 0)
			return -1;
		if (!rc)
			continue;
		char buf[256];
		const char *par = db_profile_parent(t->cmp->profile, st,
		                                    (const char *const *)t->grid.cols,
		                                    t->grid.n_cols, buf, sizeof buf);
		for (size_t c = 0; par && c < t->grid.n_cols; c++)
			if (!strcmp(t->grid.cols[c], par))
				t->col_match[c] = true;
	}
	return 0;
}

static void filter_drop(struct tui *t)
{
	if (t->filter_re)
		pcre2_code_free(t->filter_re);
	t->filter_re = NULL;
	t->filter_pat[0] = '\0';
	free(t->col_match);
	t->col_match = NULL;
}

bool tui_col_visible(struct tui *t, size_t c)
{
	if (!t->filter_re)
		return true;
	if (t->col_match_gen != t->grid_gen || !t->col_match) {
		db_err e;
		if (compute_col_match(t, &e) < 0) {
			/* new names (a rescan) the filter cannot decide: off, said */
			filter_drop(t);
			tui_msg(t, true, "filter cleared: %s", e.msg);
			return true;
		}
	}
	return !t->col_match || (c < t->grid.n_cols && t->col_match[c]);
}

/* Names matching the filter among the rows outside the layer block; -1
 * (e set) on a limit hit. */
static long count_rows(struct tui *t, db_err *e)
{
	long n = 0;
	for (size_t r = 0; t->have_grid && r < t->grid.n_rows; r++) {
		if (r >= t->grid.first_layer_row && r < t->grid.first_layer_row + t->grid.n_layer_rows)
			continue;
		int rc = filter_search(t, t->grid.rows[r].label, e);
		if (rc < 0)
			return -1;
		n += rc;
	}
	return n;
}

int tui_filter_set(struct tui *t, const char *pattern)
{
	if (!pattern || !*pattern) {
		filter_drop(t);
		tui_msg(t, false, "filter cleared");
		return 0;
	}
	uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
	bool upper = false;
	for (const char *s = pattern; *s; s++)
		upper |= isupper((unsigned char)*s) != 0;
	if (!upper)
		opts |= PCRE2_CASELESS;         /* smart case, like less -i */
	int ec;
	PCRE2_SIZE eo;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts,
	                               &ec, &eo, NULL);
	if (!re) {
		PCRE2_UCHAR why[256];
		pcre2_get_error_message(ec, why, sizeof why);
		tui_msg(t, true, "/%s: %s at offset %zu", pattern, (char *)why, (size_t)eo);
		return -1;
	}
	void *old = t->filter_re;
	char oldpat[256];
	snprintf(oldpat, sizeof oldpat, "%s", t->filter_pat);
	t->filter_re = re;
	snprintf(t->filter_pat, sizeof t->filter_pat, "%s", pattern);
	/* every name the filter decides is tried now: a limit hit refuses the
	 * filter here, once, with the name, instead of hiding rows (and
	 * stalling every frame; a session's filter froze the open for 18 s) */
	db_err e;
	long n = compute_col_match(t, &e) < 0 ? -1 : count_rows(t, &e);
	for (size_t c = 0; n >= 0 && t->col_match && c < t->grid.n_cols; c++)
		n += t->col_match[c];
	if (n <= 0) {
		pcre2_code_free(re);
		t->filter_re = old;
		snprintf(t->filter_pat, sizeof t->filter_pat, "%s", oldpat);
		db_err e2;
		if (compute_col_match(t, &e2) < 0)
			filter_drop(t);
		if (n < 0)
			tui_msg(t, true, "/%s: %s", pattern, e.msg);
		else
			tui_msg(t, true, "/%s: no stage matches", pattern);
		return -1;
	}
	if (old)
		pcre2_code_free(old);
	tui_msg(t, false, "filter /%s: %ld stage%s", pattern, n, n == 1 ? "" : "s");
	return 0;
}

