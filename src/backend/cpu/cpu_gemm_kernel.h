/* SPDX-License-Identifier: MIT */
/* The packed GEMM: register-blocked micro-kernels and the block sizes that go with them. The
 * driver (cpu_gemm_packed.c) packs A into MR-row panels and B into NR-column panels, both
 * k-major and zero-padded, so a micro-kernel only ever streams two dense arrays. */
#ifndef LT_BACKEND_CPU_GEMM_KERNEL_H
#define LT_BACKEND_CPU_GEMM_KERNEL_H

#include "tensor.h"

/* C[i*rs_c + j*cs_c] = alpha * sum_p a[p*MR + i] * b[p*NR + j] + beta * C (beta == 0: C is
 * never read) for i < m, j < n (m <= MR, n <= NR); scalars are of the kernel's dtype. */
typedef void (*lt__gemm_microkernel)(int64_t kc, const void *a, const void *b, void *c,
                                     int64_t rs_c, int64_t cs_c, double alpha, double beta, int m,
                                     int n);

typedef struct lt__gemm_blocking {
  lt_dtype dtype;
  size_t esize;
  int mr, nr;         /* register tile */
  int64_t kc, mc, nc; /* cache blocks: a B micro-panel in L1, an A block in L2, B block in L3 */
  lt__gemm_microkernel kernel;
} lt__gemm_blocking;

/* The AVX-512 kernels for LT_F32 / LT_F64, NULL for other dtypes or when not built. Reached
 * only through the avx512 ISA table (cpu_isa.c), chosen where the CPU runs them. */
const lt__gemm_blocking *lt__gemm_blocking_avx512(lt_dtype dtype);

/* The AVX2+FMA kernels for LT_F32 / LT_F64, NULL otherwise or when not built; reached only
 * through the avx2 ISA table. */
const lt__gemm_blocking *lt__gemm_blocking_avx2(lt_dtype dtype);

/* Plain C kernels for LT_F32 / LT_F64 (NULL otherwise), for any CPU. */
const lt__gemm_blocking *lt__gemm_blocking_portable(lt_dtype dtype);

#endif
