#include "cmd_util.h"

#include <stdlib.h>

#include "db_json.h"
#include <string.h>

static const db_opt *find_long(const db_opt *o, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(o[i].name) == len && !strncmp(o[i].name, name, len))
			return &o[i];
	return NULL;
}

static const db_opt *find_short(const db_opt *o, size_t n, char c)
{
	for (size_t i = 0; i < n; i++)
		if (o[i].short_name && o[i].short_name == c)
			return &o[i];
	return NULL;
}

int db_opts_parse(int argc, char **argv, const db_opt *opts, size_t n_opts,
                  const char **pos, int max_pos, int *n_pos, char *msg, size_t msglen)
{
	*n_pos = 0;
	bool only_pos = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!only_pos && !strcmp(a, "--")) {
			only_pos = true;
			continue;
		}
		if (only_pos || a[0] != '-' || !a[1]) {
			if (*n_pos >= max_pos) {
				snprintf(msg, msglen, "unexpected argument '%s'", a);
				return -1;
			}
			pos[(*n_pos)++] = a;
			continue;
		}
		const db_opt *o;
		const char *val = NULL;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			o = find_long(opts, n_opts, a + 2, len);
			if (eq)
				val = eq + 1;
		} else {
			o = a[2] ? NULL : find_short(opts, n_opts, a[1]);
		}
		if (!o) {
			snprintf(msg, msglen, "unknown option '%s'", a);
			return -1;
		}
		if (!o->has_arg) {
			if (val) {
				snprintf(msg, msglen, "option '--%s' takes no value", o->name);
				return -1;
			}
			*o->flag = true;
			continue;
		}
		if (!val) {
			if (i + 1 >= argc) {
				snprintf(msg, msglen, "option '--%s' needs a value", o->name);
				return -1;
			}
			val = argv[++i];
		}
		*o->val = val;
	}
	return 0;
}

int db_parse_threads(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 1 || v > 1024)
		return -1;
	return (int)v;
}

bool db_term_utf8(void)
{
	const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
	for (size_t i = 0; i < 3; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "UTF8") ||
			       strstr(v, "utf8");
	}
	return false;
}

void db_fmt_shape(int ndim, const int64_t *shape, char *buf, size_t len)
{
	size_t n = 0;
	if (ndim < 0) {
		snprintf(buf, len, "-");
		return;
	}
	n += (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < ndim && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

const char *db_pair_glyph(const db_pair *p, bool utf8)
{
	switch (p->status) {
	case DB_ST_OK: return db_band_glyph(p->band, utf8);
	case DB_ST_REF_ONLY: return "<";
	case DB_ST_TARGET_ONLY: return ">";
	case DB_ST_SHAPE_MISMATCH: return utf8 ? "≠" : "!";
	case DB_ST_ERROR: return "E";
	}
	return "?";
}

void db_pair_label(const db_pair *p, char *buf, size_t len)
{
	size_t n = 0;
	if (p->f.layer >= 0)
		n = (size_t)snprintf(buf, len, "L%d %s", p->f.layer, p->f.stage);
	else
		n = (size_t)snprintf(buf, len, "%s", p->f.stage);
	if (n < len && p->occurrence)
		n += (size_t)snprintf(buf + n, len - n, " #%d", p->occurrence);
	if (n < len && p->merged)
		n += (size_t)snprintf(buf + n, len - n, " (merged ranks)");
	else if (n < len && p->f.rank >= 0)
		n += (size_t)snprintf(buf + n, len - n, " rank %d", p->f.rank);
	if (n < len && p->f.pass[0])
		n += (size_t)snprintf(buf + n, len - n, " pass %s", p->f.pass);
	if (n < len && p->f.phase[0])
		snprintf(buf + n, len - n, " phase %s", p->f.phase);
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
