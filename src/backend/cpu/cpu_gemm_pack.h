/* SPDX-License-Identifier: MIT */
/* Packing for the micro-kernels: a block of a strided matrix into k-major panels of R rows. */
#ifndef LT_BACKEND_CPU_GEMM_PACK_H
#define LT_BACKEND_CPU_GEMM_PACK_H

#include "backend/backend.h"
#include "backend/cpu/cpu_transpose.h"

#include <stddef.h>
#include <stdint.h>

/* Packs rows [0, rows) x k [0, kc) of src (element (r, p) at src[r*s_row + p*s_k]) into
 * ceil(rows/R) panels, panel q holding (r = q*R + i, p) at dst[q*R*kc + p*R + i], rows past
 * `rows` zero. Elements of esize 4 or 8 bytes; `simd` picks the tile transposes used when k is
 * the unit-stride direction. */
void lt__gemm_pack(void *dst, const void *src, int64_t s_row, int64_t s_k, int64_t rows, int64_t kc,
                   int r, size_t esize, lt__cpu_simd simd);

/* Rows [0, nr) of one panel of width r (nr <= r), from dst on: dst may point part-way down a
 * panel, whose other rows are left as they are (pieces of a panel whose rows step evenly only
 * piece by piece). Element (i, p) of the source at src[i*s_row + p*s_k]. */
void lt__gemm_pack_rows(void *dst, const void *src, int64_t s_row, int64_t s_k, int64_t nr,
                        int64_t kc, int r, size_t esize, lt__cpu_simd simd);

/* lt__gemm_pack for 4-byte elements in AVX-512 vectors, where a source stride is unit and
 * r <= 32; false (nothing written) otherwise. Call only where the ISA table is AVX-512. */
bool lt__gemm_pack32_avx512(uint32_t *dst, const uint32_t *src, int64_t s_row, int64_t s_k,
                            int64_t rows, int64_t kc, int r);

/* Offsets (in elements) of indices [first, first + count) of group g into out: i * stride when
 * g->n == 0, else the sum of i's digits times the group's strides. */
void lt__gemm_offsets(const lt__gemm_group *g, int64_t stride, int64_t first, int64_t count,
                      int64_t *out);

/* lt__gemm_pack for a block of a scattered matrix: element (r, p) at src[roff[r] + koff[p]]. */
void lt__gemm_pack_scattered(void *dst, const void *src, const int64_t *roff, int64_t rows,
                             const int64_t *koff, int64_t kc, int r, size_t esize);

/* lt__gemm_pack_scattered for `lines` matrices at once, matrix w (< lines) holding element
 * (r, p) at src[roff[r] + koff[p] + w] and packed from dst + w * step (elements): a row group
 * whose unit stride lies on a mode other than its innermost, each cache line of that mode read
 * once for all the matrices it holds rows of; each position's element `ahead` further on is
 * fetched into the cache meanwhile (the lines of a later call). */
void lt__gemm_pack_lines(void *dst, int64_t step, const void *src, const int64_t *roff,
                         int64_t rows, const int64_t *koff, int64_t kc, int lines, int r,
                         size_t esize, lt__cpu_simd simd, int64_t ahead);

/* lt__gemm_pack_scattered through the strided packer where the offsets allow: k packed run by
 * run (k values whose offsets step evenly), each panel piece by piece (rows whose offsets step
 * evenly), element by element only where pieces or runs are short. */
void lt__gemm_pack_runs(void *dst, const void *src, const int64_t *roff, int64_t rows,
                        const int64_t *koff, int64_t kc, int r, size_t esize, lt__cpu_simd simd);

/* C[roff[i] + coff[j]] = alpha * tile[j*ld + i] + beta * C (beta == 0: C is not read) for
 * i < m, j < n; f32 when esize is 4, else f64. */
void lt__gemm_scatter_update(void *c, const int64_t *roff, const int64_t *coff, const void *tile,
                             int ld, int m, int n, double alpha, double beta, size_t esize);

#endif
