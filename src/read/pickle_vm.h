/* Inside the pickle VM (private to src/): its state, and the primitives the
 * opcode loop (pickle.c), the allowlist (pickle_allow.c) and the rebuild
 * calls (pickle_rebuild.c) share — making values, the stack and its MARKs,
 * filling containers under the caps of pickle.h, and errors that name the
 * file, entry and opcode offset. `at` is always the offset of the current
 * opcode in the pickle being run. */
#ifndef DB_PICKLE_VM_H
#define DB_PICKLE_VM_H
#include "pickle.h"

#define DB_PK_MAX_VALUES (1u << 24) /* values alive in one vm */

struct db_pk {
	const char *fname, *entry;
	bool legacy;
	/* current run */
	db_err *err;
	int64_t base;
	const uint8_t *d;
	size_t n, pos;
	/* every value, freed together */
	db_pk_val **all;
	size_t n_all, cap_all;
	db_pk_val **stack;
	size_t sp, cap_stack;
	size_t *marks;
	size_t n_marks, cap_marks;
	db_pk_val **memo;
	size_t cap_memo, n_memo;
	db_pk_val **storages;
	size_t n_storages, cap_storages;
	db_pk_val none, yes, no;
	/* values, strings, keys and tensors come from blocks freed together
	 * (a small .pt made ~100 mallocs and frees: the bulk of parsing it) */
	uint8_t *bump;
	size_t bump_left;
	void **blocks;
	size_t n_blocks, cap_blocks;
};

/* n zeroed bytes owned by vm (freed by db_pk_free); NULL on OOM. */
void *db_pk_alloc(db_pk *vm, size_t n);

/* Sets vm->err at vm->base + at; returns -1 (or NULL, for makers). */
int db_pk_fail(db_pk *vm, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
db_pk_val *db_pk_fail_null(db_pk *vm, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Grows *p (elements of elsz) to hold need; *cap updated. -1 on OOM. */
int db_pk_grow(void **p, size_t *cap, size_t need, size_t elsz);

/* Python's name for v's type, for messages. */
const char *db_pk_type_name(const db_pk_val *v);
/* A file-supplied name made safe for a terminal: control bytes become '?',
 * cut to fit buf. Returns buf. */
const char *db_pk_clean(const char *in, char *buf, size_t len);

/* New values, owned by vm; NULL with vm->err set. */
db_pk_val *db_pk_mk(db_pk *vm, db_pk_type t, size_t at);
db_pk_val *db_pk_mk_int(db_pk *vm, size_t at, int64_t i);
/* STR, BYTES or BIGINT holding a NUL-terminated copy of s[0..len). */
db_pk_val *db_pk_mk_bytes(db_pk *vm, db_pk_type t, size_t at, const void *s, size_t len);
/* A TUPLE/LIST/SET of stack[first..first+cnt). */
db_pk_val *db_pk_mk_seq(db_pk *vm, size_t at, db_pk_type t, size_t first, size_t cnt);

/* Stack index of the innermost open MARK (0 without one). */
static inline size_t db_pk_mark_base(const db_pk *vm)
{
	return vm->n_marks ? vm->marks[vm->n_marks - 1] : 0;
}

/* Stack operations; op names the opcode in messages. push(NULL) = -1, so
 * a maker's failure can be pushed directly. */
int db_pk_push(db_pk *vm, size_t at, db_pk_val *v);
db_pk_val *db_pk_pop(db_pk *vm, size_t at, const char *op);
db_pk_val *db_pk_top(db_pk *vm, size_t at, const char *op);
/* Items pushed since the last MARK: *first = index in stack, *cnt. Pops the mark. */
int db_pk_pop_mark(db_pk *vm, size_t at, const char *op, size_t *first, size_t *cnt);
/* The container a MARK-ed batch (APPENDS, SETITEMS ...) goes into: the
 * value just below the items, after db_pk_pop_mark returned first. */
db_pk_val *db_pk_below(db_pk *vm, size_t at, const char *op, size_t first);

/* Add to a TUPLE/LIST/SET or a DICT, keeping the item and depth caps. */
int db_pk_seq_add(db_pk *vm, size_t at, db_pk_val *c, db_pk_val *item);
int db_pk_dict_set(db_pk *vm, size_t at, db_pk_val *d, db_pk_val *k, db_pk_val *v);

#endif
