/* SPDX-License-Identifier: MIT */
/* The chunk kernels of cpu_typed.inc compiled for AVX2 (names: those of cpu_typed.h with
 * _avx2 appended). The code is the portable one: without -ffast-math (and with ISO C's
 * fp-contract=off) the compiler may only widen the vectors, so results are bit for bit those of
 * the portable kernels. */
#if defined(LT_HAVE_X86_ISA_KERNELS)
#include "backend/cpu/cpu_half_avx2.h"
#include "backend/cpu/cpu_isa.h"

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Contiguous f16 / bf16 <-> f32, eight at a time, for the float instance's load and store:
 * f16 through F16C's vcvtph2ps / vcvtps2ph (IEEE round to nearest even, subnormals kept, as
 * lt_f32_to_f16) where the CPU has F16C, bf16 by shifts and lt_f32_to_bf16's integer rounding. A
 * partial vector goes through a small buffer: AVX2 has no 16-bit masked loads or stores. */
#define HALF_LANES 8

LT_F16C static bool widen16_f32(float *d, const uint16_t *p, int64_t n, bool bf16) {
  if (!bf16 && !lt__cpu_has_f16c()) return false;
  int64_t i = 0;
  for (; i + HALF_LANES <= n; i += HALF_LANES)
    _mm256_storeu_ps(d + i, lt__widen8_avx2(p + i, bf16));
  if (i < n) {
    uint16_t h[HALF_LANES] = {0};
    float f[HALF_LANES];
    memcpy(h, p + i, sizeof(uint16_t) * (size_t)(n - i));
    _mm256_storeu_ps(f, lt__widen8_avx2(h, bf16));
    memcpy(d + i, f, sizeof(float) * (size_t)(n - i));
  }
  return true;
}

LT_F16C static bool narrow16_f32(uint16_t *p, const float *s, int64_t n, bool bf16) {
  if (!bf16 && !lt__cpu_has_f16c()) return false;
  int64_t i = 0;
  for (; i + HALF_LANES <= n; i += HALF_LANES)
    _mm_storeu_si128((__m128i *)(p + i), lt__narrow8_avx2(_mm256_loadu_ps(s + i), bf16));
  if (i < n) {
    float f[HALF_LANES] = {0};
    uint16_t h[HALF_LANES];
    memcpy(f, s + i, sizeof(float) * (size_t)(n - i));
    _mm_storeu_si128((__m128i *)h, lt__narrow8_avx2(_mm256_loadu_ps(f), bf16));
    memcpy(p + i, h, sizeof(uint16_t) * (size_t)(n - i));
  }
  return true;
}

#include "backend/cpu/cpu_typed_half.inc"
#define LT_TYPED_ISA _avx2
#include "backend/cpu/cpu_typed_instances.inc"
#include "backend/cpu/cpu_typed_int_instances.inc"

const lt__cpu_kernels *lt__cpu_kernels_avx2(lt_dtype compute) {
  if (lt__cpu_table_is_int(compute)) return lt__cpu_kernels_int_avx2(compute);
  return compute == LT_F64 ? &kernels_f64_avx2 : &kernels_f32_avx2;
}
#endif
