/* SPDX-License-Identifier: MIT */
/* The k-dot GEMM engine (cpu_gemm_kdot.c) for a small C beside a long k with k the unit stride
 * of both operands: the weight gradient of a contraction over a large batch (C 64 x 48,
 * k = 49152, every row of A and B 196 KB from the next). The packed engine transposes both
 * operands into k-major panels, which costs as much as the arithmetic there; reading the rows in
 * place thrashes L1, since rows a multiple of 4 KiB apart all map to the same cache sets. Here
 * each k block of every row is copied once, as whole vectors, into a small interleaved panel
 * (no transpose), and a register tile of MR x NR vector dot products runs over the panels,
 * keeping per-lane partial sums in a per-thread buffer until the end of its k range. */
#ifndef LT_BACKEND_CPU_GEMM_KDOT_H
#define LT_BACKEND_CPU_GEMM_KDOT_H

#include "backend/backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Panels: rows [q*R, q*R + R) of an operand over a k block of up to `steps` vectors of LANES
 * values are stored as dst[((q*steps + s)*R + r)*LANES + l] = row (q*R + r) at k = s*LANES + l
 * (zero past the operand's rows or the block's k). */

/* Work a kernel does between its FMAs, one piece per step, so that memory traffic overlaps the
 * arithmetic rather than stalling the core on fill buffers ahead of it: prefetch the 64-byte
 * lines [0, pf_lines) of pf (the row copied next), and copy `vectors` whole vectors from src
 * (unaligned) to dst + v * dst_stride elements (one row of the next block's panel). */
typedef struct lt__kdot_side {
  const void *pf;
  int64_t pf_lines;
  const void *src;
  void *dst;
  int64_t dst_stride, vectors;
} lt__kdot_side;

/* acc[(r*NR + j)*LANES + l] (+)= sum_s x[(s*MR + r)*LANES + l] * y[(s*NR + j)*LANES + l] for
 * r < MR, j < NR: `first` starts from zero instead of acc; and the side work (vectors and
 * pf_lines at most steps). */
typedef void (*lt__kdot_kernel)(int64_t steps, const void *x, const void *y, void *acc, bool first,
                                const lt__kdot_side *side);
/* Packs rows [first, first + count) of a k block into panels of R rows (R = the kernel's MR
 * or NR) whose stride is panel_steps vectors: row i's block begins at src + off[i] elements
 * and holds kc <= panel_steps * LANES values, k past kc is zero; src NULL writes zero rows. */
typedef void (*lt__kdot_pack)(void *dst, const void *src, const int64_t *off, int64_t first,
                              int64_t count, int r, int64_t kc, int64_t panel_steps);
/* out[i] = sum over lanes of acc[i*LANES ...] for i < count. */
typedef void (*lt__kdot_reduce)(const void *acc, int64_t count, void *out);

typedef struct lt__gemm_kdot {
  lt_dtype dtype;
  size_t esize;
  int lanes, mr, nr;
  int64_t kc; /* values of k per block: MR + NR rows of it stay in L1 */
  lt__kdot_kernel kernel;
  lt__kdot_pack pack;
  lt__kdot_reduce reduce;
} lt__gemm_kdot;

/* The AVX-512 and AVX2 kernels for LT_F32 / LT_F64 (NULL for other dtypes or when not built),
 * reached only through the ISA table (cpu_isa.c). Instantiated from cpu_gemm_kdot_kernel.inc:
 * gemm_kdot_f32_avx512, gemm_kdot_f64_avx512, gemm_kdot_f32_avx2, gemm_kdot_f64_avx2 (each with
 * _pack and _reduce). */
const lt__gemm_kdot *lt__gemm_kdot_avx512(lt_dtype dtype);
const lt__gemm_kdot *lt__gemm_kdot_avx2(lt_dtype dtype);

#endif
