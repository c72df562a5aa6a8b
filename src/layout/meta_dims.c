/* meta['dims'] of SGLang dumper v2 files: read the pickle only (restricted
 * VM, no tensor data) and parse the string into a layout. */
#include "meta_dims.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/pickle.h"
#include "read/zip.h"

#define META_PKL_CAP ((size_t)64 << 20) /* meta lives in data.pkl; a bigger one is not ours */

/* The next dim of a dims string at p: *tok its start, the return its end;
 * NULL at the end or at "# ...", a comment on the other groups
 * (tp:replicated). */
static const char *next_dim(const char *p, const char **tok)
{
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '#')
		return NULL;
	*tok = p;
	while (*p && *p != ' ' && *p != '\t' && *p != '#')
		p++;
	return p;
}

void db_dims_parse(const char *s, db_dims *out)
{
	memset(out, 0, sizeof *out);
	out->kind = DB_DIMS_REPLICATED;
	int dim = 0;
	bool found = false;
	/* "# ..." is a comment on the other groups (tp:replicated): the
	 * bracketed dims before it say what is sharded */
	const char *tok;
	for (const char *p = s; (p = next_dim(p, &tok)) != NULL;) {
		const char *lb = memchr(tok, '[', (size_t)(p - tok));
		if (lb) {
			const char *rb = memchr(lb, ']', (size_t)(p - lb));
			if (!rb || found) {
				out->kind = DB_DIMS_UNKNOWN;    /* two sharded dims: not followed */
				return;
			}
			size_t gl = (size_t)(rb - lb - 1);
			const char *colon = memchr(lb, ':', gl + 1);
			size_t nl = colon ? (size_t)(colon - lb - 1) : gl;
			if (nl >= sizeof out->group)
				nl = sizeof out->group - 1;
			memcpy(out->group, lb + 1, nl);
			out->group[nl] = '\0';
			if (colon && (size_t)(rb - colon - 1) == 7 && !strncmp(colon + 1, "partial", 7))
				out->kind = DB_DIMS_PARTIAL;
			else if (!colon)
				out->kind = DB_DIMS_SPLIT;
			else {
				out->kind = DB_DIMS_UNKNOWN;
				return;
			}
			out->dim = dim;
			found = true;
		}
		dim++;
	}
}

int db_dims_token_dim(const char *s)
{
	int dim = 0;
	const char *tok;
	for (const char *p = s; (p = next_dim(p, &tok)) != NULL;) {
		if (tok[0] == 't' && (tok + 1 == p || tok[1] == '['))
			return dim;
		dim++;
	}
	return -1;
}

bool db_dims_rule(const db_dims *d, db_shard_rule *r)
{
	memset(r, 0, sizeof *r);
	if (d->kind == DB_DIMS_SPLIT) {
		r->how = DB_UNSHARD_CONCAT;
		r->dim = d->dim;
		return true;
	}
	if (d->kind == DB_DIMS_PARTIAL) {
		r->how = DB_UNSHARD_SUM;
		return true;
	}
	return false;
}

static const db_pk_val *dict_get(const db_pk_val *d, const char *key)
{
	if (!d || d->type != DB_PK_DICT)
		return NULL;
	for (size_t i = 0; i < d->u.dict.n; i++) {
		const db_pk_val *k = d->u.dict.k[i];
		if (k->type == DB_PK_STR && !strcmp(k->u.str.s, key))
			return d->u.dict.v[i];
	}
	return NULL;
}

/* data.pkl of the zip in map[0..size): the dims string. */
static int dims_in_zip(const char *path, const uint8_t *map, size_t size, char *buf, size_t len,
                       db_meta_par *par)
{
	db_zip z;
	db_err err = {0};
	if (db_zip_open(map, size, path, &z, &err) != 0)
		return -1;
	int rc = 0;
	const db_zip_entry *pe = NULL;
	for (size_t i = 0; i < z.n_entries && !pe; i++) {
		const char *nm = z.entries[i].name, *sl = strchr(nm, '/');
		if (sl && !strcmp(sl + 1, "data.pkl"))
			pe = &z.entries[i];
	}
	const uint8_t *pkl;
	size_t plen;
	void *owned = NULL;
	db_pk *vm = NULL;
	if (!pe || db_zip_data(&z, pe, &pkl, &plen, &owned, META_PKL_CAP, &err) != 0) {
		rc = -1;
		goto out;
	}
	vm = db_pk_new(path, pe->name, false);
	db_pk_val *root;
	size_t used;
	if (!vm || db_pk_run(vm, pkl, plen, 0, &root, &used, &err) != 0) {
		rc = -1;
		goto out;
	}
	const db_pk_val *meta = dict_get(root, "meta");
	const db_pk_val *sp = dict_get(dict_get(meta, "megatron_parallel_info"), "sp_size");
	if (sp && sp->type == DB_PK_INT && sp->u.i > 1 && sp->u.i < 1 << 20)
		par->sp_size = (int)sp->u.i;
	const db_pk_val *d = dict_get(meta, "dims");
	if (d && d->type == DB_PK_STR) {
		snprintf(buf, len, "%s", d->u.str.s);
		rc = 1;
		db_dims dd;
		db_dims_parse(d->u.str.s, &dd);
		if (dd.group[0]) {
			char k[48];
			snprintf(k, sizeof k, "%s_size", dd.group);
			const db_pk_val *g = dict_get(dict_get(meta, "sglang_parallel_info"), k);
			if (g && g->type == DB_PK_INT && g->u.i >= 1 && g->u.i < 1 << 20)
				par->group_size = (int)g->u.i;
		}
	}
out:
	db_pk_free(vm);
	free(owned);
	db_zip_close(&z);
	return rc;
}

int db_meta_dims_read(const char *path, char *buf, size_t len, db_meta_par *par)
{
	db_meta_par dummy;
	if (!par)
		par = &dummy;
	par->sp_size = 1;
	par->group_size = 0;
	if (len)
		buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 4) {
		close(fd);
		return -1;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	int rc = 0;
	const uint8_t *p = m;
	if (p[0] == 'P' && p[1] == 'K') /* torch >= 1.6 zip; legacy files carry no v2 meta */
		rc = dims_in_zip(path, p, (size_t)st.st_size, buf, len, par);
	munmap(m, (size_t)st.st_size);
	return rc;
}
