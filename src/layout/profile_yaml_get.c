/* Profile YAML readers shared by every part: scalars with their types and
 * ranges, string lists, regexes (compiled now, so a bad one is an error at
 * its line), and mapping iteration that refuses duplicate keys. */
#include "profile_yaml_priv.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/yaml_err.h"

/* Named groups a path/key regex may use; others must start with '_'. */
static const char *const FIELD_GROUPS[] = {
	"side", "phase", "phase_sub", "pass", "rank", "layer", "stage", "order", "file_stage", NULL
};

int yp_fail(ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	db_yaml_verr(c->err, c->origin, n, fmt, ap);
	va_end(ap);
	return -1;
}

yaml_node_t *yp_node(ctx *c, int idx)
{
	return yaml_document_get_node(c->doc, idx);
}

const char *yp_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A plain `~`, `null` or empty value: "not set", the default stays. */
bool yp_is_null(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *s = yp_scalar(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

int yp_oom(ctx *c, const yaml_node_t *n)
{
	return yp_fail(c, n, "out of memory");
}

int yp_get_str(ctx *c, const yaml_node_t *n, const char *what, char **out)
{
	const char *s = yp_scalar(n);
	if (!s)
		return yp_fail(c, n, "%s: expected a string", what);
	if (strlen(s) != n->data.scalar.length)
		return yp_fail(c, n, "%s: NUL byte in string", what);
	char *d = strdup(s);
	if (!d)
		return yp_oom(c, n);
	free(*out);
	*out = d;
	return 0;
}

int yp_get_int(ctx *c, const yaml_node_t *n, const char *what, long lo, long hi, int *out)
{
	const char *s = yp_scalar(n);
	char *end;
	if (!s || !*s)
		return yp_fail(c, n, "%s: expected an integer", what);
	errno = 0;
	long v = strtol(s, &end, 10);
	if (*end || errno)
		return yp_fail(c, n, "%s: expected an integer, got '%s'", what, s);
	if (v < lo || v > hi)
		return yp_fail(c, n, "%s: %ld is out of range [%ld, %ld]", what, v, lo, hi);
	*out = (int)v;
	return 0;
}

int yp_get_double(ctx *c, const yaml_node_t *n, const char *what, double *out)
{
	const char *s = yp_scalar(n);
	char *end;
	if (!s || !*s)
		return yp_fail(c, n, "%s: expected a number", what);
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno || !isfinite(v))
		return yp_fail(c, n, "%s: expected a finite number, got '%s'", what, s);
	*out = v;
	return 0;
}

void yp_free_list(char **a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i]);
	free(a);
}

/* A sequence of strings; a single string counts as a one-item list. */
int yp_get_str_list(ctx *c, const yaml_node_t *n, const char *what, char ***out, size_t *nout)
{
	size_t cnt;
	yaml_node_item_t *items = NULL;
	if (n->type == YAML_SCALAR_NODE) {
		cnt = 1;
	} else if (n->type == YAML_SEQUENCE_NODE) {
		items = n->data.sequence.items.start;
		cnt = (size_t)(n->data.sequence.items.top - items);
	} else {
		return yp_fail(c, n, "%s: expected a list of strings", what);
	}
	char **a = calloc(cnt ? cnt : 1, sizeof *a);
	if (!a)
		return yp_oom(c, n);
	for (size_t i = 0; i < cnt; i++) {
		const yaml_node_t *it = items ? yp_node(c, items[i]) : n;
		if (yp_get_str(c, it, what, &a[i])) {
			yp_free_list(a, i);
			return -1;
		}
	}
	yp_free_list(*out, *nout);
	*out = a;
	*nout = cnt;
	return 0;
}

bool yp_known_group(const char *name)
{
	if (name[0] == '_')
		return true;
	for (int i = 0; FIELD_GROUPS[i]; i++)
		if (!strcmp(name, FIELD_GROUPS[i]))
			return true;
	return false;
}

/* Compile pat; fields = true checks the named groups against FIELD_GROUPS. */
int yp_compile_re(ctx *c, const yaml_node_t *n, const char *what, const char *pat,
                  bool fields, void **out)
{
	int ec;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
	                               PCRE2_DUPNAMES, &ec, &off, NULL);
	if (!re) {
		PCRE2_UCHAR buf[256];
		pcre2_get_error_message(ec, buf, sizeof buf);
		return yp_fail(c, n, "%s: bad regex '%s': %s at offset %zu", what, pat,
		            (const char *)buf, (size_t)off);
	}
	if (fields) {
		uint32_t count = 0, esize = 0;
		PCRE2_SPTR table = NULL;
		pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &count);
		pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &esize);
		pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &table);
		for (uint32_t i = 0; i < count; i++) {
			const char *name = (const char *)(table + i * esize + 2);
			if (!yp_known_group(name)) {
				yp_fail(c, n, "%s: unknown named group '(?<%s>' (fields: side, phase, "
				     "phase_sub, pass, rank, layer, stage, order, file_stage; scratch "
				     "groups start with '_')", what, name);
				pcre2_code_free(re);    /* name points into it */
				return -1;
			}
		}
	}
	(void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);   /* optional speed-up */
	pcre2_code_free(*out);
	*out = re;
	return 0;
}

int yp_get_re(ctx *c, const yaml_node_t *n, const char *what, bool fields,
              char **pat, void **re)
{
	char *s = NULL;
	if (yp_get_str(c, n, what, &s))
		return -1;
	if (yp_compile_re(c, n, what, s, fields, re)) {
		free(s);
		return -1;
	}
	free(*pat);
	*pat = s;
	return 0;
}

int yp_each_pair(ctx *c, const yaml_node_t *n, const char *what, pair_fn fn, void *arg)
{
	if (n->type != YAML_MAPPING_NODE)
		return yp_fail(c, n, "%s: expected a mapping", what);
	yaml_node_pair_t *b = n->data.mapping.pairs.start, *e = n->data.mapping.pairs.top;
	for (yaml_node_pair_t *q = b; q < e; q++) {
		const yaml_node_t *kn = yp_node(c, q->key), *vn = yp_node(c, q->value);
		const char *k = yp_scalar(kn);
		if (!k)
			return yp_fail(c, kn, "%s: keys must be strings", what);
		for (yaml_node_pair_t *r = b; r < q; r++)
			if (yp_scalar(yp_node(c, r->key)) && !strcmp(yp_scalar(yp_node(c, r->key)), k))
				return yp_fail(c, kn, "%s: duplicate key '%s'", what, k);
		if (fn(c, k, kn, vn, arg))
			return -1;
	}
	return 0;
}
