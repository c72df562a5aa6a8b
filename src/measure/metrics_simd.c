/* Block kernels of the metrics fast path (see metrics_kern.h).
 *
 * db_kern_f64 is portable C with GCC/clang vector extensions, cloned for
 * AVX2 (target_clones). db_kern_raw has AVX2+F16C and AVX-512 intrinsics
 * kernels that convert bf16/f16/f32/f64 and accumulate in one pass (no
 * intermediate buffer), chosen at run time with __builtin_cpu_supports
 * (capped by env DB_SIMD=generic|avx2); elsewhere it declines and the
 * caller takes the portable path. No FMA anywhere: a
 * fused multiply-add would round differently from the portable kernel. */
#include "metrics_kern.h"

#include "util/simd.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NL 8            /* lanes */
enum { S_XY, S_XX, S_YY, S_DD, S_AB, S_MD, S_MX, S_N };

/* Fold the tail (components past the last multiple of 8) into the lanes
 * and reduce them in the one fixed order all kernels share. */
static void finish_lanes(double l[S_N][NL], const double *x, const double *y,
                         size_t n, db_part *p)
{
	for (size_t j = 0; j < n; j++) {
		double a = x[j], b = y[j], d = b - a, ad = fabs(d), ax = fabs(a);
		l[S_XY][j] += a * b;
		l[S_XX][j] += a * a;
		l[S_YY][j] += b * b;
		l[S_DD][j] += d * d;
		l[S_AB][j] += ad;
		l[S_MD][j] = ad > l[S_MD][j] ? ad : l[S_MD][j];
		l[S_MX][j] = ax > l[S_MX][j] ? ax : l[S_MX][j];
	}
	double r[S_N];
	for (int s = 0; s < S_AB + 1; s++)
		r[s] = ((l[s][0] + l[s][1]) + (l[s][2] + l[s][3])) +
		       ((l[s][4] + l[s][5]) + (l[s][6] + l[s][7]));
	for (int s = S_MD; s <= S_MX; s++) {
		double m = l[s][0];
		for (int j = 1; j < NL; j++)
			m = l[s][j] > m ? l[s][j] : m;
		r[s] = m;
	}
	p->sxy = r[S_XY];
	p->sxx = r[S_XX];
	p->syy = r[S_YY];
	p->sdd = r[S_DD];
	p->sabs = r[S_AB];
	p->maxd = r[S_MD];
	p->maxx = r[S_MX];
}

/* ---- portable kernel ------------------------------------------------- */

typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4l __attribute__((vector_size(32)));

/* Macros, not functions: 32-byte vector arguments would change the ABI
 * of the default (SSE2) clone. */
#define V_ABSMASK ((v4l){INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX})
#define v_abs(a) ((v4d)((v4l)(a) & V_ABSMASK))
#define v_max(a, b) ((v4d)(((v4l)(a) & ((a) > (b))) | ((v4l)(b) & ~((a) > (b)))))

#define V_STEP(a, b, k)                                 \
	do {                                            \
		v4d d_ = (b) - (a), ad_ = v_abs(d_);    \
		sxy[k] += (a) * (b);                    \
		sxx[k] += (a) * (a);                    \
		syy[k] += (b) * (b);                    \
		sdd[k] += d_ * d_;                      \
		sab[k] += ad_;                          \
		md[k] = v_max(ad_, md[k]);              \
		mx[k] = v_max(v_abs(a), mx[k]);         \
	} while (0)

DB_CLONES
void db_kern_f64(const double *x, const double *y, size_t n, db_part *p)
{
	v4d sxy[2] = {{0}}, sxx[2] = {{0}}, syy[2] = {{0}}, sdd[2] = {{0}};
	v4d sab[2] = {{0}}, md[2] = {{0}}, mx[2] = {{0}};
	size_t i = 0;
	for (; i + NL <= n; i += NL) {
		v4d a0, a1, b0, b1;
		memcpy(&a0, x + i, sizeof a0);
		memcpy(&a1, x + i + 4, sizeof a1);
		memcpy(&b0, y + i, sizeof b0);
		memcpy(&b1, y + i + 4, sizeof b1);
		V_STEP(a0, b0, 0);
		V_STEP(a1, b1, 1);
	}
	double l[S_N][NL];
	for (int k = 0; k < 2; k++)
		for (int j = 0; j < 4; j++) {
			l[S_XY][4 * k + j] = sxy[k][j];
			l[S_XX][4 * k + j] = sxx[k][j];
			l[S_YY][4 * k + j] = syy[k][j];
			l[S_DD][4 * k + j] = sdd[k][j];
			l[S_AB][4 * k + j] = sab[k][j];
			l[S_MD][4 * k + j] = md[k][j];
			l[S_MX][4 * k + j] = mx[k][j];
		}
	finish_lanes(l, x + i, y + i, n - i, p);
}

/* ---- AVX2 + F16C fused kernels ------------------------------------------ */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(DB_NO_CLONES)
#include <cpuid.h>
#include <immintrin.h>

#define AVX_TARGET __attribute__((target("avx2,f16c")))

/* Decode 8 elements at p into two vectors of 4 doubles. */
AVX_TARGET static inline void ld_bf16(const uint8_t *p, __m256d *lo, __m256d *hi)
{
	__m128i v = _mm_loadu_si128((const __m128i *)p), z = _mm_setzero_si128();
	*lo = _mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpacklo_epi16(z, v)));
	*hi = _mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpackhi_epi16(z, v)));
}

AVX_TARGET static inline void ld_f16(const uint8_t *p, __m256d *lo, __m256d *hi)
{
	__m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
	*lo = _mm256_cvtps_pd(_mm256_castps256_ps128(f));
	*hi = _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1));
}

AVX_TARGET static inline void ld_f32(const uint8_t *p, __m256d *lo, __m256d *hi)
{
	__m256 f = _mm256_loadu_ps((const float *)p);
	*lo = _mm256_cvtps_pd(_mm256_castps256_ps128(f));
	*hi = _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1));
}

AVX_TARGET static inline void ld_f64(const uint8_t *p, __m256d *lo, __m256d *hi)
{
	*lo = _mm256_loadu_pd((const double *)p);
	*hi = _mm256_loadu_pd((const double *)p + 4);
}

/* Number of equal elements among 8. */
AVX_TARGET static inline unsigned eq_16(const uint8_t *p, const uint8_t *q)
{
	__m128i c = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)p),
	                            _mm_loadu_si128((const __m128i *)q));
	return (unsigned)__builtin_popcount((unsigned)_mm_movemask_epi8(c)) / 2;
}

AVX_TARGET static inline unsigned eq_32(const uint8_t *p, const uint8_t *q)
{
	__m256i c = _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)p),
	                               _mm256_loadu_si256((const __m256i *)q));
	return (unsigned)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(c)));
}

AVX_TARGET static inline unsigned eq_64(const uint8_t *p, const uint8_t *q)
{
	unsigned k = 0;
	for (int h = 0; h < 2; h++) {
		__m256i c = _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)p + h),
		                               _mm256_loadu_si256((const __m256i *)q + h));
		k += (unsigned)__builtin_popcount((unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(c)));
	}
	return k;
}

#define A_STEP(a, b, k)                                                     \
	do {                                                                \
		__m256d d_ = _mm256_sub_pd(b, a), ad_ = _mm256_and_pd(d_, absm); \
		sxy[k] = _mm256_add_pd(sxy[k], _mm256_mul_pd(a, b));        \
		sxx[k] = _mm256_add_pd(sxx[k], _mm256_mul_pd(a, a));        \
		syy[k] = _mm256_add_pd(syy[k], _mm256_mul_pd(b, b));        \
		sdd[k] = _mm256_add_pd(sdd[k], _mm256_mul_pd(d_, d_));      \
		sab[k] = _mm256_add_pd(sab[k], ad_);                        \
		md[k] = _mm256_max_pd(md[k], ad_);                          \
		mx[k] = _mm256_max_pd(mx[k], _mm256_and_pd(a, absm));       \
	} while (0)

#define DEF_RAW(NAME, ESIZE, LOAD, EQ)                                              \
	AVX_TARGET static void NAME(const uint8_t *x, const uint8_t *y, size_t n,   \
	                            double l[S_N][NL], size_t *done, uint64_t *eq)  \
	{                                                                           \
		const __m256d absm = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX)); \
		__m256d sxy[2], sxx[2], syy[2], sdd[2], sab[2], md[2], mx[2];       \
		for (int k = 0; k < 2; k++)                                         \
			sxy[k] = sxx[k] = syy[k] = sdd[k] = sab[k] = md[k] = mx[k] = \
				_mm256_setzero_pd();                                \
		size_t i = 0;                                                       \
		uint64_t e = 0;                                                     \
		for (; i + NL <= n; i += NL) {                                      \
			__m256d a0, a1, b0, b1;                                     \
			LOAD(x + i * ESIZE, &a0, &a1);                              \
			LOAD(y + i * ESIZE, &b0, &b1);                              \
			e += EQ(x + i * ESIZE, y + i * ESIZE);                      \
			A_STEP(a0, b0, 0);                                          \
			A_STEP(a1, b1, 1);                                          \
		}                                                                   \
		for (int k = 0; k < 2; k++) {                                       \
			_mm256_storeu_pd(&l[S_XY][4 * k], sxy[k]);                  \
			_mm256_storeu_pd(&l[S_XX][4 * k], sxx[k]);                  \
			_mm256_storeu_pd(&l[S_YY][4 * k], syy[k]);                  \
			_mm256_storeu_pd(&l[S_DD][4 * k], sdd[k]);                  \
			_mm256_storeu_pd(&l[S_AB][4 * k], sab[k]);                  \
			_mm256_storeu_pd(&l[S_MD][4 * k], md[k]);                   \
			_mm256_storeu_pd(&l[S_MX][4 * k], mx[k]);                   \
		}                                                                   \
		*done = i;                                                          \
		*eq += e;                                                           \
	}

DEF_RAW(raw_bf16, 2, ld_bf16, eq_16)
DEF_RAW(raw_f16, 2, ld_f16, eq_16)
DEF_RAW(raw_f32, 4, ld_f32, eq_32)
DEF_RAW(raw_f64, 8, ld_f64, eq_64)

/* ---- AVX-512: one 8-lane register per sum, the same lane layout ---- */

#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx2,f16c")))

AVX512_TARGET static inline __m512d ld8_bf16(const uint8_t *p)
{
	__m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
	return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
}

AVX512_TARGET static inline __m512d ld8_f16(const uint8_t *p)
{
	return _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)));
}

AVX512_TARGET static inline __m512d ld8_f32(const uint8_t *p)
{
	return _mm512_cvtps_pd(_mm256_loadu_ps((const float *)p));
}

AVX512_TARGET static inline __m512d ld8_f64(const uint8_t *p)
{
	return _mm512_loadu_pd((const double *)p);
}

AVX512_TARGET static inline unsigned eq8_16(const uint8_t *p, const uint8_t *q)
{
	return (unsigned)__builtin_popcount(_mm_cmpeq_epi16_mask(
		_mm_loadu_si128((const __m128i *)p), _mm_loadu_si128((const __m128i *)q)));
}

AVX512_TARGET static inline unsigned eq8_32(const uint8_t *p, const uint8_t *q)
{
	return (unsigned)__builtin_popcount(_mm256_cmpeq_epi32_mask(
		_mm256_loadu_si256((const __m256i *)p), _mm256_loadu_si256((const __m256i *)q)));
}

AVX512_TARGET static inline unsigned eq8_64(const uint8_t *p, const uint8_t *q)
{
	return (unsigned)__builtin_popcount(_mm512_cmpeq_epi64_mask(
		_mm512_loadu_si512((const void *)p), _mm512_loadu_si512((const void *)q)));
}

#define DEF_RAW512(NAME, ESIZE, LOAD, EQ)                                           \
	AVX512_TARGET static void NAME(const uint8_t *x, const uint8_t *y, size_t n, \
	                               double l[S_N][NL], size_t *done, uint64_t *eq) \
	{                                                                           \
		__m512d sxy = _mm512_setzero_pd(), sxx = sxy, syy = sxy, sdd = sxy; \
		__m512d sab = sxy, md = sxy, mx = sxy;                              \
		size_t i = 0;                                                       \
		uint64_t e = 0;                                                     \
		for (; i + NL <= n; i += NL) {                                      \
			__m512d a = LOAD(x + i * ESIZE), b = LOAD(y + i * ESIZE);   \
			e += EQ(x + i * ESIZE, y + i * ESIZE);                      \
			__m512d d = _mm512_sub_pd(b, a), ad = _mm512_abs_pd(d);     \
			sxy = _mm512_add_pd(sxy, _mm512_mul_pd(a, b));              \
			sxx = _mm512_add_pd(sxx, _mm512_mul_pd(a, a));              \
			syy = _mm512_add_pd(syy, _mm512_mul_pd(b, b));              \
			sdd = _mm512_add_pd(sdd, _mm512_mul_pd(d, d));              \
			sab = _mm512_add_pd(sab, ad);                               \
			md = _mm512_max_pd(md, ad);                                 \
			mx = _mm512_max_pd(mx, _mm512_abs_pd(a));                   \
		}                                                                   \
		_mm512_storeu_pd(l[S_XY], sxy);                                     \
		_mm512_storeu_pd(l[S_XX], sxx);                                     \
		_mm512_storeu_pd(l[S_YY], syy);                                     \
		_mm512_storeu_pd(l[S_DD], sdd);                                     \
		_mm512_storeu_pd(l[S_AB], sab);                                     \
		_mm512_storeu_pd(l[S_MD], md);                                      \
		_mm512_storeu_pd(l[S_MX], mx);                                      \
		*done = i;                                                          \
		*eq += e;                                                           \
	}

DEF_RAW512(raw512_bf16, 2, ld8_bf16, eq8_16)
DEF_RAW512(raw512_f16, 2, ld8_f16, eq8_16)
DEF_RAW512(raw512_f32, 4, ld8_f32, eq8_32)
DEF_RAW512(raw512_f64, 8, ld8_f64, eq8_64)

/* 0 = portable only, 1 = AVX2+F16C, 2 = AVX-512 (F, BW, VL). */
static int simd_level;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static void cpu_init(void)
{
	__builtin_cpu_init();
	unsigned a, b, c, d;
	bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
	if (__builtin_cpu_supports("avx2") && f16c)
		simd_level = 1;
	if (simd_level && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
		simd_level = 2;
	/* DB_SIMD=generic|avx2 caps the level (benchmarks, tests) */
	const char *cap = getenv("DB_SIMD");
	if (cap && strcmp(cap, "generic") == 0)
		simd_level = 0;
	else if (cap && strcmp(cap, "avx2") == 0 && simd_level > 1)
		simd_level = 1;
}

int db_kern_level(void)
{
	pthread_once(&cpu_once, cpu_init);
	return simd_level;
}

bool db_kern_raw(db_dtype dt, const uint8_t *x, const uint8_t *y, size_t n,
                 db_part *p, uint64_t *eq)
{
	int level = db_kern_level();
	if (level == 0)
		return false;
	double l[S_N][NL];
	size_t done, size;
	switch (dt) {
	case DB_DT_BF16:
		(level == 2 ? raw512_bf16 : raw_bf16)(x, y, n, l, &done, eq);
		size = 2;
		break;
	case DB_DT_F16:
		(level == 2 ? raw512_f16 : raw_f16)(x, y, n, l, &done, eq);
		size = 2;
		break;
	case DB_DT_F32:
		(level == 2 ? raw512_f32 : raw_f32)(x, y, n, l, &done, eq);
		size = 4;
		break;
	case DB_DT_F64:
		(level == 2 ? raw512_f64 : raw_f64)(x, y, n, l, &done, eq);
		size = 8;
		break;
	default:
		return false;
	}
	/* the < 8 tail: decode and fold in, counting its equal elements */
	double tx[NL], ty[NL];
	size_t rest = n - done;
	db_decode_f64(dt, x + done * size, (ptrdiff_t)size, rest, false, tx);
	db_decode_f64(dt, y + done * size, (ptrdiff_t)size, rest, false, ty);
	for (size_t j = 0; j < rest; j++)
		*eq += memcmp(x + (done + j) * size, y + (done + j) * size, size) == 0;
	finish_lanes(l, tx, ty, rest, p);
	return true;
}

#else

bool db_kern_raw(db_dtype dt, const uint8_t *x, const uint8_t *y, size_t n,
                 db_part *p, uint64_t *eq)
{
	(void)dt, (void)x, (void)y, (void)n, (void)p, (void)eq;
	return false;
}

int db_kern_level(void)
{
	return 0;
}

#endif
