/* The bisect view's words: the predicate in a sentence and the verdict
 * keys as bound now; see bisect_words.h. */
#include "bisect_words.h"

#include <stdio.h>

#include "base/keys.h"

/* The predicate in words: "its probe leaves the ok band",
 * "cos < 0.99 or rel > 0.01". */
const char *tui_bisect_pred_words(const db_predicate *p, char *buf, size_t len)
{
	if (p->kind == DB_PRED_BAND && p->worst_good == DB_BAND_OK && p->beyond_drift) {
		snprintf(buf, len, "its probe goes beyond drift (compare names the first "
		         "divergence beyond drift in this pass)");
		return buf;
	}
	if (p->kind == DB_PRED_BAND) {
		snprintf(buf, len, p->worst_good == DB_BAND_OK ? "its probe leaves the ok band"
		         : "its probe is worse than %s", db_band_name(p->worst_good));
		return buf;
	}
	char raw[64];
	db_predicate_str(p, raw, sizeof raw);   /* "cos<0.99,rel>0.01" */
	size_t o = 0;
	for (const char *q = raw; *q && o + 6 < len; q++)
		o += (size_t)snprintf(buf + o, len - o, *q == ',' ? " or " :
		                      *q == '<' ? " < " : *q == '>' ? " > " : "%c", *q);
	buf[o < len ? o : len - 1] = '\0';
	return buf;
}

/* The first key bound to a (the keys file may move it), for the lines
 * that tell which key does what. */
static const char *key_of(enum tui_action a, char *buf, size_t len)
{
	int k;
	if (tui_action_keys(a, &k, 1) < 1)
		return tui_action(a)->name;
	return tui_key_name(k, buf, len);
}

/* "+ good  - bad  = skip" with the keys bound now. */
const char *tui_bisect_verdict_keys(char *buf, size_t len, const char *sep)
{
	char g[32], b[32], s[32];
	snprintf(buf, len, "%s good%s%s bad%s%s skip", key_of(A_BISECT_GOOD, g, sizeof g), sep,
	         key_of(A_BISECT_BAD, b, sizeof b), sep, key_of(A_BISECT_SKIP, s, sizeof s));
	return buf;
}
