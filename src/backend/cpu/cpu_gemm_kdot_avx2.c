/* SPDX-License-Identifier: MIT */
/* AVX2+FMA k-dot kernels (cpu_gemm_kdot.h): a 3 x 4 tile of vector dot products (12 of the 16
 * ymm registers accumulate, 3 hold X's vectors, 1 the current Y vector). Instantiated from
 * cpu_gemm_kdot_kernel.inc: gemm_kdot_f32_avx2 and gemm_kdot_f64_avx2. */
#include "backend/cpu/cpu_gemm_kdot.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include <immintrin.h>

static inline float hsum_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

static inline double hsum_pd(__m256d v) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

#define KD_MR 3
#define KD_NR 4

#define KERNEL_NAME gemm_kdot_f32_avx2
#define T float
#define VEC __m256
#define LANES 8
#define V_ZERO() _mm256_setzero_ps()
#define V_LOAD(p) _mm256_load_ps(p)
#define V_LOADU(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_store_ps((p), (v))
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define V_HSUM(v) hsum_ps(v)
#define V_PIN(v) __asm__("" : "+x"(v))
#include "backend/cpu/cpu_gemm_kdot_kernel.inc"

#define KERNEL_NAME gemm_kdot_f64_avx2
#define T double
#define VEC __m256d
#define LANES 4
#define V_ZERO() _mm256_setzero_pd()
#define V_LOAD(p) _mm256_load_pd(p)
#define V_LOADU(p) _mm256_loadu_pd(p)
#define V_STORE(p, v) _mm256_store_pd((p), (v))
#define V_FMA(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#define V_HSUM(v) hsum_pd(v)
#define V_PIN(v) __asm__("" : "+x"(v))
#include "backend/cpu/cpu_gemm_kdot_kernel.inc"

/* k blocks of 2 KiB per row, as on AVX-512: the Y tile (4 rows) and an X tile stay in L1. */
static const lt__gemm_kdot kdot_f32 = {LT_F32,
                                       sizeof(float),
                                       8,
                                       KD_MR,
                                       KD_NR,
                                       512,
                                       gemm_kdot_f32_avx2,
                                       gemm_kdot_f32_avx2_pack,
                                       gemm_kdot_f32_avx2_reduce};
static const lt__gemm_kdot kdot_f64 = {LT_F64,
                                       sizeof(double),
                                       4,
                                       KD_MR,
                                       KD_NR,
                                       256,
                                       gemm_kdot_f64_avx2,
                                       gemm_kdot_f64_avx2_pack,
                                       gemm_kdot_f64_avx2_reduce};

const lt__gemm_kdot *lt__gemm_kdot_avx2(lt_dtype dtype) {
  return dtype == LT_F32 ? &kdot_f32 : dtype == LT_F64 ? &kdot_f64 : NULL;
}

#else
const lt__gemm_kdot *lt__gemm_kdot_avx2(lt_dtype dtype) {
  (void)dtype;
  return NULL;
}
#endif
