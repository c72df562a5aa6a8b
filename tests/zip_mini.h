/* A tiny ZIP writer for tests: builds archives in memory the way torch and
 * numpy do (STORED or raw DEFLATE members, optional ZIP64 end records), so
 * readers can be fed hand-made containers. Header-only; test use only. */
#ifndef ZIP_MINI_H
#define ZIP_MINI_H
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct zm_member {
	const char *name;
	const void *data;
	size_t len;
	bool deflate;
} zm_member;

typedef struct zm_buf {
	uint8_t *p;
	size_t n, cap;
} zm_buf;

static void zm_put(zm_buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
	}
	if (n)
		memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void zm_u16(zm_buf *b, uint32_t v)
{
	uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
	zm_put(b, x, 2);
}

static void zm_u32(zm_buf *b, uint32_t v)
{
	zm_u16(b, v & 0xFFFF);
	zm_u16(b, v >> 16);
}

static void zm_u64(zm_buf *b, uint64_t v)
{
	zm_u32(b, (uint32_t)v);
	zm_u32(b, (uint32_t)(v >> 32));
}

/* Raw-deflate d[0..n) into a malloc'd buffer. */
static uint8_t *zm_deflate(const void *d, size_t n, size_t *out)
{
	z_stream s;
	memset(&s, 0, sizeof s);
	deflateInit2(&s, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
	size_t cap = deflateBound(&s, (uLong)n) + 16;
	uint8_t *o = malloc(cap);
	s.next_in = (Bytef *)(uintptr_t)d;
	s.avail_in = (uInt)n;
	s.next_out = o;
	s.avail_out = (uInt)cap;
	deflate(&s, Z_FINISH);
	*out = cap - s.avail_out;
	deflateEnd(&s);
	return o;
}

/* The fields a local header and its central-directory entry share, from
 * "version needed" to "extra length". */
static inline void zm_entry_fields(zm_buf *b, bool deflate, uint32_t crc, size_t clen,
                                   uint64_t usize, size_t nl)
{
	zm_u16(b, 20);
	zm_u16(b, 0);
	zm_u16(b, deflate ? 8 : 0);
	zm_u32(b, 0);
	zm_u32(b, crc);
	zm_u32(b, (uint32_t)clen);
	zm_u32(b, (uint32_t)usize);
	zm_u16(b, (uint32_t)nl);
	zm_u16(b, 0);
}

/* Whole archive; caller frees. zip64: also write the ZIP64 end record and
 * locator (as torch always does). classic_count: value written into the
 * classic end record's entry counts (-1 = the real count). usize: NULL, or
 * per member the uncompressed size to declare (0: the real one), so tests
 * can build archives that lie about it. */
static inline uint8_t *zm_build_full(const zm_member *m, size_t n, bool zip64,
                                     long classic_count, const uint64_t *usize, size_t *len)
{
	zm_buf b = {0}, cd = {0};
	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(m[i].name), clen = m[i].len;
		uint8_t *comp = NULL;
		const void *payload = m[i].data;
		if (m[i].deflate) {
			comp = zm_deflate(m[i].data, m[i].len, &clen);
			payload = comp;
		}
		uint32_t crc = (uint32_t)crc32(0, m[i].data, (uInt)m[i].len);
		uint64_t us = usize && usize[i] ? usize[i] : m[i].len;
		uint32_t lho = (uint32_t)b.n;
		zm_u32(&b, 0x04034b50);
		zm_entry_fields(&b, m[i].deflate, crc, clen, us, nl);
		zm_put(&b, m[i].name, nl);
		zm_put(&b, payload, clen);
		free(comp);
		zm_u32(&cd, 0x02014b50);
		zm_u16(&cd, 0x031E);
		zm_entry_fields(&cd, m[i].deflate, crc, clen, us, nl);
		zm_u16(&cd, 0);
		zm_u16(&cd, 0);
		zm_u16(&cd, 0);
		zm_u32(&cd, 0);
		zm_u32(&cd, lho);
		zm_put(&cd, m[i].name, nl);
	}
	uint64_t cd_off = b.n;
	zm_put(&b, cd.p, cd.n);
	if (zip64) {
		uint64_t r64 = b.n;
		zm_u32(&b, 0x06064b50);
		zm_u64(&b, 44);
		zm_u16(&b, 0x031E);
		zm_u16(&b, 45);
		zm_u32(&b, 0);
		zm_u32(&b, 0);
		zm_u64(&b, n);
		zm_u64(&b, n);
		zm_u64(&b, cd.n);
		zm_u64(&b, cd_off);
		zm_u32(&b, 0x07064b50);
		zm_u32(&b, 0);
		zm_u64(&b, r64);
		zm_u32(&b, 1);
	}
	uint32_t cc = classic_count < 0 ? (uint32_t)n : (uint32_t)classic_count;
	zm_u32(&b, 0x06054b50);
	zm_u16(&b, 0);
	zm_u16(&b, 0);
	zm_u16(&b, cc);
	zm_u16(&b, cc);
	zm_u32(&b, (uint32_t)cd.n);
	zm_u32(&b, (uint32_t)cd_off);
	zm_u16(&b, 0);
	free(cd.p);
	*len = b.n;
	return b.p;
}

static inline uint8_t *zm_build_ex(const zm_member *m, size_t n, bool zip64,
                                   long classic_count, size_t *len)
{
	return zm_build_full(m, n, zip64, classic_count, NULL, len);
}

static inline uint8_t *zm_build(const zm_member *m, size_t n, size_t *len)
{
	return zm_build_ex(m, n, true, -1, len);
}

#endif
