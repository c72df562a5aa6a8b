#include "pt.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_bus.h"
#include "pickle.h"
#include "reader_impl.h"
#include "util/budget.h"

/* The legacy stream starts with this number as a LONG1 (formats.md §3). */
static const uint8_t legacy_magic[10] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

/* 2^32 elements: ~4 s of metrics; real expanded views are far smaller */
#define DB_PT_MAX_VIEW_ELEMS ((uint64_t)1 << 32)
/* Tensors one file may name: a pickle can reach one tensor by 2^40 paths
 * (DUP + TUPLE2, 40 times, in 91 bytes); each path would be an entry. */
#define DB_PT_MAX_ENTRIES ((size_t)1 << 20)

/* One storage's bytes, as found by a reader. */
typedef struct pt_rec {
	const uint8_t *p;
	uint64_t nbytes;
	int64_t file_off;       /* -1 when inflated */
} pt_rec;

typedef struct pt_ctx {
	db_file *f;
	const char *pkl_entry;  /* for messages: the pickle's record name */
	bool swap;              /* byteorder record says big */
	/* zip */
	const db_zip *z;
	const char *prefix;
	/* legacy: records sorted by key */
	struct lrec { const char *key; pt_rec r; } *lrecs;
	size_t n_lrecs;
	/* key being built while walking */
	char *key;
	size_t key_len, key_cap;
	/* containers walked already (an open-addressing set of pointers) */
	const db_pk_val **seen;
	size_t n_seen, cap_seen;
	/* deflated records: inflated once each (tensors may share a storage),
	 * from the inflate budget taken for them all (held: not yet used) */
	struct irec { const db_zip_entry *e; const uint8_t *p; size_t len; } *irecs;
	size_t n_irecs, cap_irecs;
	uint64_t held;
} pt_ctx;

bool db_pt_is_legacy(const uint8_t *p, size_t n)
{
	size_t i = 0;
	if (n < 2 || p[0] != 0x80)
		return false;
	i = 2;
	if (n > i && p[i] == 0x95)
		i += 9; /* FRAME + u64 length (protocol >= 4) */
	return n >= i + 12 && p[i] == 0x8a && p[i + 1] == 10 && !memcmp(p + i + 2, legacy_magic, 10);
}

/* ---- storage lookup ------------------------------------------------------ */

/* a + b + c into dst (cap bytes): its length, or -1 when it does not fit.
 * Names are joined per file, four times: snprintf was 3 % of a scan. */
static int join3(char *dst, size_t cap, const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	if (la + lb + lc >= cap)
		return -1;
	memcpy(dst, a, la);
	memcpy(dst + la, b, lb);
	memcpy(dst + la + lb, c, lc + 1);
	return (int)(la + lb + lc);
}

static int zip_record(pt_ctx *c, const db_pk_val *sv, uint64_t want, pt_rec *r, db_err *err)
{
	const db_pk_storage *s = &sv->u.storage;
	char name[1024];
	if (join3(name, sizeof name, c->prefix, "/data/", s->key) < 0)
		return db_err_set(err, c->f->path, c->pkl_entry, sv->off, "storage key too long");
	const db_zip_entry *e = db_zip_find(c->z, name);
	if (!e)
		return db_err_set(err, c->f->path, c->pkl_entry, sv->off,
		                  "storage '%s' has no record '%s' in the archive", s->key, name);
	if (e->usize != want)
		return db_err_set(err, c->f->path, name, (int64_t)e->lho,
		                  "record holds %llu bytes but the pickle declares %llu elements x %zu bytes = %llu",
		                  (unsigned long long)e->usize, (unsigned long long)s->numel, s->itemsize,
		                  (unsigned long long)want);
	void *owned = NULL;
	size_t len;
	if (e->method == 8) {
		for (size_t i = 0; i < c->n_irecs; i++)
			if (c->irecs[i].e == e) {
				r->p = c->irecs[i].p;
				r->nbytes = c->irecs[i].len;
				r->file_off = -1;
				return 0;
			}
		if (e->usize > c->held) {
			char lim[32];
			return db_err_set(err, c->f->path, name, (int64_t)e->lho,
			                  "inflate budget exceeded: the file's deflated records declare "
			                  "more than the %s the process may hold inflated "
			                  "(DUMPBISECT_INFLATE_MAX)",
			                  db_budget_size(db_budget_limit(&db_inflate_budget), lim, sizeof lim));
		}
	}
	if (db_zip_data(c->z, e, &r->p, &len, &owned, (size_t)want, err))
		return -1;
	if (owned) {
		if (db_file_own(c->f, owned))
			return db_err_set(err, c->f->path, name, -1, "out of memory");
		r->file_off = -1;
		c->held -= len;
		if (c->n_irecs == c->cap_irecs) {
			size_t nc = c->cap_irecs ? 2 * c->cap_irecs : 8;
			struct irec *ni = realloc(c->irecs, nc * sizeof *ni);
			if (!ni)
				return db_err_set(err, c->f->path, name, -1, "out of memory");
			c->irecs = ni;
			c->cap_irecs = nc;
		}
		c->irecs[c->n_irecs++] = (struct irec){e, r->p, len};
	} else {
		r->file_off = (int64_t)(r->p - c->z->data);
	}
	r->nbytes = len;
	return 0;
}

static int lrec_cmp(const void *a, const void *b)
{
	return strcmp(((const struct lrec *)a)->key, ((const struct lrec *)b)->key);
}

static int legacy_record(pt_ctx *c, const db_pk_val *sv, uint64_t want, pt_rec *r, db_err *err)
{
	const db_pk_storage *s = &sv->u.storage;
	struct lrec probe = {.key = s->key};
	const struct lrec *l = bsearch(&probe, c->lrecs, c->n_lrecs, sizeof *c->lrecs, lrec_cmp);
	if (!l)
		return db_err_set(err, c->f->path, c->pkl_entry, sv->off,
		                  "storage '%s' is not in the file's storage list", s->key);
	if (l->r.nbytes != want)
		return db_err_set(err, c->f->path, s->key, l->r.file_off,
		                  "storage holds %llu bytes but the pickle declares %llu elements x %zu bytes = %llu",
		                  (unsigned long long)l->r.nbytes, (unsigned long long)s->numel, s->itemsize,
		                  (unsigned long long)want);
	*r = l->r;
	return 0;
}

/* ---- tensors -> entries -------------------------------------------------- */

static int add_tensor(pt_ctx *c, const db_pk_val *tv, db_err *err)
{
	const db_pk_tensor *pt = tv->u.tensor;
	const char *key = c->key;
	db_err ee;
	if (pt->unsupported[0]) {
		db_err_set(&ee, c->f->path, key, tv->off, "%s", pt->unsupported);
		return db_file_add_entry_error(c->f, key, &ee, err);
	}
	if (!pt->itemsize) { /* defensive: every readable dtype has a size */
		db_err_set(&ee, c->f->path, key, tv->off, "tensor dtype has no element size");
		return db_file_add_entry_error(c->f, key, &ee, err);
	}
	const db_pk_val *sv = pt->storage;
	const db_pk_storage *s = &sv->u.storage;
	uint64_t want;
	if (__builtin_mul_overflow(s->numel, (uint64_t)s->itemsize, &want))
		return db_err_set(err, c->f->path, c->pkl_entry, sv->off, "storage size overflows");
	pt_rec r;
	if (c->z ? zip_record(c, sv, want, &r, err) : legacy_record(c, sv, want, &r, err))
		return -1;
	/* quint4x2/quint2x4 pack several elements per byte: sizes and offsets
	 * do not count bytes, and nothing downstream decodes them. */
	if (pt->dtype == DB_DT_QUINT4X2 || pt->dtype == DB_DT_QUINT2X4) {
		db_err_set(&ee, c->f->path, key, tv->off,
		           "packed sub-byte quantized tensors (%s) are not supported", db_dtype_name(pt->dtype));
		return db_file_add_entry_error(c->f, key, &ee, err);
	}
	/* Bounds: every element reachable through offset/size/stride lies inside
	 * the storage (CVE-2026-24747 was a missing check of this kind). */
	uint64_t elems = r.nbytes / pt->itemsize;
	uint64_t numel = 1, last = (uint64_t)pt->offset;
	bool ovf = false;
	for (int i = 0; i < pt->ndim; i++) {
		ovf |= __builtin_mul_overflow(numel, (uint64_t)pt->shape[i], &numel);
		if (pt->shape[i] > 0) {
			uint64_t span;
			ovf |= __builtin_mul_overflow((uint64_t)(pt->shape[i] - 1), (uint64_t)pt->stride[i], &span);
			ovf |= __builtin_add_overflow(last, span, &last);
		}
	}
	if (ovf)
		return db_err_set(err, c->f->path, key, tv->off, "tensor size/stride arithmetic overflows");
	if (numel > 0 && last >= elems)
		return db_err_set(err, c->f->path, key, tv->off,
		                  "tensor view out of bounds: reaches element %llu of a storage holding %llu (offset %lld)",
		                  (unsigned long long)last, (unsigned long long)elems, (long long)pt->offset);
	if (numel == 0 && (uint64_t)pt->offset > elems)
		return db_err_set(err, c->f->path, key, tv->off,
		                  "storage offset %lld out of bounds of a storage of %llu elements", (long long)pt->offset,
		                  (unsigned long long)elems);
	/* Stride-0 views (expand) may show more elements than are stored, and
	 * that is legitimate; but a 759-byte file can then claim 2^62 elements
	 * that every metric would walk. Above the cap it is an entry error. */
	if (numel > elems && numel > DB_PT_MAX_VIEW_ELEMS) {
		db_err_set(&ee, c->f->path, key, tv->off,
		           "view of %llu elements over %llu stored ones exceeds the %llu-element cap for expanded views",
		           (unsigned long long)numel, (unsigned long long)elems,
		           (unsigned long long)DB_PT_MAX_VIEW_ELEMS);
		return db_file_add_entry_error(c->f, key, &ee, err);
	}
	db_entry *e = db_file_add_entry(c->f, key);
	if (!e)
		return db_err_set(err, c->f->path, key, -1, "out of memory");
	db_tensor *t = &e->t;
	t->dtype = pt->dtype;
	t->ndim = pt->ndim;
	memcpy(t->shape, pt->shape, sizeof t->shape);
	memcpy(t->stride, pt->stride, sizeof t->stride);
	size_t boff = (size_t)pt->offset * pt->itemsize;
	t->data = r.p + boff;
	t->file_offset = r.file_off < 0 ? -1 : r.file_off + (int64_t)boff;
	t->swap = c->swap && pt->itemsize > 1;
	t->q_scale = pt->q_scale;
	t->q_zero = pt->q_zero;
	return 0;
}

static int key_push(pt_ctx *c, const char *seg, size_t *saved, db_err *err)
{
	size_t sl = strlen(seg), need = c->key_len + (c->key_len ? 1 : 0) + sl + 1;
	if (need > c->key_cap) {
		size_t nc = c->key_cap ? c->key_cap : 64;
		while (nc < need)
			nc *= 2;
		char *k = realloc(c->key, nc);
		if (!k)
			return db_err_set(err, c->f->path, NULL, -1, "out of memory");
		c->key = k;
		c->key_cap = nc;
	}
	*saved = c->key_len;
	if (c->key_len)
		c->key[c->key_len++] = '.';
	/* Keys are shown on a terminal: control bytes become '?'. */
	for (size_t i = 0; i <= sl; i++)
		c->key[c->key_len + i] = (uint8_t)seg[i] < 0x20 && seg[i] ? '?' : seg[i] == 0x7f ? '?' : seg[i];
	c->key_len += sl;
	return 0;
}

static void key_pop(pt_ctx *c, size_t saved)
{
	c->key_len = saved;
	c->key[saved] = '\0';
}

/* Dict keys that make names; anything else (tuples ...) is not a tensor name. */
static bool key_text(const db_pk_val *k, char *buf, size_t len, const char **out)
{
	switch (k->type) {
	case DB_PK_STR: *out = k->u.str.s; return true;
	case DB_PK_INT: snprintf(buf, len, "%lld", (long long)k->u.i); break;
	case DB_PK_BOOL: snprintf(buf, len, "%s", k->u.b ? "True" : "False"); break;
	case DB_PK_NONE: snprintf(buf, len, "None"); break;
	case DB_PK_FLOAT: snprintf(buf, len, "%.17g", k->u.f); break;
	default: return false;
	}
	*out = buf;
	return true;
}

/* Adds container v to the walked set: 1 when new, 0 when walked already,
 * -1 on OOM. */
static int seen_add(pt_ctx *c, const db_pk_val *v)
{
	if (2 * (c->n_seen + 1) > c->cap_seen) {
		size_t nc = c->cap_seen ? c->cap_seen * 2 : 64;
		const db_pk_val **ns = calloc(nc, sizeof *ns);
		if (!ns)
			return -1;
		for (size_t i = 0; i < c->cap_seen; i++) {
			const db_pk_val *o = c->seen[i];
			if (!o)
				continue;
			size_t h = ((uintptr_t)o >> 4) * 0x9e3779b97f4a7c15ull & (nc - 1);
			while (ns[h])
				h = (h + 1) & (nc - 1);
			ns[h] = o;
		}
		free(c->seen);
		c->seen = ns;
		c->cap_seen = nc;
	}
	size_t h = ((uintptr_t)v >> 4) * 0x9e3779b97f4a7c15ull & (c->cap_seen - 1);
	for (; c->seen[h]; h = (h + 1) & (c->cap_seen - 1))
		if (c->seen[h] == v)
			return 0;
	c->seen[h] = v;
	c->n_seen++;
	return 1;
}

/* Containers are walked once: a container the pickle shares (memo GET, DUP)
 * names its tensors by the first path that reaches it. Without this, 40
 * DUP + TUPLE2 make 2^40 paths. A tensor itself may sit under several keys
 * (tied weights), one entry each, up to DB_PT_MAX_ENTRIES. */
static int walk(pt_ctx *c, const db_pk_val *v, int depth, db_err *err)
{
	if (depth > DB_PK_MAX_DEPTH)
		return db_err_set(err, c->f->path, c->pkl_entry, v->off,
		                  "payload nested deeper than %d levels (or self-referencing)", DB_PK_MAX_DEPTH);
	if (v->type == DB_PK_DICT || v->type == DB_PK_LIST || v->type == DB_PK_TUPLE) {
		int fresh = seen_add(c, v);
		if (fresh < 0)
			return db_err_set(err, c->f->path, NULL, -1, "out of memory");
		if (!fresh)
			return 0;
	}
	if (v->type == DB_PK_TENSOR && c->f->n_entries >= DB_PT_MAX_ENTRIES)
		return db_err_set(err, c->f->path, c->pkl_entry, v->off,
		                  "more than %zu tensors in one file (a pickle that shares "
		                  "containers can name one tensor many times)", DB_PT_MAX_ENTRIES);
	char buf[64];
	const char *seg;
	size_t saved;
	switch (v->type) {
	case DB_PK_TENSOR:
		return add_tensor(c, v, err);
	case DB_PK_DICT:
		for (size_t i = 0; i < v->u.dict.n; i++) {
			if (!key_text(v->u.dict.k[i], buf, sizeof buf, &seg))
				continue;
			if (key_push(c, seg, &saved, err) || walk(c, v->u.dict.v[i], depth + 1, err))
				return -1;
			key_pop(c, saved);
		}
		return 0;
	case DB_PK_LIST:
	case DB_PK_TUPLE:
		for (size_t i = 0; i < v->u.seq.n; i++) {
			snprintf(buf, sizeof buf, "%zu", i);
			if (key_push(c, buf, &saved, err) || walk(c, v->u.seq.v[i], depth + 1, err))
				return -1;
			key_pop(c, saved);
		}
		return 0;
	default:
		return 0; /* non-tensor leaves are not entries */
	}
}

static int flatten(pt_ctx *c, const db_pk_val *root, db_err *err)
{
	c->key = calloc(1, 64);
	if (!c->key)
		return db_err_set(err, c->f->path, NULL, -1, "out of memory");
	c->key_cap = 64;
	int rc = walk(c, root, 0, err);
	free(c->key);
	c->key = NULL;
	free(c->seen);
	c->seen = NULL;
	c->n_seen = c->cap_seen = 0;
	return rc;
}

/* ---- zip container ------------------------------------------------------- */

static int read_byteorder(pt_ctx *c, char *name, size_t nlen, db_err *err)
{
	if (join3(name, nlen, c->prefix, "/byteorder", "") < 0)
		return 0;       /* cannot be: the prefix is shorter than name */
	const db_zip_entry *e = db_zip_find(c->z, name);
	if (!e)
		return 0; /* absent: little (torch < 2.1) */
	const uint8_t *p;
	size_t len;
	void *owned = NULL;
	if (db_zip_data(c->z, e, &p, &len, &owned, 64, err))
		return -1;
	while (len && (p[len - 1] == '\n' || p[len - 1] == '\r' || p[len - 1] == ' '))
		len--;
	int rc = 0;
	if (len == 6 && !memcmp(p, "little", 6))
		c->swap = false;
	else if (len == 3 && !memcmp(p, "big", 3))
		c->swap = true;
	else
		rc = db_err_set(err, c->f->path, name, (int64_t)e->lho,
		                "byteorder record must say 'little' or 'big'");
	free(owned);
	return rc;
}

/* torch stores its records; a crafted file may deflate them (1032:1).
 * What the deflated records declare is taken from the process's inflate
 * budget at once, before any is inflated, as for .npz. */
static int take_records(pt_ctx *c, db_err *err)
{
	size_t pl = strlen(c->prefix);
	uint64_t want = 0;
	for (size_t i = 0; i < c->z->n_entries; i++) {
		const db_zip_entry *e = &c->z->entries[i];
		if (e->method == 8 && !strncmp(e->name, c->prefix, pl) &&
		    !strncmp(e->name + pl, "/data/", 6) && want + e->usize >= want)
			want += e->usize;
	}
	int rc = db_file_take_inflate(c->f, want);
	if (rc == -2)
		return db_err_set(err, c->f->path, NULL, -1, "waiting for inflate budget (held by "
		                  "other open files)"), -2;
	c->held = rc ? 0 : want;        /* too much: each such record says so */
	return 0;
}

/* Read the pickle's record, run it and flatten it, under a guard of its
 * own: a file that shrinks under its mapping (SIGBUS, db_bus.h) ends here
 * as an error, and the caller still frees the VM and the inflated record
 * and gives the pickle budget back. The record's CRC and inflate read the
 * mapping too: a fault there skipped the give-back and every later .pt
 * waited for the budget forever (issue 37). */
static int run_guarded(pt_ctx *c, const db_zip_entry *pe, size_t want, db_pk **vmp,
                       void **owned, db_err *err)
{
	db_bus_guard g;
	if (sigsetjmp(g.jb, 0) != 0) {
		db_bus_unwind(&g);
		int64_t off = c->z && g.addr ? (int64_t)((const uint8_t *)g.addr - c->z->data) : -1;
		return db_err_set(err, c->f->path, NULL, off, "file changed while read (it shrank "
		                  "under its mapping: this byte is gone); rescan");
	}
	db_bus_enter(&g);
	const uint8_t *pkl;
	size_t plen;
	int rc = -1;
	/* *vmp and *owned: the caller's, read after a jump */
	if (db_zip_data(c->z, pe, &pkl, &plen, owned, want, err))
		goto out;
	int64_t base = *owned ? 0 : (int64_t)(pkl - c->z->data);
	if (!(*vmp = db_pk_new(c->f->path, pe->name, false))) {
		db_err_set(err, c->f->path, NULL, -1, "out of memory");
		goto out;
	}
	db_pk_val *root;
	size_t used;
	rc = db_pk_run(*vmp, pkl, plen, base, &root, &used, err);
	if (!rc && (rc = take_records(c, err)) == 0)
		rc = flatten(c, root, err);
out:
	db_bus_leave(&g);
	return rc;
}

int db_read_pt_zip(db_file *f, const db_zip *z, db_err *err)
{
	if (z->n_entries == 0)
		return db_err_set(err, f->path, NULL, -1, "zip archive has no members: not a torch.save file");
	/* The archive prefix is entry 0's name up to its first '/'. */
	const char *first = z->entries[0].name, *slash = strchr(first, '/');
	if (!slash || slash == first)
		return db_err_set(err, f->path, first, (int64_t)z->entries[0].cd_off,
		                  "not a torch.save archive: first member has no '<prefix>/' folder");
	size_t pl = (size_t)(slash - first);
	char prefix[512], name[1024];
	if (pl >= sizeof prefix)
		return db_err_set(err, f->path, first, -1, "archive prefix too long");
	memcpy(prefix, first, pl);
	prefix[pl] = '\0';
	/* TorchScript archives hold code; torch.load used to run them (CVE-2025-32434). */
	join3(name, sizeof name, prefix, "/constants.pkl", "");  /* prefix < 512 */
	const db_zip_entry *ts = db_zip_find(z, name);
	for (size_t i = 0; !ts && i < z->n_entries; i++) {
		const char *nm = z->entries[i].name;
		if (!strncmp(nm, prefix, pl) && nm[pl] == '/' && !strncmp(nm + pl + 1, "code/", 5))
			ts = &z->entries[i];
	}
	if (ts)
		return db_err_set(err, f->path, ts->name, (int64_t)ts->lho,
		                  "TorchScript archive (constants.pkl / code/): refused, TorchScript is "
		                  "code and dumpbisect never runs code; save tensors with torch.save instead");
	pt_ctx c = {.f = f, .z = z, .prefix = prefix};
	if (read_byteorder(&c, name, sizeof name, err))
		return -1;
	join3(name, sizeof name, prefix, "/data.pkl", "");
	const db_zip_entry *pe = db_zip_find(z, name);
	if (!pe)
		return db_err_set(err, f->path, NULL, (int64_t)z->entries[0].cd_off,
		                  "zip archive without '%s': not a torch.save file", name);
	c.pkl_entry = pe->name;
	/* The pickle's bytes, declared by the directory, are taken from the
	 * process's pickle budget before anything is inflated or run: a 2 MB
	 * member inflating to 2 GiB was 2.1 GB and 9.4 s per file, times the
	 * files opened at once. */
	uint64_t want = pe->usize;
	char lim[32], got[32];
	int brc = db_budget_take(&db_pickle_budget, want, true);
	if (brc)
		return db_err_set(err, f->path, pe->name, (int64_t)pe->cd_off,
		                  "pickle of %s exceeds the %s cap on pickles "
		                  "(DUMPBISECT_PICKLE_MAX raises it)",
		                  db_budget_size(want, got, sizeof got),
		                  db_budget_size(db_budget_limit(&db_pickle_budget), lim, sizeof lim));
	void *owned = NULL;
	db_pk *vm = NULL;
	int rc = run_guarded(&c, pe, (size_t)want, &vm, &owned, err);
	db_file_give_inflate(f, c.held);        /* records no tensor used */
	free(c.irecs);
	free(c.key);
	free(c.seen);
	db_pk_free(vm);
	free(owned);
	db_budget_give(&db_pickle_budget, want);
	return rc;
}

/* ---- legacy stream -------------------------------------------------------- */

static int storage_cmp(const void *a, const void *b)
{
	const db_pk_val *x = *(const db_pk_val *const *)a, *y = *(const db_pk_val *const *)b;
	return strcmp(x->u.storage.key, y->u.storage.key);
}

static const db_pk_val *find_storage(db_pk_val **sorted, size_t n, const char *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(sorted[mid]->u.storage.key, key);
		if (!c)
			return sorted[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* After the five pickles: for each listed key, an int64 element count and
 * the raw little-endian elements. */
static int legacy_storages(pt_ctx *c, db_pk *vm, const db_pk_val *keys, const uint8_t *p,
                           size_t n, size_t pos, db_err *err)
{
	const char *fn = c->f->path;
	if (keys->type != DB_PK_LIST)
		return db_err_set(err, fn, "storage keys", -1, "legacy file: fifth pickle must be a list of storage keys");
	size_t ns;
	db_pk_val *const *st = db_pk_storages(vm, &ns);
	db_pk_val **sorted = malloc((ns ? ns : 1) * sizeof *sorted);
	c->lrecs = calloc(keys->u.seq.n ? keys->u.seq.n : 1, sizeof *c->lrecs);
	if (!sorted || !c->lrecs) {
		free(sorted);
		return db_err_set(err, fn, NULL, -1, "out of memory");
	}
	memcpy(sorted, st, ns * sizeof *sorted);
	qsort(sorted, ns, sizeof *sorted, storage_cmp);
	int rc = 0;
	for (size_t i = 0; i < keys->u.seq.n && !rc; i++) {
		const db_pk_val *k = keys->u.seq.v[i];
		if (k->type != DB_PK_STR) {
			rc = db_err_set(err, fn, "storage keys", k->off, "storage key %zu is not a str", i);
			break;
		}
		const db_pk_val *sv = find_storage(sorted, ns, k->u.str.s);
		if (!sv) {
			rc = db_err_set(err, fn, k->u.str.s, (int64_t)pos,
			                "storage listed but no tensor refers to it (element size unknown)");
			break;
		}
		if (n - pos < 8) {
			rc = db_err_set(err, fn, k->u.str.s, (int64_t)pos, "file truncated before the storage's element count");
			break;
		}
		uint64_t cnt = 0, nbytes;
		for (int b = 7; b >= 0; b--)
			cnt = cnt << 8 | p[pos + (size_t)b];
		if (__builtin_mul_overflow(cnt, (uint64_t)sv->u.storage.itemsize, &nbytes) ||
		    nbytes > n - pos - 8) {
			rc = db_err_set(err, fn, k->u.str.s, (int64_t)pos,
			                "storage of %llu elements x %zu bytes runs past the end of the file",
			                (unsigned long long)cnt, sv->u.storage.itemsize);
			break;
		}
		c->lrecs[i].key = k->u.str.s;
		c->lrecs[i].r.p = p + pos + 8;
		c->lrecs[i].r.nbytes = nbytes;
		c->lrecs[i].r.file_off = (int64_t)(pos + 8);
		c->n_lrecs = i + 1;
		pos += 8 + nbytes;
	}
	free(sorted);
	if (rc)
		return rc;
	qsort(c->lrecs, c->n_lrecs, sizeof *c->lrecs, lrec_cmp);
	for (size_t i = 1; i < c->n_lrecs; i++)
		if (!strcmp(c->lrecs[i].key, c->lrecs[i - 1].key))
			return db_err_set(err, fn, c->lrecs[i].key, c->lrecs[i].r.file_off,
			                  "storage listed twice");
	return 0;
}

int db_read_pt_legacy(db_file *f, const uint8_t *p, size_t n, db_err *err)
{
	static const char *const what[5] = {"pickle 1 (magic number)", "pickle 2 (protocol version)",
	                                    "pickle 3 (sys_info)", "pickle 4 (object)",
	                                    "pickle 5 (storage keys)"};
	pt_ctx c = {.f = f, .pkl_entry = what[3]};
	/* One vm for all five pickles: storages from the object pickle stay alive. */
	db_pk *vm = db_pk_new(f->path, NULL, true);
	if (!vm)
		return db_err_set(err, f->path, NULL, -1, "out of memory");
	db_pk_val *v[5];
	size_t pos = 0;
	int rc = 0;
	for (int i = 0; i < 5 && !rc; i++) {
		size_t used;
		db_pk_set_entry(vm, what[i]);
		if (!(rc = db_pk_run(vm, p + pos, n - pos, (int64_t)pos, &v[i], &used, err)))
			pos += used;
	}
	if (!rc && (v[0]->type != DB_PK_BIGINT || v[0]->u.str.len != 10 ||
	            memcmp(v[0]->u.str.s, legacy_magic, 10)))
		rc = db_err_set(err, f->path, NULL, 0, "legacy torch.save: bad magic number");
	if (!rc && (v[1]->type != DB_PK_INT || v[1]->u.i != 1001))
		rc = db_err_set(err, f->path, NULL, v[1]->off,
		                "legacy torch.save: unsupported protocol version (expected 1001)");
	if (!rc && v[2]->type != DB_PK_DICT)
		rc = db_err_set(err, f->path, NULL, v[2]->off, "legacy torch.save: sys_info is not a dict");
	if (!rc)
		rc = legacy_storages(&c, vm, v[4], p, n, pos, err);
	if (!rc)
		rc = flatten(&c, v[3], err);
	free(c.lrecs);
	db_pk_free(vm);
	return rc;
}
