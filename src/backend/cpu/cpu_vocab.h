/* SPDX-License-Identifier: MIT */
/* The compute-heavy loops of the row engine (cpu_rows.c) and the random fills (cpu_random.c),
 * compiled portably, for AVX2 and for AVX-512 (cpu_vocab_kernels.c, _avx2.c, _avx512.c from
 * cpu_vocab_kernels.inc). Without -ffast-math and with ISO C's fp-contract=off the wider build
 * only widens the vectors: results are bit for bit the same on all three. */
#ifndef LT_BACKEND_CPU_VOCAB_H
#define LT_BACKEND_CPU_VOCAB_H

#include "backend/backend.h"

/* Typed buffer kernels of a row (cpu_rows.inc), for one compute type. */
typedef struct lt__cpu_rows_kernels {
  double (*max)(const void *x, int64_t n);
  void (*exp)(void *dst, const void *src, int64_t n, double shift);
  void (*scale)(void *dst, const void *src, int64_t n, double s);
  void (*shift)(void *dst, const void *src, int64_t n, double a, double b);
  void (*moments)(const void *x, int64_t n, double *mean, double *m2);
  void (*scan)(void *dst, const void *src, int64_t n, double *carry, bool prod);
} lt__cpu_rows_kernels;

typedef struct lt__cpu_vocab_kernels {
  const lt__cpu_rows_kernels *rows_f32, *rows_f64;
  /* Normals of elements [lo, lo + n) of a fill (lo even) into d. */
  void (*normals)(const lt__rng_step *s, int64_t lo, int64_t n, double *d);
  /* Single-precision uniforms of elements [lo, lo + n) (both multiples of 4) into f. */
  void (*uniforms_f32)(const lt__rng_step *s, int64_t lo, int64_t n, float *f);
} lt__cpu_vocab_kernels;

/* The table for a CPU context's instruction set (portable, AVX2, or AVX-512 where the context's
 * ISA table is that wide). */
const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_for(lt_context *ctx);
/* The AVX2 build (NULL when the build has no x86 ISA kernels). */
const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_avx2(void);
/* The AVX-512 build (NULL when the build has no x86 ISA kernels). */
const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_avx512(void);

#endif
