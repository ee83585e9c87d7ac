/* SPDX-License-Identifier: MIT */
/* AVX2 tile transposes: 8x8 blocks of 4-byte elements, 4x4 blocks of 8-byte elements, done in
 * pairs along the destination rows so that each row receives whole cache lines. */
#include "backend/cpu/cpu_transpose.h"

#if defined(LT_HAVE_X86_ISA_KERNELS)
#include <immintrin.h>

/* As in the AVX-512 kernels, the loads build the lanes (a 16-byte load into the low lane, a
 * 16-byte insert from memory into the high one) and only in-lane shuffles remain. */

/* Lane k of the result: the 16 bytes at byte offset `off` of rows[k * step]. */
static inline __m256 gather_lanes_ps(const char *const *rows, int step, int64_t off) {
  __m256 x = _mm256_castps128_ps256(_mm_loadu_ps((const float *)(rows[0] + off)));
  return _mm256_insertf128_ps(x, _mm_loadu_ps((const float *)(rows[step] + off)), 1);
}

static inline __m256d gather_lanes_pd(const char *const *rows, int step, int64_t off) {
  __m256d x = _mm256_castpd128_pd256(_mm_loadu_pd((const double *)(rows[0] + off)));
  return _mm256_insertf128_pd(x, _mm_loadu_pd((const double *)(rows[step] + off)), 1);
}

static inline void store_ps(char *row, __m256 v, bool stream) {
  if (stream)
    _mm256_stream_ps((float *)row, v);
  else
    _mm256_storeu_ps((float *)row, v);
}

static inline void store_pd(char *row, __m256d v, bool stream) {
  if (stream)
    _mm256_stream_pd((double *)row, v);
  else
    _mm256_storeu_pd((double *)row, v);
}

/* Columns p+4a .. p+4a+3 of the 8x8 block at (p, q): v[i] lane k = row q+4k+i of those four
 * columns; the in-lane 4x4 transposes give the columns, 8 rows each. */
static void columns_f32(const char *const *srow, int64_t p, int64_t q, int a, __m256 col[4]) {
  int64_t off = (p + 4 * a) * 4;
  __m256 v[4];
  for (int i = 0; i < 4; i++)
    v[i] = gather_lanes_ps(srow + q + i, 4, off);
  __m256d t0 = _mm256_castps_pd(_mm256_unpacklo_ps(v[0], v[1]));
  __m256d t1 = _mm256_castps_pd(_mm256_unpackhi_ps(v[0], v[1]));
  __m256d t2 = _mm256_castps_pd(_mm256_unpacklo_ps(v[2], v[3]));
  __m256d t3 = _mm256_castps_pd(_mm256_unpackhi_ps(v[2], v[3]));
  col[0] = _mm256_castpd_ps(_mm256_unpacklo_pd(t0, t2));
  col[1] = _mm256_castpd_ps(_mm256_unpackhi_pd(t0, t2));
  col[2] = _mm256_castpd_ps(_mm256_unpacklo_pd(t1, t3));
  col[3] = _mm256_castpd_ps(_mm256_unpackhi_pd(t1, t3));
}

/* Columns p+2a, p+2a+1 of the 4x4 block at (p, q): v[i] lane k = row q+2k+i of the pair. */
static void columns_f64(const char *const *srow, int64_t p, int64_t q, int a, __m256d col[2]) {
  int64_t off = (p + 2 * a) * 8;
  __m256d v0 = gather_lanes_pd(srow + q, 2, off), v1 = gather_lanes_pd(srow + q + 1, 2, off);
  col[0] = _mm256_unpacklo_pd(v0, v1);
  col[1] = _mm256_unpackhi_pd(v0, v1);
}

/* `width` (1 or 2) blocks side by side along q, so that with two each destination row gets a
 * whole 64-byte line in two consecutive stores (streamed half lines would leave the
 * write-combining buffers one at a time, each a memory round trip); of each block the first
 * 4 * groups (f32) or 2 * groups (f64) columns, groups <= 2. */
static void block_f32(char *const *drow, const char *const *srow, int64_t p, int64_t q, int width,
                      int groups, bool stream) {
  for (int a = 0; a < groups; a++) {
    __m256 col[2][4];
    for (int w = 0; w < width; w++)
      columns_f32(srow, p, q + 8 * w, a, col[w]);
    for (int x = 0; x < 4; x++)
      for (int w = 0; w < width; w++)
        store_ps(drow[p + 4 * a + x] + (q + 8 * w) * 4, col[w][x], stream);
  }
}

static void block_f64(char *const *drow, const char *const *srow, int64_t p, int64_t q, int width,
                      int groups, bool stream) {
  for (int a = 0; a < groups; a++) {
    __m256d col[2][2];
    for (int w = 0; w < width; w++)
      columns_f64(srow, p, q + 4 * w, a, col[w]);
    for (int x = 0; x < 2; x++)
      for (int w = 0; w < width; w++)
        store_pd(drow[p + 2 * a + x] + (q + 4 * w) * 8, col[w][x], stream);
  }
}

/* Rows of blocks along q for the columns p.. of `groups` groups. One function per element size,
 * with the block sizes as constants: a shared one taking the size as a parameter measured 12%
 * slower on streamed permutations (LT_CPU_ISA=avx2). */
static void block_row_f32(char *const *drow, const char *const *srow, int64_t p, int64_t nq,
                          int groups, bool stream) {
  int64_t q = 0;
  for (; q + 16 <= nq; q += 16)
    block_f32(drow, srow, p, q, 2, groups, stream);
  if (q + 8 <= nq) block_f32(drow, srow, p, q, 1, groups, stream);
}

static void block_row_f64(char *const *drow, const char *const *srow, int64_t p, int64_t nq,
                          int groups, bool stream) {
  int64_t q = 0;
  for (; q + 8 <= nq; q += 8)
    block_f64(drow, srow, p, q, 2, groups, stream);
  if (q + 4 <= nq) block_f64(drow, srow, p, q, 1, groups, stream);
}

/* Whole blocks, then a last group of 4 (2) columns through partial blocks; with
 * LT__CPU_TR_AHEAD the rows are requested ahead once per line of p. */
static void blocks_f32(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                       unsigned mode) {
  bool stream = mode & LT__CPU_TR_STREAM, ahead = mode & LT__CPU_TR_AHEAD;
  int64_t p = 0;
  for (; p + 8 <= np; p += 8) {
    if (ahead && p % 16 == 0) lt__cpu_fetch_rows_ahead(srow, nq, p * 4);
    block_row_f32(drow, srow, p, nq, 2, stream);
  }
  if (p + 4 <= np) block_row_f32(drow, srow, p, nq, 1, stream);
}

static void blocks_f64(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                       unsigned mode) {
  bool stream = mode & LT__CPU_TR_STREAM, ahead = mode & LT__CPU_TR_AHEAD;
  int64_t p = 0;
  for (; p + 4 <= np; p += 4) {
    if (ahead && p % 8 == 0) lt__cpu_fetch_rows_ahead(srow, nq, p * 8);
    block_row_f64(drow, srow, p, nq, 2, stream);
  }
  if (p + 2 <= np) block_row_f64(drow, srow, p, nq, 1, stream);
}

void lt__cpu_transpose_blocks_avx2(char *const *drow, const char *const *srow, int64_t np,
                                   int64_t nq, size_t esize, unsigned mode) {
  if (esize == 4)
    blocks_f32(drow, srow, np, nq, mode);
  else if (esize == 8)
    blocks_f64(drow, srow, np, nq, mode);
}

void lt__cpu_stream_lines_avx2(char *dst, const char *src, size_t bytes) {
  for (size_t i = 0; i < bytes; i += 64) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)(src + i));
    __m256i hi = _mm256_loadu_si256((const __m256i *)(src + i + 32));
    _mm256_stream_si256((__m256i *)(dst + i), lo);
    _mm256_stream_si256((__m256i *)(dst + i + 32), hi);
  }
}

#endif
