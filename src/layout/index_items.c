/* What a built index holds, apart from how it is built (index.c) and
 * snapshotted (index_snap.c), which both use it: the keys that identify an
 * item's fields, an item's path, whether the items record their execution
 * order, and freeing. */
#include "db_index.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_priv.h"
#include "util/intern.h"
#include "read/walk.h"
#include "util/strmap.h"
#include "util/hash.h"

/* Bounded appends (like snprintf's truncation, without its cost: keys
 * are built per item and per pair). */
static size_t key_put(char *buf, size_t len, size_t n, const char *s)
{
	while (*s && n + 1 < len)
		buf[n++] = *s++;
	buf[n < len ? n : len - 1] = 0;
	return n;
}

static size_t key_int(char *buf, size_t len, size_t n, long long v)
{
	char d[24], *e = d + sizeof d - 1, *p = e;
	*e = 0;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10));
	if (v < 0)
		*--p = '-';
	return key_put(buf, len, n, p);
}

char *db_fields_key(const db_ifields *f, char *buf, size_t len)
{
	if (!len)
		return buf;
	size_t n = key_put(buf, len, 0, f->phase);
	n = key_put(buf, len, n, "\x1f");
	n = key_put(buf, len, n, f->pass);
	n = key_put(buf, len, n, "\x1f");
	n = key_int(buf, len, n, f->rank);
	n = key_put(buf, len, n, "\x1f");
	n = key_int(buf, len, n, f->layer);
	n = key_put(buf, len, n, "\x1f");
	key_put(buf, len, n, f->stage);
	return buf;
}

char *db_side_fields_key(const char *side, const db_ifields *f, char *buf, size_t len)
{
	size_t n = key_put(buf, len, 0, side);
	n = key_put(buf, len, n, "\x1e");
	db_fields_key(f, buf + n, len - n);
	return buf;
}

char *db_fields_key_occ(const db_ifields *f, int occ, char *buf, size_t len)
{
	db_fields_key(f, buf, len);
	size_t n = strlen(buf);
	n = key_put(buf, len, n, "\x1f");
	key_int(buf, len, n, occ);
	return buf;
}

char *db_index_path(const db_index *ix, const db_item *it)
{
	if (ix->root_is_file)
		return strdup(ix->root);
	return db_path_join(ix->root, it->path);
}

char *db_index_data_path(const db_index *ix, const db_item *it, const char *name)
{
	char *p = db_index_path(ix, it);
	if (!p)
		return NULL;
	char *slash = strrchr(p, '/');
	size_t dl = slash ? (size_t)(slash - p + 1) : 0;
	char *out = malloc(dl + sizeof "dump_tensor_data/" + strlen(name));
	if (out) {
		memcpy(out, p, dl);
		strcpy(out + dl, "dump_tensor_data/");
		strcat(out, name);
	}
	free(p);
	return out;
}

int db_index_data_inside(const db_index *ix, const char *path, db_err *err)
{
	if (db_walk_follows_links())
		return 0;
	char *rp = realpath(path, NULL), *root = rp ? realpath(ix->root, NULL) : NULL;
	size_t n = root ? strlen(root) : 0;
	bool out = root && strcmp(root, "/") && (strncmp(rp, root, n) || rp[n] != '/');
	if (out)
		db_err_set(err, path, NULL, -1, "a link out of the tree (to %s); not followed "
		           "(--follow-links follows it)", rp);
	free(rp);
	free(root);
	return out ? -1 : 0;
}

/* Length of stage without trailing tuple indices ("m.0.1" -> "m"). */
static size_t module_len(const char *stage)
{
	size_t n = strlen(stage);
	for (;;) {
		size_t k = n;
		while (k && stage[k - 1] >= '0' && stage[k - 1] <= '9')
			k--;
		if (k == n || !k || stage[k - 1] != '.' || k - 1 == 0)
			return n;
		n = k - 1;
	}
}

/* Some layer (of one side, phase, pass, rank) has items in more than one
 * file: one file per module or per call (ATOM's hooks write a dict
 * {hidden, input} per module). Entry order then orders a module's own
 * tensors only, not the layer's modules. */
static bool layers_span_files(const db_item *items, size_t n)
{
	db_strmap m;
	db_strmap_init(&m);
	bool spans = false;
	for (size_t i = 0; i < n && !spans; i++) {
		const db_item *it = &items[i];
		if (it->f.layer < 0 || it->err)
			continue;
		char k[1024];
		size_t kn = key_put(k, sizeof k, 0, it->f.side);
		kn = key_put(k, sizeof k, kn, "\x1e");
		db_ifields f = it->f;
		f.stage = "";
		db_fields_key(&f, k + kn, sizeof k - kn);
		bool added;
		size_t *v = db_strmap_put(&m, k, i, &added);
		if (!v) {
			spans = true;   /* OOM: treat as no recorded order */
			break;
		}
		spans = !added && strcmp(items[*v].path, it->path);
	}
	db_strmap_free(&m);
	return spans;
}

bool db_index_records_order(const db_item *items, size_t n, const db_profile *p)
{
	for (size_t i = 0; i < n; i++)
		if (items[i].f.order >= 0)
			return true;
	if (p->dict_order_none)
		return false;
	/* (side, phase, pass, rank, layer, file) -> the first item's index */
	db_strmap m;
	db_strmap_init(&m);
	char *k = NULL;
	size_t cap = 0;
	bool found = false;
	for (size_t i = 0; i < n && !found; i++) {
		const db_item *it = &items[i];
		size_t pl = strlen(it->path);
		if (it->err || (pl >= 12 && !strcmp(it->path + pl - 12, ".safetensors")))
			continue;
		if (pl + 256 > cap) {   /* fields fit in 256: never truncate the path */
			char *nk = realloc(k, pl + 256);
			if (!nk)
				break;  /* OOM: treat as no recorded order */
			k = nk;
			cap = pl + 256;
		}
		size_t kn = key_put(k, cap, 0, it->f.side);
		kn = key_put(k, cap, kn, "\x1e");
		db_ifields f = it->f;
		f.stage = "";
		db_fields_key(&f, k + kn, cap - kn);
		kn += strlen(k + kn);
		kn = key_put(k, cap, kn, "\x1e");
		key_put(k, cap, kn, it->path);
		bool added;
		size_t *v = db_strmap_put(&m, k, i, &added);
		if (!v)
			break;
		if (added)
			continue;
		const char *a = items[*v].f.stage, *b = it->f.stage;
		size_t la = module_len(a), lb = module_len(b);
		found = la != lb || memcmp(a, b, la);
	}
	free(k);
	db_strmap_free(&m);
	if (found)
		found = !layers_span_files(items, n);
	return found;
}

int db_push_str(char ***arr, size_t *n, const char *s)
{
	char **a = realloc(*arr, (*n + 1) * sizeof *a);
	if (!a)
		return -1;
	*arr = a;
	if (!(a[*n] = strdup(s)))
		return -1;
	(*n)++;
	return 0;
}

bool db_index_owns_str(const db_index *ix, const char *s)
{
	/* compared as integers: s may be from another block */
	uintptr_t p = (uintptr_t)s, b = (uintptr_t)ix->strs;
	return ix->strs && p >= b && p - b < ix->strs_len;
}

void db_index_free(db_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n_items; i++) {
		if (!db_index_owns_str(ix, ix->items[i].path))
			free(ix->items[i].path);
		if (!db_index_owns_str(ix, ix->items[i].key))
			free(ix->items[i].key);
		free(ix->items[i].err);
		free(ix->items[i].st.data);
	}
	free(ix->items);
	for (size_t i = 0; i < ix->n_unparsed; i++)
		free(ix->unparsed[i]);
	free(ix->unparsed);
	for (size_t i = 0; i < ix->n_skipped; i++)
		free(ix->skipped[i]);
	free(ix->skipped);
	free(ix->root);
	free(ix->strs);
	free(ix);
}

int db_fields_store(const db_fields *f, db_ifields *out)
{
	*out = (db_ifields){db_intern(f->side), db_intern(f->phase), db_intern(f->pass),
	                    db_intern(f->stage), f->rank, f->layer, f->order,
	                    f->stage_is_file, f->cut};
	return out->side && out->phase && out->pass && out->stage ? 0 : -1;
}

/* a stored name always fits its field: db_fields_store took it from one */
static void load_name(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(s);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = 0;
}

void db_fields_load(const db_ifields *in, db_fields *out)
{
	memset(out, 0, sizeof *out);
	load_name(out->side, sizeof out->side, in->side);
	load_name(out->phase, sizeof out->phase, in->phase);
	load_name(out->pass, sizeof out->pass, in->pass);
	load_name(out->stage, sizeof out->stage, in->stage);
	out->rank = in->rank;
	out->layer = in->layer;
	out->order = in->order;
	out->stage_is_file = in->stage_is_file;
	out->cut = in->cut;
}

/* An interned name's identity: "" may be any pointer, so it is NULL. */
static const char *name_id(const char *s)
{
	return s[0] ? s : NULL;
}

static bool same_place(const db_ifields *a, const db_ifields *b)
{
	return name_id(a->side) == name_id(b->side) && name_id(a->phase) == name_id(b->phase) &&
	       name_id(a->pass) == name_id(b->pass) && name_id(a->stage) == name_id(b->stage) &&
	       a->rank == b->rank && a->layer == b->layer;
}

static uint64_t place_hash(const db_ifields *f)
{
	uintptr_t w[6] = {(uintptr_t)name_id(f->side), (uintptr_t)name_id(f->phase),
	                  (uintptr_t)name_id(f->pass), (uintptr_t)name_id(f->stage),
	                  (uintptr_t)(uint32_t)f->rank, (uintptr_t)(uint32_t)f->layer};
	return db_hash64(w, sizeof w, DB_HASH_SEED);
}

int db_items_occurrences(db_item *items, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	/* slot: the first item of its place + 1 (0 empty); count: its repeats */
	uint32_t *slot = n < UINT32_MAX ? calloc(cap, sizeof *slot) : NULL;
	int *count = calloc(n ? n : 1, sizeof *count);
	if (!slot || !count) {
		free(slot);
		free(count);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const db_ifields *f = &items[i].f;
		size_t k = (size_t)place_hash(f) & (cap - 1);
		while (slot[k] && !same_place(&items[slot[k] - 1].f, f))
			k = (k + 1) & (cap - 1);
		if (!slot[k]) {
			slot[k] = (uint32_t)i + 1;
			items[i].occurrence = 0;
		} else {
			items[i].occurrence = ++count[slot[k] - 1];
		}
	}
	free(slot);
	free(count);
	return 0;
}
