/* SPDX-License-Identifier: MIT */
/* Copy and tile-transpose kernels by element size. The 4- and 8-byte tiles use register
 * transposes, so both the reads and the writes are full vectors: AVX-512 or AVX2 blocks where
 * the CPU has them (cpu_transpose_avx*.c), else SSE2 (baseline on x86-64) 4x4 floats / 2x2
 * doubles; other sizes and edges use scalar loops. */
#include "backend/cpu/cpu_transpose.h"
#include "backend/cpu/cpu_isa.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Scalar kernels, one per element size: copy_u8/u16/u32/u64, rows_u8/u16/u32/u64 (rows_* transposes
 * the sub-tile p in [p0, np), q in [q0, nq), elements ds apart in destination rows and ss
 * apart in source rows). */
#define LT_DEFINE_SCALAR(S, name)                                                                  \
  static void copy_##name(S *d, int64_t ds, const S *s, int64_t ss, int64_t n) {                   \
    for (int64_t i = 0; i < n; i++)                                                                \
      d[i * ds] = s[i * ss];                                                                       \
  }                                                                                                \
  static inline void rows_##name(char *const *drow, int64_t ds, const char *const *srow,           \
                                 int64_t ss, int64_t p0, int64_t np, int64_t q0, int64_t nq) {     \
    for (int64_t p = p0; p < np; p++)                                                              \
      for (int64_t q = q0; q < nq; q++)                                                            \
        ((S *)drow[p])[q * ds] = ((const S *)srow[q])[p * ss];                                     \
  }
LT_DEFINE_SCALAR(uint8_t, u8)
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
  case 1: copy_u8(dst, ds, src, ss, n); break;
  case 2: copy_u16(dst, ds, src, ss, n); break;
  case 4: copy_u32(dst, ds, src, ss, n); break;
  default: copy_u64(dst, ds, src, ss, n); break;
  }
}

void lt__cpu_copy_gather(void *dst, const void *src, int64_t ss, int64_t n, size_t esize,
                         lt__cpu_simd simd) {
#if defined(LT_HAVE_X86_ISA_KERNELS)
  if (simd == LT__CPU_SIMD_AVX512 && (esize == 4 || esize == 8) && ss < INT32_MAX / 16 &&
      ss > -(INT32_MAX / 16)) {
    lt__cpu_gather_avx512(dst, src, ss, n, esize);
    return;
  }
#else
  (void)simd;
#endif
  lt__cpu_copy_strided(dst, 1, src, ss, n, esize);
}

#if defined(__SSE2__)
static void rows_f32_sse(char *const *drow, const char *const *srow, int64_t np, int64_t nq) {
  int64_t p4 = np - np % 4, q4 = nq - nq % 4;
  for (int64_t q = 0; q < q4; q += 4)
    for (int64_t p = 0; p < p4; p += 4) {
      __m128 r0 = _mm_loadu_ps((const float *)srow[q] + p);
      __m128 r1 = _mm_loadu_ps((const float *)srow[q + 1] + p);
      __m128 r2 = _mm_loadu_ps((const float *)srow[q + 2] + p);
      __m128 r3 = _mm_loadu_ps((const float *)srow[q + 3] + p);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps((float *)drow[p] + q, r0);
      _mm_storeu_ps((float *)drow[p + 1] + q, r1);
      _mm_storeu_ps((float *)drow[p + 2] + q, r2);
      _mm_storeu_ps((float *)drow[p + 3] + q, r3);
    }
  rows_u32(drow, 1, srow, 1, p4, np, 0, nq);
  rows_u32(drow, 1, srow, 1, 0, p4, q4, nq);
}

static void rows_f64_sse(char *const *drow, const char *const *srow, int64_t np, int64_t nq) {
  int64_t p2 = np - np % 2, q2 = nq - nq % 2;
  for (int64_t q = 0; q < q2; q += 2)
    for (int64_t p = 0; p < p2; p += 2) {
      __m128d r0 = _mm_loadu_pd((const double *)srow[q] + p);
      __m128d r1 = _mm_loadu_pd((const double *)srow[q + 1] + p);
      _mm_storeu_pd((double *)drow[p] + q, _mm_unpacklo_pd(r0, r1));
      _mm_storeu_pd((double *)drow[p + 1] + q, _mm_unpackhi_pd(r0, r1));
    }
  rows_u64(drow, 1, srow, 1, p2, np, 0, nq);
  rows_u64(drow, 1, srow, 1, 0, p2, q2, nq);
}
#endif

int64_t lt__cpu_transpose_block(lt__cpu_simd simd, size_t esize) {
#if defined(LT_HAVE_X86_ISA_KERNELS)
  if (esize == 4 || esize == 8) {
    if (simd == LT__CPU_SIMD_AVX512) return 64 / (int64_t)esize;
    if (simd == LT__CPU_SIMD_AVX2) return 32 / (int64_t)esize;
  }
#else
  (void)simd;
  (void)esize;
#endif
  return 0;
}

static inline void rows_sized(char *const *drow, int64_t ds, const char *const *srow, int64_t ss,
                              int64_t p0, int64_t np, int64_t q0, int64_t nq, size_t esize) {
  switch (esize) {
  case 1: rows_u8(drow, ds, srow, ss, p0, np, q0, nq); break;
  case 2: rows_u16(drow, ds, srow, ss, p0, np, q0, nq); break;
  case 4: rows_u32(drow, ds, srow, ss, p0, np, q0, nq); break;
  default: rows_u64(drow, ds, srow, ss, p0, np, q0, nq); break;
  }
}

static void rows_scalar(char *const *drow, const char *const *srow, int64_t p0, int64_t np,
                        int64_t q0, int64_t nq, size_t esize) {
  rows_sized(drow, 1, srow, 1, p0, np, q0, nq, esize);
}

/* The portable kernels: SSE2 where the build has it, else scalar. */
static void transpose_rows_baseline(char *const *drow, const char *const *srow, int64_t np,
                                    int64_t nq, size_t esize) {
#if defined(__SSE2__)
  if (esize == 4) {
    rows_f32_sse(drow, srow, np, nq);
    return;
  }
  if (esize == 8) {
    rows_f64_sse(drow, srow, np, nq);
    return;
  }
#endif
  rows_scalar(drow, srow, 0, np, 0, nq, esize);
}

/* The whole blocks through the vector kernel of `simd`, the ragged edges scalar. LT__CPU_TR_STREAM
 * only where lt__cpu_transpose_block(simd, esize) > 0 (see the header). */
static void transpose_rows(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                           size_t esize, lt__cpu_simd simd, unsigned mode) {
  int64_t b = lt__cpu_transpose_block(simd, esize);
  if (b == 0) {
    transpose_rows_baseline(drow, srow, np, nq, esize);
    return;
  }
#if defined(LT_HAVE_X86_ISA_KERNELS)
  if (simd == LT__CPU_SIMD_AVX512)
    lt__cpu_transpose_blocks_avx512(drow, srow, np, nq, esize, mode);
  else
    lt__cpu_transpose_blocks_avx2(drow, srow, np, nq, esize, mode);
#endif
  int64_t pb = np - np % (16 / (int64_t)esize), qb = nq - nq % b; /* see the header */
  rows_scalar(drow, srow, pb, np, 0, nq, esize);
  rows_scalar(drow, srow, 0, pb, qb, nq, esize);
}

static bool rows_line_aligned(char *const *drow, int64_t np) {
  for (int64_t p = 0; p < np; p++)
    if ((uintptr_t)drow[p] & 63) return false;
  return true;
}

void lt__cpu_transpose_rows(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                            size_t esize, lt__cpu_simd simd, unsigned mode) {
  size_t row = (size_t)nq * esize;
  unsigned ahead = mode & LT__CPU_TR_AHEAD;
  if (!(mode & LT__CPU_TR_STREAM) || row % 64 != 0) {
    transpose_rows(drow, srow, np, nq, esize, simd, ahead);
    return;
  }
  /* Whole lines straight from the registers when every row starts a line (then the vector
   * blocks cover the rows exactly: row is a multiple of 64 bytes, so of the block). */
  if (lt__cpu_transpose_block(simd, esize) > 0 && rows_line_aligned(drow, np)) {
    transpose_rows(drow, srow, np, nq, esize, simd, mode);
    return;
  }
  /* Else transpose into a cache-resident buffer, a few rows at a time, then stream each row
   * out in whole lines. */
  enum { BUF_ROWS = 16 };
  _Alignas(64) char buf[BUF_ROWS * LT__CPU_TILE_MAX * 8];
  char *brow[BUF_ROWS];
  const char *scol[LT__CPU_TILE_MAX];
  for (int64_t p = 0; p < BUF_ROWS; p++)
    brow[p] = buf + (size_t)p * row;
  for (int64_t p0 = 0; p0 < np; p0 += BUF_ROWS) {
    int64_t n = np - p0 < BUF_ROWS ? np - p0 : BUF_ROWS;
    for (int64_t q = 0; q < nq; q++)
      scol[q] = srow[q] + p0 * (int64_t)esize;
    transpose_rows(brow, scol, n, nq, esize, simd, ahead);
    for (int64_t p = 0; p < n; p++)
      lt__cpu_copy_stream(drow[p0 + p], brow[p], row, simd);
  }
}

void lt__cpu_transpose_rows_strided(char *const *drow, int64_t ds, const char *const *srow,
                                    int64_t ss, int64_t np, int64_t nq, size_t esize) {
  rows_sized(drow, ds, srow, ss, 0, np, 0, nq, esize);
}

void lt__cpu_transpose_tile(void *dst, int64_t ldd, const void *src, int64_t lds, int64_t np,
                            int64_t nq, size_t esize, lt__cpu_simd simd) {
  char *drow[LT__CPU_TILE_MAX] = {0};
  const char *srow[LT__CPU_TILE_MAX] = {0};
  for (int64_t p = 0; p < np; p++)
    drow[p] = (char *)dst + p * ldd * (int64_t)esize;
  for (int64_t q = 0; q < nq; q++)
    srow[q] = (const char *)src + q * lds * (int64_t)esize;
  transpose_rows(drow, srow, np, nq, esize, simd, 0);
}

/* The whole lines: one full-line store per line where the vector unit allows it (16-byte
 * non-temporal stores measured 10-25% slower than 32- or 64-byte ones on a 2 KB-row copy). */
static void stream_lines(char *d, const char *s, size_t body, lt__cpu_simd simd) {
#if defined(LT_HAVE_X86_ISA_KERNELS)
  if (simd == LT__CPU_SIMD_AVX512) {
    lt__cpu_stream_lines_avx512(d, s, body);
    return;
  }
  if (simd == LT__CPU_SIMD_AVX2) {
    lt__cpu_stream_lines_avx2(d, s, body);
    return;
  }
#else
  (void)simd;
#endif
#if defined(__SSE2__)
  for (size_t i = 0; i < body; i += 64) {
    __m128i x0 = _mm_loadu_si128((const __m128i *)(s + i));
    __m128i x1 = _mm_loadu_si128((const __m128i *)(s + i + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(s + i + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(s + i + 48));
    _mm_stream_si128((__m128i *)(d + i), x0);
    _mm_stream_si128((__m128i *)(d + i + 16), x1);
    _mm_stream_si128((__m128i *)(d + i + 32), x2);
    _mm_stream_si128((__m128i *)(d + i + 48), x3);
  }
#else
  memcpy(d, s, body);
#endif
}

/* Only whole, aligned 64-byte lines are streamed (a partial line written with non-temporal
 * stores costs a full memory round trip); the ragged ends use memcpy. */
void lt__cpu_copy_stream(void *dst, const void *src, size_t bytes, lt__cpu_simd simd) {
  char *d = dst;
  const char *s = src;
  size_t head = (64 - ((uintptr_t)d & 63)) & 63;
  if (head >= bytes || bytes - head < 64) {
    memcpy(d, s, bytes);
    return;
  }
  memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  size_t body = bytes & ~(size_t)63;
  stream_lines(d, s, body, simd);
  memcpy(d + body, s + body, bytes - body);
}

void lt__cpu_stream_fence(void) {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}
