/* SPDX-License-Identifier: MIT */
/* AVX-512 streaming tile kernels (cpu_gemm_stream.h): the GEMM micro-kernel's 2-vector by 12
 * tile, written per half-tile column into C's own layout. Instantiated from
 * cpu_gemm_stream_kernel.inc: gemm_stream_f32_avx512 and gemm_stream_f64_avx512. */
#include "backend/cpu/cpu_gemm_stream.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include <immintrin.h>

#define STREAM_NR 12

#define KERNEL_NAME gemm_stream_f32_avx512
#define T float
#define VEC __m512
#define LANES 16
#define V_ZERO() _mm512_setzero_ps()
#define V_LOAD(p) _mm512_load_ps(p)
#define V_LOADU(p) _mm512_loadu_ps(p)
#define V_STOREU(p, v) _mm512_storeu_ps((p), (v))
#define V_STREAM(p, v) _mm512_stream_ps((p), (v))
#define V_SET1(x) _mm512_set1_ps(x)
#define V_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define V_MUL(a, b) _mm512_mul_ps((a), (b))
#include "backend/cpu/cpu_gemm_stream_kernel.inc"

#define KERNEL_NAME gemm_stream_f64_avx512
#define T double
#define VEC __m512d
#define LANES 8
#define V_ZERO() _mm512_setzero_pd()
#define V_LOAD(p) _mm512_load_pd(p)
#define V_LOADU(p) _mm512_loadu_pd(p)
#define V_STOREU(p, v) _mm512_storeu_pd((p), (v))
#define V_STREAM(p, v) _mm512_stream_pd((p), (v))
#define V_SET1(x) _mm512_set1_pd(x)
#define V_FMA(a, b, c) _mm512_fmadd_pd((a), (b), (c))
#define V_MUL(a, b) _mm512_mul_pd((a), (b))
#include "backend/cpu/cpu_gemm_stream_kernel.inc"

static void fence(void) { _mm_sfence(); }

static const lt__gemm_stream stream_f32 = {LT_F32, sizeof(float),          32,   STREAM_NR,
                                           16,     gemm_stream_f32_avx512, fence};
static const lt__gemm_stream stream_f64 = {LT_F64, sizeof(double),         16,   STREAM_NR,
                                           8,      gemm_stream_f64_avx512, fence};

const lt__gemm_stream *lt__gemm_stream_avx512(lt_dtype dtype) {
  return dtype == LT_F32 ? &stream_f32 : dtype == LT_F64 ? &stream_f64 : NULL;
}

#else
const lt__gemm_stream *lt__gemm_stream_avx512(lt_dtype dtype) {
  (void)dtype;
  return NULL;
}
#endif
