/* Reading msprobe's dump.json. Keys are built so that a profile can place
 * every call in the module that made it (construct.json gives an API
 * call's parent module) and so that a call is numbered within its module,
 * not by msprobe's global counters: one extra call elsewhere in the run
 * shifts none of the others.
 *
 *   module call  Module.<path>.<Class>.forward.<n>  ->  <path>[#<n>]
 *   API call     Functional.linear.3.forward         ->  <parent path>.Functional.linear[#<k>]
 *                (k = how many calls of that API its parent made before)
 *   then, when a call gave several tensors, .<i> per output (nested: .<i>.<j>);
 *   backward calls are the same under "backward/".
 * Inputs and parameters are not entries: the outputs are what pairs. */
#include "msprobe_json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binio.h"
#include "reader_impl.h"
#include "db_bus.h"
#include "util/budget.h"
#include "util/json_parse.h"
#include "util/strmap.h"

/* One call's tree, parsed (about 20 times its text): a real call is a few
 * KiB; 37-byte tensor records in one call made it 1.2 GB (issue 37). */
#define CALL_PARSED_MAX ((size_t)64 << 20)
/* construct.json is small beside dump.json; a bigger one is not msprobe's */
#define CONSTRUCT_MAX ((size_t)256 << 20)

bool db_msprobe_sniff(const uint8_t *d, size_t n)
{
	size_t i = 0;
	while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
		i++;
	if (i >= n || d[i] != '{')
		return false;
	size_t lim = n < i + 512 ? n : i + 512;
	for (size_t j = i; j + 6 <= lim; j++)
		if (!memcmp(d + j, "\"task\"", 6))
			return true;
	return false;
}

typedef struct kbuf { char s[1024]; size_t n; bool over; } kbuf;

static void kput(kbuf *k, const char *s, size_t len)
{
	if (k->n + len >= sizeof k->s) {
		k->over = true;
		return;
	}
	memcpy(k->s + k->n, s, len);
	k->n += len;
	k->s[k->n] = 0;
}

static void kputs(kbuf *k, const char *s) { kput(k, s, strlen(s)); }

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* "Module.<path>.<Class>.<dir>.<n>": path, direction and call number. */
static bool split_module(const char *name, const char **path, size_t *plen, bool *bwd,
                         const char **num, size_t *nlen)
{
	if (strncmp(name, "Module.", 7))
		return false;
	const char *s = name + 7, *e = s + strlen(s);
	const char *dots[3];
	const char *p = e;
	for (int i = 0; i < 3; i++) {
		while (p > s && p[-1] != '.')
			p--;
		if (p <= s)
			return false;
		dots[i] = --p;          /* the '.' before the i-th token from the end */
	}
	*num = dots[0] + 1;
	*nlen = (size_t)(e - *num);
	size_t dl = (size_t)(dots[0] - dots[1] - 1);
	if (!all_digits(*num, *nlen))
		return false;
	if (dl == 7 && !memcmp(dots[1] + 1, "forward", 7))
		*bwd = false;
	else if (dl == 8 && !memcmp(dots[1] + 1, "backward", 8))
		*bwd = true;
	else
		return false;
	*path = s;
	*plen = (size_t)(dots[2] - s);
	return true;
}

/* "<Type>.<api>.<n>.<dir>": API name and direction (the counter dropped). */
static bool split_api(const char *name, size_t *alen, bool *bwd)
{
	size_t n = strlen(name);
	const char *d = strrchr(name, '.');
	if (!d)
		return false;
	if (!strcmp(d, ".forward"))
		*bwd = false;
	else if (!strcmp(d, ".backward"))
		*bwd = true;
	else
		return false;
	const char *c = d;
	while (c > name && c[-1] != '.')
		c--;
	if (c <= name || !all_digits(c, (size_t)(d - c)))
		return false;
	*alen = (size_t)(c - 1 - name);
	(void)n;
	return *alen > 0;
}

typedef struct rd {
	db_file *f;
	db_err *err;
	const db_jp *construct;         /* object node -> parent, or NULL */
	db_strmap cidx;                 /* construct key -> item index */
	db_strmap calls;                /* "<bwd><parent>\x1f<api>" -> calls so far */
	const char *call;               /* the node being read (owned by f) */
	size_t max_entries;             /* db_json_entries */
} rd;

static const char *jp_str(const db_jp *v)
{
	return v && v->type == DB_JP_STR && strlen(v->str) == v->len ? v->str : NULL;
}

static int num_field(const db_jp *t, const char *name, double *v, bool *has)
{
	const db_jp *x = db_jp_get(t, name);
	*has = false;
	if (!x || x->type == DB_JP_NULL)
		return 0;
	if (x->type == DB_JP_BOOL) {    /* Max/Min of a bool tensor */
		*v = x->b;
		*has = true;
		return 0;
	}
	if (x->type != DB_JP_NUM)
		return -1;
	*v = x->num;
	*has = true;
	return 0;
}

/* Room for one more entry in this file (db_json_entries): else -1, the
 * whole file refused by name. */
static int room(rd *r, size_t pos)
{
	if (r->f->n_entries < r->max_entries)
		return 0;
	return db_err_set(r->err, r->f->path, NULL, (int64_t)pos, "msprobe dump.json with more than "
	                  "%llu tensor entries: refused (each costs about 1 KiB once read; "
	                  "DUMPBISECT_JSON_ENTRIES raises the limit)",
	                  (unsigned long long)r->max_entries);
}

static int bad(rd *r, const char *key, const char *jpath, size_t pos, const char *what)
{
	if (room(r, pos))
		return -1;
	db_err e = {{0}};
	db_err_set(&e, r->f->path, NULL, (int64_t)pos, "%s: %s", jpath, what);
	return db_file_add_entry_error(r->f, key, &e, r->err);
}

/* One tensor of a call's output: an entry holding its statistics. */
static int add_tensor(rd *r, const char *key, const db_jp *t, const char *jpath)
{
	const char *dt = jp_str(db_jp_get(t, "dtype"));
	const db_jp *sh = db_jp_get(t, "shape");
	if (!dt || !sh || sh->type != DB_JP_ARR)
		return bad(r, key, jpath, t->pos, "a tensor without a dtype string and a shape list");
	if (sh->n > DB_MAX_DIMS)
		return bad(r, key, jpath, sh->pos, "more than 16 dimensions");
	db_dtype d = db_dtype_from_name(strncmp(dt, "torch.", 6) ? dt : dt + 6);
	if (d == DB_DT_UNKNOWN)
		return bad(r, key, jpath, t->pos, "unknown dtype");
	if (room(r, t->pos))
		return -1;
	db_tstat *st = calloc(1, sizeof *st);
	if (!st || db_file_own(r->f, st))
		return db_err_set(r->err, r->f->path, key, -1, "out of memory");
	st->call = r->call;
	if (num_field(t, "Max", &st->max, &st->has_max) || num_field(t, "Min", &st->min, &st->has_min) ||
	    num_field(t, "Mean", &st->mean, &st->has_mean) || num_field(t, "Norm", &st->norm, &st->has_norm))
		return bad(r, key, jpath, t->pos, "Max, Min, Mean or Norm is not a number");
	const char *dn = jp_str(db_jp_get(t, "data_name"));
	/* a plain name in dump_tensor_data/, never a path out of it */
	if (dn && *dn && !strchr(dn, '/') && strcmp(dn, ".") && strcmp(dn, "..")) {
		if (!(st->data = strdup(dn)) || db_file_own(r->f, st->data))
			return db_err_set(r->err, r->f->path, key, -1, "out of memory");
	}
	const char *md5 = jp_str(db_jp_get(t, "md5"));
	if (md5) {
		/* hex digits only: strtoul took "-1" (and " +f") as a CRC */
		uint32_t v = 0;
		size_t ml = strlen(md5);
		bool hex = ml >= 1 && ml <= 8;
		for (size_t i = 0; hex && i < ml; i++) {
			char ch = md5[i];
			int dg = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
			         : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
			hex = dg >= 0;
			v = v << 4 | (uint32_t)(dg & 15);
		}
		if (!hex)
			return bad(r, key, jpath, t->pos, "md5 is not a CRC-32 in hex");
		st->crc = v;
		st->has_crc = true;
	}
	db_entry *e = db_file_add_entry(r->f, key);
	if (!e)
		return db_err_set(r->err, r->f->path, key, -1, "out of memory");
	e->t.dtype = d;
	e->t.ndim = (int)sh->n;
	for (size_t i = 0; i < sh->n; i++) {
		const db_jp *x = &sh->items[i];
		if (x->type != DB_JP_NUM || !x->is_uint || x->u > ((uint64_t)1 << 48)) {
			r->f->n_entries--;
			free(e->key);
			return bad(r, key, jpath, x->pos, "a shape entry is not a size");
		}
		e->t.shape[i] = (int64_t)x->u;
	}
	/* each dim <= 2^48, their product not: [2^48, 2^48] was signed
	 * overflow past here (issue 37); its bytes must fit as well */
	int64_t numel;
	if (!db_shape_numel(e->t.ndim, e->t.shape, &numel) ||
	    numel > INT64_MAX / (int64_t)(db_dtype_size(d) ? db_dtype_size(d) : 1)) {
		r->f->n_entries--;
		free(e->key);
		return bad(r, key, jpath, sh->pos, "a shape of more than 2^63 bytes");
	}
	db_tensor_set_contiguous(&e->t);
	e->t.st = st;
	return 0;
}

static bool is_tensor(const db_jp *v)
{
	return v && v->type == DB_JP_OBJ && db_jp_get(v, "dtype") && db_jp_get(v, "shape");
}

/* Tensor leaves under v, in order; lists nest by index, dicts by key. */
static int walk_out(rd *r, const db_jp *v, kbuf *k, const char *jpath, bool suffix)
{
	if (!v || v->type == DB_JP_NULL)
		return 0;
	if (is_tensor(v))
		return add_tensor(r, k->over ? "" : k->s, v, jpath);
	if (v->type != DB_JP_ARR && v->type != DB_JP_OBJ)
		return 0;               /* a scalar argument: nothing to compare */
	for (size_t i = 0; i < v->n; i++) {
		kbuf k2 = *k;
		char num[32];
		if (suffix) {
			if (v->type == DB_JP_OBJ) {
				kputs(&k2, ".");
				kputs(&k2, v->keys[i]);
			} else {
				snprintf(num, sizeof num, ".%zu", i);
				kputs(&k2, num);
			}
		}
		char jp[512];
		if (v->type == DB_JP_OBJ)
			snprintf(jp, sizeof jp, "%s.%s", jpath, v->keys[i]);
		else
			snprintf(jp, sizeof jp, "%s[%zu]", jpath, i);
		if (k2.over)
			return bad(r, "", jp, v->items[i].pos, "name too long");
		if (walk_out(r, &v->items[i], &k2, jp, true))
			return -1;
	}
	return 0;
}

static size_t count_tensors(const db_jp *v)
{
	if (!v || v->type == DB_JP_NULL)
		return 0;
	if (is_tensor(v))
		return 1;
	size_t n = 0;
	if (v->type == DB_JP_ARR || v->type == DB_JP_OBJ)
		for (size_t i = 0; i < v->n; i++)
			n += count_tensors(&v->items[i]);
	return n;
}

/* The module path of an API call's parent, from construct.json. */
static bool parent_path(rd *r, const char *name, const char **p, size_t *pl)
{
	size_t *ix = r->construct ? db_strmap_get(&r->cidx, name) : NULL;
	const char *par = ix ? jp_str(&r->construct->items[*ix]) : NULL;
	bool bwd;
	const char *num;
	size_t nl;
	return par && split_module(par, p, pl, &bwd, &num, &nl);
}

static int one_node(rd *r, const char *name, const db_jp *node)
{
	kbuf k = {.n = 0};
	k.s[0] = 0;
	char jpath[600];
	snprintf(jpath, sizeof jpath, "$.data[\"%.500s\"]", name);
	if (node->type != DB_JP_OBJ)
		return bad(r, name, jpath, node->pos, "a call is not an object");
	char *call = strdup(name);      /* its stack.json name, for the views */
	if (!call || db_file_own(r->f, call))
		return db_err_set(r->err, r->f->path, name, -1, "out of memory");
	r->call = call;
	const char *path, *num;
	size_t plen, nlen, alen;
	bool bwd;
	if (split_module(name, &path, &plen, &bwd, &num, &nlen)) {
		if (bwd)
			kputs(&k, "backward/");
		kput(&k, path, plen);
		if (!(nlen == 1 && num[0] == '0')) {
			kputs(&k, "#");
			kput(&k, num, nlen);
		}
	} else if (split_api(name, &alen, &bwd)) {
		const char *pp = NULL;
		size_t pl = 0;
		bool placed = parent_path(r, name, &pp, &pl);
		kbuf c = {.n = 0};
		c.s[0] = 0;
		kputs(&c, bwd ? "b" : "f");
		if (placed)
			kput(&c, pp, pl);
		kputs(&c, "\x1f");
		kput(&c, name, alen);
		bool added;
		size_t *cnt = db_strmap_put(&r->calls, c.s, 0, &added);
		if (!cnt)
			return db_err_set(r->err, r->f->path, name, -1, "out of memory");
		if (bwd)
			kputs(&k, "backward/");
		if (placed) {
			kput(&k, pp, pl);
			kputs(&k, ".");
		}
		kput(&k, name, alen);
		if (*cnt) {
			char b[32];
			snprintf(b, sizeof b, "#%zu", *cnt);
			kputs(&k, b);
		}
		(*cnt)++;
	} else {
		return bad(r, name, jpath, node->pos, "a call name msprobe does not write "
		           "(neither Module.<path>.<Class>.forward.<n> nor <Type>.<api>.<n>.forward)");
	}
	if (k.over)
		return bad(r, name, jpath, node->pos, "name too long");
	const db_jp *out = db_jp_get(node, "output");
	char jp[640];
	snprintf(jp, sizeof jp, "%s.output", jpath);
	/* one tensor: the call's name is the stage; several: .<i> each */
	if (count_tensors(out) == 1 && !is_tensor(out)) {
		const db_jp *v = out;
		while (v && !is_tensor(v))
			for (size_t i = 0; i < v->n; i++)
				if (count_tensors(&v->items[i])) {
					size_t l = strlen(jp);
					if (v->type == DB_JP_OBJ)
						snprintf(jp + l, sizeof jp - l, ".%s", v->keys[i]);
					else
						snprintf(jp + l, sizeof jp - l, "[%zu]", i);
					v = &v->items[i];
					break;
				}
		return add_tensor(r, k.s, v, jp);
	}
	return walk_out(r, out, &k, jp, !is_tensor(out));
}

static int load_construct(rd *r, db_jp **doc)
{
	char *text;
	size_t len, ep;
	const char *em;
	*doc = NULL;
	if (!r->f->path || !(text = db_slurp_beside(r->f->path, "construct.json", CONSTRUCT_MAX, &len)))
		return 0;               /* without it API calls stay unplaced */
	int rc = db_jp_parse_py(text, len, true, doc, &ep, &em);
	free(text);
	if (rc || (*doc)->type != DB_JP_OBJ) {
		db_jp_free(rc ? NULL : *doc);
		*doc = NULL;
		return 0;
	}
	r->construct = *doc;
	if (db_strmap_reserve(&r->cidx, (*doc)->n))
		return -1;
	for (size_t i = 0; i < (*doc)->n; i++) {
		bool added;
		if (!db_strmap_put(&r->cidx, (*doc)->keys[i], i, &added))
			return -1;
	}
	return 0;
}

/* Streaming: the top-level object is walked member by member and "data"
 * call by call, each call parsed alone and freed, so what a dump.json
 * costs beyond its entries is one call's tree, whatever its size. */
typedef struct scan {
	const char *t;
	size_t n, i;
} scan;

static void ws(scan *s)
{
	while (s->i < s->n && (s->t[s->i] == ' ' || s->t[s->i] == '\n' || s->t[s->i] == '\r' ||
	                       s->t[s->i] == '\t'))
		s->i++;
}

static int trunc_err(db_file *f, db_err *err, size_t pos, const char *what, const char *jpath)
{
	return db_err_set(err, f->path, NULL, (int64_t)pos,
	                  "msprobe dump.json: %s at byte %zu, in %s (truncated or not JSON)", what, pos,
	                  jpath);
}

/* After a member: ',' (then more) or the closing c. 1 when closed. */
static int next_member(scan *s, char c, db_file *f, db_err *err, const char *jpath)
{
	ws(s);
	if (s->i < s->n && s->t[s->i] == ',') {
		s->i++;
		return 0;
	}
	if (s->i < s->n && s->t[s->i] == c) {
		s->i++;
		return 1;
	}
	return trunc_err(f, err, s->i, s->i < s->n ? "',' or the end of the object expected"
	                                           : "unexpected end", jpath) - 1;
}

/* db_jp_free for db_bus_hold */
static void free_jp(void *v)
{
	db_jp_free(v);
}

/* '{' or the empty object's '}'; a key and its ':'. */
static int member_key(scan *s, db_jp **key, db_file *f, db_err *err, const char *jpath)
{
	size_t ep = s->i;
	const char *em = NULL;
	if (db_jp_parse_at(s->t, s->n, true, s->i, key, &s->i, &ep, &em) || (*key)->type != DB_JP_STR) {
		db_jp_free(*key);
		*key = NULL;
		return trunc_err(f, err, ep, em ? em : "a key expected", jpath);
	}
	if (s->i >= s->n || s->t[s->i] != ':') {
		db_jp_free(*key);
		*key = NULL;
		return trunc_err(f, err, s->i, "':' expected", jpath);
	}
	s->i++;
	return 0;
}

static int open_obj(scan *s, db_file *f, db_err *err, const char *jpath, bool *empty)
{
	ws(s);
	if (s->i >= s->n || s->t[s->i] != '{')
		return trunc_err(f, err, s->i, "'{' expected", jpath);
	s->i++;
	ws(s);
	*empty = s->i < s->n && s->t[s->i] == '}';
	if (*empty)
		s->i++;
	return 0;
}

/* The end of the JSON value at i by its brackets and strings alone, so a
 * call that does not parse is stepped over: the index past it, or 0 when
 * the text ends first. */
static size_t skip_value(const scan *s, size_t i)
{
	int depth = 0;
	for (; i < s->n; i++) {
		char ch = s->t[i];
		if (ch == '"') {
			for (i++; i < s->n && s->t[i] != '"'; i++)
				if (s->t[i] == '\\')
					i++;
			if (i >= s->n)
				return 0;
			if (!depth)
				return i + 1;
		} else if (ch == '{' || ch == '[') {
			depth++;
		} else if (ch == '}' || ch == ']') {
			if (!depth)
				return i;       /* a scalar ended by its object's end */
			if (!--depth)
				return i + 1;
		} else if (!depth && ch == ',') {
			return i;
		}
	}
	return 0;
}

/* A call that cannot be read: an error entry under its name (file, JSON
 * path, byte), not the whole file's; the other calls still load. */
static int call_error(rd *r, const char *name, size_t pos, const char *fmt, const char *what,
                      const char *jpath)
{
	if (room(r, pos))
		return -1;
	db_err e = {{0}};
	db_err_set(&e, r->f->path, NULL, (int64_t)pos, fmt, what, pos, jpath);
	return db_file_add_entry_error(r->f, name, &e, r->err);
}

#define NOT_JSON "msprobe dump.json: %s at byte %zu, in %s (truncated or not JSON)"

/* 0, -1 (out of memory), or 1: stopped where the text cannot be followed
 * (truncated), the calls before it kept and the stop an entry error. */
static int stream_data(rd *r, scan *s, db_strmap *seen)
{
	bool empty;
	if (open_obj(s, r->f, r->err, "$.data", &empty))
		return -1;
	for (int closed = empty; !closed;) {
		db_jp *key = NULL, *node = NULL;
		db_err ke;
		if (member_key(s, &key, r->f, &ke, "$.data"))
			return db_file_add_entry_error(r->f, "", &ke, r->err) ? -1 : 1;
		char jpath[600];
		snprintf(jpath, sizeof jpath, "$.data[\"%.500s\"]", key->str);
		size_t at = s->i, ep = s->i;
		const char *em = NULL;
		int rc = 0;
		bool added = false;
		int held = db_bus_hold(free_jp, key);  /* a fault in the parse leaves key */
		int perr = db_jp_parse_at_max(s->t, s->n, true, s->i, CALL_PARSED_MAX, &node, &s->i,
		                              &ep, &em);
		db_bus_drop(held);
		if (perr) {
			/* step over it when its brackets close, else stop here */
			size_t end = skip_value(s, at);
			bool big = em && !strcmp(em, "parsed form over its cap");
			rc = call_error(r, key->str, ep, big ? "msprobe dump.json: %s (64 MiB) at byte %zu, "
			                "in %s: a call this large is not msprobe's" : NOT_JSON,
			                em ? em : "not JSON", jpath);
			if (!rc && !end)
				rc = 1;
			s->i = end;
		} else if (!db_strmap_put(seen, key->str, 0, &added)) {
			rc = db_err_set(r->err, r->f->path, NULL, -1, "out of memory");
		} else if (!added) {
			db_err e = {{0}};
			db_err_set(&e, r->f->path, NULL, (int64_t)key->pos,
			           "%s: a second call of that name (the first one is read)", jpath);
			rc = room(r, key->pos) ? -1 : db_file_add_entry_error(r->f, key->str, &e, r->err);
		} else {
			rc = one_node(r, key->str, node);
		}
		db_jp_free(node);
		db_jp_free(key);
		if (rc)
			return rc;
		if ((closed = next_member(s, '}', r->f, &ke, "$.data")) < 0)
			return db_file_add_entry_error(r->f, "", &ke, r->err) ? -1 : 1;
	}
	return 0;
}

typedef struct doc_job {
	rd *r;
	scan *s;
	db_strmap *seen;
	db_jp **cons;
} doc_job;

/* The document, member by member (reads the mapping: run guarded). */
static int read_doc(void *arg)
{
	doc_job *j = arg;
	rd *r = j->r;
	scan *s = j->s;
	db_file *f = r->f;
	db_err *err = r->err;
	size_t n = s->n;
	bool empty, task = false, data = false;
	int rc = load_construct(r, j->cons) ? db_err_set(err, f->path, NULL, -1, "out of memory") : 0;
	if (!rc)
		rc = open_obj(s, f, err, "$", &empty);
	for (int closed = rc ? 1 : empty; !closed && !rc;) {
		db_jp *key = NULL;
		if ((rc = member_key(s, &key, f, err, "$")))
			break;
		if (!strcmp(key->str, "data")) {
			ws(s);
			if (data)       /* JSON leaves it open; Python keeps the last */
				rc = db_err_set(err, f->path, NULL, (int64_t)key->pos,
				                "$.data: a second \"data\" member (which one is meant?)");
			else if (s->i < n && s->t[s->i] != '{')
				rc = db_err_set(err, f->path, NULL, (int64_t)s->i,
				                "$.data: missing or not an object of calls");
			else {
				int held = db_bus_hold(free_jp, key);
				rc = stream_data(r, s, j->seen);
				db_bus_drop(held);
				if (rc == 1) {
					db_jp_free(key);
					return 0;       /* the rest cannot be followed: said */
				}
			}
			data = true;
		} else {
			db_jp *v = NULL;
			size_t ep = s->i;
			const char *em = NULL;
			char jp[300];
			snprintf(jp, sizeof jp, "$.%.250s", key->str);
			if (db_jp_parse_at(s->t, n, true, s->i, &v, &s->i, &ep, &em))
				rc = trunc_err(f, err, ep, em, jp);
			else if (!strcmp(key->str, "task"))
				task = jp_str(v) != NULL;
			db_jp_free(v);
		}
		db_jp_free(key);
		if (!rc && (closed = next_member(s, '}', f, err, "$")) < 0)
			rc = -1;
	}
	if (!rc) {
		ws(s);
		if (s->i != n)
			rc = trunc_err(f, err, s->i, "trailing characters after JSON value", "$");
		else if (!task)
			rc = db_err_set(err, f->path, NULL, 0, "$.task: missing or not a string");
		else if (!data)
			rc = db_err_set(err, f->path, NULL, 0, "$.data: missing or not an object of calls");
	}
	return rc;
}

int db_read_msprobe(db_file *f, const uint8_t *d, size_t n, db_err *err)
{
	char cap[32], sz[32];
	int brc = db_budget_take(&db_json_budget, n, true);
	if (brc)
		return db_err_set(err, f->path, NULL, -1, "msprobe dump.json of %s exceeds the %s cap on "
		                  "JSON dump indexes (DUMPBISECT_JSON_MAX raises it)",
		                  db_budget_size(n, sz, sizeof sz),
		                  db_budget_size(db_budget_limit(&db_json_budget), cap, sizeof cap));
	db_jp *cons = NULL;
	rd r = {.f = f, .err = err, .max_entries = (size_t)db_budget_limit(&db_json_entries)};
	db_strmap seen;
	db_strmap_init(&seen);
	db_strmap_init(&r.cidx);
	db_strmap_init(&r.calls);
	scan s = {(const char *)d, n, 0};
	/* under a guard of its own: a dump.json that shrinks mid-parse jumped
	 * past the give-back below, and every later dump.json waited for the
	 * budget forever (issue 37). The call being parsed then leaks. */
	doc_job j = {&r, &s, &seen, &cons};
	const void *at = NULL;
	int rc = db_bus_run(read_doc, &j, &at);
	if (rc == DB_BUS_FAULT)
		db_err_set(err, f->path, NULL, at ? (int64_t)((const uint8_t *)at - d) : -1,
		           "file changed while read (it shrank under its mapping: this byte is gone); "
		           "rescan");
	db_strmap_free(&seen);
	db_strmap_free(&r.cidx);
	db_strmap_free(&r.calls);
	db_jp_free(cons);
	db_budget_give(&db_json_budget, n);
	return rc ? -1 : 0;
}
