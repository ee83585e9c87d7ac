/* SPDX-License-Identifier: MIT */
/* AVX-512 k-dot kernels (cpu_gemm_kdot.h): a 3 x 8 tile of vector dot products (24 of the 32
 * zmm registers accumulate, 3 hold X's vectors, 1 the current Y vector: 11 loads per 24 FMAs).
 * Instantiated from cpu_gemm_kdot_kernel.inc: gemm_kdot_f32_avx512 and gemm_kdot_f64_avx512. */
#include "backend/cpu/cpu_gemm_kdot.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include <immintrin.h>

#define KD_MR 3
#define KD_NR 8

#define KERNEL_NAME gemm_kdot_f32_avx512
#define T float
#define VEC __m512
#define LANES 16
#define V_ZERO() _mm512_setzero_ps()
#define V_LOAD(p) _mm512_load_ps(p)
#define V_LOADU(p) _mm512_loadu_ps(p)
#define V_STORE(p, v) _mm512_store_ps((p), (v))
#define V_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define V_HSUM(v) _mm512_reduce_add_ps(v)
#define V_PIN(v) __asm__("" : "+v"(v))
#include "backend/cpu/cpu_gemm_kdot_kernel.inc"

#define KERNEL_NAME gemm_kdot_f64_avx512
#define T double
#define VEC __m512d
#define LANES 8
#define V_ZERO() _mm512_setzero_pd()
#define V_LOAD(p) _mm512_load_pd(p)
#define V_LOADU(p) _mm512_loadu_pd(p)
#define V_STORE(p, v) _mm512_store_pd((p), (v))
#define V_FMA(a, b, c) _mm512_fmadd_pd((a), (b), (c))
#define V_HSUM(v) _mm512_reduce_add_pd(v)
#define V_PIN(v) __asm__("" : "+v"(v))
#include "backend/cpu/cpu_gemm_kdot_kernel.inc"

/* k blocks of 2 KiB per row: the Y tile (8 rows, 16 KiB) and an X tile stay in L1. */
static const lt__gemm_kdot kdot_f32 = {LT_F32,
                                       sizeof(float),
                                       16,
                                       KD_MR,
                                       KD_NR,
                                       512,
                                       gemm_kdot_f32_avx512,
                                       gemm_kdot_f32_avx512_pack,
                                       gemm_kdot_f32_avx512_reduce};
static const lt__gemm_kdot kdot_f64 = {LT_F64,
                                       sizeof(double),
                                       8,
                                       KD_MR,
                                       KD_NR,
                                       256,
                                       gemm_kdot_f64_avx512,
                                       gemm_kdot_f64_avx512_pack,
                                       gemm_kdot_f64_avx512_reduce};

const lt__gemm_kdot *lt__gemm_kdot_avx512(lt_dtype dtype) {
  return dtype == LT_F32 ? &kdot_f32 : dtype == LT_F64 ? &kdot_f64 : NULL;
}

#else
const lt__gemm_kdot *lt__gemm_kdot_avx512(lt_dtype dtype) {
  (void)dtype;
  return NULL;
}
#endif
