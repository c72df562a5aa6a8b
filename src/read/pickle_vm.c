/* The pickle VM's life cycle and values: making them under the caps, the
 * stack with its MARKs, filling containers, freeing it all at once. */
#include "pickle_vm.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

db_pk *db_pk_new(const char *fname, const char *entry, bool legacy)
{
	db_pk *vm = calloc(1, sizeof *vm);
	if (!vm)
		return NULL;
	vm->fname = fname;
	vm->entry = entry;
	vm->legacy = legacy;
	vm->none.type = DB_PK_NONE;
	vm->yes.type = vm->no.type = DB_PK_BOOL;
	vm->yes.u.b = true;
	vm->none.off = vm->yes.off = vm->no.off = -1;
	return vm;
}

void db_pk_free(db_pk *vm)
{
	if (!vm)
		return;
	/* only the growable arrays are malloc'd one by one */
	for (size_t i = 0; i < vm->n_all; i++) {
		db_pk_val *v = vm->all[i];
		switch (v->type) {
		case DB_PK_TUPLE: case DB_PK_LIST: case DB_PK_SET:
			free(v->u.seq.v);
			break;
		case DB_PK_DICT:
			free(v->u.dict.k);
			free(v->u.dict.v);
			break;
		default:
			break;
		}
	}
	for (size_t i = 0; i < vm->n_blocks; i++)
		free(vm->blocks[i]);
	free(vm->blocks);
	free(vm->all);
	free(vm->stack);
	free(vm->marks);
	free(vm->memo);
	free(vm->storages);
	free(vm);
}

/* Bump blocks of PK_BLOCK bytes; a request over PK_BIG gets a block of its
 * own, so a large string wastes nothing. */
#define PK_BLOCK ((size_t)8192)
#define PK_BIG ((size_t)1024)

static void *new_block(db_pk *vm, size_t n)
{
	if (db_pk_grow((void **)&vm->blocks, &vm->cap_blocks, vm->n_blocks + 1, sizeof *vm->blocks))
		return NULL;
	void *b = malloc(n);
	if (b)
		vm->blocks[vm->n_blocks++] = b;
	return b;
}

void *db_pk_alloc(db_pk *vm, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	void *p;
	if (n > PK_BIG) {
		p = new_block(vm, n);
	} else {
		if (n > vm->bump_left) {
			if (!(vm->bump = new_block(vm, PK_BLOCK)))
				return NULL;
			vm->bump_left = PK_BLOCK;
		}
		p = vm->bump;
		vm->bump += n;
		vm->bump_left -= n;
	}
	if (p)
		memset(p, 0, n);
	return p;
}

void db_pk_set_entry(db_pk *vm, const char *entry)
{
	vm->entry = entry;
}

db_pk_val *const *db_pk_storages(const db_pk *vm, size_t *n)
{
	*n = vm->n_storages;
	return vm->storages;
}

const char *db_pk_clean(const char *in, char *buf, size_t len)
{
	size_t i = 0;
	for (; in[i] && i + 1 < len; i++)
		buf[i] = (uint8_t)in[i] < 0x20 || in[i] == 0x7f ? '?' : in[i];
	buf[i] = '\0';
	return buf;
}

const char *db_pk_type_name(const db_pk_val *v)
{
	static const char *names[] = {"None", "bool", "int", "int", "float", "str", "bytes",
	                              "tuple", "list", "dict", "set", "global", "storage",
	                              "tensor", "object"};
	return names[v->type];
}

static int vfail(db_pk *vm, size_t at, const char *fmt, va_list ap)
{
	char buf[768];
	vsnprintf(buf, sizeof buf, fmt, ap);
	return db_err_set(vm->err, vm->fname, vm->entry, vm->base + (int64_t)at, "%s", buf);
}

int db_pk_fail(db_pk *vm, size_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vfail(vm, at, fmt, ap);
	va_end(ap);
	return rc;
}

db_pk_val *db_pk_fail_null(db_pk *vm, size_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(vm, at, fmt, ap);
	va_end(ap);
	return NULL;
}

int db_pk_grow(void **p, size_t *cap, size_t need, size_t elsz)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 8;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, nc * elsz);
	if (!q)
		return -1;
	*p = q;
	*cap = nc;
	return 0;
}

db_pk_val *db_pk_mk(db_pk *vm, db_pk_type t, size_t at)
{
	if (vm->n_all >= DB_PK_MAX_VALUES)
		return db_pk_fail_null(vm, at, "pickle makes more than %u values (cap)",
		                       DB_PK_MAX_VALUES);
	if (db_pk_grow((void **)&vm->all, &vm->cap_all, vm->n_all + 1, sizeof *vm->all))
		return db_pk_fail_null(vm, at, "out of memory");
	db_pk_val *v = db_pk_alloc(vm, sizeof *v);
	if (!v)
		return db_pk_fail_null(vm, at, "out of memory");
	v->type = t;
	v->off = vm->base + (int64_t)at;
	vm->all[vm->n_all++] = v;
	return v;
}

db_pk_val *db_pk_mk_bytes(db_pk *vm, db_pk_type t, size_t at, const void *s, size_t len)
{
	db_pk_val *v = db_pk_mk(vm, t, at);
	if (!v)
		return NULL;
	if (len >= SIZE_MAX - 16 || !(v->u.str.s = db_pk_alloc(vm, len + 1)))
		return db_pk_fail_null(vm, at, "out of memory");
	memcpy(v->u.str.s, s, len);
	v->u.str.s[len] = '\0';
	v->u.str.len = len;
	return v;
}

int db_pk_push(db_pk *vm, size_t at, db_pk_val *v)
{
	if (!v)
		return -1;
	if (vm->sp >= DB_PK_MAX_STACK)
		return db_pk_fail(vm, at, "pickle stack deeper than %u values (cap)",
		                  DB_PK_MAX_STACK);
	if (db_pk_grow((void **)&vm->stack, &vm->cap_stack, vm->sp + 1, sizeof *vm->stack))
		return db_pk_fail(vm, at, "out of memory");
	vm->stack[vm->sp++] = v;
	return 0;
}

db_pk_val *db_pk_top(db_pk *vm, size_t at, const char *op)
{
	if (vm->sp <= db_pk_mark_base(vm))
		return db_pk_fail_null(vm, at, "%s on an empty stack (malformed pickle)", op);
	return vm->stack[vm->sp - 1];
}

db_pk_val *db_pk_pop(db_pk *vm, size_t at, const char *op)
{
	db_pk_val *v = db_pk_top(vm, at, op);
	if (v)
		vm->sp--;
	return v;
}

int db_pk_pop_mark(db_pk *vm, size_t at, const char *op, size_t *first, size_t *cnt)
{
	if (!vm->n_marks)
		return db_pk_fail(vm, at, "%s without a MARK (malformed pickle)", op);
	*first = vm->marks[--vm->n_marks];
	*cnt = vm->sp - *first;
	return 0;
}

db_pk_val *db_pk_below(db_pk *vm, size_t at, const char *op, size_t first)
{
	if (first <= db_pk_mark_base(vm))
		return db_pk_fail_null(vm, at, "%s with no container below its MARK (malformed "
		                       "pickle)", op);
	return vm->stack[first - 1];
}

static int update_depth(db_pk *vm, size_t at, db_pk_val *c, const db_pk_val *child)
{
	if (child->depth + 1 > c->depth)
		c->depth = child->depth + 1;
	if (c->depth > DB_PK_MAX_DEPTH)
		return db_pk_fail(vm, at, "containers nested deeper than %d levels (cap)",
		                  DB_PK_MAX_DEPTH);
	return 0;
}

int db_pk_seq_add(db_pk *vm, size_t at, db_pk_val *c, db_pk_val *item)
{
	if (c->u.seq.n >= DB_PK_MAX_ITEMS)
		return db_pk_fail(vm, at, "container holds more than %u items (cap)",
		                  DB_PK_MAX_ITEMS);
	if (db_pk_grow((void **)&c->u.seq.v, &c->u.seq.cap, c->u.seq.n + 1, sizeof *c->u.seq.v))
		return db_pk_fail(vm, at, "out of memory");
	c->u.seq.v[c->u.seq.n++] = item;
	return update_depth(vm, at, c, item);
}

int db_pk_dict_set(db_pk *vm, size_t at, db_pk_val *d, db_pk_val *k, db_pk_val *v)
{
	if (d->u.dict.n >= DB_PK_MAX_ITEMS)
		return db_pk_fail(vm, at, "dict holds more than %u items (cap)", DB_PK_MAX_ITEMS);
	size_t cap = d->u.dict.cap;
	if (db_pk_grow((void **)&d->u.dict.k, &cap, d->u.dict.n + 1, sizeof *d->u.dict.k))
		return db_pk_fail(vm, at, "out of memory");
	cap = d->u.dict.cap;
	if (db_pk_grow((void **)&d->u.dict.v, &cap, d->u.dict.n + 1, sizeof *d->u.dict.v))
		return db_pk_fail(vm, at, "out of memory");
	d->u.dict.cap = cap;
	d->u.dict.k[d->u.dict.n] = k;
	d->u.dict.v[d->u.dict.n++] = v;
	if (update_depth(vm, at, d, k))
		return -1;
	return update_depth(vm, at, d, v);
}

db_pk_val *db_pk_mk_seq(db_pk *vm, size_t at, db_pk_type t, size_t first, size_t cnt)
{
	db_pk_val *c = db_pk_mk(vm, t, at);
	if (!c)
		return NULL;
	for (size_t i = 0; i < cnt; i++)
		if (db_pk_seq_add(vm, at, c, vm->stack[first + i]))
			return NULL;
	return c;
}

db_pk_val *db_pk_mk_int(db_pk *vm, size_t at, int64_t i)
{
	db_pk_val *v = db_pk_mk(vm, DB_PK_INT, at);
	if (v)
		v->u.i = i;
	return v;
}
