/* SPDX-License-Identifier: MIT */
/* Bit-exact copies for permutations without arithmetic: strided rows and transposed tiles. */
#ifndef LT_BACKEND_CPU_TRANSPOSE_H
#define LT_BACKEND_CPU_TRANSPOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest tile edge the tile kernels accept. */
#define LT__CPU_TILE_MAX 128

/* The vector unit the tile transposes use: the context's ISA table says which (cpu_isa.h). */
typedef enum lt__cpu_simd {
  LT__CPU_SIMD_BASELINE,
  LT__CPU_SIMD_AVX2,
  LT__CPU_SIMD_AVX512
} lt__cpu_simd;

/* dst[i*ds] = src[i*ss] for i < n, elements of esize bytes (2, 4 or 8). */
void lt__cpu_copy_strided(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n,
                          size_t esize);
/* dst[i] = src[i*ss] for i < n: the same into a contiguous row, through vector gathers where
 * `simd` has them (AVX-512, 4- and 8-byte elements). */
void lt__cpu_copy_gather(void *dst, const void *src, int64_t ss, int64_t n, size_t esize,
                         lt__cpu_simd simd);
/* How a tile transpose meets memory (a bit set). LT__CPU_TR_STREAM: destination rows that
 * cover whole aligned cache lines are written with non-temporal stores (for outputs far larger
 * than the caches: no read-for-ownership traffic). LT__CPU_TR_AHEAD: the source rows come from
 * memory and are read on past the tile, so each is requested LT__CPU_TR_AHEAD_BYTES ahead of
 * the reads, one line at a time. A tile reads 32-80 rows at once, more streams than the
 * hardware prefetchers follow: on Zen 3 a (1248, 29, 1248) -> [1,2,0] permutation went from
 * 22-25 ms to 14 ms with it; 256 bytes ahead gave 17 ms, 1024 the same as 512. */
enum { LT__CPU_TR_STREAM = 1, LT__CPU_TR_AHEAD = 2 };
#define LT__CPU_TR_AHEAD_BYTES 512

/* The LT__CPU_TR_AHEAD requests of the vector kernels, made when their reads of the rows reach
 * byte `at` (a multiple of 64). Prefetches never fault, so rows that end sooner are harmless. */
static inline void lt__cpu_fetch_rows_ahead(const char *const *srow, int64_t nq, int64_t at) {
  for (int64_t q = 0; q < nq; q++)
    __builtin_prefetch(srow[q] + at + LT__CPU_TR_AHEAD_BYTES);
}

/* Tile transpose over row pointers: element q of destination row p is element p of source
 * row q, for p < np, q < nq (both <= LT__CPU_TILE_MAX); `mode` as above. */
void lt__cpu_transpose_rows(char *const *drow, const char *const *srow, int64_t np, int64_t nq,
                            size_t esize, lt__cpu_simd simd, unsigned mode);
/* The same for rows whose elements are ds (destination) and ss (source) elements apart, any
 * signs: element q*ds of destination row p is element p*ss of source row q. Scalar; bits are
 * copied exactly, NaN payloads included. */
void lt__cpu_transpose_rows_strided(char *const *drow, int64_t ds, const char *const *srow,
                                    int64_t ss, int64_t np, int64_t nq, size_t esize);
/* Strided form of the same: dst[p*ldd + q] = src[q*lds + p]. */
void lt__cpu_transpose_tile(void *dst, int64_t ldd, const void *src, int64_t lds, int64_t np,
                            int64_t nq, size_t esize, lt__cpu_simd simd);

/* The vector kernels (cpu_transpose_avx2.c, cpu_transpose_avx512.c; call them only where
 * the ISA table allows): the same transpose restricted to q < nq - nq % b,
 * b = lt__cpu_transpose_block(simd, esize), and p < np - np % (16 / esize): whole b x b blocks,
 * then partial blocks of 16-byte column groups (short source rows, e.g. extents of 12, still
 * run in vectors). With LT__CPU_TR_STREAM in `mode` every destination row starts on a 64-byte
 * boundary and nq - nq % b elements are whole lines. */
int64_t lt__cpu_transpose_block(lt__cpu_simd simd, size_t esize);
void lt__cpu_transpose_blocks_avx2(char *const *drow, const char *const *srow, int64_t np,
                                   int64_t nq, size_t esize, unsigned mode);
/* lt__cpu_copy_gather's AVX-512 kernel: esize 4 or 8, 15 * |ss| < 2^31. */
void lt__cpu_gather_avx512(void *dst, const void *src, int64_t ss, int64_t n, size_t esize);
void lt__cpu_transpose_blocks_avx512(char *const *drow, const char *const *srow, int64_t np,
                                     int64_t nq, size_t esize, unsigned mode);
/* memcpy with non-temporal stores for the whole aligned 64-byte lines, as wide as `simd`
 * allows. */
void lt__cpu_copy_stream(void *dst, const void *src, size_t bytes, lt__cpu_simd simd);
/* Its vector kernels: `bytes` (a multiple of 64) from src to the 64-byte aligned dst. */
void lt__cpu_stream_lines_avx2(char *dst, const char *src, size_t bytes);
void lt__cpu_stream_lines_avx512(char *dst, const char *src, size_t bytes);
/* Orders the non-temporal stores of this thread before what follows. */
void lt__cpu_stream_fence(void);

#endif
