/* AVX2 tile transposes: 8x8 blocks of 4-byte elements, 4x4 blocks of 8-byte elements. A block
 * row is half a cache line; the q loop is innermost, so the other half of each line follows at
 * once and streamed lines leave the write-combining buffers whole. */
#include "backend/cpu/cpu_transpose.h"

#if defined(LT_HAVE_X86_ISA_KERNELS)
#include <immintrin.h>

/* 128-bit lane selections of _mm256_permute2f128: both low lanes, both high lanes. */
#define LOW_LANES 0x20
#define HIGH_LANES 0x31

/* r[i] holds source row i (8 floats); afterwards r[j] holds column j. */
static inline void transpose8_ps(__m256 r[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  /* Per 128-bit lane L, s[4g + c] = rows 4g..4g+3 of column 4L + c. */
  __m256 s[8];
  for (int g = 0; g < 8; g += 4) {
    __m256d a = _mm256_castps_pd(t[g]), b = _mm256_castps_pd(t[g + 1]);
    __m256d c = _mm256_castps_pd(t[g + 2]), d = _mm256_castps_pd(t[g + 3]);
    s[g] = _mm256_castpd_ps(_mm256_unpacklo_pd(a, c));
    s[g + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(a, c));
    s[g + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(b, d));
    s[g + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(b, d));
  }
  for (int c = 0; c < 4; c++) {
    r[c] = _mm256_permute2f128_ps(s[c], s[c + 4], LOW_LANES);
    r[c + 4] = _mm256_permute2f128_ps(s[c], s[c + 4], HIGH_LANES);
  }
}

/* r[i] holds source row i (4 doubles); afterwards r[j] holds column j. */
static inline void transpose4_pd(__m256d r[4]) {
  __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  r[0] = _mm256_permute2f128_pd(t0, t2, LOW_LANES);
  r[1] = _mm256_permute2f128_pd(t1, t3, LOW_LANES);
  r[2] = _mm256_permute2f128_pd(t0, t2, HIGH_LANES);
  r[3] = _mm256_permute2f128_pd(t1, t3, HIGH_LANES);
}

static void blocks_f32(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                       bool stream) {
  for (int64_t p = 0; p + 8 <= np; p += 8)
    for (int64_t q = 0; q + 8 <= nq; q += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps((const float *)srow[q + i] + p);
      transpose8_ps(r);
      if (stream)
        for (int i = 0; i < 8; i++)
          _mm256_stream_ps((float *)drow[p + i] + q, r[i]);
      else
        for (int i = 0; i < 8; i++)
          _mm256_storeu_ps((float *)drow[p + i] + q, r[i]);
    }
}

static void blocks_f64(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                       bool stream) {
  for (int64_t p = 0; p + 4 <= np; p += 4)
    for (int64_t q = 0; q + 4 <= nq; q += 4) {
      __m256d r[4];
      for (int i = 0; i < 4; i++)
        r[i] = _mm256_loadu_pd((const double *)srow[q + i] + p);
      transpose4_pd(r);
      if (stream)
        for (int i = 0; i < 4; i++)
          _mm256_stream_pd((double *)drow[p + i] + q, r[i]);
      else
        for (int i = 0; i < 4; i++)
          _mm256_storeu_pd((double *)drow[p + i] + q, r[i]);
    }
}

void lt__cpu_transpose_blocks_avx2(char *const *drow, const char *const *srow, int64_t np,
                                   int64_t nq, size_t esize, bool stream) {
  if (esize == 4)
    blocks_f32(drow, srow, np, nq, stream);
  else if (esize == 8)
    blocks_f64(drow, srow, np, nq, stream);
}

#endif
