#include "cmd_util.h"

#include "db_esc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "db_cmd.h"
#include "db_grid.h"
#include "db_json.h"
#include "db_rank_words.h"
#include "read/walk.h"

int (*db_cmd_tui_hook)(int argc, char **argv);

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

/* "dumpbisect compare" / "dumpbisect" (the workbench) */
static const char *sep(const db_cmd *c)
{
	return c->name ? " " : "";
}

static int vmessage(const db_cmd *c, bool hint, const char *fmt, va_list ap)
{
	fprintf(stderr, "dumpbisect%s%s: ", sep(c), c->name ? c->name : "");
	/* The arguments are paths and names from the user's trees: escaped
	 * whole (db_esc), as every message is, so none reaches the terminal raw. */
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (msg) {
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		db_esc_fputs(msg, stderr);
		free(msg);
	} else {
		fputs("out of memory", stderr);
	}
	fputc('\n', stderr);
	if (hint)
		fprintf(stderr, "Try 'dumpbisect%s%s --help' for more information.\n", sep(c),
		        c->name ? c->name : "");
	return 2;
}

int db_cmd_usage_error(const db_cmd *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmessage(c, true, fmt, ap);
	va_end(ap);
	return 2;
}

int db_cmd_error(const db_cmd *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmessage(c, false, fmt, ap);
	va_end(ap);
	return 2;
}

/* "  -p, --profile P" padded to the help column, then the help; continuation
 * lines of the help start in that column too. */
static void opt_line(FILE *out, char short_name, const char *name, const char *arg,
                     const char *help)
{
	enum { COL = 24 };
	int n = short_name ? fprintf(out, "  -%c, --%s", short_name, name)
	                   : fprintf(out, "      --%s", name);
	if (arg)
		n += fprintf(out, " %s", arg);
	if (n >= COL - 1) {
		fputc('\n', out);
		n = 0;
	}
	for (const char *h = help; *h;) {
		fprintf(out, "%*s", COL - n, "");
		size_t len = strcspn(h, "\n");
		fprintf(out, "%.*s\n", (int)len, h);
		h += len + (h[len] == '\n');
		n = 0;
	}
}

/* text after "exit status: ", wrapped at 76 columns. */
static void wrap(FILE *out, const char *lead, const char *text)
{
	int col = fprintf(out, "%s", lead);
	for (const char *w = text; *w;) {
		size_t len = strcspn(w, " ");
		if (col > 0 && col + 1 + (int)len > 76) {
			fputc('\n', out);
			col = 0;
		} else if (w != text) {
			fputc(' ', out);
			col++;
		}
		col += fprintf(out, "%.*s", (int)len, w);
		w += len;
		while (*w == ' ')
			w++;
	}
	fputc('\n', out);
}

void db_cmd_usage(const db_cmd *c, FILE *out)
{
	fprintf(out, "usage: dumpbisect%s%s %s\n\n%s\n\noptions:\n", sep(c),
	        c->name ? c->name : "", c->args, c->desc);
	for (size_t i = 0; i < c->n_opts; i++)
		opt_line(out, c->opts[i].short_name, c->opts[i].name, c->opts[i].arg, c->opts[i].help);
	opt_line(out, 'h', "help", NULL, "this help");
	opt_line(out, 'V', "version", NULL, "the version");
	fputc('\n', out);
	if (c->more) {
		c->more(out);
		fputc('\n', out);
	}
	wrap(out, "exit status: ", c->exit);
}

int db_cmd_parse(const db_cmd *c, int argc, char **argv, const char **pos, int *n_pos)
{
	*n_pos = 0;
	bool only_pos = false, help = false, version = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!only_pos && !strcmp(a, "--")) {
			only_pos = true;
			continue;
		}
		if (only_pos || a[0] != '-' || !a[1]) {
			if (*n_pos >= c->max_pos)
				return db_cmd_usage_error(c, "unexpected argument '%s'", a);
			pos[(*n_pos)++] = a;
			continue;
		}
		const db_opt *o;
		const char *val = NULL;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			if (!eq && !strcmp(a, "--help")) {
				help = true;
				continue;
			}
			if (!eq && !strcmp(a, "--version")) {
				version = true;
				continue;
			}
			o = find_long(c->opts, c->n_opts, a + 2, len);
			if (eq)
				val = eq + 1;
		} else {
			if (!strcmp(a, "-h")) {
				help = true;
				continue;
			}
			if (!strcmp(a, "-V")) {
				version = true;
				continue;
			}
			o = find_short(c->opts, c->n_opts, a[1]);
			if (o && a[2]) {
				if (!o->arg)
					o = NULL;       /* no bundled flags: "-jx" is not "-j -x" */
				else
					val = a + 2;
			}
		}
		if (!o)
			return db_cmd_usage_error(c, "unknown option '%s'", a);
		if (!o->arg) {
			if (val)
				return db_cmd_usage_error(c, "option '--%s' takes no value", o->name);
			*o->flag = true;
			continue;
		}
		if (!val) {
			if (i + 1 >= argc)
				return db_cmd_usage_error(c, "option '%s' needs a value", a);
			val = argv[++i];
		}
		if (o->val) {
			*o->val = val;
			continue;
		}
		db_optlist *l = NULL;   /* repeatable */
		for (size_t k = 0; k < c->n_lists && !l; k++)
			if (!strcmp(c->lists[k]->name, o->name))
				l = c->lists[k];
		if (!l || l->n >= DB_OPTLIST_MAX)
			return db_cmd_usage_error(c, "option '--%s' given more than %d times", o->name,
			                          l ? DB_OPTLIST_MAX : 0);
		l->v[l->n++] = val;
	}
	/* Asked for help or the version: nothing else matters. */
	if (help) {
		db_cmd_usage(c, stdout);
		return 0;
	}
	if (version) {
		printf("dumpbisect %s\n", DB_VERSION);
		return 0;
	}
	return -1;
}

int db_cmd_format(const db_cmd *c, const char *v, unsigned allowed)
{
	static const char *const names[] = {"table", "csv", "json", "jsonl"};
	int f = !strcmp(v, "text") ? DB_FMT_TABLE : -1;
	for (int k = 0; k < 4 && f < 0; k++)
		if (!strcmp(v, names[k]))
			f = k;
	if (f >= 0 && (allowed & DB_FMT_BIT(f)))
		return f;
	char list[64] = "";
	int n = 0, k_last = -1;
	for (int k = 0; k < 4; k++)
		if (allowed & DB_FMT_BIT(k))
			k_last = k;
	for (int k = 0; k < 4; k++)
		if (allowed & DB_FMT_BIT(k))
			n += snprintf(list + n, sizeof list - (size_t)n, "%s%s",
			              !n ? "" : k == k_last ? " or " : ", ", names[k]);
	db_cmd_usage_error(c, "--format must be %s, not '%s'", list, v);
	return -1;
}

int db_cmp_args_apply(const db_cmd *c, const db_cmp_args *a, db_compare_opts *o)
{
	if (a->profile)
		o->profile = a->profile;
	if (a->filter)
		o->filter = a->filter;
	if (a->no_cache)
		o->cache_dir = "";
	/* every walk of this process, the workbench's threads' too */
	db_walk_follow_links(a->follow_links);
	if (a->slot)
		o->slot = a->slot;
	if (a->noise)
		o->noise = a->noise;
	if (a->slots) {
		char *end;
		long n = strtol(a->slots, &end, 10);
		if (end == a->slots || *end || n < 2 || n > 4096)
			return db_cmd_usage_error(c, "--slots wants the number of sequences in the batch "
			                          "(2 or more), not '%s'", a->slots);
		o->slots = (int)n;
	}
	if (a->align && (o->align = db_align_mode_parse(a->align)) < 0)
		return db_cmd_usage_error(c, "--align must be auto, tokens or passes, not '%s'",
		                          a->align);
	if (a->threads && (o->threads = db_parse_threads(a->threads)) < 0)
		return db_cmd_usage_error(c, "--threads needs a positive number, not '%s'",
		                          a->threads);
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

const char *db_pair_glyph(const db_pair *p, bool utf8)
{
	switch (p->status) {
	/* a slot judged bitwise: a bit off is not "ok", whatever the band */
	case DB_ST_OK:
		if (db_pair_judged_bitwise(p) && p->band == DB_BAND_OK && db_pair_diverges(p))
			return utf8 ? "\u2262" : "#";
		return db_band_glyph(p->band, utf8);
	case DB_ST_REF_ONLY: return "<";
	case DB_ST_TARGET_ONLY: return ">";
	case DB_ST_SHAPE_MISMATCH: return utf8 ? "≠" : "!";
	case DB_ST_ERROR: return "E";
	case DB_ST_NOT_COMPARABLE: return utf8 ? "⊘" : "/";
	}
	return "?";
}

/* The label with ranks as the rank part (db_rank_words.h). */
static void pair_label(const db_pair *p, const char *ranks, char *buf, size_t len)
{
	char raw[1024];
	size_t n = 0, cap = sizeof raw;
	if (p->f.layer >= 0)
		n = (size_t)snprintf(raw, cap, "L%d %s", p->f.layer, p->f.stage);
	else
		n = (size_t)snprintf(raw, cap, "%s", p->f.stage);
	if (n < cap && p->occurrence)
		n += (size_t)snprintf(raw + n, cap - n, " #%d", p->occurrence);
	if (n < cap && ranks[0])
		n += (size_t)snprintf(raw + n, cap - n, " %s", ranks);
	if (n < cap && p->f.pass[0])
		n += (size_t)snprintf(raw + n, cap - n, " pass %s", p->f.pass);
	/* a slot against the prompt run alone: the passes were aligned */
	if (n < cap && p->slot.alone && p->ref && strcmp(p->ref->f.pass, p->f.pass))
		n += (size_t)snprintf(raw + n, cap - n, " (ref pass %s)", p->ref->f.pass);
	if (n < cap && p->f.phase[0])
		snprintf(raw + n, cap - n, " phase %s", p->f.phase);
	/* stage, pass and phase come from the dump's names */
	db_esc_buf(buf, len, raw);
}

void db_pair_label(const db_pair *p, char *buf, size_t len)
{
	char ranks[48];
	pair_label(p, db_rank_words_of(p, ranks, sizeof ranks), buf, len);
}

void db_pair_label_cell(const db_compare *c, const db_pair *p, char *buf, size_t len)
{
	char ranks[48];
	pair_label(p, db_rank_words(c, (size_t)(p - c->pairs), ranks, sizeof ranks), buf, len);
}

int db_cmd_open_compare(const db_cmd *c, const db_cmp_args *a, const char *const *pos, int npos,
                        db_compare **out)
{
	db_compare_opts o = {0};
	if (db_cmp_args_apply(c, a, &o) != 0)
		return 2;
	db_err err = {{0}};
	/* --slots: one tree is both sides (slot 0 against slot k); two trees:
	 * the reference ran the prompt alone */
	if (db_compare_open(pos[0], npos > 1 ? pos[1] : o.slots ? pos[0] : NULL, &o, out,
	                    &err) != 0)
		return db_cmd_error(c, "%s", err.msg);
	return 0;
}
