/* SPDX-License-Identifier: MIT */
/* The chunk kernels of cpu_typed.inc compiled for AVX512 (names: those of cpu_typed.h with
 * _avx512 appended). The code is the portable one: without -ffast-math (and with ISO C's
 * fp-contract=off) the compiler may only widen the vectors, so results are bit for bit those of
 * the portable kernels. */
#if defined(LT_HAVE_X86_ISA_KERNELS)
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

/* Contiguous f16 / bf16 <-> f32 with AVX-512, for the float instance's load and store: f16
 * through vcvtph2ps / vcvtps2ph (IEEE round to nearest even, subnormals kept, as
 * lt_f32_to_f16), bf16 by shifts and lt_f32_to_bf16's integer rounding (vcvtneps2bf16 would
 * flush subnormals). */
static bool widen16_f32(float *d, const uint16_t *p, int64_t n, bool bf16) {
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
    __m256i h = _mm256_maskz_loadu_epi16(m, p + i);
    __m512 f = bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
                    : _mm512_cvtph_ps(h);
    _mm512_mask_storeu_ps(d + i, m, f);
  }
  return true;
}

static bool narrow16_f32(uint16_t *p, const float *s, int64_t n, bool bf16) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1);
    __m512 x = _mm512_maskz_loadu_ps(m, s + i);
    __m256i h;
    if (bf16) {
      __m512i u = _mm512_castps_si512(x);
      __m512i r = _mm512_add_epi32(
          u, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(u, 16), one)));
      __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs_mask), inf);
      r = _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x400000));
      h = _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
    } else {
      h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    _mm256_mask_storeu_epi16(p + i, m, h);
  }
  return true;
}

#include "backend/cpu/cpu_typed_half.inc"
#define LT_TYPED_ISA _avx512
#include "backend/cpu/cpu_typed_instances.inc"
#include "backend/cpu/cpu_typed_int_instances.inc"

const lt__cpu_kernels *lt__cpu_kernels_avx512(lt_dtype compute) {
  if (lt__cpu_table_is_int(compute)) return lt__cpu_kernels_int_avx512(compute);
  return compute == LT_F64 ? &kernels_f64_avx512 : &kernels_f32_avx512;
}
#endif
