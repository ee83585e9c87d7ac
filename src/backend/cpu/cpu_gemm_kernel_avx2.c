/* SPDX-License-Identifier: MIT */
/* AVX2+FMA GEMM micro-kernels: a 2-vector by 6 tile (16x6 floats, 8x6 doubles) held in 12 ymm
 * accumulators, which with the two A vectors and one broadcast of B fills the 16 registers.
 * The body is the shared one in cpu_gemm_kernel_simd.inc, instantiated per dtype:
 * gemm_kernel_f32_avx2 and gemm_kernel_f64_avx2. Without them, a CPU with AVX2 but not
 * AVX-512 ran every strided GEMM through an explicit permutation into BLAS layout. */
#include "backend/cpu/cpu_gemm_kernel.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include <immintrin.h>

#define GEMM_NR 6

#define KERNEL_NAME gemm_kernel_f32_avx2
#define T float
#define VEC __m256
#define LANES 8
#define V_ZERO() _mm256_setzero_ps()
#define V_LOAD(p) _mm256_load_ps(p)
#define V_LOADU(p) _mm256_loadu_ps(p)
#define V_STOREU(p, v) _mm256_storeu_ps((p), (v))
#define V_SET1(x) _mm256_set1_ps(x)
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#include "backend/cpu/cpu_gemm_kernel_simd.inc"

#define KERNEL_NAME gemm_kernel_f64_avx2
#define T double
#define VEC __m256d
#define LANES 4
#define V_ZERO() _mm256_setzero_pd()
#define V_LOAD(p) _mm256_load_pd(p)
#define V_LOADU(p) _mm256_loadu_pd(p)
#define V_STOREU(p, v) _mm256_storeu_pd((p), (v))
#define V_SET1(x) _mm256_set1_pd(x)
#define V_FMA(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#define V_MUL(a, b) _mm256_mul_pd((a), (b))
#include "backend/cpu/cpu_gemm_kernel_simd.inc"

/* kc x 6 of B (12 KiB f32, 12 KiB f64) stays in L1 beside the A micro-panel; an A block (mc x
 * kc: 128 KiB f32, 192 KiB f64) in a 512 KiB L2; B's block in L3. f32 was measured on Zen 3
 * against BLIS's Haswell sizes (kc 256, mc 192), alternated in one process: 2048^3 1.07-1.19x,
 * 1024^3 1.03-1.11x, on one thread 1.10-1.14x (the C update and the kernel's set-up spread
 * over twice the depth); f64 read the same at kc 256-512, mc 32-96, and keeps BLIS's. */
static const lt__gemm_blocking blocking_f32 = {
    LT_F32, sizeof(float),       16, GEMM_NR, 512, 64, 3072, gemm_kernel_f32_avx2,
    false,  lt__gemm_pack16_avx2};
static const lt__gemm_blocking blocking_f64 = {
    LT_F64, sizeof(double), 8, GEMM_NR, 256, 96, 3072, gemm_kernel_f64_avx2, false, NULL};

const lt__gemm_blocking *lt__gemm_blocking_avx2(lt_dtype dtype) {
  return dtype == LT_F32 ? &blocking_f32 : dtype == LT_F64 ? &blocking_f64 : NULL;
}

#else
const lt__gemm_blocking *lt__gemm_blocking_avx2(lt_dtype dtype) {
  (void)dtype;
  return NULL;
}
#endif
