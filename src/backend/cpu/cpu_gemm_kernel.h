/* SPDX-License-Identifier: MIT */
/* The packed GEMM: register-blocked micro-kernels and the block sizes that go with them. The
 * driver (cpu_gemm_packed.c) packs A into MR-row panels and B into NR-column panels, both
 * k-major and zero-padded, so a micro-kernel only ever streams two dense arrays. */
#ifndef LT_BACKEND_CPU_GEMM_KERNEL_H
#define LT_BACKEND_CPU_GEMM_KERNEL_H

#include "tensor.h"

#include <stdbool.h>

/* C[i*rs_c + j*cs_c] = alpha * sum_p a[p*MR + i] * b[p*NR + j] + beta * C (beta == 0: C is
 * never read) for i < m, j < n (m <= MR, n <= NR); scalars are of the kernel's dtype. */
typedef void (*lt__gemm_microkernel)(int64_t kc, const void *a, const void *b, void *c,
                                     int64_t rs_c, int64_t cs_c, double alpha, double beta, int m,
                                     int n);

/* Packs rows [0, rows) x k [0, kc) of a 16-bit matrix (element (r, p) at src[roff[r] +
 * koff[p]], f16 or, when `bf16`, bfloat16) into ceil(rows/R) zero-padded panels for a float
 * kernel: panel q holds (q*R + i, p) as f32 at dst[q*R*kc + p*R + i], or, when `pairs` (bf16
 * only), as the bf16 pair (p, p + 1) in the 32-bit element dst[q*R*ceil(kc/2) + (p/2)*R + i]
 * (low half p), an odd kc's last pair padded with zero. Conversions are exact. */
typedef void (*lt__gemm_pack16_fn)(void *dst, const uint16_t *src, bool bf16, const int64_t *roff,
                                   int64_t rows, const int64_t *koff, int64_t kc, int r,
                                   bool pairs);

typedef struct lt__gemm_blocking {
  lt_dtype dtype; /* of the kernel's accumulators and C: F32 or F64 */
  size_t esize;   /* of a panel element (a k pair of bf16 when k_pairs) */
  int mr, nr;     /* register tile */
  /* cache blocks: a B micro-panel in L1, an A block in L2, B block in L3; kc counts k */
  int64_t kc, mc, nc;
  lt__gemm_microkernel kernel; /* its kc argument counts panel elements (k pairs if k_pairs) */
  /* Panels of bf16 k pairs (dot-product kernels: F32 C from bf16 A and B only). */
  bool k_pairs;
  /* Packing of f16/bf16 sources (f32 panels, or pairs when k_pairs); NULL: the portable one,
   * lt__gemm_pack16_portable. */
  lt__gemm_pack16_fn pack16;
} lt__gemm_blocking;

/* The plain C lt__gemm_pack16_fn, for any CPU. */
void lt__gemm_pack16_portable(void *dst, const uint16_t *src, bool bf16, const int64_t *roff,
                              int64_t rows, const int64_t *koff, int64_t kc, int r, bool pairs);

/* The AVX2 lt__gemm_pack16_fn (F16C's vcvtph2ps, widening shifts; the portable one without
 * F16C); reached only through the avx2 tables' blockings. */
void lt__gemm_pack16_avx2(void *dst, const uint16_t *src, bool bf16, const int64_t *roff,
                          int64_t rows, const int64_t *koff, int64_t kc, int r, bool pairs);

/* The AVX-512 lt__gemm_pack16_fn (vcvtph2ps, widening shifts, pair interleaves, 16x16
 * transposes); reached only through the avx512 tables' blockings. */
void lt__gemm_pack16_avx512(void *dst, const uint16_t *src, bool bf16, const int64_t *roff,
                            int64_t rows, const int64_t *koff, int64_t kc, int r, bool pairs);

/* The AVX512-BF16 (vdpbf16ps) kernel's blocking for dtype LT_BF16 (A and B bf16, f32
 * accumulation and C), NULL for other dtypes or when not built; reached only through the
 * avx512bf16 ISA table, chosen where the CPU has the instructions. */
const lt__gemm_blocking *lt__gemm_blocking_avx512bf16(lt_dtype dtype);

/* The AVX-512 kernels for LT_F32 / LT_F64, NULL for other dtypes or when not built. Reached
 * only through the avx512 ISA table (cpu_isa.c), chosen where the CPU runs them. */
const lt__gemm_blocking *lt__gemm_blocking_avx512(lt_dtype dtype);

/* The AVX2+FMA kernels for LT_F32 / LT_F64, NULL otherwise or when not built; reached only
 * through the avx2 ISA table. */
const lt__gemm_blocking *lt__gemm_blocking_avx2(lt_dtype dtype);

/* Plain C kernels for LT_F32 / LT_F64 (NULL otherwise), for any CPU. */
const lt__gemm_blocking *lt__gemm_blocking_portable(lt_dtype dtype);

#endif
