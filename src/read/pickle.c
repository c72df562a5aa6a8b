/* The pickle VM's opcode loop (formats.md §3): each opcode of a run, the
 * memo, and the refusal of the opcodes that import or instantiate. */
#include "pickle.h"

#include <stdio.h>
#include <string.h>

#include "pickle_allow.h"
#include "pickle_rebuild.h"
#include "pickle_vm.h"

#define MAX_LONG_BYTES 1024     /* LONG4 payload */
#define MAX_LINE 512            /* GLOBAL module/name lines */

static const char *op_name(uint8_t op)
{
	switch (op) {
	case 'i': return "INST";
	case 'o': return "OBJ";
	case 0x82: return "EXT1";
	case 0x83: return "EXT2";
	case 0x84: return "EXT4";
	case 'P': return "PERSID";
	case 0x81: return "NEWOBJ";
	case 0x92: return "NEWOBJ_EX";
	case 'a': return "APPEND";
	case 'e': return "APPENDS";
	case 's': return "SETITEM";
	case 'u': return "SETITEMS";
	case 'R': return "REDUCE";
	case 'b': return "BUILD";
	case 'Q': return "BINPERSID";
	case 0x90: return "ADDITEMS";
	default: return "opcode";
	}
}

static int need(db_pk *vm, size_t at, size_t k, const char *what)
{
	if (vm->n - vm->pos < k)
		return db_pk_fail(vm, at, "pickle truncated inside %s (needs %zu more bytes, %zu left)",
		                  what, k, vm->n - vm->pos);
	return 0;
}

static uint64_t rd_le(const uint8_t *p, int k)
{
	uint64_t v = 0;
	for (int i = k - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The opcode's k-byte little-endian argument, consumed. */
static int arg_le(db_pk *vm, size_t at, int k, const char *what, uint64_t *out)
{
	if (need(vm, at, (size_t)k, what))
		return -1;
	*out = rd_le(vm->d + vm->pos, k);
	vm->pos += (size_t)k;
	return 0;
}

static int read_line(db_pk *vm, size_t at, char *buf, const char *op)
{
	const uint8_t *s = vm->d + vm->pos;
	size_t left = vm->n - vm->pos;
	const uint8_t *nl = memchr(s, '\n', left < MAX_LINE ? left : MAX_LINE);
	if (!nl)
		return db_pk_fail(vm, at, "%s: module/name line missing or longer than %d bytes", op,
		                  MAX_LINE - 1);
	size_t l = (size_t)(nl - s);
	memcpy(buf, s, l);
	buf[l] = '\0';
	if (strlen(buf) != l)
		return db_pk_fail(vm, at, "%s: NUL byte in module/name", op);
	vm->pos += l + 1;
	return 0;
}

/* ---- memo -------------------------------------------------------------- */

static int memo_put(db_pk *vm, size_t at, uint64_t idx)
{
	db_pk_val *v = db_pk_top(vm, at, "memo put");
	if (!v)
		return -1;
	if (idx >= DB_PK_MAX_MEMO)
		return db_pk_fail(vm, at, "memo index %llu exceeds the cap of %u", (unsigned long long)idx,
		                  DB_PK_MAX_MEMO);
	if (idx >= vm->cap_memo) {
		size_t old = vm->cap_memo;
		if (db_pk_grow((void **)&vm->memo, &vm->cap_memo, idx + 1, sizeof *vm->memo))
			return db_pk_fail(vm, at, "out of memory");
		memset(vm->memo + old, 0, (vm->cap_memo - old) * sizeof *vm->memo);
	}
	if (!vm->memo[idx])
		vm->n_memo++;
	vm->memo[idx] = v;
	return 0;
}

static int memo_get(db_pk *vm, size_t at, uint64_t idx)
{
	if (idx >= vm->cap_memo || !vm->memo[idx])
		return db_pk_fail(vm, at, "memo slot %llu read before it was written",
		                  (unsigned long long)idx);
	return db_pk_push(vm, at, vm->memo[idx]);
}

/* LONG1/LONG4 payload: little-endian two's complement. */
static db_pk_val *mk_long(db_pk *vm, size_t at, const uint8_t *p, size_t k)
{
	if (k > 8)
		return db_pk_mk_bytes(vm, DB_PK_BIGINT, at, p, k);
	uint64_t u = k ? rd_le(p, (int)k) : 0;
	if (k && k < 8 && (p[k - 1] & 0x80))
		u |= ~0ull << (8 * k);
	return db_pk_mk_int(vm, at, (int64_t)u);
}

static int op_string(db_pk *vm, size_t at, int lenbytes, db_pk_type t, const char *what)
{
	uint64_t l;
	if (arg_le(vm, at, lenbytes, what, &l))
		return -1;
	if (l > DB_PK_MAX_STR)
		return db_pk_fail(vm, at, "%s of %llu bytes exceeds the cap",
		                  what, (unsigned long long)l);
	if (need(vm, at, (size_t)l, what))
		return -1;
	db_pk_val *v = db_pk_mk_bytes(vm, t, at, vm->d + vm->pos, (size_t)l);
	vm->pos += (size_t)l;
	return db_pk_push(vm, at, v);
}

static int refuse(db_pk *vm, size_t at, uint8_t op)
{
	char mod[MAX_LINE], name[MAX_LINE];
	switch (op) {
	case 'i':
		if (!read_line(vm, at, mod, "INST") && !read_line(vm, at, name, "INST")) {
			char shown[DB_PK_NAME_BUF];
			return db_pk_fail(vm, at, "INST %s is refused: opcode INST imports and calls a class "
			                  "(nothing in a file is executed)",
			                  db_pk_shown_name(mod, name, shown, sizeof shown));
		}
		return -1;
	case 0x81:
	case 0x92: {
		size_t k = op == 0x81 ? 2 : 3;
		const db_pk_val *cls = vm->sp >= k + db_pk_mark_base(vm) ? vm->stack[vm->sp - k] : NULL;
		if (cls && cls->type == DB_PK_GLOBAL)
			return db_pk_fail(vm, at, "%s of %s is refused: it instantiates a class "
			                  "(nothing in a file is executed)", op_name(op), cls->u.g.name);
		return db_pk_fail(vm, at, "opcode %s is refused: it instantiates a class "
		                  "(nothing in a file is executed)", op_name(op));
	}
	case 'o':
		return db_pk_fail(vm, at, "opcode OBJ is refused: it instantiates a class "
		                  "(nothing in a file is executed)");
	case 'P':
		return db_pk_fail(vm, at, "opcode PERSID (text persistent id) is refused; "
		                  "torch writes BINPERSID");
	default:
		return db_pk_fail(vm, at, "opcode %s is refused: it loads objects from the extension "
		                  "registry", op_name(op));
	}
}

/* Replaces stack[first..) by a new TUPLE/LIST/SET of those items. */
static int push_seq(db_pk *vm, size_t at, db_pk_type t, size_t first, size_t cnt)
{
	db_pk_val *v = db_pk_mk_seq(vm, at, t, first, cnt);
	if (!v)
		return -1;
	vm->sp = first;
	return db_pk_push(vm, at, v);
}

/* Moves the key, value pairs at stack[first..first+cnt) into dict d. */
static int dict_fill(db_pk *vm, size_t at, db_pk_val *d, size_t first, size_t cnt)
{
	for (size_t i = 0; i < cnt; i += 2)
		if (db_pk_dict_set(vm, at, d, vm->stack[first + i], vm->stack[first + i + 1]))
			return -1;
	vm->sp = first;
	return 0;
}

static int step(db_pk *vm, size_t at, uint8_t op, db_pk_val **out)
{
	const uint8_t *d = vm->d;
	db_pk_val *v, *k, *c;
	size_t first = 0, cnt = 0;
	uint64_t u;
	switch (op) {
	case 0x80: /* PROTO */
		if (need(vm, at, 1, "PROTO"))
			return -1;
		if (d[vm->pos] > 5)
			return db_pk_fail(vm, at, "unsupported pickle protocol %u", d[vm->pos]);
		vm->pos++;
		return 0;
	case 0x95: /* FRAME: framing is only a read-ahead hint */
		if (need(vm, at, 8, "FRAME"))
			return -1;
		vm->pos += 8;
		return 0;
	case '(':
		if (vm->n_marks >= DB_PK_MAX_MARKS)
			return db_pk_fail(vm, at, "more than %u nested MARKs (cap)",
			                  DB_PK_MAX_MARKS);
		if (db_pk_grow((void **)&vm->marks, &vm->cap_marks, vm->n_marks + 1, sizeof *vm->marks))
			return db_pk_fail(vm, at, "out of memory");
		vm->marks[vm->n_marks++] = vm->sp;
		return 0;
	case '.':
		if (!(v = db_pk_pop(vm, at, "STOP")))
			return -1;
		*out = v;
		return 1;
	case '0': /* POP: like Python, pops a mark when nothing is above it */
		if (vm->sp > db_pk_mark_base(vm)) {
			vm->sp--;
			return 0;
		}
		/* fall through */
	case '1': /* POP_MARK */
		if (db_pk_pop_mark(vm, at, "POP_MARK", &first, &cnt))
			return -1;
		vm->sp = first;
		return 0;
	case '2': /* DUP */
		return (v = db_pk_top(vm, at, "DUP")) ? db_pk_push(vm, at, v) : -1;
	case 'N':
		return db_pk_push(vm, at, &vm->none);
	case 0x88:
		return db_pk_push(vm, at, &vm->yes);
	case 0x89:
		return db_pk_push(vm, at, &vm->no);
	case 'J': /* BININT: signed */
		if (arg_le(vm, at, 4, "BININT", &u))
			return -1;
		return db_pk_push(vm, at, db_pk_mk_int(vm, at, (int32_t)(uint32_t)u));
	case 'K': /* BININT1, BININT2: unsigned */
	case 'M':
		if (arg_le(vm, at, op == 'K' ? 1 : 2, op == 'K' ? "BININT1" : "BININT2", &u))
			return -1;
		return db_pk_push(vm, at, db_pk_mk_int(vm, at, (int64_t)u));
	case 0x8a: /* LONG1 */
	case 0x8b: /* LONG4 */
		if (arg_le(vm, at, op == 0x8a ? 1 : 4, "LONG", &u))
			return -1;
		if (u > MAX_LONG_BYTES)
			return db_pk_fail(vm, at, "LONG4 of %llu bytes exceeds the cap of %d",
			                  (unsigned long long)u, MAX_LONG_BYTES);
		if (need(vm, at, (size_t)u, "LONG"))
			return -1;
		v = mk_long(vm, at, d + vm->pos, (size_t)u);
		vm->pos += (size_t)u;
		return db_pk_push(vm, at, v);
	case 'G': /* BINFLOAT: big-endian IEEE double */
		if (need(vm, at, 8, "BINFLOAT"))
			return -1;
		u = 0;
		for (int i = 0; i < 8; i++)
			u = u << 8 | d[vm->pos + (size_t)i];
		vm->pos += 8;
		if (!(v = db_pk_mk(vm, DB_PK_FLOAT, at)))
			return -1;
		memcpy(&v->u.f, &u, sizeof u);
		return db_pk_push(vm, at, v);
	case 'X': return op_string(vm, at, 4, DB_PK_STR, "BINUNICODE");
	case 0x8c: return op_string(vm, at, 1, DB_PK_STR, "SHORT_BINUNICODE");
	case 0x8d: return op_string(vm, at, 8, DB_PK_STR, "BINUNICODE8");
	case 'T':
		if (need(vm, at, 4, "BINSTRING"))
			return -1;
		if (d[vm->pos + 3] & 0x80)
			return db_pk_fail(vm, at, "BINSTRING with a negative length");
		return op_string(vm, at, 4, DB_PK_STR, "BINSTRING");
	case 'U': return op_string(vm, at, 1, DB_PK_STR, "SHORT_BINSTRING");
	case 'B': return op_string(vm, at, 4, DB_PK_BYTES, "BINBYTES");
	case 'C': return op_string(vm, at, 1, DB_PK_BYTES, "SHORT_BINBYTES");
	case 0x8e: return op_string(vm, at, 8, DB_PK_BYTES, "BINBYTES8");
	case ')':
		return db_pk_push(vm, at, db_pk_mk(vm, DB_PK_TUPLE, at));
	case ']':
		return db_pk_push(vm, at, db_pk_mk(vm, DB_PK_LIST, at));
	case '}':
		return db_pk_push(vm, at, db_pk_mk(vm, DB_PK_DICT, at));
	case 0x8f:
		return db_pk_push(vm, at, db_pk_mk(vm, DB_PK_SET, at));
	case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
		cnt = (size_t)(op - 0x84);
		if (vm->sp < db_pk_mark_base(vm) + cnt)
			return db_pk_fail(vm, at, "TUPLE%zu with fewer than %zu values on the "
			                  "stack", cnt, cnt);
		return push_seq(vm, at, DB_PK_TUPLE, vm->sp - cnt, cnt);
	}
	case 't': case 'l': case 0x91: /* TUPLE, LIST, FROZENSET from MARK */
		if (db_pk_pop_mark(vm, at, op == 't' ? "TUPLE" : op == 'l' ? "LIST" : "FROZENSET", &first,
		                   &cnt))
			return -1;
		return push_seq(vm, at, op == 't' ? DB_PK_TUPLE : op == 'l' ? DB_PK_LIST : DB_PK_SET, first,
		                cnt);
	case 'd': /* DICT from MARK */
		if (db_pk_pop_mark(vm, at, "DICT", &first, &cnt))
			return -1;
		if (cnt % 2)
			return db_pk_fail(vm, at, "DICT with an odd number of items");
		if (!(v = db_pk_mk(vm, DB_PK_DICT, at)) || dict_fill(vm, at, v, first, cnt))
			return -1;
		return db_pk_push(vm, at, v);
	case 'a': /* APPEND */
		if (!(v = db_pk_pop(vm, at, "APPEND")) || !(c = db_pk_top(vm, at, "APPEND")))
			return -1;
		if (c->type != DB_PK_LIST)
			return db_pk_fail(vm, at, "APPEND to a %s is refused (only lists)",
			                  db_pk_type_name(c));
		return db_pk_seq_add(vm, at, c, v);
	case 'e': case 0x90: /* APPENDS, ADDITEMS */
		if (db_pk_pop_mark(vm, at, op_name(op), &first, &cnt) ||
		    !(c = db_pk_below(vm, at, op_name(op), first)))
			return -1;
		if (op == 'e' && c->type != DB_PK_LIST)
			return db_pk_fail(vm, at, "APPENDS to a %s is refused (only lists)",
			                  db_pk_type_name(c));
		if (op == 0x90 && c->type != DB_PK_SET)
			return db_pk_fail(vm, at, "ADDITEMS to a %s is refused (only sets)",
			                  db_pk_type_name(c));
		for (size_t i = 0; i < cnt; i++)
			if (db_pk_seq_add(vm, at, c, vm->stack[first + i]))
				return -1;
		vm->sp = first;
		return 0;
	case 's': /* SETITEM */
		if (!(v = db_pk_pop(vm, at, "SETITEM")) || !(k = db_pk_pop(vm, at, "SETITEM")) ||
		    !(c = db_pk_top(vm, at, "SETITEM")))
			return -1;
		if (c->type != DB_PK_DICT)
			return db_pk_fail(vm, at, "SETITEM on a %s is refused (only dicts)",
			                  db_pk_type_name(c));
		return db_pk_dict_set(vm, at, c, k, v);
	case 'u': /* SETITEMS */
		if (db_pk_pop_mark(vm, at, "SETITEMS", &first, &cnt) ||
		    !(c = db_pk_below(vm, at, "SETITEMS", first)))
			return -1;
		if (c->type != DB_PK_DICT)
			return db_pk_fail(vm, at, "SETITEMS on a %s is refused (only dicts)",
			                  db_pk_type_name(c));
		if (cnt % 2)
			return db_pk_fail(vm, at, "SETITEMS with an odd number of items");
		return dict_fill(vm, at, c, first, cnt);
	case 'c': { /* GLOBAL */
		char mod[MAX_LINE], name[MAX_LINE];
		if (read_line(vm, at, mod, "GLOBAL") || read_line(vm, at, name, "GLOBAL"))
			return -1;
		return db_pk_push(vm, at, db_pk_resolve(vm, at, "GLOBAL", mod, name));
	}
	case 0x93: /* STACK_GLOBAL: the strings are checked now, wherever they came from */
		if (!(v = db_pk_pop(vm, at, "STACK_GLOBAL")) || !(k = db_pk_pop(vm, at, "STACK_GLOBAL")))
			return -1;
		if (v->type != DB_PK_STR || k->type != DB_PK_STR)
			return db_pk_fail(vm, at, "STACK_GLOBAL needs two strings, got %s and %s",
			                  db_pk_type_name(k), db_pk_type_name(v));
		if (strlen(k->u.str.s) != k->u.str.len || strlen(v->u.str.s) != v->u.str.len)
			return db_pk_fail(vm, at, "STACK_GLOBAL: NUL byte in module/name");
		return db_pk_push(vm, at, db_pk_resolve(vm, at, "STACK_GLOBAL", k->u.str.s, v->u.str.s));
	case 'R': /* REDUCE */
		if (!(v = db_pk_pop(vm, at, "REDUCE")) || !(c = db_pk_pop(vm, at, "REDUCE")))
			return -1;
		return db_pk_push(vm, at, db_pk_reduce(vm, at, c, v));
	case 'b': /* BUILD: only the state of dicts (OrderedDict _metadata) and tensors, ignored */
		if (!(v = db_pk_pop(vm, at, "BUILD")) || !(c = db_pk_top(vm, at, "BUILD")))
			return -1;
		if (c->type != DB_PK_DICT && c->type != DB_PK_TENSOR)
			return db_pk_fail(vm, at, "BUILD on a %s is refused (only OrderedDict and tensors)",
			                  db_pk_type_name(c));
		return 0;
	case 'Q': /* BINPERSID */
		if (!(v = db_pk_pop(vm, at, "BINPERSID")))
			return -1;
		return db_pk_push(vm, at, db_pk_persistent_load(vm, at, v));
	case 'h': return arg_le(vm, at, 1, "BINGET", &u) ? -1 : memo_get(vm, at, u);
	case 'j': return arg_le(vm, at, 4, "LONG_BINGET", &u) ? -1 : memo_get(vm, at, u);
	case 'q': return arg_le(vm, at, 1, "BINPUT", &u) ? -1 : memo_put(vm, at, u);
	case 'r': return arg_le(vm, at, 4, "LONG_BINPUT", &u) ? -1 : memo_put(vm, at, u);
	case 0x94: /* MEMOIZE */
		return memo_put(vm, at, vm->n_memo);
	case 'i': case 'o': case 0x82: case 0x83: case 0x84: case 'P': case 0x81: case 0x92:
		return refuse(vm, at, op);
	default:
		if (op >= 0x20 && op < 0x7f)
			return db_pk_fail(vm, at, "unsupported pickle opcode '%c' (0x%02x)",
			                  op, op);
		return db_pk_fail(vm, at, "unsupported pickle opcode 0x%02x", op);
	}
}

int db_pk_run(db_pk *vm, const uint8_t *data, size_t len, int64_t base, db_pk_val **out,
              size_t *used, db_err *err)
{
	vm->d = data;
	vm->n = len;
	vm->pos = 0;
	vm->base = base;
	vm->err = err;
	vm->sp = 0;
	vm->n_marks = 0;
	if (vm->memo)
		memset(vm->memo, 0, vm->cap_memo * sizeof *vm->memo);
	vm->n_memo = 0;
	*out = NULL;
	for (;;) {
		if (vm->pos >= vm->n)
			return db_pk_fail(vm, vm->pos, "pickle truncated: no STOP opcode");
		size_t at = vm->pos;
		int rc = step(vm, at, data[vm->pos++], out);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			if (used)
				*used = vm->pos;
			return 0;
		}
	}
}
