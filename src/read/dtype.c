/* Element types: sizes, torch names, and exact conversion to double.
 *
 * Every decoder is exact except int64/uint64 beyond 2^53 (rounded to nearest,
 * as torch's .double() does). Quantized dtypes (qint8, quint8, qint32,
 * quint4x2, quint2x4) decode here to their raw stored integers; the
 * statistics (stats.c, `ls --stats`) then dequantize per-tensor affine ones
 * with the tensor's scale and zero point. Comparing two quantized tensors
 * would need their scale/zero-point and packing, so db_dtype_comparable()
 * says no and compare reports such pairs as "not comparable". */
#include "db_dtype.h"

#include "util/simd.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

static const struct {
	const char *name;
	unsigned char size;
} dtype_info[DB_DT__COUNT] = {
	[DB_DT_UNKNOWN] = {"unknown", 0},
	[DB_DT_F64] = {"float64", 8},
	[DB_DT_F32] = {"float32", 4},
	[DB_DT_F16] = {"float16", 2},
	[DB_DT_BF16] = {"bfloat16", 2},
	[DB_DT_F8_E4M3FN] = {"float8_e4m3fn", 1},
	[DB_DT_F8_E5M2] = {"float8_e5m2", 1},
	[DB_DT_F8_E4M3FNUZ] = {"float8_e4m3fnuz", 1},
	[DB_DT_F8_E5M2FNUZ] = {"float8_e5m2fnuz", 1},
	[DB_DT_F8_E8M0FNU] = {"float8_e8m0fnu", 1},
	[DB_DT_I8] = {"int8", 1},
	[DB_DT_I16] = {"int16", 2},
	[DB_DT_I32] = {"int32", 4},
	[DB_DT_I64] = {"int64", 8},
	[DB_DT_U8] = {"uint8", 1},
	[DB_DT_U16] = {"uint16", 2},
	[DB_DT_U32] = {"uint32", 4},
	[DB_DT_U64] = {"uint64", 8},
	[DB_DT_BOOL] = {"bool", 1},
	[DB_DT_C64] = {"complex64", 8},
	[DB_DT_C128] = {"complex128", 16},
	[DB_DT_QINT8] = {"qint8", 1},
	[DB_DT_QUINT8] = {"quint8", 1},
	[DB_DT_QINT32] = {"qint32", 4},
	[DB_DT_QUINT4X2] = {"quint4x2", 1},
	[DB_DT_QUINT2X4] = {"quint2x4", 1},
	[DB_DT_F4_E2M1FN_X2] = {"float4_e2m1fn_x2", 1},
};

static bool dtype_valid(db_dtype dt)
{
	return dt > DB_DT_UNKNOWN && dt < DB_DT__COUNT;
}

size_t db_dtype_size(db_dtype dt)
{
	return dtype_valid(dt) ? dtype_info[dt].size : 0;
}

const char *db_dtype_name(db_dtype dt)
{
	return dtype_valid(dt) ? dtype_info[dt].name : "unknown";
}

db_dtype db_dtype_from_name(const char *name)
{
	if (!name)
		return DB_DT_UNKNOWN;
	if (strncmp(name, "torch.", 6) == 0)
		name += 6;
	for (int dt = DB_DT_UNKNOWN + 1; dt < DB_DT__COUNT; dt++)
		if (strcmp(name, dtype_info[dt].name) == 0)
			return (db_dtype)dt;
	return DB_DT_UNKNOWN;
}

bool db_dtype_is_complex(db_dtype dt)
{
	return dt == DB_DT_C64 || dt == DB_DT_C128;
}

bool db_dtype_is_quantized(db_dtype dt)
{
	return dt >= DB_DT_QINT8 && dt <= DB_DT_QUINT2X4;
}

bool db_dtype_is_fp8(db_dtype dt)
{
	return dt >= DB_DT_F8_E4M3FN && dt <= DB_DT_F8_E8M0FNU;
}

/* Two FP4 values per byte mean nothing as one number: compared only once
 * their scales dequantize them (measure/dequant.c). */
bool db_dtype_comparable(db_dtype dt)
{
	return dtype_valid(dt) && !db_dtype_is_quantized(dt) && dt != DB_DT_F4_E2M1FN_X2;
}

double db_e2m1_f64(unsigned c)
{
	static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
	return c & 8 ? -mag[c & 7] : mag[c & 7];
}

int db_dtype_components(db_dtype dt)
{
	return db_dtype_is_complex(dt) ? 2 : 1;
}

/* ---- scalar conversions ------------------------------------------------ */

static inline float f32_from_bits(uint32_t b)
{
	float f;
	memcpy(&f, &b, sizeof f);
	return f;
}

/* f16 -> f32 without branches so loops over it vectorize. Subnormals go
 * through an exact int->float conversion, normals and Inf/NaN through bit
 * moves; both are exact. */
static inline float f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000u) << 16;
	uint32_t em = h & 0x7fffu;
	uint32_t norm = (em << 13) + (112u << 23);
	uint32_t nonfin = (em << 13) | 0x7f800000u;
	float fsub = (float)(int32_t)em * 0x1p-24f;
	uint32_t sub;
	memcpy(&sub, &fsub, sizeof sub);
	uint32_t is_nonfin = 0u - (uint32_t)(em >= 0x7c00u);
	uint32_t is_norm = 0u - (uint32_t)(em >= 0x400u);
	uint32_t bits = (nonfin & is_nonfin) | (norm & is_norm & ~is_nonfin) | (sub & ~is_norm);
	return f32_from_bits(bits | s);
}

/* fp8 tables, built once from the formulas in formats.md §7. */
enum { FP8_E4M3FN, FP8_E5M2, FP8_E4M3FNUZ, FP8_E5M2FNUZ, FP8_E8M0FNU, FP8_N };
static double fp8_table[FP8_N][256];
static pthread_once_t fp8_once = PTHREAD_ONCE_INIT;

/* Generic minifloat: ebits exponent bits, mbits mantissa bits, bias. */
static double minifloat(unsigned b, int ebits, int mbits, int bias)
{
	unsigned m = b & ((1u << mbits) - 1);
	unsigned e = (b >> mbits) & ((1u << ebits) - 1);
	double sign = (b >> (ebits + mbits)) & 1 ? -1.0 : 1.0;
	if (e == 0)
		return sign * ldexp((double)m, 1 - bias - mbits);
	return sign * ldexp((double)((1u << mbits) | m), (int)e - bias - mbits);
}

static void fp8_init(void)
{
	for (unsigned b = 0; b < 256; b++) {
		/* e4m3fn: no Inf; only S.1111.111 is NaN */
		fp8_table[FP8_E4M3FN][b] = (b & 0x7f) == 0x7f ? NAN : minifloat(b, 4, 3, 7);
		/* e5m2: the top byte of an f16 */
		fp8_table[FP8_E5M2][b] = f16_to_f32((uint16_t)(b << 8));
		/* fnuz: 0x80 (negative zero's code) is the only NaN; no Inf */
		fp8_table[FP8_E4M3FNUZ][b] = b == 0x80 ? NAN : minifloat(b, 4, 3, 8);
		fp8_table[FP8_E5M2FNUZ][b] = b == 0x80 ? NAN : minifloat(b, 5, 2, 16);
		/* e8m0fnu: unsigned power of two, 0xFF NaN */
		fp8_table[FP8_E8M0FNU][b] = b == 0xff ? NAN : ldexp(1.0, (int)b - 127);
	}
}

static const double *fp8_lut(db_dtype dt)
{
	pthread_once(&fp8_once, fp8_init);
	switch (dt) {
	case DB_DT_F8_E4M3FN: return fp8_table[FP8_E4M3FN];
	case DB_DT_F8_E5M2: return fp8_table[FP8_E5M2];
	case DB_DT_F8_E4M3FNUZ: return fp8_table[FP8_E4M3FNUZ];
	case DB_DT_F8_E5M2FNUZ: return fp8_table[FP8_E5M2FNUZ];
	default: return fp8_table[FP8_E8M0FNU];
	}
}

/* Load `size` bytes at p as a little-endian unsigned value; reversed if swap. */
static inline uint64_t load_bits(const uint8_t *p, size_t size, bool swap)
{
	uint64_t v = 0;
	for (size_t i = 0; i < size; i++)
		v |= (uint64_t)p[swap ? size - 1 - i : i] << (8 * i);
	return v;
}

/* Decode one component whose stored bits (little-endian order) are v. */
static inline double decode_bits(db_dtype dt, uint64_t v)
{
	switch (dt) {
	case DB_DT_F64: case DB_DT_C128: {
		double d;
		memcpy(&d, &v, sizeof d);
		return d;
	}
	case DB_DT_F32: case DB_DT_C64: return f32_from_bits((uint32_t)v);
	case DB_DT_F16: return f16_to_f32((uint16_t)v);
	case DB_DT_BF16: return f32_from_bits((uint32_t)v << 16);
	case DB_DT_F8_E4M3FN: case DB_DT_F8_E5M2: case DB_DT_F8_E4M3FNUZ:
	case DB_DT_F8_E5M2FNUZ: case DB_DT_F8_E8M0FNU:
		return fp8_lut(dt)[v & 0xff];
	case DB_DT_I8: case DB_DT_QINT8: return (int8_t)v;
	case DB_DT_I16: return (int16_t)v;
	case DB_DT_I32: case DB_DT_QINT32: return (int32_t)v;
	case DB_DT_I64: return (double)(int64_t)v;
	case DB_DT_U8: case DB_DT_QUINT8: case DB_DT_QUINT4X2: case DB_DT_QUINT2X4:
	case DB_DT_F4_E2M1FN_X2:        /* the raw byte, as the packed ints */
		return (uint8_t)v;
	case DB_DT_U16: return (uint16_t)v;
	case DB_DT_U32: return (uint32_t)v;
	case DB_DT_U64: return (double)v;
	case DB_DT_BOOL: return (v & 0xff) != 0;
	default: return NAN;
	}
}

static size_t component_size(db_dtype dt)
{
	return db_dtype_size(dt) / (size_t)db_dtype_components(dt);
}

double db_decode1_f64(db_dtype dt, const uint8_t *src, bool swap)
{
	size_t cs = component_size(dt);
	if (cs == 0)
		return NAN;
	return decode_bits(dt, load_bits(src, cs, swap));
}

/* ---- contiguous little-endian loops (the hot ones) ---------------------
 * Written so gcc vectorizes them; the avx2 clone doubles the width where the
 * CPU has it, the default clone keeps the build portable. */

DB_CLONES
static void dec_bf16(const uint8_t *src, size_t n, double *dst)
{
	for (size_t i = 0; i < n; i++) {
		uint16_t h;
		memcpy(&h, src + 2 * i, 2);
		dst[i] = f32_from_bits((uint32_t)h << 16);
	}
}

DB_CLONES
static void dec_f16(const uint8_t *src, size_t n, double *dst)
{
	for (size_t i = 0; i < n; i++) {
		uint16_t h;
		memcpy(&h, src + 2 * i, 2);
		dst[i] = f16_to_f32(h);
	}
}

DB_CLONES
static void dec_f32(const uint8_t *src, size_t n, double *dst)
{
	for (size_t i = 0; i < n; i++) {
		float f;
		memcpy(&f, src + 4 * i, 4);
		dst[i] = f;
	}
}

void db_decode_f64(db_dtype dt, const uint8_t *src, ptrdiff_t step, size_t n,
                   bool swap, double *dst)
{
	size_t cs = component_size(dt);
	if (cs == 0) {
		for (size_t i = 0; i < n; i++)
			dst[i] = NAN;
		return;
	}
	bool contig = step == (ptrdiff_t)cs && (!swap || cs == 1);
	if (contig) {
		switch (dt) {
		case DB_DT_BF16: dec_bf16(src, n, dst); return;
		case DB_DT_F16: dec_f16(src, n, dst); return;
		case DB_DT_F32: case DB_DT_C64: dec_f32(src, n, dst); return;
		case DB_DT_F64: case DB_DT_C128: memcpy(dst, src, n * sizeof *dst); return;
		default: break;
		}
	}
	if (cs == 1) {
		/* fp8 and byte ints: swap is irrelevant */
		if (dt >= DB_DT_F8_E4M3FN && dt <= DB_DT_F8_E8M0FNU) {
			const double *lut = fp8_lut(dt);
			for (size_t i = 0; i < n; i++)
				dst[i] = lut[src[(ptrdiff_t)i * step]];
			return;
		}
		for (size_t i = 0; i < n; i++)
			dst[i] = decode_bits(dt, src[(ptrdiff_t)i * step]);
		return;
	}
	for (size_t i = 0; i < n; i++)
		dst[i] = decode_bits(dt, load_bits(src + (ptrdiff_t)i * step, cs, swap));
}
