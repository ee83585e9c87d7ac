/* AVX-512 tile transposes: 16x16 blocks of 4-byte elements, 8x8 blocks of 8-byte elements.
 * Every destination row of a block is one full 64-byte vector, so with `stream` (rows aligned
 * to 64 bytes) each store is a whole cache line written without a read-for-ownership. */
#include "backend/cpu/cpu_transpose.h"

#if defined(LT_HAVE_X86_ISA_KERNELS)
#include <immintrin.h>

/* Rows 0..3 and 4..7 (in 128-bit lane units) of the shuffle stages: lanes {0,2} / {1,3} of
 * two vectors. */
#define LO_LANES 0x88
#define HI_LANES 0xdd

/* r[i] holds source row i (16 floats); afterwards r[j] holds column j. */
static inline void transpose16_ps(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  /* Per 128-bit lane L, r[4g + c] = rows 4g..4g+3 of column 4L + c. */
  for (int g = 0; g < 16; g += 4) {
    __m512d a = _mm512_castps_pd(t[g]), b = _mm512_castps_pd(t[g + 1]);
    __m512d c = _mm512_castps_pd(t[g + 2]), d = _mm512_castps_pd(t[g + 3]);
    r[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int k = 0; k < 4; k++) {
    t[k] = _mm512_shuffle_f32x4(r[k], r[k + 4], LO_LANES);
    t[k + 4] = _mm512_shuffle_f32x4(r[k], r[k + 4], HI_LANES);
    t[k + 8] = _mm512_shuffle_f32x4(r[k + 8], r[k + 12], LO_LANES);
    t[k + 12] = _mm512_shuffle_f32x4(r[k + 8], r[k + 12], HI_LANES);
  }
  for (int k = 0; k < 4; k++) {
    r[k] = _mm512_shuffle_f32x4(t[k], t[k + 8], LO_LANES);
    r[k + 4] = _mm512_shuffle_f32x4(t[k + 4], t[k + 12], LO_LANES);
    r[k + 8] = _mm512_shuffle_f32x4(t[k], t[k + 8], HI_LANES);
    r[k + 12] = _mm512_shuffle_f32x4(t[k + 4], t[k + 12], HI_LANES);
  }
}

/* r[i] holds source row i (8 doubles); afterwards r[j] holds column j. */
static inline void transpose8_pd(__m512d r[8]) {
  __m512d t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);
  }
  /* u[k], u[k + 4]: rows 2g..2g+3 of columns {k, k+4} / {k+2, k+6} (g = 0 for k < 2). */
  u[0] = _mm512_shuffle_f64x2(t[0], t[2], LO_LANES);
  u[4] = _mm512_shuffle_f64x2(t[0], t[2], HI_LANES);
  u[1] = _mm512_shuffle_f64x2(t[1], t[3], LO_LANES);
  u[5] = _mm512_shuffle_f64x2(t[1], t[3], HI_LANES);
  u[2] = _mm512_shuffle_f64x2(t[4], t[6], LO_LANES);
  u[6] = _mm512_shuffle_f64x2(t[4], t[6], HI_LANES);
  u[3] = _mm512_shuffle_f64x2(t[5], t[7], LO_LANES);
  u[7] = _mm512_shuffle_f64x2(t[5], t[7], HI_LANES);
  r[0] = _mm512_shuffle_f64x2(u[0], u[2], LO_LANES);
  r[4] = _mm512_shuffle_f64x2(u[0], u[2], HI_LANES);
  r[1] = _mm512_shuffle_f64x2(u[1], u[3], LO_LANES);
  r[5] = _mm512_shuffle_f64x2(u[1], u[3], HI_LANES);
  r[2] = _mm512_shuffle_f64x2(u[4], u[6], LO_LANES);
  r[6] = _mm512_shuffle_f64x2(u[4], u[6], HI_LANES);
  r[3] = _mm512_shuffle_f64x2(u[5], u[7], LO_LANES);
  r[7] = _mm512_shuffle_f64x2(u[5], u[7], HI_LANES);
}

static void blocks_f32(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                       bool stream) {
  for (int64_t p = 0; p + 16 <= np; p += 16)
    for (int64_t q = 0; q + 16 <= nq; q += 16) {
      __m512 r[16];
      for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps((const float *)srow[q + i] + p);
      transpose16_ps(r);
      if (stream)
        for (int i = 0; i < 16; i++)
          _mm512_stream_ps((float *)drow[p + i] + q, r[i]);
      else
        for (int i = 0; i < 16; i++)
          _mm512_storeu_ps((float *)drow[p + i] + q, r[i]);
    }
}

static void blocks_f64(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                       bool stream) {
  for (int64_t p = 0; p + 8 <= np; p += 8)
    for (int64_t q = 0; q + 8 <= nq; q += 8) {
      __m512d r[8];
      for (int i = 0; i < 8; i++)
        r[i] = _mm512_loadu_pd((const double *)srow[q + i] + p);
      transpose8_pd(r);
      if (stream)
        for (int i = 0; i < 8; i++)
          _mm512_stream_pd((double *)drow[p + i] + q, r[i]);
      else
        for (int i = 0; i < 8; i++)
          _mm512_storeu_pd((double *)drow[p + i] + q, r[i]);
    }
}

void lt__cpu_transpose_blocks_avx512(char *const *drow, const char *const *srow, int64_t np,
                                     int64_t nq, size_t esize, bool stream) {
  if (esize == 4)
    blocks_f32(drow, srow, np, nq, stream);
  else if (esize == 8)
    blocks_f64(drow, srow, np, nq, stream);
}

#endif
