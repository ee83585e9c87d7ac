/* SPDX-License-Identifier: MIT */
/* AVX2+FMA small-GEMM kernels (cpu_gemm_small.h): 6 rows x 2 vectors of C in 12 of the 16 ymm
 * registers, 2 for B's row and 1 for A's broadcast element. Instantiated from
 * cpu_gemm_small_kernel.inc: gemm_small_f32_avx2_* and gemm_small_f64_avx2_*. */
#include "backend/cpu/cpu_gemm_small.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include <immintrin.h>

#define SMALL_MR 6
#define SMALL_NV 2

#define KERNEL_NAME gemm_small_f32_avx2
#define T float
#define VEC __m256
#define MASK __m256i
#define LANES 8
#define V_ZERO() _mm256_setzero_ps()
#define V_LOADU(p) _mm256_loadu_ps(p)
#define V_LOADM(p, m) _mm256_maskload_ps((p), (m))
#define V_STOREU(p, v) _mm256_storeu_ps((p), (v))
#define V_STOREM(p, m, v) _mm256_maskstore_ps((p), (m), (v))
#define V_MASK(r)                                                                                  \
  _mm256_cmpgt_epi32(_mm256_set1_epi32(r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define V_SET1(x) _mm256_set1_ps(x)
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#include "backend/cpu/cpu_gemm_small_kernel.inc"

#define KERNEL_NAME gemm_small_f64_avx2
#define T double
#define VEC __m256d
#define MASK __m256i
#define LANES 4
#define V_ZERO() _mm256_setzero_pd()
#define V_LOADU(p) _mm256_loadu_pd(p)
#define V_LOADM(p, m) _mm256_maskload_pd((p), (m))
#define V_STOREU(p, v) _mm256_storeu_pd((p), (v))
#define V_STOREM(p, m, v) _mm256_maskstore_pd((p), (m), (v))
#define V_MASK(r) _mm256_cmpgt_epi64(_mm256_set1_epi64x(r), _mm256_setr_epi64x(0, 1, 2, 3))
#define V_SET1(x) _mm256_set1_pd(x)
#define V_FMA(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#define V_MUL(a, b) _mm256_mul_pd((a), (b))
#include "backend/cpu/cpu_gemm_small_kernel.inc"

/* No GEMMs past the size cap: on this project's machine capped to AVX2 (LT_CPU_ISA=avx2), small
 * against packed at sizes the AVX-512 table takes was mixed (128x784 @ 784x256: median 0.80x the
 * time; 512^3: 1.00x; 128x256 @ 256x512: 1.57x), and AVX2-only CPUs, with smaller L2s, were not
 * measured. */
#define SMALL_MID_B_BYTES 0

static const lt__gemm_small small_f32 = {LT_F32,
                                         sizeof(float),
                                         SMALL_MR,
                                         8,
                                         SMALL_NV,
                                         gemm_small_f32_avx2_full,
                                         {gemm_small_f32_avx2_part1, gemm_small_f32_avx2_part2},
                                         SMALL_MID_B_BYTES};
static const lt__gemm_small small_f64 = {LT_F64,
                                         sizeof(double),
                                         SMALL_MR,
                                         4,
                                         SMALL_NV,
                                         gemm_small_f64_avx2_full,
                                         {gemm_small_f64_avx2_part1, gemm_small_f64_avx2_part2},
                                         SMALL_MID_B_BYTES};

const lt__gemm_small *lt__gemm_small_avx2(lt_dtype dtype) {
  return dtype == LT_F32 ? &small_f32 : dtype == LT_F64 ? &small_f64 : NULL;
}

#else
const lt__gemm_small *lt__gemm_small_avx2(lt_dtype dtype) {
  (void)dtype;
  return NULL;
}
#endif
