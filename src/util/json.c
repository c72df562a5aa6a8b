#include "db_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db_esc.h"

void db_json_str(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	size_t n = strlen(s);
	char ch[DB_ESC_CHAR_MAX];
	while (n > 0) {
		/* a run of printable ASCII that needs no escape goes out in one
		 * write (a pair's JSON holds a dozen names: a call a character
		 * cost more than the rest of the pair) */
		size_t run = 0;
		while (run < n && (unsigned char)s[run] >= 0x20 && (unsigned char)s[run] < 0x7f &&
		       s[run] != '"' && s[run] != '\\')
			run++;
		if (run) {
			fwrite(s, 1, run, out);
			s += run, n -= run;
			continue;
		}
		const unsigned char c = (unsigned char)*s;
		size_t k = db_esc_char(s, n, ch);
		if (c == '"')
			fputs("\\\"", out);
		else if (c == '\\')
			fputs("\\\\", out);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\r')
			fputs("\\r", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else if (ch[0] == '\\')
			/* db_esc's rule: a C1 or bidi control as the same \uNNNN
			 * (JSON decodes it back), a byte that is not UTF-8 as the
			 * text \xNN (JSON cannot hold it; shown as a terminal would) */
			fprintf(out, "\\%s", ch[1] == 'u' ? ch + 1 : ch);
		else
			fputs(ch, out);
		s += k, n -= k;
	}
	fputc('"', out);
}

void db_json_num(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.17g", v);
	else
		fputs("null", out);
}

void db_json_shape(FILE *out, int ndim, const int64_t *shape)
{
	if (ndim < 0) {
		fputs("null", out);
		return;
	}
	fputc('[', out);
	for (int i = 0; i < ndim; i++)
		fprintf(out, "%s%lld", i ? ", " : "", (long long)shape[i]);
	fputc(']', out);
}

void db_json_field(FILE *out, const char *s, bool numeric_if_digits)
{
	if (!s || !*s) {
		fputs("null", out);
		return;
	}
	size_t n = strspn(s, "0123456789");
	if (numeric_if_digits && !s[n] && n <= 18) {
		fprintf(out, "%lld", strtoll(s, NULL, 10));
		return;
	}
	db_json_str(out, s);
}
