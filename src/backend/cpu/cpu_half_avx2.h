/* SPDX-License-Identifier: MIT */
/* Eight f16 / bf16 values <-> f32 with AVX2 and F16C, exactly as lt_f16_to_f32 / lt_f32_to_f16
 * (vcvtph2ps / vcvtps2ph: IEEE round to nearest even, subnormals kept) and lt_bf16_to_f32 /
 * lt_f32_to_bf16 (shifts; the integer rounding, NaNs quieted). For *_avx2.c files only; the
 * f16 paths need F16C, which callers check first (lt__cpu_has_f16c). */
#ifndef LT_BACKEND_CPU_HALF_AVX2_H
#define LT_BACKEND_CPU_HALF_AVX2_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define LT_F16C __attribute__((target("f16c")))

LT_F16C static inline __m256 lt__widen8_avx2(const uint16_t *p, bool bf16) {
  __m128i h = _mm_loadu_si128((const __m128i *)p);
  if (bf16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  return _mm256_cvtph_ps(h);
}

LT_F16C static inline float lt__widen1_avx2(uint16_t h, bool bf16) {
  if (!bf16) return _cvtsh_ss(h);
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

LT_F16C static inline __m128i lt__narrow8_avx2(__m256 x, bool bf16) {
  if (!bf16) return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  __m256i u = _mm256_castps_si256(x);
  __m256i r = _mm256_add_epi32(
      u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff),
                          _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1))));
  /* NaN: quieted, never rounded (its payload would carry into the exponent). Both sides of
   * the compare are below 2^31, so the signed compare is the unsigned one. */
  __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
  r = _mm256_blendv_epi8(r, _mm256_or_si256(u, _mm256_set1_epi32(0x400000)), nan);
  /* The high halves, packed within each 128-bit lane, then the lanes' first quadwords. */
  __m256i packed = _mm256_packus_epi32(_mm256_srli_epi32(r, 16), _mm256_setzero_si256());
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}

#endif
