/* Copy and tile-transpose kernels by element size. The 4- and 8-byte tiles use SSE2 register
 * transposes (baseline on x86-64): 4x4 floats / 2x2 doubles per step, so both the reads and
 * the writes are full vectors; other sizes and edges use the scalar loop. */
#include "backend/cpu/cpu_transpose.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Scalar fallbacks, one per element size: copy_u16/u32/u64, tile_u16/u32/u64. */
#define LT_DEFINE_SCALAR(S, name)                                                                  \
  static void copy_##name(S *d, int64_t ds, const S *s, int64_t ss, int64_t n) {                   \
    for (int64_t i = 0; i < n; i++)                                                                \
      d[i * ds] = s[i * ss];                                                                       \
  }                                                                                                \
  static void tile_##name(S *d, int64_t ldd, const S *s, int64_t lds, int64_t np, int64_t nq) {    \
    for (int64_t p = 0; p < np; p++)                                                               \
      for (int64_t q = 0; q < nq; q++)                                                             \
        d[p * ldd + q] = s[q * lds + p];                                                           \
  }
LT_DEFINE_SCALAR(uint16_t, u16)
LT_DEFINE_SCALAR(uint32_t, u32)
LT_DEFINE_SCALAR(uint64_t, u64)
#undef LT_DEFINE_SCALAR

void lt__cpu_copy_strided(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n,
                          size_t esize) {
  if (ds == 1 && ss == 1) {
    memcpy(dst, src, (size_t)n * esize);
    return;
  }
  switch (esize) {
  case 2: copy_u16(dst, ds, src, ss, n); break;
  case 4: copy_u32(dst, ds, src, ss, n); break;
  default: copy_u64(dst, ds, src, ss, n); break;
  }
}

#if defined(__SSE2__)
static void tile_f32_sse(float *d, int64_t ldd, const float *s, int64_t lds, int64_t np,
                         int64_t nq) {
  int64_t p4 = np - np % 4, q4 = nq - nq % 4;
  for (int64_t q = 0; q < q4; q += 4)
    for (int64_t p = 0; p < p4; p += 4) {
      __m128 r0 = _mm_loadu_ps(s + (q + 0) * lds + p), r1 = _mm_loadu_ps(s + (q + 1) * lds + p);
      __m128 r2 = _mm_loadu_ps(s + (q + 2) * lds + p), r3 = _mm_loadu_ps(s + (q + 3) * lds + p);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(d + (p + 0) * ldd + q, r0);
      _mm_storeu_ps(d + (p + 1) * ldd + q, r1);
      _mm_storeu_ps(d + (p + 2) * ldd + q, r2);
      _mm_storeu_ps(d + (p + 3) * ldd + q, r3);
    }
  const uint32_t *su = (const uint32_t *)s;
  uint32_t *du = (uint32_t *)d;
  if (p4 < np) tile_u32(du + p4 * ldd, ldd, su + p4, lds, np - p4, nq);
  if (q4 < nq) tile_u32(du + q4, ldd, su + q4 * lds, lds, p4, nq - q4);
}

static void tile_f64_sse(double *d, int64_t ldd, const double *s, int64_t lds, int64_t np,
                         int64_t nq) {
  int64_t p2 = np - np % 2, q2 = nq - nq % 2;
  for (int64_t q = 0; q < q2; q += 2)
    for (int64_t p = 0; p < p2; p += 2) {
      __m128d r0 = _mm_loadu_pd(s + q * lds + p), r1 = _mm_loadu_pd(s + (q + 1) * lds + p);
      _mm_storeu_pd(d + p * ldd + q, _mm_unpacklo_pd(r0, r1));
      _mm_storeu_pd(d + (p + 1) * ldd + q, _mm_unpackhi_pd(r0, r1));
    }
  const uint64_t *su = (const uint64_t *)s;
  uint64_t *du = (uint64_t *)d;
  if (p2 < np) tile_u64(du + p2 * ldd, ldd, su + p2, lds, np - p2, nq);
  if (q2 < nq) tile_u64(du + q2, ldd, su + q2 * lds, lds, p2, nq - q2);
}
#endif

void lt__cpu_transpose_tile(void *dst, int64_t ldd, const void *src, int64_t lds, int64_t np,
                            int64_t nq, size_t esize) {
  switch (esize) {
  case 2: tile_u16(dst, ldd, src, lds, np, nq); break;
#if defined(__SSE2__)
  case 4: tile_f32_sse(dst, ldd, src, lds, np, nq); break;
  default: tile_f64_sse(dst, ldd, src, lds, np, nq); break;
#else
  case 4: tile_u32(dst, ldd, src, lds, np, nq); break;
  default: tile_u64(dst, ldd, src, lds, np, nq); break;
#endif
  }
}
