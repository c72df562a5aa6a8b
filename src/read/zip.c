#include "zip.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "db_bus.h"

#include "util/strmap.h"

#define SIG_LOCAL   0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD    0x06054b50u
#define SIG_EOCD64  0x06064b50u
#define SIG_LOC64   0x07064b50u
#define EOCD_LEN    22
#define LOC64_LEN   20
#define EOCD64_LEN  56
#define CDR_LEN     46
#define LFH_LEN     30

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* The member names are the file's: keyed per process, so a zip cannot
 * choose names of one bucket (issue 37). */
static uint32_t name_hash(const char *s, size_t n)
{
	return (uint32_t)db_strmap_hash(s, n);
}

/* Last end-of-central-directory record whose comment fits in the file. */
static int64_t find_eocd(const uint8_t *d, size_t size)
{
	if (size < EOCD_LEN)
		return -1;
	size_t lo = size - EOCD_LEN > 0xFFFF ? size - EOCD_LEN - 0xFFFF : 0;
	for (size_t pos = size - EOCD_LEN + 1; pos-- > lo;) {
		if (rd32(d + pos) == SIG_EOCD && pos + EOCD_LEN + rd16(d + pos + 20) <= size)
			return (int64_t)pos;
	}
	return -1;
}

/* Apply the ZIP64 extended-information extra (id 0x0001) to e: it holds, in
 * this order, only the fields whose 32-bit value is saturated. */
static int apply_zip64_extra(const db_zip *z, db_zip_entry *e, const uint8_t *x,
                             size_t xlen, bool u_sat, bool c_sat, bool o_sat, db_err *err)
{
	size_t i = 0;
	while (i + 4 <= xlen) {
		uint16_t id = rd16(x + i), len = rd16(x + i + 2);
		if (i + 4 + len > xlen)
			return db_err_set(err, z->fname, e->name, (int64_t)e->cd_off,
			                  "zip: extra field overruns its central-directory record");
		if (id == 0x0001) {
			const uint8_t *q = x + i + 4, *end = q + len;
			if (u_sat) { if (q + 8 > end) goto short64; e->usize = rd64(q); q += 8; }
			if (c_sat) { if (q + 8 > end) goto short64; e->csize = rd64(q); q += 8; }
			if (o_sat) { if (q + 8 > end) goto short64; e->lho = rd64(q); q += 8; }
			return 0;
		}
		i += 4u + len;
	}
	if (u_sat || c_sat || o_sat)
		return db_err_set(err, z->fname, e->name, (int64_t)e->cd_off,
		                  "zip: size or offset is 0xFFFFFFFF but there is no ZIP64 extra field");
	return 0;
short64:
	return db_err_set(err, z->fname, e->name, (int64_t)e->cd_off,
	                  "zip: ZIP64 extra field too short");
}

static int build_index(db_zip *z, db_err *err)
{
	size_t cap = 16;
	while (cap < z->n_entries * 2)
		cap *= 2;
	z->hash_ = malloc(cap * sizeof *z->hash_);
	if (!z->hash_)
		return db_err_set(err, z->fname, NULL, -1, "out of memory");
	memset(z->hash_, 0xFF, cap * sizeof *z->hash_);
	z->hash_cap_ = cap;
	for (size_t i = 0; i < z->n_entries; i++) {
		const db_zip_entry *e = &z->entries[i];
		size_t h = name_hash(e->name, e->name_len) & (cap - 1);
		while (z->hash_[h] != UINT32_MAX) {
			const db_zip_entry *o = &z->entries[z->hash_[h]];
			/* Two members with one name: readers disagree on which wins. */
			if (o->name_len == e->name_len && !memcmp(o->name, e->name, e->name_len))
				return db_err_set(err, z->fname, e->name, (int64_t)e->cd_off,
				                  "zip: duplicate member name");
			h = (h + 1) & (cap - 1);
		}
		z->hash_[h] = (uint32_t)i;
	}
	return 0;
}

static int parse_central(db_zip *z, uint64_t cd_off, uint64_t cd_size, uint64_t n, db_err *err)
{
	const uint8_t *d = z->data;
	/* Each record is at least 46 bytes, which bounds n before allocating. */
	if (n > cd_size / CDR_LEN || n >= UINT32_MAX)
		return db_err_set(err, z->fname, NULL, (int64_t)cd_off,
		                  "zip: %llu entries cannot fit in a %llu-byte central directory",
		                  (unsigned long long)n, (unsigned long long)cd_size);
	z->entries = calloc(n ? n : 1, sizeof *z->entries);
	z->names_ = malloc(cd_size + 1);
	if (!z->entries || !z->names_)
		return db_err_set(err, z->fname, NULL, -1, "out of memory");
	size_t names_used = 0;
	uint64_t pos = cd_off, end = cd_off + cd_size;
	for (uint64_t i = 0; i < n; i++) {
		if (end - pos < CDR_LEN || rd32(d + pos) != SIG_CENTRAL)
			return db_err_set(err, z->fname, NULL, (int64_t)pos,
			                  "zip: central directory truncated or corrupt (record %llu of %llu)",
			                  (unsigned long long)i, (unsigned long long)n);
		const uint8_t *r = d + pos;
		size_t nl = rd16(r + 28), xl = rd16(r + 30), cl = rd16(r + 32);
		if (end - pos < CDR_LEN + nl + xl + cl)
			return db_err_set(err, z->fname, NULL, (int64_t)pos,
			                  "zip: central-directory record %llu overruns the directory",
			                  (unsigned long long)i);
		db_zip_entry *e = &z->entries[i];
		char *name = z->names_ + names_used;
		memcpy(name, r + CDR_LEN, nl);
		name[nl] = '\0';
		names_used += nl + 1;
		e->name = name;
		e->name_len = nl;
		e->flags = rd16(r + 8);
		e->method = rd16(r + 10);
		e->crc = rd32(r + 16);
		e->csize = rd32(r + 20);
		e->usize = rd32(r + 24);
		e->lho = rd32(r + 42);
		e->cd_off = pos;
		z->n_entries = i + 1;
		/* Names end up in messages on a terminal: no control bytes. */
		for (size_t k = 0; k < nl; k++)
			if ((uint8_t)name[k] < 0x20 || name[k] == 0x7f)
				return db_err_set(err, z->fname, NULL, (int64_t)pos,
				                  "zip: member name contains control byte 0x%02x", (uint8_t)name[k]);
		if (apply_zip64_extra(z, e, r + CDR_LEN + nl, xl, e->usize == UINT32_MAX,
		                      e->csize == UINT32_MAX, e->lho == UINT32_MAX, err))
			return -1;
		if (e->lho >= z->size || e->csize > z->size)
			return db_err_set(err, z->fname, name, (int64_t)pos,
			                  "zip: local header offset %llu / size %llu outside the %zu-byte file",
			                  (unsigned long long)e->lho, (unsigned long long)e->csize, z->size);
		pos += CDR_LEN + nl + xl + cl;
		/* names_ holds cd_size+1 bytes; each record adds nl+1 <= 46+nl. */
	}
	return build_index(z, err);
}

int db_zip_open(const uint8_t *data, size_t size, const char *fname, db_zip *z, db_err *err)
{
	memset(z, 0, sizeof *z);
	z->data = data;
	z->size = size;
	z->fname = fname;
	int64_t eocd = find_eocd(data, size);
	if (eocd < 0)
		return db_err_set(err, fname, NULL, (int64_t)size, /* where the search ended */
		                  "zip: no end-of-central-directory record (truncated file?)");
	const uint8_t *e = data + eocd;
	uint64_t n = rd16(e + 10), cd_size = rd32(e + 12), cd_off = rd32(e + 16);
	uint64_t dir_end = (uint64_t)eocd;
	/* torch always writes ZIP64 end records; when the locator sits right
	 * before the classic record, its values are the true ones. */
	if (eocd >= LOC64_LEN && rd32(data + eocd - LOC64_LEN) == SIG_LOC64) {
		uint64_t loc = (uint64_t)eocd - LOC64_LEN;
		uint64_t r64 = rd64(data + loc + 8);
		if (r64 > loc || loc - r64 < EOCD64_LEN || rd32(data + r64) != SIG_EOCD64)
			return db_err_set(err, fname, NULL, (int64_t)loc,
			                  "zip: ZIP64 locator points to offset %llu, where there is no ZIP64 end record",
			                  (unsigned long long)r64);
		const uint8_t *q = data + r64;
		n = rd64(q + 32);
		cd_size = rd64(q + 40);
		cd_off = rd64(q + 48);
		dir_end = r64;
	} else if (n == 0xFFFF || cd_size == UINT32_MAX || cd_off == UINT32_MAX) {
		return db_err_set(err, fname, NULL, eocd,
		                  "zip: end record needs ZIP64 values but there is no ZIP64 locator");
	}
	if (cd_off > dir_end || cd_size > dir_end - cd_off)
		return db_err_set(err, fname, NULL, eocd,
		                  "zip: central directory (offset %llu, %llu bytes) lies outside the file",
		                  (unsigned long long)cd_off, (unsigned long long)cd_size);
	if (parse_central(z, cd_off, cd_size, n, err)) {
		db_zip_close(z);
		return -1;
	}
	return 0;
}

void db_zip_close(db_zip *z)
{
	if (!z)
		return;
	free(z->entries);
	free(z->names_);
	free(z->hash_);
	z->entries = NULL;
	z->names_ = NULL;
	z->hash_ = NULL;
	z->n_entries = 0;
}

const db_zip_entry *db_zip_find(const db_zip *z, const char *name)
{
	if (!z->hash_cap_)
		return NULL;
	size_t len = strlen(name);
	size_t h = name_hash(name, len) & (z->hash_cap_ - 1);
	while (z->hash_[h] != UINT32_MAX) {
		const db_zip_entry *e = &z->entries[z->hash_[h]];
		if (e->name_len == len && !memcmp(e->name, name, len))
			return e;
		h = (h + 1) & (z->hash_cap_ - 1);
	}
	return NULL;
}

int db_zip_payload_offset(const db_zip *z, const db_zip_entry *e, uint64_t *off, db_err *err)
{
	if (e->lho > z->size || z->size - e->lho < LFH_LEN)
		return db_err_set(err, z->fname, e->name, (int64_t)e->lho,
		                  "zip: local header truncated");
	const uint8_t *l = z->data + e->lho;
	if (rd32(l) != SIG_LOCAL)
		return db_err_set(err, z->fname, e->name, (int64_t)e->lho,
		                  "zip: no local header signature where the central directory points");
	/* Payload offset = lho + 30 + name_len + extra_len (torch getRecordOffset).
	 * Sizes come from the central directory: torch leaves the local ones 0. */
	uint64_t p = e->lho + LFH_LEN + rd16(l + 26) + rd16(l + 28);
	if (p > z->size || e->csize > z->size - p)
		return db_err_set(err, z->fname, e->name, (int64_t)e->lho,
		                  "zip: member data (%llu bytes at offset %llu) runs past the end of the %zu-byte file",
		                  (unsigned long long)e->csize, (unsigned long long)p, z->size);
	*off = p;
	return 0;
}

static int check_crc(const db_zip *z, const db_zip_entry *e, const uint8_t *p, size_t n,
                     uint64_t off, db_err *err)
{
	uint32_t c = (uint32_t)crc32_z(crc32_z(0L, Z_NULL, 0), p, n);
	if (c != e->crc)
		return db_err_set(err, z->fname, e->name, (int64_t)off,
		                  "zip: CRC-32 mismatch (stored %08x, computed %08x)", e->crc, c);
	return 0;
}

int db_zip_verify_crc(const db_zip *z, const db_zip_entry *e, db_err *err)
{
	const uint8_t *p;
	size_t n;
	void *owned = NULL;
	db_zip tmp = *z;
	tmp.check_crc = true;
	int rc = db_zip_data(&tmp, e, &p, &n, &owned, SIZE_MAX, err);
	free(owned);
	return rc;
}

typedef struct inflating {
	z_stream s;
	uint8_t *buf;
} inflating;

static void inflate_abandon(void *arg)
{
	inflating *h = arg;
	inflateEnd(&h->s);
	free(h->buf);
	free(h);
}

static int inflate_member(const db_zip *z, const db_zip_entry *e, uint64_t off, size_t cap,
                          const uint8_t **p, size_t *len, void **owned, db_err *err)
{
	if (e->usize > cap || e->usize > SIZE_MAX - 1)
		return db_err_set(err, z->fname, e->name, (int64_t)off,
		                  "zip: deflated member would inflate to %llu bytes, more than the %zu allowed",
		                  (unsigned long long)e->usize, cap);
	/* on the heap, held: a fault in the mapped input jumps out of here */
	inflating *h = calloc(1, sizeof *h);
	uint8_t *buf = h ? malloc(e->usize ? e->usize : 1) : NULL;
	if (!buf) {
		free(h);
		return db_err_set(err, z->fname, e->name, (int64_t)off,
		                  "out of memory inflating %llu bytes", (unsigned long long)e->usize);
	}
	h->buf = buf;
	z_stream *sp = &h->s;
	if (inflateInit2(sp, -MAX_WBITS) != Z_OK) {
		free(buf);
		free(h);
		return db_err_set(err, z->fname, e->name, (int64_t)off, "zlib: inflateInit failed");
	}
	int held = db_bus_hold(inflate_abandon, h);
	/* Feed in chunks: avail_in/avail_out are 32-bit. */
	const uint8_t *in = z->data + off;
	uint64_t in_left = e->csize, out_done = 0;
	int zr = Z_OK;
	while (zr == Z_OK) {
		uInt ci = in_left > 1u << 30 ? 1u << 30 : (uInt)in_left;
		uint64_t out_left = e->usize - out_done;
		/* one spare byte of output room detects a member longer than usize */
		uint8_t spare;
		bool use_spare = out_left == 0;
		sp->next_in = (Bytef *)(uintptr_t)in;
		sp->avail_in = ci;
		sp->next_out = use_spare ? &spare : buf + out_done;
		sp->avail_out = use_spare ? 1 : (out_left > 1u << 30 ? 1u << 30 : (uInt)out_left);
		uInt ai = sp->avail_in, ao = sp->avail_out;
		zr = inflate(sp, Z_NO_FLUSH);
		in += ai - sp->avail_in;
		in_left -= ai - sp->avail_in;
		if (use_spare && sp->avail_out == 0) {
			zr = Z_DATA_ERROR;
			break;
		}
		out_done += ao - sp->avail_out;
		if (zr == Z_OK && ai == sp->avail_in && ao == sp->avail_out)
			zr = Z_BUF_ERROR; /* no progress: input exhausted */
	}
	db_bus_drop(held);
	inflateEnd(sp);
	free(h);
	if (zr != Z_STREAM_END || out_done != e->usize) {
		free(buf);
		return db_err_set(err, z->fname, e->name, (int64_t)off,
		                  "zip: deflate stream is corrupt or its length disagrees with the directory (%llu bytes declared)",
		                  (unsigned long long)e->usize);
	}
	if (check_crc(z, e, buf, (size_t)e->usize, off, err)) {
		free(buf);
		return -1;
	}
	*p = buf;
	*len = (size_t)e->usize;
	*owned = buf;
	return 0;
}

int db_zip_data(const db_zip *z, const db_zip_entry *e, const uint8_t **p, size_t *len,
                void **owned, size_t cap, db_err *err)
{
	uint64_t off = 0;
	*owned = NULL;
	if (db_zip_payload_offset(z, e, &off, err))
		return -1;
	if (e->flags & 1)
		return db_err_set(err, z->fname, e->name, (int64_t)e->lho,
		                  "zip: encrypted members are not supported");
	if (e->method == 0) {
		if (e->usize != e->csize)
			return db_err_set(err, z->fname, e->name, (int64_t)e->cd_off,
			                  "zip: stored member has compressed size %llu but uncompressed size %llu",
			                  (unsigned long long)e->csize, (unsigned long long)e->usize);
		if (z->check_crc && check_crc(z, e, z->data + off, (size_t)e->csize, off, err))
			return -1;
		*p = z->data + off;
		*len = (size_t)e->csize;
		return 0;
	}
	if (e->method == 8)
		return inflate_member(z, e, off, cap, p, len, owned, err);
	return db_err_set(err, z->fname, e->name, (int64_t)e->lho,
	                  "zip: compression method %u is not supported (only stored and deflate)",
	                  e->method);
}
