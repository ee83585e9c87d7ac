/* SPDX-License-Identifier: MIT */
/* The AVX512-BF16 GEMM micro-kernel gemm_kernel_bf16_avx512bf16: the AVX-512 f32 kernel's
 * 32x12 register tile (cpu_gemm_kernel_simd.inc), with panels of bf16 k pairs and one
 * vdpbf16ps per vector and column: acc += a[2p] * b[2p] + a[2p+1] * b[2p+1], products exact in
 * f32 and summed in f32 (the instruction flushes subnormal inputs and results to zero, which is
 * why plans may ask for LT_LOWP_F32 instead). Compiled with -mavx512bf16. */
#include "backend/cpu/cpu_gemm_kernel.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include <immintrin.h>

#define GEMM_NR 12
#define KERNEL_NAME gemm_kernel_bf16_avx512bf16
#include "backend/cpu/cpu_gemm_kernel_avx512_f32.inc"
#define TA uint32_t
#define VA __m512bh
#define V_LOAD_A(p) ((__m512bh)_mm512_load_si512(p))
#define V_BCAST_B(p) ((__m512bh)_mm512_set1_epi32((int)*(p)))
#define V_FMA_AB(a, b, c) _mm512_dpbf16_ps((c), (a), (b))
#include "backend/cpu/cpu_gemm_kernel_simd.inc"

/* kc counts k: 384 pairs keep a B micro-panel (384 x 12 x 4 bytes) in L1 as the f32 kernel's
 * does; an A block (192 x 384 pairs) stays in L2. */
static const lt__gemm_blocking blocking_bf16 = {.dtype = LT_F32,
                                                .esize = sizeof(uint32_t),
                                                .mr = 32,
                                                .nr = GEMM_NR,
                                                .kc = 768,
                                                .mc = 192,
                                                .nc = 3072,
                                                .kernel = gemm_kernel_bf16_avx512bf16,
                                                .k_pairs = true,
                                                .pack16 = lt__gemm_pack16_avx512};

const lt__gemm_blocking *lt__gemm_blocking_avx512bf16(lt_dtype dtype) {
  return dtype == LT_BF16 ? &blocking_bf16 : lt__gemm_blocking_avx512(dtype);
}

#else
const lt__gemm_blocking *lt__gemm_blocking_avx512bf16(lt_dtype dtype) {
  (void)dtype;
  return NULL;
}
#endif
