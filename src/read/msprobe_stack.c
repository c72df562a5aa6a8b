/* The frame of an msprobe call, from stack.json (msprobe_stack.h). Read on
 * demand (a view or a report asks for one call), bounded like construct.json. */
#include "msprobe_stack.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binio.h"
#include "util/json_parse.h"

#define STACK_MAX ((size_t)256 << 20)

/* "File F, line L, in FUNC, \n CODE": F, L, FUNC, CODE; false when not that. */
static bool split_frame(const char *s, char *buf, size_t len, bool *framework)
{
	if (strncmp(s, "File ", 5))
		return false;
	const char *f = s + 5, *l = strstr(f, ", line ");
	if (!l)
		return false;
	const char *in = strstr(l + 7, ", in ");
	if (!in)
		return false;
	const char *fn = in + 5, *fe = strstr(fn, ", \n");
	const char *code = fe ? fe + 3 : NULL;
	if (!fe)
		fe = fn + strlen(fn);
	while (code && *code == ' ')
		code++;
	/* torch's module hooks and msprobe's own wrappers are not the model */
	*framework = false;
	for (const char *p = f; p < l && !*framework; p++)
		*framework = !strncmp(p, "/torch/", 7) || !strncmp(p, "/msprobe/", 9);
	snprintf(buf, len, "%.*s:%.*s, in %.*s%s%s", (int)(l - f), f, (int)(in - l - 7), l + 7,
	         (int)(fe - fn), fn, code && *code ? ": " : "", code ? code : "");
	return true;
}

int db_msprobe_frame(const char *dump_path, const char *call, char *buf, size_t len)
{
	size_t n = 0, ep;
	const char *em;
	if (!dump_path || !call || !len)
		return -1;
	char *text = db_slurp_beside(dump_path, "stack.json", STACK_MAX, &n);
	db_jp *doc = NULL;
	int rc = -1;
	if (!text || db_jp_parse_py(text, n, true, &doc, &ep, &em) || doc->type != DB_JP_OBJ) {
		free(text);
		if (doc)
			db_jp_free(doc);
		return -1;
	}
	free(text);
	for (size_t i = 0; i < doc->n && rc; i++) {
		const db_jp *g = &doc->items[i];
		if (g->type != DB_JP_ARR || g->n != 2 || g->items[0].type != DB_JP_ARR ||
		    g->items[1].type != DB_JP_ARR)
			continue;
		bool named = false;
		for (size_t k = 0; k < g->items[0].n && !named; k++)
			named = g->items[0].items[k].type == DB_JP_STR && !strcmp(g->items[0].items[k].str, call);
		if (!named)
			continue;
		const db_jp *fr = &g->items[1];
		for (size_t k = 0; k < fr->n && rc; k++) {
			bool fw;
			if (fr->items[k].type == DB_JP_STR && split_frame(fr->items[k].str, buf, len, &fw) && !fw)
				rc = 0;
		}
	}
	db_jp_free(doc);
	return rc;
}
