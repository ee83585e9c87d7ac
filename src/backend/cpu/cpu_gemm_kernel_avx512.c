/* SPDX-License-Identifier: MIT */
/* AVX-512 GEMM micro-kernels: a 2-vector by 12 tile (32x12 floats, 16x12 doubles) held in 24
 * zmm accumulators, fed by one broadcast of B per column. The kernel body is written once in
 * cpu_gemm_kernel_simd.inc over a few vector macros and instantiated per dtype:
 * gemm_kernel_f32_avx512 and gemm_kernel_f64_avx512. */
#include "backend/cpu/cpu_gemm_kernel.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include <immintrin.h>

#define GEMM_NR 12

#define KERNEL_NAME gemm_kernel_f32_avx512
#include "backend/cpu/cpu_gemm_kernel_avx512_f32.inc"
#include "backend/cpu/cpu_gemm_kernel_simd.inc"

#define KERNEL_NAME gemm_kernel_f64_avx512
#define T double
#define VEC __m512d
#define LANES 8
#define V_ZERO() _mm512_setzero_pd()
#define V_LOAD(p) _mm512_load_pd(p)
#define V_LOADU(p) _mm512_loadu_pd(p)
#define V_STOREU(p, v) _mm512_storeu_pd((p), (v))
#define V_SET1(x) _mm512_set1_pd(x)
#define V_FMA(a, b, c) _mm512_fmadd_pd((a), (b), (c))
#define V_MUL(a, b) _mm512_mul_pd((a), (b))
#define MASK_T __mmask8
#define V_MASKZ_LOADU(k, p) _mm512_maskz_loadu_pd((k), (p))
#define V_MASK_STOREU(p, k, v) _mm512_mask_storeu_pd((p), (k), (v))
#include "backend/cpu/cpu_gemm_kernel_simd.inc"

/* kc: a B micro-panel (kc x 12) stays in L1 (48 KiB); mc: an A block (mc x kc) in L2 (2 MiB);
 * nc: a B block in the shared L3. */
static const lt__gemm_blocking blocking_f32 = {.dtype = LT_F32,
                                               .esize = sizeof(float),
                                               .mr = 32,
                                               .nr = GEMM_NR,
                                               .kc = 384,
                                               .mc = 192,
                                               .nc = 3072,
                                               .kernel = gemm_kernel_f32_avx512,
                                               .pack16 = lt__gemm_pack16_avx512};
static const lt__gemm_blocking blocking_f64 = {
    LT_F64, sizeof(double), 16, GEMM_NR, 256, 144, 3072, gemm_kernel_f64_avx512, false, NULL};

const lt__gemm_blocking *lt__gemm_blocking_avx512(lt_dtype dtype) {
  return dtype == LT_F32 ? &blocking_f32 : dtype == LT_F64 ? &blocking_f64 : NULL;
}

#else
const lt__gemm_blocking *lt__gemm_blocking_avx512(lt_dtype dtype) {
  (void)dtype;
  return NULL;
}
#endif
