/* Filling a db_file: the entries and owned blocks every format reader
 * adds (below the readers and the dispatcher in reader.c, which both use
 * it). */
#include "reader_impl.h"

#include <stdlib.h>
#include <string.h>

#include "util/budget.h"

db_entry *db_file_add_entry(db_file *f, const char *key)
{
	if (f->n_entries == f->cap_entries) {
		size_t nc = f->cap_entries ? f->cap_entries * 2 : 16;
		db_entry *e = realloc(f->entries, nc * sizeof *e);
		if (!e)
			return NULL;
		f->entries = e;
		f->cap_entries = nc;
	}
	db_entry *e = &f->entries[f->n_entries];
	memset(e, 0, sizeof *e);
	e->t.file_offset = -1;
	if (!(e->key = strdup(key)))
		return NULL;
	f->n_entries++;
	return e;
}

int db_file_add_entry_error(db_file *f, const char *key, const db_err *msg, db_err *err)
{
	db_entry *e = db_file_add_entry(f, key);
	if (!e || !(e->err = strdup(msg->msg)))
		return db_err_set(err, f->path, key, -1, "out of memory");
	return 0;
}

int db_file_own(db_file *f, void *p)
{
	if (f->n_owned == f->cap_owned) {
		size_t nc = f->cap_owned ? f->cap_owned * 2 : 8;
		void **o = realloc(f->owned, nc * sizeof *o);
		if (!o) {
			free(p);
			return -1;
		}
		f->owned = o;
		f->cap_owned = nc;
	}
	f->owned[f->n_owned++] = p;
	return 0;
}

int db_file_take_inflate(db_file *f, uint64_t n)
{
	db_open_opt *o = f->opt;
	uint64_t pre = o && o->prepaid ? (*o->prepaid < n ? *o->prepaid : n) : 0;
	int rc = db_budget_take(&db_inflate_budget, n - pre, !(o && o->nowait));
	if (rc) {
		if (o)
			o->need = n;
		return rc;
	}
	if (pre)
		*o->prepaid -= pre;
	f->inflate_held += n;
	return 0;
}

void db_file_give_inflate(db_file *f, uint64_t n)
{
	if (n > f->inflate_held)
		n = f->inflate_held;
	f->inflate_held -= n;
	db_budget_give(&db_inflate_budget, n);
}
