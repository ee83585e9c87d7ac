/* SPDX-License-Identifier: MIT */
/* The small-GEMM engine for problems that fit in L1/L2 (cpu_gemm_small.c): no packing of A or
 * of a B whose rows are unit-stride. At m*n*k of a few hundred thousand, packing both operands
 * (the packed engine) or OpenBLAS's per-call setup costs as much as the arithmetic, so the
 * micro-kernel here reads B's rows as vectors straight from memory and broadcasts A's elements
 * through A's own strides, keeping an MR x NV-vector tile of C in registers (libxsmm's scheme). */
#ifndef LT_BACKEND_CPU_GEMM_SMALL_H
#define LT_BACKEND_CPU_GEMM_SMALL_H

#include "backend/backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* C[i*rs_c + j] = alpha * sum_p A[i*rs_a + p*cs_a] * B[p*rs_b + j] + beta * C (beta == 0: C is
 * never read) for i < m <= MR, j < n; B's rows and C's rows are unit-stride. Strides are in
 * elements and may be negative; scalars are of the kernel's dtype. */
typedef void (*lt__small_kernel)(int64_t k, const void *a, int64_t rs_a, int64_t cs_a, int m,
                                 const void *b, int64_t rs_b, void *c, int64_t rs_c, int n,
                                 double alpha, double beta);

#define LT__SMALL_MAX_NV 4

typedef struct lt__gemm_small {
  lt_dtype dtype;
  size_t esize;
  int mr, lanes, nv;     /* register tile: mr rows x nv vectors of lanes columns */
  lt__small_kernel full; /* n == nv * lanes */
  lt__small_kernel part[LT__SMALL_MAX_NV]; /* part[v]: 1 <= n <= (v + 1) * lanes, masked */
  /* One GEMM past the engine's size cap still runs here, on the context's threads, when its B
   * has unit-stride rows and at most this many bytes (0: never): B then stays in each core's L2
   * while the bands sweep it, and the kernel keeps up with the FMA units from there. */
  size_t mid_b_bytes;
} lt__gemm_small;

/* The AVX-512 and AVX2 kernels for LT_F32 / LT_F64 (NULL for other dtypes or when not built),
 * reached only through the ISA table (cpu_isa.c). Instantiated from cpu_gemm_small_kernel.inc:
 * gemm_small_f32_avx512_*, gemm_small_f64_avx512_*, gemm_small_f32_avx2_*,
 * gemm_small_f64_avx2_* (suffixes full, part1 .. part4). */
const lt__gemm_small *lt__gemm_small_avx512(lt_dtype dtype);
const lt__gemm_small *lt__gemm_small_avx2(lt_dtype dtype);

#endif
