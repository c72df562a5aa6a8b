#include "yaml_load.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "yaml_err.h"

/* ---- nesting, from the text ---- */

typedef struct scan {
	const char *s;
	size_t n, i;
	size_t line, col0;      /* current line (0-based) and its start */
	int quote;              /* inside a quoted scalar that spans lines */
	int flow;               /* open flow brackets */
	int base;               /* block depth where the flow started */
	long bs_indent;         /* block scalar: skip lines indented more; -1 none */
	int *stack;             /* block indents */
	int sp;
} scan;

static int too_deep(scan *sc, const char *origin, db_err *err)
{
	yaml_mark_t m = {sc->i, sc->line, sc->i - sc->col0};
	return db_yaml_err_at(err, origin, &m, "nested deeper than %d levels (refused before "
	                      "parsing)", DB_YAML_MAX_DEPTH);
}

/* Skip a quoted scalar from its opening quote; may end on a later line. */
static void skip_quoted(scan *sc)
{
	int q = sc->quote ? sc->quote : sc->s[sc->i++];
	sc->quote = q;
	while (sc->i < sc->n && sc->s[sc->i] != '\n') {
		char c = sc->s[sc->i++];
		if (q == '"' && c == '\\' && sc->i < sc->n && sc->s[sc->i] != '\n')
			sc->i++;
		else if (c == q) {
			if (q == '\'' && sc->i < sc->n && sc->s[sc->i] == '\'') {
				sc->i++;        /* '' inside single quotes */
				continue;
			}
			sc->quote = 0;
			return;
		}
	}
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Inside flow brackets until the line ends or they all close. */
static int scan_flow(scan *sc, const char *origin, db_err *err)
{
	while (sc->i < sc->n && sc->s[sc->i] != '\n') {
		if (sc->quote) {
			skip_quoted(sc);
			continue;
		}
		char c = sc->s[sc->i];
		if (c == '"' || c == '\'') {
			skip_quoted(sc);
			continue;
		}
		if (c == '#' && (sc->i == 0 || is_blank(sc->s[sc->i - 1]))) {
			while (sc->i < sc->n && sc->s[sc->i] != '\n')
				sc->i++;
			return 0;
		}
		sc->i++;
		if (c == '[' || c == '{') {
			if (sc->base + ++sc->flow > DB_YAML_MAX_DEPTH) {
				sc->i--;
				return too_deep(sc, origin, err);
			}
		} else if ((c == ']' || c == '}') && --sc->flow == 0) {
			return 0;
		}
	}
	return 0;
}

/* A value starts at sc->i (block context): a flow collection, a quoted or
 * block scalar, or plain text up to ": " (then another value) or a comment. */
static int scan_block_rest(scan *sc, int indent, const char *origin, db_err *err)
{
	for (;;) {
		while (sc->i < sc->n && is_blank(sc->s[sc->i]))
			sc->i++;
		/* anchors and tags before the value */
		while (sc->i < sc->n && (sc->s[sc->i] == '&' || sc->s[sc->i] == '!')) {
			while (sc->i < sc->n && !is_blank(sc->s[sc->i]) && sc->s[sc->i] != '\n')
				sc->i++;
			while (sc->i < sc->n && is_blank(sc->s[sc->i]))
				sc->i++;
		}
		if (sc->i >= sc->n || sc->s[sc->i] == '\n' || sc->s[sc->i] == '#')
			break;
		char c = sc->s[sc->i];
		if (c == '[' || c == '{') {
			sc->flow = 0;
			return scan_flow(sc, origin, err);
		}
		if (c == '|' || c == '>') {
			sc->bs_indent = indent;
			break;
		}
		if (c == '"' || c == '\'') {
			skip_quoted(sc);
			if (sc->quote)
				return 0;
		}
		/* plain (or after a quoted key): on to ": " or the end */
		bool value = false;
		while (sc->i < sc->n && sc->s[sc->i] != '\n') {
			char d = sc->s[sc->i++];
			if (d == ':' && (sc->i >= sc->n || is_blank(sc->s[sc->i]) || sc->s[sc->i] == '\n')) {
				value = true;
				break;
			}
			if (d == '#' && sc->i >= 2 && is_blank(sc->s[sc->i - 2]))
				break;
		}
		if (!value)
			break;
	}
	while (sc->i < sc->n && sc->s[sc->i] != '\n')
		sc->i++;
	return 0;
}

int db_yaml_check_depth(const char *origin, const char *text, size_t len, db_err *err)
{
	int stack[DB_YAML_MAX_DEPTH + 1];
	scan sc = {text, len, 0, 0, 0, 0, 0, 0, -1, stack, 0};
	while (sc.i < sc.n) {
		sc.col0 = sc.i;
		int indent = 0;
		while (sc.i < sc.n && sc.s[sc.i] == ' ') {
			sc.i++;
			indent++;
		}
		char c = sc.i < sc.n ? sc.s[sc.i] : '\n';
		bool blank = c == '\n' || c == '#' || c == '\t';
		if (sc.quote || sc.flow > 0) {
			if (scan_flow(&sc, origin, err))
				return -1;
		} else if (blank || (sc.bs_indent >= 0 && indent > sc.bs_indent)) {
			/* comment, blank or block scalar text */
		} else {
			sc.bs_indent = -1;
			if (indent == 0 && sc.n - sc.i >= 3 &&
			    (!strncmp(sc.s + sc.i, "---", 3) || !strncmp(sc.s + sc.i, "...", 3)))
				sc.sp = 0;      /* a document marker: a new root */
			while (sc.sp && stack[sc.sp - 1] >= indent)
				sc.sp--;
			if (sc.sp >= DB_YAML_MAX_DEPTH)
				return too_deep(&sc, origin, err);
			stack[sc.sp++] = indent;
			/* "- - x", "? a": one more level each */
			int d = sc.sp;
			while (sc.i + 1 < sc.n && (sc.s[sc.i] == '-' || sc.s[sc.i] == '?') &&
			       (is_blank(sc.s[sc.i + 1]) || sc.s[sc.i + 1] == '\n')) {
				if (++d > DB_YAML_MAX_DEPTH)
					return too_deep(&sc, origin, err);
				sc.i++;
				while (sc.i < sc.n && is_blank(sc.s[sc.i]))
					sc.i++;
			}
			sc.base = d;
			if (scan_block_rest(&sc, indent, origin, err))
				return -1;
		}
		while (sc.i < sc.n && sc.s[sc.i] != '\n')
			sc.i++;
		sc.i++;
		sc.line++;
	}
	return 0;
}

/* ---- expansion, on the document ---- */

typedef struct frame {
	int node;
	size_t next;            /* next child */
} frame;

static size_t n_children(const yaml_node_t *n)
{
	if (n->type == YAML_SEQUENCE_NODE)
		return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (n->type == YAML_MAPPING_NODE)
		return 2 * (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	return 0;
}

static int child(const yaml_node_t *n, size_t k)
{
	if (n->type == YAML_SEQUENCE_NODE)
		return n->data.sequence.items.start[k];
	const yaml_node_pair_t *p = &n->data.mapping.pairs.start[k / 2];
	return k % 2 ? p->value : p->key;
}

int db_yaml_check_expansion(const char *origin, yaml_document_t *doc, size_t len, db_err *err)
{
	size_t nn = (size_t)(doc->nodes.top - doc->nodes.start);
	if (!nn)
		return 0;
	uint64_t limit = (uint64_t)len * DB_YAML_EXPAND_RATIO;
	if (limit < DB_YAML_EXPAND_MIN)
		limit = DB_YAML_EXPAND_MIN;
	/* size of each node's expansion (0: not yet), and an explicit stack:
	 * chains of aliases nest deeper than the text */
	uint64_t *size = calloc(nn + 1, sizeof *size);
	unsigned char *busy = calloc(nn + 1, 1);
	frame *st = malloc((nn + 1) * sizeof *st);
	int rc = 0;
	if (!size || !busy || !st) {
		rc = db_err_set(err, origin, NULL, -1, "out of memory");
		goto out;
	}
	size_t sp = 0;
	st[sp++] = (frame){1, 0};
	busy[1] = 1;
	while (sp && !rc) {
		frame *f = &st[sp - 1];
		yaml_node_t *n = yaml_document_get_node(doc, f->node);
		if (f->next < n_children(n)) {
			int c = child(n, f->next++);
			if (c < 1 || (size_t)c > nn)
				continue;
			if (busy[c]) {
				rc = db_yaml_err_at(err, origin, &yaml_document_get_node(doc, c)->start_mark,
				                    "an alias inside the node it names (it never ends)");
				break;
			}
			if (!size[c]) {
				busy[c] = 1;
				st[sp++] = (frame){c, 0};
				continue;
			}
			size[f->node] += size[c];
		} else {
			size[f->node] += 8 + (n->type == YAML_SCALAR_NODE ? n->data.scalar.length : 0);
			busy[f->node] = 0;
			uint64_t s = size[f->node];
			if (--sp)
				size[st[sp - 1].node] += s;
		}
		if (size[f->node] > limit || (sp && size[st[sp - 1].node] > limit)) {
			rc = db_yaml_err_at(err, origin, &n->start_mark,
			                    "aliases expand this document past %llu bytes (%d times its "
			                    "%zu bytes of text, at least 1 MiB): refused",
			                    (unsigned long long)limit, DB_YAML_EXPAND_RATIO, len);
		}
	}
out:
	free(size);
	free(busy);
	free(st);
	return rc;
}
