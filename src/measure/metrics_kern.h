/* Private to metrics.c: the block kernels of the metrics fast path.
 * Every kernel sums element i into lane i % 8 and reduces the lanes in one
 * fixed order (db_part_from_lanes), so all kernels and ISA variants give
 * bit-identical sums for the same values. They assume finite data: a
 * non-finite element or an overflow shows up as non-finite sums, and the
 * caller then redoes the block with the careful loop. */
#ifndef DB_METRICS_KERN_H
#define DB_METRICS_KERN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "db_dtype.h"

typedef struct db_part {
	double sxy, sxx, syy, sdd, sabs, maxd, maxx;
} db_part;

/* Block sums of n decoded components. */
void db_kern_f64(const double *x, const double *y, size_t n, db_part *p);

/* Fused decode + sums straight from n contiguous little-endian elements of
 * dt on both sides (bfloat16, float16, float32, float64), adding the count
 * of bytewise-equal elements to *eq. Returns false (nothing done) when dt
 * or the CPU has no fused kernel; the caller decodes and uses db_kern_f64. */
bool db_kern_raw(db_dtype dt, const uint8_t *x, const uint8_t *y, size_t n,
                 db_part *p, uint64_t *eq);

/* Kernel level in use: 0 portable, 1 AVX2+F16C, 2 AVX-512. Chosen once
 * from the CPU; env DB_SIMD=generic|avx2 lowers it (read at first use). */
int db_kern_level(void);

#endif
