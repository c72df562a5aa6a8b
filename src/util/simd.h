/* Function multiversioning for the hot loops of dtype.c and metrics.c:
 * gcc emits an AVX2 clone and a portable default one and picks at load
 * time (ifunc), so the default build still runs on any x86-64.
 * Define DB_NO_CLONES to get only the default (e.g. for sanitizers). */
#ifndef DB_UTIL_SIMD_H
#define DB_UTIL_SIMD_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
	defined(__linux__) && !defined(DB_NO_CLONES)
#define DB_CLONES __attribute__((target_clones("avx2", "default"), optimize("O3")))
#else
#define DB_CLONES
#endif

#endif
