/* SPDX-License-Identifier: MIT */
/* AVX-512 panel packing: f32 blocks (lt__gemm_pack32_avx512, taken by lt__gemm_pack) and f16 /
 * bf16 blocks for the GEMM kernels (lt__gemm_pack16_fn): f16 widens with vcvtph2ps, bf16 with a
 * zero-extend and shift (both exact), and bf16 k pairs for the vdpbf16ps kernel interleave two k
 * rows with vpermt2w. Two layouts are vectorised: panel rows adjacent in memory (one load per k),
 * and k adjacent (16 rows loaded along k, then a 16x16 transpose in registers); anything else
 * goes to the portable packers. */
#include "backend/cpu/cpu_gemm_kernel.h"
#include "backend/cpu/cpu_gemm_pack.h"

#ifdef LT_HAVE_X86_ISA_KERNELS
#include <immintrin.h>

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* 16 halves (f16 or bf16) as 16 floats. */
static __m512 widen(__m256i h, bool bf16) {
  if (bf16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}

static __mmask16 lanes16(int64_t n) {
  return n <= 0 ? (__mmask16)0 : n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}
static __mmask32 lanes32(int64_t n) {
  return n >= 32 ? (__mmask32)~0u : (__mmask32)((1u << n) - 1);
}

/* Stores the first n (<= 32) lanes of a 32-lane row held as two 16-lane halves. */
static void store_row(uint32_t *d, __m512i lo, __m512i hi, int64_t n) {
  _mm512_mask_storeu_epi32(d, lanes16(n), lo);
  if (n > 16) _mm512_mask_storeu_epi32(d + 16, lanes16(n - 16), hi);
}

/* Panel rows adjacent in memory (row i at src[row0 + i + koff[p]]), nr <= r <= 32 of them. */
static void pack_rows_unit(uint32_t *d, const uint16_t *src, bool bf16, int64_t row0, int64_t nr,
                           const int64_t *koff, int64_t kc, int r, bool pairs) {
  __mmask32 m = lanes32(nr);
  if (!pairs) {
    for (int64_t p = 0; p < kc; p++) {
      __m512i x = _mm512_maskz_loadu_epi16(m, src + row0 + koff[p]);
      __m512 lo = widen(_mm512_castsi512_si256(x), bf16);
      __m512 hi = widen(_mm512_extracti64x4_epi64(x, 1), bf16);
      store_row(d + p * r, _mm512_castps_si512(lo), _mm512_castps_si512(hi), r);
    }
    return;
  }
  /* Lane t of the first result takes half t/2 of k row 2q (t even) or 2q + 1 (t odd). */
  __m512i idx_lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8,
                                    39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  __m512i idx_hi = _mm512_add_epi16(idx_lo, _mm512_set1_epi16(16));
  for (int64_t q = 0, depth = (kc + 1) / 2; q < depth; q++) {
    __m512i x0 = _mm512_maskz_loadu_epi16(m, src + row0 + koff[2 * q]);
    __m512i x1 = 2 * q + 1 < kc ? _mm512_maskz_loadu_epi16(m, src + row0 + koff[2 * q + 1])
                                : _mm512_setzero_si512();
    store_row(d + q * r, _mm512_permutex2var_epi16(x0, idx_lo, x1),
              _mm512_permutex2var_epi16(x0, idx_hi, x1), r);
  }
}

/* In place: x[i] lane j becomes x[j] lane i (32-bit elements). Inlined, so that x stays in
 * registers (a call passes it through memory). */
static inline __attribute__((always_inline)) void transpose16(__m512i x[16]) {
  __m512i t[16];
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_epi32(x[2 * i], x[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(x[2 * i], x[2 * i + 1]);
  }
  /* x[4i + c], 128-bit lane L: rows 4i..4i+3 of column 4L + c. */
  for (int i = 0; i < 4; i++) {
    x[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    x[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    x[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    x[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int c = 0; c < 4; c++) {
    __m512i a = _mm512_shuffle_i32x4(x[c], x[4 + c], 0x88);
    __m512i b = _mm512_shuffle_i32x4(x[c], x[4 + c], 0xDD);
    __m512i e = _mm512_shuffle_i32x4(x[8 + c], x[12 + c], 0x88);
    __m512i f = _mm512_shuffle_i32x4(x[8 + c], x[12 + c], 0xDD);
    t[c] = _mm512_shuffle_i32x4(a, e, 0x88);
    t[8 + c] = _mm512_shuffle_i32x4(a, e, 0xDD);
    t[4 + c] = _mm512_shuffle_i32x4(b, f, 0x88);
    t[12 + c] = _mm512_shuffle_i32x4(b, f, 0xDD);
  }
  for (int i = 0; i < 16; i++)
    x[i] = t[i];
}

/* k adjacent in memory (row i's element p at src[ro[i] + k0 + p]): 16 rows by 16 columns of
 * the panel (floats, or pairs) at a time, each row loaded along k and the tile transposed. */
static void pack_k_unit(uint32_t *d, const uint16_t *src, bool bf16, const int64_t *ro, int64_t nr,
                        int64_t k0, int64_t kc, int r, bool pairs) {
  int64_t depth = pairs ? (kc + 1) / 2 : kc;
  for (int64_t q0 = 0; q0 < depth; q0 += 16) {
    int64_t nq = min64(16, depth - q0);
    for (int i0 = 0; i0 < r; i0 += 16) {
      __m512i x[16];
      for (int i = 0; i < 16; i++) {
        if (i0 + i >= nr) {
          x[i] = _mm512_setzero_si512();
        } else if (pairs) {
          const uint16_t *s = src + ro[i0 + i] + k0 + 2 * q0;
          x[i] = _mm512_maskz_loadu_epi16(lanes32(kc - 2 * q0), s);
        } else {
          const uint16_t *s = src + ro[i0 + i] + k0 + q0;
          x[i] = _mm512_castps_si512(widen(_mm256_maskz_loadu_epi16(lanes16(nq), s), bf16));
        }
      }
      transpose16(x);
      for (int64_t t = 0; t < nq; t++)
        _mm512_mask_storeu_epi32(d + (q0 + t) * r + i0, lanes16(r - i0), x[t]);
    }
  }
}

static bool steps_by_one(const int64_t *off, int64_t n) {
  for (int64_t i = 1; i < n; i++)
    if (off[i] != off[0] + i) return false;
  return true;
}

void lt__gemm_pack16_avx512(void *dst, const uint16_t *src, bool bf16, const int64_t *roff,
                            int64_t rows, const int64_t *koff, int64_t kc, int r, bool pairs) {
  int64_t depth = pairs ? (kc + 1) / 2 : kc;
  bool k_unit = steps_by_one(koff, kc);
  for (int64_t r0 = 0; r0 < rows; r0 += r) {
    int64_t nr = min64(r, rows - r0);
    const int64_t *ro = roff + r0;
    uint32_t *d = (uint32_t *)dst + r0 * depth;
    if (r <= 32 && nr > 1 && steps_by_one(ro, nr))
      pack_rows_unit(d, src, bf16, ro[0], nr, koff, kc, r, pairs);
    else if (r <= 32 && k_unit && kc > 1)
      pack_k_unit(d, src, bf16, ro, nr, koff[0], kc, r, pairs);
    else
      lt__gemm_pack16_portable(d, src, bf16, ro, nr, koff, kc, r, pairs);
  }
}

/* 4-byte panels (f32) from a strided block: rows adjacent in memory (each k step is one masked
 * load and store per 16 rows), or k adjacent (16 k values of 16 rows loaded along k, then
 * transposed in registers). Rows past nr are written as zeros, so no panel is cleared first.
 * The scalar packer it replaces moved one element per instruction and, for the 12-wide B
 * panels (too narrow for the tile transposes), was a third of a 128x256x784 GEMM's time. */
/* k steps the row copies prefetch ahead, and elements along k the transposes do. */
#define PACK_PREFETCH 16
#define PACK_PREFETCH_T 64

bool lt__gemm_pack32_avx512(uint32_t *dst, const uint32_t *src, int64_t s_row, int64_t s_k,
                            int64_t rows, int64_t kc, int r) {
  if (r > 32 || (s_row != 1 && s_k != 1)) return false;
  for (int64_t r0 = 0; r0 < rows; r0 += r, dst += (int64_t)r * kc) {
    int64_t nr = min64(r, rows - r0);
    const uint32_t *s = src + r0 * s_row;
    if (s_row == 1) {
      __mmask16 l0 = lanes16(nr), l1 = lanes16(nr - 16);
      __mmask16 w0 = lanes16(r), w1 = r > 16 ? lanes16(r - 16) : 0;
      /* Each k reads new lines s_k elements apart, too far apart for the hardware prefetcher:
       * the loads waited on the cache (most of this packer's time in an MLP step). */
      for (int64_t p = 0; p < kc; p++) {
        const uint32_t *sp = s + p * s_k;
        if (p + PACK_PREFETCH < kc) {
          _mm_prefetch((const char *)(sp + PACK_PREFETCH * s_k), _MM_HINT_T0);
          if (nr > 16) _mm_prefetch((const char *)(sp + PACK_PREFETCH * s_k + 16), _MM_HINT_T0);
        }
        _mm512_mask_storeu_epi32(dst + p * r, w0, _mm512_maskz_loadu_epi32(l0, sp));
        if (w1)
          _mm512_mask_storeu_epi32(dst + p * r + 16, w1, _mm512_maskz_loadu_epi32(l1, sp + 16));
      }
      continue;
    }
    for (int64_t q0 = 0; q0 < kc; q0 += 16) {
      int64_t nq = min64(16, kc - q0);
      __mmask16 lq = lanes16(nq);
      for (int i0 = 0; i0 < r; i0 += 16) {
        __mmask16 w = lanes16(r - i0);
        if (i0 >= nr) { /* padding rows only */
          for (int64_t t = 0; t < nq; t++)
            _mm512_mask_storeu_epi32(dst + (q0 + t) * r + i0, w, _mm512_setzero_si512());
          continue;
        }
        __m512i x[16];
        /* 16 or more rows read along k at once: more streams than the hardware prefetcher
         * follows (the weight gradient of a contraction over a long k waited on memory). */
        for (int i = 0; i < 16 && i0 + i < nr && q0 + PACK_PREFETCH_T < kc; i++)
          _mm_prefetch((const char *)(s + (i0 + i) * s_row + q0 + PACK_PREFETCH_T), _MM_HINT_T0);
        for (int i = 0; i < 16; i++)
          x[i] = i0 + i < nr ? _mm512_maskz_loadu_epi32(lq, s + (i0 + i) * s_row + q0)
                             : _mm512_setzero_si512();
        transpose16(x);
        for (int64_t t = 0; t < nq; t++)
          _mm512_mask_storeu_epi32(dst + (q0 + t) * r + i0, w, x[t]);
      }
    }
  }
  return true;
}

#else
bool lt__gemm_pack32_avx512(uint32_t *dst, const uint32_t *src, int64_t s_row, int64_t s_k,
                            int64_t rows, int64_t kc, int r) {
  (void)dst, (void)src, (void)s_row, (void)s_k, (void)rows, (void)kc, (void)r;
  return false;
}

void lt__gemm_pack16_avx512(void *dst, const uint16_t *src, bool bf16, const int64_t *roff,
                            int64_t rows, const int64_t *koff, int64_t kc, int r, bool pairs) {
  lt__gemm_pack16_portable(dst, src, bf16, roff, rows, koff, kc, r, pairs);
}
#endif
