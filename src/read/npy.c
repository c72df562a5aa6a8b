/* NumPy .npy v1-v3: magic, version, header length, a Python dict literal
 * {'descr': ..., 'fortran_order': ..., 'shape': (...), } and the raw data
 * (formats.md §6). The header is parsed by hand, strictly: exactly those
 * three keys, each once, and only literals numpy itself writes. */
#include "st_npy.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "reader_impl.h"

/* numpy's reader stops at 10000 bytes by default, but np.save writes v2
 * headers above 65535 bytes for wide shapes; 1 MiB is plenty and bounded. */
#define NPY_MAX_HEADER (1u << 20)

typedef struct npy_hdr {
	const char *s;          /* header text */
	size_t len, i;
	int64_t base;           /* offset of s[0] in the reported file */
	const char *fn, *key;
	db_err *err;
} npy_hdr;

static int npy_fail(npy_hdr *h, const char *msg)
{
	return db_err_set(h->err, h->fn, h->key, h->base + (int64_t)h->i,
	                  "npy header: %s", msg);
}

static void npy_ws(npy_hdr *h)
{
	while (h->i < h->len && (h->s[h->i] == ' ' || h->s[h->i] == '\t' ||
	                         h->s[h->i] == '\n' || h->s[h->i] == '\r'))
		h->i++;
}

/* A quoted Python string without escapes; str and slen point into the text. */
static int npy_string(npy_hdr *h, const char **str, size_t *slen)
{
	if (h->i >= h->len || (h->s[h->i] != '\'' && h->s[h->i] != '"'))
		return npy_fail(h, "string expected");
	char q = h->s[h->i++];
	size_t start = h->i;
	while (h->i < h->len && h->s[h->i] != q) {
		if (h->s[h->i] == '\\' || h->s[h->i] == '\n')
			return npy_fail(h, "escape or newline in string");
		h->i++;
	}
	if (h->i >= h->len)
		return npy_fail(h, "unterminated string");
	*str = h->s + start;
	*slen = h->i - start;
	h->i++;
	return 0;
}

static bool npy_word(npy_hdr *h, const char *w)
{
	size_t n = strlen(w);
	if (h->len - h->i < n || memcmp(h->s + h->i, w, n) != 0)
		return false;
	h->i += n;
	return true;
}

/* (d0, d1, ...) with Python tuple syntax: "()", "(5,)", "(2, 3)", "(2, 3,)". */
static int npy_shape(npy_hdr *h, db_tensor *t)
{
	if (h->i >= h->len || h->s[h->i] != '(')
		return npy_fail(h, "shape must be a tuple");
	h->i++;
	int nd = 0;
	bool comma = false;
	for (;;) {
		npy_ws(h);
		if (h->i < h->len && h->s[h->i] == ')') {
			if (nd == 1 && !comma)
				return npy_fail(h, "'(n)' is not a tuple; expected '(n,)'");
			h->i++;
			break;
		}
		if (nd && !comma)
			return npy_fail(h, "',' or ')' expected in shape");
		if (h->i >= h->len || h->s[h->i] < '0' || h->s[h->i] > '9')
			return npy_fail(h, "non-negative integer expected in shape");
		if (h->s[h->i] == '0' && h->i + 1 < h->len && h->s[h->i + 1] >= '0' && h->s[h->i + 1] <= '9')
			return npy_fail(h, "leading zero in shape");
		if (nd == DB_MAX_DIMS)
			return npy_fail(h, "more than 16 dimensions");
		int64_t v = 0;
		while (h->i < h->len && h->s[h->i] >= '0' && h->s[h->i] <= '9') {
			int d = h->s[h->i++] - '0';
			if (v > (INT64_MAX - d) / 10)
				return npy_fail(h, "dimension too large");
			v = v * 10 + d;
		}
		if (h->i < h->len && h->s[h->i] == 'L')
			h->i++;         /* Python 2 long suffix, written by old numpy */
		t->shape[nd++] = v;
		npy_ws(h);
		comma = h->i < h->len && h->s[h->i] == ',';
		if (comma)
			h->i++;
	}
	t->ndim = nd;
	return 0;
}

static bool npy_host_le(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one == 1;
}

/* descr typestr -> dtype and byte order; refusals name the descr. */
static int npy_descr(npy_hdr *h, const char *d, size_t n, db_tensor *t)
{
	char buf[72];
	snprintf(buf, sizeof buf, "%.*s%s", (int)(n > 64 ? 64 : n), d, n > 64 ? "..." : "");
	size_t i = 0;
	char order = '=';
	if (n && d[0] && strchr("<>|=", d[0]))
		order = d[i++];
	if (i >= n)
		return db_err_set(h->err, h->fn, h->key, h->base, "npy: empty dtype descr '%s'", buf);
	char kind = d[i++];
	if (kind == 'O')
		return db_err_set(h->err, h->fn, h->key, h->base,
		                  "npy: dtype '%s': object arrays hold pickles; refused", buf);
	const char *what = NULL;
	switch (kind) {
	case 'S': case 'a': what = "byte strings"; break;
	case 'U': what = "unicode strings"; break;
	case 'V': what = "raw void bytes (bfloat16/fp8 saved via ml_dtypes look like this; the type is lost)"; break;
	case 'M': what = "datetimes"; break;
	case 'm': what = "timedeltas"; break;
	}
	if (what)
		return db_err_set(h->err, h->fn, h->key, h->base,
		                  "npy: dtype '%s' holds %s, not numbers; not supported", buf, what);
	int size = 0;
	for (; i < n && size < 100; i++) {
		if (d[i] < '0' || d[i] > '9')
			break;
		size = size * 10 + (d[i] - '0');
	}
	db_dtype dt = DB_DT_UNKNOWN;
	if (i == n) {
		switch (kind) {
		case 'b': dt = size == 1 ? DB_DT_BOOL : DB_DT_UNKNOWN; break;
		case 'i': dt = size == 1 ? DB_DT_I8 : size == 2 ? DB_DT_I16 : size == 4 ? DB_DT_I32 :
		               size == 8 ? DB_DT_I64 : DB_DT_UNKNOWN; break;
		case 'u': dt = size == 1 ? DB_DT_U8 : size == 2 ? DB_DT_U16 : size == 4 ? DB_DT_U32 :
		               size == 8 ? DB_DT_U64 : DB_DT_UNKNOWN; break;
		case 'f': dt = size == 2 ? DB_DT_F16 : size == 4 ? DB_DT_F32 : size == 8 ? DB_DT_F64 :
		               DB_DT_UNKNOWN; break;
		case 'c': dt = size == 8 ? DB_DT_C64 : size == 16 ? DB_DT_C128 : DB_DT_UNKNOWN; break;
		}
	}
	if (dt == DB_DT_UNKNOWN)
		return db_err_set(h->err, h->fn, h->key, h->base,
		                  "npy: dtype '%s' not supported (numeric kinds: b1 i1-i8 u1-u8 f2 f4 f8 c8 c16)", buf);
	t->dtype = dt;
	bool big = order == '>' || ((order == '=' || order == '|') && !npy_host_le());
	t->swap = size > 1 && big == npy_host_le();     /* complex: per component */
	return 0;
}

static size_t npy_itemsize(db_dtype dt)
{
	switch (dt) {
	case DB_DT_BOOL: case DB_DT_I8: case DB_DT_U8: return 1;
	case DB_DT_I16: case DB_DT_U16: case DB_DT_F16: return 2;
	case DB_DT_I32: case DB_DT_U32: case DB_DT_F32: return 4;
	case DB_DT_I64: case DB_DT_U64: case DB_DT_F64: case DB_DT_C64: return 8;
	case DB_DT_C128: return 16;
	default: return 0;
	}
}

/* The dict literal; fills dtype, swap, shape, and *fortran. */
static int npy_dict(npy_hdr *h, db_tensor *t, bool *fortran)
{
	bool seen_d = false, seen_f = false, seen_s = false;
	npy_ws(h);
	if (h->i >= h->len || h->s[h->i] != '{')
		return npy_fail(h, "'{' expected");
	h->i++;
	for (;;) {
		npy_ws(h);
		if (h->i < h->len && h->s[h->i] == '}') {
			h->i++;
			break;
		}
		const char *k;
		size_t kl;
		size_t kpos = h->i;
		if (npy_string(h, &k, &kl))
			return -1;
		npy_ws(h);
		if (h->i >= h->len || h->s[h->i] != ':')
			return npy_fail(h, "':' expected");
		h->i++;
		npy_ws(h);
		bool *seen;
		if (kl == 5 && !memcmp(k, "descr", 5))
			seen = &seen_d;
		else if (kl == 13 && !memcmp(k, "fortran_order", 13))
			seen = &seen_f;
		else if (kl == 5 && !memcmp(k, "shape", 5))
			seen = &seen_s;
		else {
			return db_err_set(h->err, h->fn, h->key, h->base + (int64_t)kpos,
			                  "npy header: unexpected key '%.*s' (expected 'descr', "
			                  "'fortran_order', 'shape')", (int)(kl > 40 ? 40 : kl), k);
		}
		if (*seen) {
			h->i = kpos;
			return npy_fail(h, "duplicate key");
		}
		*seen = true;
		if (seen == &seen_d) {
			if (h->i < h->len && h->s[h->i] == '[') {
				size_t rest = h->len - h->i;
				return db_err_set(h->err, h->fn, h->key, h->base + (int64_t)h->i,
				                  "npy: structured dtype %.*s%s not supported",
				                  (int)(rest > 60 ? 60 : rest), h->s + h->i,
				                  rest > 60 ? "..." : "");
			}
			const char *d;
			size_t dl;
			size_t dpos = h->i;
			if (npy_string(h, &d, &dl))
				return -1;
			int64_t save = h->base;
			h->base += (int64_t)dpos;
			int rc = npy_descr(h, d, dl, t);
			h->base = save;
			if (rc)
				return -1;
		} else if (seen == &seen_f) {
			if (npy_word(h, "True"))
				*fortran = true;
			else if (npy_word(h, "False"))
				*fortran = false;
			else
				return npy_fail(h, "fortran_order must be True or False");
		} else if (npy_shape(h, t))
			return -1;
		npy_ws(h);
		if (h->i < h->len && h->s[h->i] == ',') {
			h->i++;
			continue;
		}
		if (h->i < h->len && h->s[h->i] == '}') {
			h->i++;
			break;
		}
		return npy_fail(h, "',' or '}' expected");
	}
	npy_ws(h);
	if (h->i != h->len)
		return npy_fail(h, "unexpected text after the header dict");
	if (!seen_d || !seen_f || !seen_s)
		return npy_fail(h, !seen_d ? "missing key 'descr'" :
		                   !seen_f ? "missing key 'fortran_order'" : "missing key 'shape'");
	return 0;
}

int db_npy_parse(const uint8_t *p, size_t n, const char *name, const char *key,
                 int64_t base, db_tensor *t, db_err *err)
{
	int64_t b = base < 0 ? 0 : base;    /* offsets in messages */
	memset(t, 0, sizeof *t);
	if (n < 10 || memcmp(p, "\x93NUMPY", 6) != 0)
		return db_err_set(err, name, key, b, "not a .npy image (bad magic or under 10 bytes)");
	unsigned major = p[6], minor = p[7];
	if (major < 1 || major > 3 || minor != 0)
		return db_err_set(err, name, key, b + 6, "npy version %u.%u not supported (1.0, 2.0, 3.0)",
		                  major, minor);
	size_t hstart = major == 1 ? 10 : 12;
	if (n < hstart)
		return db_err_set(err, name, key, b + 8, "truncated npy header length");
	uint64_t hlen = major == 1 ? (uint64_t)p[8] | (uint64_t)p[9] << 8
	                           : (uint64_t)p[8] | (uint64_t)p[9] << 8 |
	                             (uint64_t)p[10] << 16 | (uint64_t)p[11] << 24;
	if (hlen > NPY_MAX_HEADER)
		return db_err_set(err, name, key, b + 8, "npy header of %" PRIu64 " bytes exceeds the %u-byte cap",
		                  hlen, NPY_MAX_HEADER);
	if (hlen > n - hstart)
		return db_err_set(err, name, key, b + 8, "truncated: npy header of %" PRIu64
		                  " bytes, only %zu follow", hlen, n - hstart);
	npy_hdr h = { (const char *)p + hstart, (size_t)hlen, 0, b + (int64_t)hstart, name, key, err };
	bool fortran = false;
	if (npy_dict(&h, t, &fortran))
		return -1;
	size_t isz = npy_itemsize(t->dtype);
	int64_t count = 1;
	for (int k = 0; k < t->ndim; k++) {
		if (t->shape[k] && count > INT64_MAX / t->shape[k])
			return db_err_set(err, name, key, h.base, "npy: element count overflows");
		count *= t->shape[k];
	}
	size_t dstart = hstart + (size_t)hlen, have = n - dstart;
	if ((uint64_t)count > UINT64_MAX / isz || (uint64_t)count * isz != have) {
		if ((uint64_t)count <= UINT64_MAX / isz && (uint64_t)count * isz > have)
			return db_err_set(err, name, key, b + (int64_t)dstart,
			                  "truncated: %" PRId64 " elements of %zu bytes need %" PRIu64
			                  " data bytes, %zu present", count, isz, (uint64_t)count * isz, have);
		if ((uint64_t)count <= UINT64_MAX / isz)
			return db_err_set(err, name, key, b + (int64_t)(dstart + (size_t)count * isz),
			                  "%zu trailing bytes after the data", have - (size_t)count * isz);
		return db_err_set(err, name, key, b + (int64_t)dstart, "npy: data size overflows");
	}
	int64_t s = 1;
	for (int k = 0; k < t->ndim; k++) {
		int kk = fortran ? k : t->ndim - 1 - k;    /* Fortran: first dim fastest */
		t->stride[kk] = s;
		s *= t->shape[kk] ? t->shape[kk] : 1;
	}
	t->data = p + dstart;
	t->file_offset = base < 0 ? -1 : base + (int64_t)dstart;
	return 0;
}

int db_read_npy(db_file *f, const uint8_t *p, size_t n, db_err *err)
{
	const char *fn = f->path ? f->path : "?";
	db_tensor t;
	if (db_npy_parse(p, n, fn, NULL, 0, &t, err))
		return -1;
	db_entry *e = db_file_add_entry(f, "");
	if (!e)
		return db_err_set(err, fn, NULL, -1, "out of memory");
	e->t = t;
	f->format = DB_FMT_NPY;
	return 0;
}
