/* SPDX-License-Identifier: MIT */
/* Panel packing by element size (the values are only moved, so f32/f64 differ only in width):
 * pack_rows_u32 and pack_rows_u64. The read order follows whichever source stride is unit. */
#include "backend/cpu/cpu_gemm_pack.h"
#include "backend/cpu/cpu_gemm_kernel.h"

#include <string.h>

/* Rows [0, nr) of one panel of width r, written from dst on (dst may start part-way down a
 * panel) without touching its other rows. Fixed-width copies in place of a memcpy per k: a
 * panel row of 6-16 values is too short for a library call (NR-wide panels of a scattered B
 * spent a fifth of a GEMM in memmove). Rows of consecutive k there lie a line or more apart
 * and each is read once, so the lines PACK_AHEAD values of k on are requested while this one
 * is copied: TCCG's abc-adec-ebd (k 63 floats apart) packed 1.2-1.3x faster with them. */
#define PACK_AHEAD 8
#define LT_DEFINE_PACK_ROWS(S, name)                                                               \
  static void pack_rows_##name(S *dst, const S *s, int64_t s_row, int64_t s_k, int64_t nr,         \
                               int64_t kc, int r) {                                                \
    if (s_row == 1) {                                                                              \
      for (int64_t p = 0; p < kc; p++) {                                                           \
        uintptr_t ahead = (uintptr_t)(s + p * s_k) + (uintptr_t)(PACK_AHEAD * s_k * sizeof(S));    \
        __builtin_prefetch((const void *)ahead);                                                   \
        __builtin_prefetch((const void *)(ahead + (uintptr_t)(nr - 1) * sizeof(S)));               \
        for (int64_t i = 0; i < nr; i++)                                                           \
          dst[p * r + i] = s[p * s_k + i];                                                         \
      }                                                                                            \
    } else {                                                                                       \
      for (int64_t i = 0; i < nr; i++)                                                             \
        for (int64_t p = 0; p < kc; p++)                                                           \
          dst[p * r + i] = s[i * s_row + p * s_k];                                                 \
    }                                                                                              \
  }
LT_DEFINE_PACK_ROWS(uint32_t, u32)
LT_DEFINE_PACK_ROWS(uint64_t, u64)
#undef LT_DEFINE_PACK_ROWS

void lt__gemm_pack_rows(void *dst, const void *src, int64_t s_row, int64_t s_k, int64_t nr,
                        int64_t kc, int r, size_t esize, lt__cpu_simd simd) {
  int64_t es = (int64_t)esize;
  if (s_k == 1 && s_row != 1 && r >= lt__cpu_transpose_block(simd, esize)) {
    /* k contiguous in the source: a transpose (nr x kc into kc x r), done with the permutation
     * engine's register tiles, LT__CPU_TILE_MAX values of k at a time. */
    for (int64_t p0 = 0; p0 < kc; p0 += LT__CPU_TILE_MAX) {
      int64_t np = kc - p0 < LT__CPU_TILE_MAX ? kc - p0 : LT__CPU_TILE_MAX;
      lt__cpu_transpose_tile((char *)dst + p0 * r * es, r, (const char *)src + p0 * es, s_row, np,
                             nr, esize, simd);
    }
  } else if (esize == 4) {
    pack_rows_u32(dst, src, s_row, s_k, nr, kc, r);
  } else {
    pack_rows_u64(dst, src, s_row, s_k, nr, kc, r);
  }
}

void lt__gemm_pack(void *dst, const void *src, int64_t s_row, int64_t s_k, int64_t rows, int64_t kc,
                   int r, size_t esize, lt__cpu_simd simd) {
  if (simd == LT__CPU_SIMD_AVX512 && esize == 4 &&
      lt__gemm_pack32_avx512(dst, src, s_row, s_k, rows, kc, r))
    return;
  int64_t es = (int64_t)esize;
  char *d = dst;
  for (int64_t r0 = 0; r0 < rows; r0 += r, d += r * kc * es) {
    int64_t nr = rows - r0 < r ? rows - r0 : r;
    if (nr < r) memset(d, 0, esize * (size_t)r * (size_t)kc);
    lt__gemm_pack_rows(d, (const char *)src + r0 * s_row * es, s_row, s_k, nr, kc, r, esize, simd);
  }
}

/* Scattered packing through the strided packer where it can: the offsets of a scattered k (modes
 * whose strides do not merge) still step evenly along the innermost mode, so each panel is packed
 * run by run (a run: k values whose offsets step evenly), in vectors where a stride is unit.
 * A panel whose rows cross a mode boundary (16 rows over modes of 63: every fourth panel) is
 * packed piece by piece, a piece being rows that step evenly; element by element, such panels
 * took a quarter of a GEMM's time. Rows in pieces shorter than MIN_PIECE, and k of short runs,
 * take the element-wise packer. */
#define MIN_PIECE 4

/* End of the piece of rows starting at i0: the rows after it whose offsets keep its first step. */
static int64_t piece_end(const int64_t *ro, int64_t i0, int64_t nr, int64_t *step) {
  *step = i0 + 1 < nr ? ro[i0 + 1] - ro[i0] : 1;
  int64_t i1 = i0 + 1;
  while (i1 < nr && ro[i1] - ro[i1 - 1] == *step)
    i1++;
  return i1;
}

void lt__gemm_pack_runs(void *dst, const void *src, const int64_t *roff, int64_t rows,
                        const int64_t *koff, int64_t kc, int r, size_t esize, lt__cpu_simd simd) {
  char *buf = dst;
  const char *base = src;
  int64_t es = (int64_t)esize, runs = 1, step;
  for (int64_t p = 2; p < kc; p++)
    runs += koff[p] - koff[p - 1] != koff[p - 1] - koff[p - 2];
  if (kc < 8 * runs) {
    lt__gemm_pack_scattered(buf, base, roff, rows, koff, kc, r, esize);
    return;
  }
  for (int64_t r0 = 0; r0 < rows; r0 += r, buf += r * kc * es) {
    int64_t nr = rows - r0 < r ? rows - r0 : r, pieces = 0;
    const int64_t *ro = roff + r0;
    for (int64_t i0 = 0; i0 < nr; pieces++)
      i0 = piece_end(ro, i0, nr, &step);
    if (pieces * MIN_PIECE > nr && pieces > 1) {
      lt__gemm_pack_scattered(buf, base, ro, nr, koff, kc, r, esize);
      continue;
    }
    if (nr < r) memset(buf, 0, esize * (size_t)r * (size_t)kc);
    for (int64_t i0 = 0, i1; i0 < nr; i0 = i1) {
      i1 = piece_end(ro, i0, nr, &step);
      for (int64_t p0 = 0, p1; p0 < kc; p0 = p1) {
        int64_t ks = p0 + 1 < kc ? koff[p0 + 1] - koff[p0] : 1;
        for (p1 = p0 + 1; p1 < kc && koff[p1] - koff[p1 - 1] == ks; p1++)
          ;
        lt__gemm_pack_rows(buf + (p0 * r + i0) * es, base + (ro[i0] + koff[p0]) * es, step, ks,
                           i1 - i0, p1 - p0, r, esize, simd);
      }
    }
  }
}

void lt__gemm_offsets(const lt__gemm_group *g, int64_t stride, int64_t first, int64_t count,
                      int64_t *out) {
  if (g->n == 0) {
    for (int64_t i = 0; i < count; i++)
      out[i] = (first + i) * stride;
    return;
  }
  /* One division per mode for the first index, then an odometer. */
  int64_t digit[LT__GEMM_GROUP_MODES], off = 0, rest = first;
  for (int d = g->n - 1; d >= 0; d--) {
    digit[d] = rest % g->extent[d];
    rest /= g->extent[d];
    off += digit[d] * g->stride[d];
  }
  for (int64_t i = 0; i < count; i++) {
    out[i] = off;
    for (int d = g->n - 1; d >= 0; d--) {
      off += g->stride[d];
      if (++digit[d] < g->extent[d]) break;
      off -= g->extent[d] * g->stride[d];
      digit[d] = 0;
    }
  }
}

/* Reads run along whichever of the two index lists steps by one element, when either does. */
#define LT_DEFINE_PACK_SCATTERED(S, name)                                                          \
  static void pack_scattered_##name(S *dst, const S *src, const int64_t *roff, int64_t rows,       \
                                    const int64_t *koff, int64_t kc, int r) {                      \
    bool k_inner = kc > 1 && koff[1] - koff[0] == 1;                                               \
    for (int64_t r0 = 0; r0 < rows; r0 += r, dst += (int64_t)r * kc) {                             \
      int64_t nr = rows - r0 < r ? rows - r0 : r;                                                  \
      const int64_t *ro = roff + r0;                                                               \
      if (nr < r) memset(dst, 0, sizeof(S) * (size_t)r * (size_t)kc);                              \
      if (k_inner) {                                                                               \
        for (int64_t i = 0; i < nr; i++)                                                           \
          for (int64_t p = 0; p < kc; p++)                                                         \
            dst[p * r + i] = src[ro[i] + koff[p]];                                                 \
      } else {                                                                                     \
        for (int64_t p = 0; p < kc; p++)                                                           \
          for (int64_t i = 0; i < nr; i++)                                                         \
            dst[p * r + i] = src[ro[i] + koff[p]];                                                 \
      }                                                                                            \
    }                                                                                              \
  }
LT_DEFINE_PACK_SCATTERED(uint32_t, u32)
LT_DEFINE_PACK_SCATTERED(uint64_t, u64)
#undef LT_DEFINE_PACK_SCATTERED

void lt__gemm_pack_scattered(void *dst, const void *src, const int64_t *roff, int64_t rows,
                             const int64_t *koff, int64_t kc, int r, size_t esize) {
  if (esize == 4)
    pack_scattered_u32(dst, src, roff, rows, koff, kc, r);
  else
    pack_scattered_u64(dst, src, roff, rows, koff, kc, r);
}

/* Each (row, k) position is one run of `lines` elements along the unit-stride mode: per panel
 * and k index, the panel's rows' runs are one tile transposed into the `lines` matrices (whose
 * panel rows are consecutive), in vectors where the ISA has them. */
void lt__gemm_pack_lines(void *dst, int64_t step, const void *src, const int64_t *roff,
                         int64_t rows, const int64_t *koff, int64_t kc, int lines, int r,
                         size_t esize, lt__cpu_simd simd, int64_t ahead) {
  int64_t es = (int64_t)esize, panel = (int64_t)r * kc;
  const char *srow[LT__CPU_TILE_MAX];
  char *drow[LT__CPU_TILE_MAX];
  for (int64_t i0 = 0; i0 < rows; i0 += r) {
    int64_t nr = rows - i0 < r ? rows - i0 : r;
    char *out = (char *)dst + i0 / r * panel * es;
    if (nr < r)
      for (int w = 0; w < lines; w++)
        memset(out + w * step * es, 0, esize * (size_t)panel);
    for (int64_t p = 0; p < kc; p++) {
      for (int64_t i = 0; i < nr; i++) {
        srow[i] = (const char *)src + (roff[i0 + i] + koff[p]) * es;
        __builtin_prefetch(srow[i] + ahead * es, 0, 2);
      }
      for (int w = 0; w < lines; w++)
        drow[w] = out + (w * step + p * r) * es;
      lt__cpu_transpose_rows(drow, srow, lines, nr, esize, simd, 0);
    }
  }
}

#define LT_DEFINE_SCATTER_UPDATE(T, name)                                                          \
  static void scatter_update_##name(T *c, const int64_t *roff, const int64_t *coff, const T *tile, \
                                    int ld, int m, int n, T alpha, T beta) {                       \
    for (int j = 0; j < n; j++)                                                                    \
      for (int i = 0; i < m; i++) {                                                                \
        T *cij = c + roff[i] + coff[j];                                                            \
        *cij = beta != 0 ? alpha * tile[j * ld + i] + beta * *cij : alpha * tile[j * ld + i];      \
      }                                                                                            \
  }
LT_DEFINE_SCATTER_UPDATE(float, f32)
LT_DEFINE_SCATTER_UPDATE(double, f64)
#undef LT_DEFINE_SCATTER_UPDATE

void lt__gemm_scatter_update(void *c, const int64_t *roff, const int64_t *coff, const void *tile,
                             int ld, int m, int n, double alpha, double beta, size_t esize) {
  if (esize == 4)
    scatter_update_f32(c, roff, coff, tile, ld, m, n, (float)alpha, (float)beta);
  else
    scatter_update_f64(c, roff, coff, tile, ld, m, n, alpha, beta);
}

static float f32_of_16(uint16_t h, bool bf16) {
  if (!bf16) return lt_f16_to_f32(h);
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

void lt__gemm_pack16_portable(void *dst, const uint16_t *src, bool bf16, const int64_t *roff,
                              int64_t rows, const int64_t *koff, int64_t kc, int r, bool pairs) {
  int64_t depth = pairs ? (kc + 1) / 2 : kc;
  for (int64_t r0 = 0; r0 < rows; r0 += r) {
    int64_t nr = rows - r0 < r ? rows - r0 : r;
    const int64_t *ro = roff + r0;
    if (pairs) {
      uint32_t *d = (uint32_t *)dst + r0 * depth;
      if (nr < r) memset(d, 0, sizeof *d * (size_t)r * (size_t)depth);
      for (int64_t q = 0; q < depth; q++)
        for (int64_t i = 0; i < nr; i++) {
          uint32_t lo = src[ro[i] + koff[2 * q]];
          uint32_t hi = 2 * q + 1 < kc ? src[ro[i] + koff[2 * q + 1]] : 0;
          d[q * r + i] = lo | hi << 16;
        }
    } else {
      float *d = (float *)dst + r0 * depth;
      if (nr < r) memset(d, 0, sizeof *d * (size_t)r * (size_t)depth);
      for (int64_t p = 0; p < kc; p++)
        for (int64_t i = 0; i < nr; i++)
          d[p * r + i] = f32_of_16(src[ro[i] + koff[p]], bf16);
    }
  }
}
