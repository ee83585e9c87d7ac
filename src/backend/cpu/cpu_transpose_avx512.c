/* SPDX-License-Identifier: MIT */
/* AVX-512 tile transposes: 16x16 blocks of 4-byte elements, 8x8 blocks of 8-byte elements.
 * Every destination row of a block is one full 64-byte vector, so with `stream` (rows aligned
 * to 64 bytes) each store is a whole cache line written without a read-for-ownership. */
#include "backend/cpu/cpu_transpose.h"

#if defined(LT_HAVE_X86_ISA_KERNELS)
#include <immintrin.h>

/* Two ways to build a block. Lanes: 128-bit pieces of four source rows are broadcast into the
 * four lanes of one register (a load plus a blend, which may run on either vector port), so
 * only the in-lane transposes need the single shuffle port. Lines: each source line is loaded
 * once, whole, and transposed in registers (two more shuffle stages). Lines issue a quarter of
 * the loads, which is what limits a transpose streaming from memory: in one process, lines ran
 * f64 reversals 1.02-1.28x faster and f32 ones 0.95-1.06x (1.05-1.25x under heavier machine
 * load), cache-resident tiles 1.1-1.3x. But a whole-line load from a row off the line grid
 * straddles two lines: (511,257,509) -> [2,1,0] ran at 0.7x. So lines take aligned rows, lanes
 * the rest and the partial blocks. */

static inline void store_ps(char *row, __m512 v, bool stream) {
  if (stream)
    _mm512_stream_ps((float *)row, v);
  else
    _mm512_storeu_ps((float *)row, v);
}

static inline void store_pd(char *row, __m512d v, bool stream) {
  if (stream)
    _mm512_stream_pd((double *)row, v);
  else
    _mm512_storeu_pd((double *)row, v);
}

/* Lane k of the result: the 16 bytes at byte offset `off` of rows[4k] (floats) or rows[2k]
 * (doubles). */
static inline __m512 gather_lanes_ps(const char *const *rows, int64_t off) {
  __m512 x = _mm512_broadcast_f32x4(_mm_loadu_ps((const float *)(rows[0] + off)));
  x = _mm512_mask_broadcast_f32x4(x, 0x00f0, _mm_loadu_ps((const float *)(rows[4] + off)));
  x = _mm512_mask_broadcast_f32x4(x, 0x0f00, _mm_loadu_ps((const float *)(rows[8] + off)));
  return _mm512_mask_broadcast_f32x4(x, 0xf000, _mm_loadu_ps((const float *)(rows[12] + off)));
}

static inline __m512d gather_lanes_pd(const char *const *rows, int64_t off) {
  __m512d x = _mm512_broadcast_f64x2(_mm_loadu_pd((const double *)(rows[0] + off)));
  x = _mm512_mask_broadcast_f64x2(x, 0x0c, _mm_loadu_pd((const double *)(rows[2] + off)));
  x = _mm512_mask_broadcast_f64x2(x, 0x30, _mm_loadu_pd((const double *)(rows[4] + off)));
  return _mm512_mask_broadcast_f64x2(x, 0xc0, _mm_loadu_pd((const double *)(rows[6] + off)));
}

/* One 16x16 block, or its first 4 * groups columns: for each group of four columns 4a..4a+3,
 * v[i] lane k = row 4k+i of those columns; the in-lane 4x4 transposes of v[0..3] give the
 * columns, 16 rows each. */
static inline void block_f32_lanes(char *const *drow, const char *const *srow, int64_t p, int64_t q,
                                   int groups, bool stream) {
  for (int a = 0; a < groups; a++) {
    int64_t off = (p + 4 * a) * 4;
    __m512 v[4];
    for (int i = 0; i < 4; i++)
      v[i] = gather_lanes_ps(srow + q + i, off);
    __m512d t0 = _mm512_castps_pd(_mm512_unpacklo_ps(v[0], v[1]));
    __m512d t1 = _mm512_castps_pd(_mm512_unpackhi_ps(v[0], v[1]));
    __m512d t2 = _mm512_castps_pd(_mm512_unpacklo_ps(v[2], v[3]));
    __m512d t3 = _mm512_castps_pd(_mm512_unpackhi_ps(v[2], v[3]));
    char *const *d = drow + p + 4 * a;
    store_ps(d[0] + q * 4, _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2)), stream);
    store_ps(d[1] + q * 4, _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2)), stream);
    store_ps(d[2] + q * 4, _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3)), stream);
    store_ps(d[3] + q * 4, _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3)), stream);
  }
}

/* One 8x8 block, or its first 2 * groups columns: for each column pair 2a, 2a+1, v[i] lane k =
 * row 2k+i of the pair. */
static inline void block_f64_lanes(char *const *drow, const char *const *srow, int64_t p, int64_t q,
                                   int groups, bool stream) {
  for (int a = 0; a < groups; a++) {
    int64_t off = (p + 2 * a) * 8;
    __m512d v0 = gather_lanes_pd(srow + q, off), v1 = gather_lanes_pd(srow + q + 1, off);
    store_pd(drow[p + 2 * a] + q * 8, _mm512_unpacklo_pd(v0, v1), stream);
    store_pd(drow[p + 2 * a + 1] + q * 8, _mm512_unpackhi_pd(v0, v1), stream);
  }
}

/* 128-bit lanes (a0, a2, b0, b2) with `even`, else (a1, a3, b1, b3). */
static inline __m512 pick_lanes_ps(__m512 a, __m512 b, bool even) {
  return even ? _mm512_shuffle_f32x4(a, b, 0x88) : _mm512_shuffle_f32x4(a, b, 0xdd);
}

static inline __m512d pick_lanes_pd(__m512d a, __m512d b, bool even) {
  return even ? _mm512_shuffle_f64x2(a, b, 0x88) : _mm512_shuffle_f64x2(a, b, 0xdd);
}

/* The 16x16 block at (p, q) from whole lines. After the two in-lane stages, lane L of u[4k + j]
 * holds column 4L + j of rows 4k..4k+3; the lane picks gather the four row groups of each
 * column. */
static inline void block_f32_lines(char *const *drow, const char *const *srow, int64_t p, int64_t q,
                                   bool stream) {
  __m512 r[16], t[16], u[16];
  for (int i = 0; i < 16; i++)
    r[i] = _mm512_load_ps((const float *)(srow[q + i] + p * 4));
  for (int k = 0; k < 8; k++) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 4; k++)
    for (int j = 0; j < 4; j++) {
      __m512d a = _mm512_castps_pd(t[4 * k + j / 2]), b = _mm512_castps_pd(t[4 * k + 2 + j / 2]);
      u[4 * k + j] = _mm512_castpd_ps(j % 2 ? _mm512_unpackhi_pd(a, b) : _mm512_unpacklo_pd(a, b));
    }
  for (int j = 0; j < 4; j++)
    for (int half = 0; half < 2; half++) { /* half 0: lanes L = 0, 2; half 1: L = 1, 3 */
      __m512 lo = pick_lanes_ps(u[j], u[4 + j], half == 0);
      __m512 hi = pick_lanes_ps(u[8 + j], u[12 + j], half == 0);
      store_ps(drow[p + 4 * half + j] + q * 4, pick_lanes_ps(lo, hi, true), stream);
      store_ps(drow[p + 4 * (half + 2) + j] + q * 4, pick_lanes_ps(lo, hi, false), stream);
    }
}

/* The 8x8 block at (p, q) from whole lines: lane L of t[2k + j] holds column 2L + j of rows 2k,
 * 2k+1. */
static inline void block_f64_lines(char *const *drow, const char *const *srow, int64_t p, int64_t q,
                                   bool stream) {
  __m512d r[8], t[8];
  for (int i = 0; i < 8; i++)
    r[i] = _mm512_load_pd((const double *)(srow[q + i] + p * 8));
  for (int k = 0; k < 4; k++) {
    t[2 * k] = _mm512_unpacklo_pd(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_pd(r[2 * k], r[2 * k + 1]);
  }
  for (int j = 0; j < 2; j++)
    for (int half = 0; half < 2; half++) {
      __m512d lo = pick_lanes_pd(t[j], t[2 + j], half == 0);
      __m512d hi = pick_lanes_pd(t[4 + j], t[6 + j], half == 0);
      store_pd(drow[p + 2 * half + j] + q * 8, pick_lanes_pd(lo, hi, true), stream);
      store_pd(drow[p + 2 * (half + 2) + j] + q * 8, pick_lanes_pd(lo, hi, false), stream);
    }
}

/* Whether every source row starts on a 64-byte line (then so does each block's piece of it). */
static bool rows_on_lines(const char *const *srow, int64_t nq) {
  for (int64_t q = 0; q < nq; q++)
    if ((uintptr_t)srow[q] & 63) return false;
  return true;
}

/* Whole blocks, then the last p < 16 (8) rows in groups of 4 (2) through partial blocks. Kept
 * per element size with constant block sizes: one shared walk measured 3-6% slower. */
static void blocks_f32(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                       unsigned mode) {
  bool lines = rows_on_lines(srow, nq - nq % 16), stream = mode & LT__CPU_TR_STREAM;
  int64_t p = 0;
  for (; p + 16 <= np; p += 16) {
    if (mode & LT__CPU_TR_AHEAD) lt__cpu_fetch_rows_ahead(srow, nq, p * 4);
    for (int64_t q = 0; q + 16 <= nq; q += 16)
      if (lines)
        block_f32_lines(drow, srow, p, q, stream);
      else
        block_f32_lanes(drow, srow, p, q, 4, stream);
  }
  int groups = (int)((np - p) / 4);
  for (int64_t q = 0; groups > 0 && q + 16 <= nq; q += 16)
    block_f32_lanes(drow, srow, p, q, groups, stream);
}

static void blocks_f64(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                       unsigned mode) {
  bool lines = rows_on_lines(srow, nq - nq % 8), stream = mode & LT__CPU_TR_STREAM;
  int64_t p = 0;
  for (; p + 8 <= np; p += 8) {
    if (mode & LT__CPU_TR_AHEAD) lt__cpu_fetch_rows_ahead(srow, nq, p * 8);
    for (int64_t q = 0; q + 8 <= nq; q += 8)
      if (lines)
        block_f64_lines(drow, srow, p, q, stream);
      else
        block_f64_lanes(drow, srow, p, q, 4, stream);
  }
  int groups = (int)((np - p) / 2);
  for (int64_t q = 0; groups > 0 && q + 8 <= nq; q += 8)
    block_f64_lanes(drow, srow, p, q, groups, stream);
}

/* Masked lanes are not read, so the last, partial vector stays inside the source. */
void lt__cpu_gather_avx512(void *dst, const void *src, int64_t ss, int64_t n, size_t esize) {
  if (esize == 4) {
    const __m512i idx =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32((int)ss));
    const float *s = src;
    float *d = dst;
    for (int64_t i = 0; i < n; i += 16, s += 16 * ss) {
      __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
      _mm512_mask_storeu_ps(d + i, m, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, s, 4));
    }
  } else {
    const __m256i idx =
        _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)ss));
    const double *s = src;
    double *d = dst;
    for (int64_t i = 0; i < n; i += 8, s += 8 * ss) {
      __mmask8 m = n - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (n - i)) - 1);
      _mm512_mask_storeu_pd(d + i, m, _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, idx, s, 8));
    }
  }
}

void lt__cpu_transpose_blocks_avx512(char *const *drow, const char *const *srow, int64_t np,
                                     int64_t nq, size_t esize, unsigned mode) {
  if (esize == 4)
    blocks_f32(drow, srow, np, nq, mode);
  else if (esize == 8)
    blocks_f64(drow, srow, np, nq, mode);
}

void lt__cpu_stream_lines_avx512(char *dst, const char *src, size_t bytes) {
  for (size_t i = 0; i < bytes; i += 64)
    _mm512_stream_si512((void *)(dst + i), _mm512_loadu_si512(src + i));
}

#endif
