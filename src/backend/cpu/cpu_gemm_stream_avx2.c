/* SPDX-License-Identifier: MIT */
/* AVX2+FMA streaming tile kernels (cpu_gemm_stream.h): the GEMM micro-kernel's 2-vector by 6
 * tile (all 16 ymm registers), written per half-tile column into C's own layout. Instantiated from
 * cpu_gemm_stream_kernel.inc: gemm_stream_f32_avx2 and gemm_stream_f64_avx2. */
#include "backend/cpu/cpu_gemm_stream.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include <immintrin.h>

#define STREAM_NR 6

#define KERNEL_NAME gemm_stream_f32_avx2
#define T float
#define VEC __m256
#define LANES 8
#define V_ZERO() _mm256_setzero_ps()
#define V_LOAD(p) _mm256_load_ps(p)
#define V_LOADU(p) _mm256_loadu_ps(p)
#define V_STOREU(p, v) _mm256_storeu_ps((p), (v))
#define V_STREAM(p, v) _mm256_stream_ps((p), (v))
#define V_SET1(x) _mm256_set1_ps(x)
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#define V_JOIN(a, b) _mm256_permute2f128_ps((a), (b), 0x21)
#define V_STORE_LO(p, v) _mm_storeu_ps((p), _mm256_castps256_ps128(v))
#define V_STORE_HI(p, v) _mm_storeu_ps((p), _mm256_extractf128_ps((v), 1))
#include "backend/cpu/cpu_gemm_stream_kernel.inc"

#define KERNEL_NAME gemm_stream_f64_avx2
#define T double
#define VEC __m256d
#define LANES 4
#define V_ZERO() _mm256_setzero_pd()
#define V_LOAD(p) _mm256_load_pd(p)
#define V_LOADU(p) _mm256_loadu_pd(p)
#define V_STOREU(p, v) _mm256_storeu_pd((p), (v))
#define V_STREAM(p, v) _mm256_stream_pd((p), (v))
#define V_SET1(x) _mm256_set1_pd(x)
#define V_FMA(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#define V_MUL(a, b) _mm256_mul_pd((a), (b))
#define V_JOIN(a, b) _mm256_permute2f128_pd((a), (b), 0x21)
#define V_STORE_LO(p, v) _mm_storeu_pd((p), _mm256_castpd256_pd128(v))
#define V_STORE_HI(p, v) _mm_storeu_pd((p), _mm256_extractf128_pd((v), 1))
#include "backend/cpu/cpu_gemm_stream_kernel.inc"

static void fence(void) { _mm_sfence(); }

static const lt__gemm_stream stream_f32 = {LT_F32, sizeof(float),        16,   STREAM_NR,
                                           8,      gemm_stream_f32_avx2, fence};
static const lt__gemm_stream stream_f64 = {LT_F64, sizeof(double),       8,    STREAM_NR,
                                           4,      gemm_stream_f64_avx2, fence};

const lt__gemm_stream *lt__gemm_stream_avx2(lt_dtype dtype) {
  return dtype == LT_F32 ? &stream_f32 : dtype == LT_F64 ? &stream_f64 : NULL;
}

#else
const lt__gemm_stream *lt__gemm_stream_avx2(lt_dtype dtype) {
  (void)dtype;
  return NULL;
}
#endif
