/* Hand-writing pickles in tests: a growable byte buffer and helpers for
 * the opcodes torch.save emits. Header-only; test use only. */
#ifndef PICKLE_MINI_H
#define PICKLE_MINI_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pb {
	uint8_t *b;
	size_t n, cap;
} pb;

static inline void put(pb *p, const void *d, size_t n)
{
	if (p->n + n > p->cap) {
		p->cap = (p->n + n) * 2 + 256;
		p->b = realloc(p->b, p->cap);
	}
	memcpy(p->b + p->n, d, n);
	p->n += n;
}
#define RAW(p, lit) put(p, lit, sizeof(lit) - 1)
static inline void op(pb *p, uint8_t o) { put(p, &o, 1); }
static inline void str(pb *p, const char *s)
{
	op(p, 0x8c);
	op(p, (uint8_t)strlen(s));
	put(p, s, strlen(s));
}
static inline void glob(pb *p, const char *mod, const char *name)
{
	op(p, 'c');
	put(p, mod, strlen(mod));
	op(p, '\n');
	put(p, name, strlen(name));
	op(p, '\n');
}
static inline void int1(pb *p, uint8_t v)
{
	op(p, 'K');
	op(p, v);
}

/* The arguments of a _rebuild_tensor_v2 call as torch writes them, from the
 * MARK up to (not including) the closing TUPLE, so callers can add more. */
static inline void tensor_args_key(pb *p, const char *key, const char *storage_cls, uint8_t numel,
                                   const char *sizes, const char *strides)
{
	RAW(p, "((");
	str(p, "storage");
	glob(p, "torch", storage_cls);
	str(p, key);
	str(p, "cpu");
	int1(p, numel);
	RAW(p, "tQK\x00");
	put(p, sizes, strlen(sizes));
	put(p, strides, strlen(strides));
	op(p, 0x89);
	glob(p, "collections", "OrderedDict");
	RAW(p, ")R");
}

static inline void tensor_args_open(pb *p, const char *storage_cls, uint8_t numel,
                                    const char *sizes, const char *strides)
{
	tensor_args_key(p, "0", storage_cls, numel, sizes, strides);
}

static inline void tensor_pickle(pb *p, const char *fn, const char *storage_cls, uint8_t numel,
                          const char *sizes, const char *strides)
{
	RAW(p, "\x80\x02");
	glob(p, "torch._utils", fn);
	tensor_args_open(p, storage_cls, numel, sizes, strides);
}

#endif
