/* Element types of the tensors dumpbisect reads, and their conversion to
 * double. Names are spelled as torch spells them without "torch.". */
#ifndef DB_DTYPE_H
#define DB_DTYPE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum db_dtype {
	DB_DT_UNKNOWN = 0,
	DB_DT_F64, DB_DT_F32, DB_DT_F16, DB_DT_BF16,
	DB_DT_F8_E4M3FN, DB_DT_F8_E5M2, DB_DT_F8_E4M3FNUZ, DB_DT_F8_E5M2FNUZ,
	DB_DT_F8_E8M0FNU,
	DB_DT_I8, DB_DT_I16, DB_DT_I32, DB_DT_I64,
	DB_DT_U8, DB_DT_U16, DB_DT_U32, DB_DT_U64,
	DB_DT_BOOL,
	DB_DT_C64, DB_DT_C128,          /* compared as interleaved (re, im) reals */
	DB_DT_QINT8, DB_DT_QUINT8, DB_DT_QINT32, DB_DT_QUINT4X2, DB_DT_QUINT2X4,
	/* torch float4_e2m1fn_x2 (safetensors F4 is read as it: the last dim
	 * halved): one byte holds two e2m1 values; which nibble comes first is
	 * the producer's (db_quant.h). Last so that cached dtype numbers keep. */
	DB_DT_F4_E2M1FN_X2,
	DB_DT__COUNT
} db_dtype;

size_t db_dtype_size(db_dtype dt);          /* bytes per element; 0 for UNKNOWN */
const char *db_dtype_name(db_dtype dt);     /* "float32", "bfloat16", ... */
db_dtype db_dtype_from_name(const char *name); /* inverse; DB_DT_UNKNOWN if none */
bool db_dtype_is_complex(db_dtype dt);
bool db_dtype_is_quantized(db_dtype dt);
/* fp8 of any flavour (e4m3fn, e5m2, their fnuz, e8m0fnu) */
bool db_dtype_is_fp8(db_dtype dt);
/* true when metrics can be computed (real, complex; not quantized/unknown).
 * Quantized tensors decode to their raw stored integers (fine for stats),
 * but comparing them would need scale/zero-point and sub-byte packing, so
 * compare reports them "not comparable". */
bool db_dtype_comparable(db_dtype dt);
/* number of real components per element: 2 for complex, else 1 */
int db_dtype_components(db_dtype dt);

/* e2m1 (FP4) code c (low 4 bits; bit 3 the sign): 0, 0.5, 1, 1.5, 2, 3,
 * 4, 6 and their negatives (formats.md §8). Exact. */
double db_e2m1_f64(unsigned c);

/* Decode n real components of dtype dt, starting at src, `step` bytes apart
 * (step = itemsize for contiguous data; complex: itemsize/2 per component
 * when contiguous), into dst. swap = data is big-endian. Exact for every
 * dtype (f16/bf16/fp8 -> double is exact) except int64/uint64 beyond 2^53,
 * which round to nearest. Unknown dtype: NaN. */
void db_decode_f64(db_dtype dt, const uint8_t *src, ptrdiff_t step, size_t n,
                   bool swap, double *dst);
double db_decode1_f64(db_dtype dt, const uint8_t *src, bool swap);

#endif
