/* SPDX-License-Identifier: MIT */
/* AVX-512 small-GEMM kernels (cpu_gemm_small.h): 6 rows x 4 vectors of C in 24 of the 32 zmm
 * registers, 4 for B's row and 1 for A's broadcast element. Instantiated from
 * cpu_gemm_small_kernel.inc: gemm_small_f32_avx512_* and gemm_small_f64_avx512_*. */
#include "backend/cpu/cpu_gemm_small.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include <immintrin.h>

#define SMALL_MR 6
#define SMALL_NV 4
/* Past the size cap, B of up to 1 MiB (half of Sapphire Rapids' 2 MiB L2). Measured on this
 * project's 2-core machine (plan execute, f32, 2 threads, loaded: min / median us, packed vs
 * small): 128x784 @ 784x256 (the MLP's layer) 298/516 vs 183/437; 256^3 224/369 vs 146/281;
 * 2048x512 @ 512x128 1424/2480 vs 1016/2290; 512^3 (B 1 MiB) 1334/2509 vs 1063/2367. With B of
 * 2 MiB (128x1024 @ 1024x512) small lost, 821/2213 vs 644/1257, and so did every B needing a
 * copy (A B^T at the MLP's size: 919/1091 vs 261/342). f64 alike: 128x784 @ 784x128 (B 784 KiB)
 * 408/599 vs 302/436, 1024x256 @ 256x128 828/1717 vs 531/1231. */
#define SMALL_MID_B_BYTES ((size_t)1 << 20)

#define KERNEL_NAME gemm_small_f32_avx512
#define T float
#define VEC __m512
#define MASK __mmask16
#define LANES 16
#define V_ZERO() _mm512_setzero_ps()
#define V_LOADU(p) _mm512_loadu_ps(p)
#define V_LOADM(p, m) _mm512_maskz_loadu_ps((m), (p))
#define V_STOREU(p, v) _mm512_storeu_ps((p), (v))
#define V_STOREM(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define V_MASK(r) ((__mmask16)((1u << (r)) - 1u))
#define V_SET1(x) _mm512_set1_ps(x)
#define V_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define V_MUL(a, b) _mm512_mul_ps((a), (b))
#include "backend/cpu/cpu_gemm_small_kernel.inc"

#define KERNEL_NAME gemm_small_f64_avx512
#define T double
#define VEC __m512d
#define MASK __mmask8
#define LANES 8
#define V_ZERO() _mm512_setzero_pd()
#define V_LOADU(p) _mm512_loadu_pd(p)
#define V_LOADM(p, m) _mm512_maskz_loadu_pd((m), (p))
#define V_STOREU(p, v) _mm512_storeu_pd((p), (v))
#define V_STOREM(p, m, v) _mm512_mask_storeu_pd((p), (m), (v))
#define V_MASK(r) ((__mmask8)((1u << (r)) - 1u))
#define V_SET1(x) _mm512_set1_pd(x)
#define V_FMA(a, b, c) _mm512_fmadd_pd((a), (b), (c))
#define V_MUL(a, b) _mm512_mul_pd((a), (b))
#include "backend/cpu/cpu_gemm_small_kernel.inc"

static const lt__gemm_small small_f32 = {LT_F32,
                                         sizeof(float),
                                         SMALL_MR,
                                         16,
                                         SMALL_NV,
                                         gemm_small_f32_avx512_full,
                                         {gemm_small_f32_avx512_part1, gemm_small_f32_avx512_part2,
                                          gemm_small_f32_avx512_part3, gemm_small_f32_avx512_part4},
                                         SMALL_MID_B_BYTES};
static const lt__gemm_small small_f64 = {LT_F64,
                                         sizeof(double),
                                         SMALL_MR,
                                         8,
                                         SMALL_NV,
                                         gemm_small_f64_avx512_full,
                                         {gemm_small_f64_avx512_part1, gemm_small_f64_avx512_part2,
                                          gemm_small_f64_avx512_part3, gemm_small_f64_avx512_part4},
                                         SMALL_MID_B_BYTES};

const lt__gemm_small *lt__gemm_small_avx512(lt_dtype dtype) {
  return dtype == LT_F32 ? &small_f32 : dtype == LT_F64 ? &small_f64 : NULL;
}

#else
const lt__gemm_small *lt__gemm_small_avx512(lt_dtype dtype) {
  (void)dtype;
  return NULL;
}
#endif
