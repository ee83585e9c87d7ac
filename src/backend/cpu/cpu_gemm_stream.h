/* SPDX-License-Identifier: MIT */
/* The streaming GEMM engine for small k (k <= LT__CAPS_SMALL_K, up to 128 where A is read by
 * lines, cpu_gemm_stream.c): C is written once, tile by tile, straight into its final layout,
 * with no k blocking. At small k a GEMM is bound by
 * writing C, not by arithmetic, so what matters is that every C vector goes out as one store:
 * the tile kernel takes each column's own offset and each half-tile's own row offset, so a
 * C whose modes interleave (abcdef from A's and B's modes in turn) is still written with
 * whole-vector stores, non-temporal ones when C is far larger than the caches. */
#ifndef LT_BACKEND_CPU_GEMM_STREAM_H
#define LT_BACKEND_CPU_GEMM_STREAM_H

#include "backend/backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tile flags: rows [0, LANES) of the tile are all present and consecutive in C (one vector
 * store), rows [LANES, 2*LANES) likewise, stores may bypass the cache, and the tile's NR
 * columns lie end to end in C (each right after the previous one's MR rows). */
enum { LT__STREAM_HALF0 = 1, LT__STREAM_HALF1 = 2, LT__STREAM_NT = 4, LT__STREAM_JOINED = 8 };

/* C[roff[i] + coff[j]] = alpha * sum_p a[p*MR + i] * b[p*NR + j] + beta * C (beta == 0: C is
 * never read) for i < m <= MR, j < n <= NR, with a and b packed as for the GEMM micro-kernels
 * (k-major panels); scalars are of the kernel's dtype. */
typedef void (*lt__stream_kernel)(int64_t k, const void *a, const void *b, void *c,
                                  const int64_t *roff, const int64_t *coff, int m, int n,
                                  double alpha, double beta, unsigned flags);

typedef struct lt__gemm_stream {
  lt_dtype dtype;
  size_t esize;
  int mr, nr, lanes; /* register tile (mr = 2 * lanes rows) */
  lt__stream_kernel kernel;
  void (*fence)(void); /* orders non-temporal stores before the step returns */
} lt__gemm_stream;

/* The AVX-512 and AVX2 tile kernels for LT_F32 / LT_F64 (NULL for other dtypes or when not
 * built), reached only through the ISA table (cpu_isa.c): gemm_stream_f32_avx512,
 * gemm_stream_f64_avx512, gemm_stream_f32_avx2, gemm_stream_f64_avx2. */
const lt__gemm_stream *lt__gemm_stream_avx512(lt_dtype dtype);
const lt__gemm_stream *lt__gemm_stream_avx2(lt_dtype dtype);

#endif
