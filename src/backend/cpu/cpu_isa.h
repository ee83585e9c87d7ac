/* SPDX-License-Identifier: MIT */
/* Which vector instruction sets the CPU kernels may use: one table per instruction set, chosen
 * once when a context opens (lt__cpu_isa_select; LT_CPU_ISA is read then, not per operation).
 * Kernels for AVX2 / AVX-512 live in files named *_avx2.c / *_avx512.c that are compiled for
 * that set only, so nothing in them may run unless the chosen table points at them. */
#ifndef LT_BACKEND_CPU_ISA_H
#define LT_BACKEND_CPU_ISA_H

#include "backend/cpu/cpu_gemm_kdot.h"
#include "backend/cpu/cpu_gemm_kernel.h"
#include "backend/cpu/cpu_gemm_small.h"
#include "backend/cpu/cpu_gemm_stream.h"
#include "backend/cpu/cpu_transpose.h"
#include "backend/cpu/cpu_typed.h"

#include <stdbool.h>

typedef struct lt__cpu_isa {
  const char *name;  /* "baseline", "avx2", "avx512", "avx512bf16" */
  lt__cpu_simd simd; /* tile transposes, gathers and streaming stores */
  /* Chunk kernels for a compute dtype (F32, F64): lt__cpu_kernels_for / _avx2 / _avx512; the
   * results are identical on every path. */
  const lt__cpu_kernels *(*kernels)(lt_dtype compute);
  /* Blocking of the packed AVX-512 GEMM kernels, NULL where they may not run (then GEMM goes
   * to OpenBLAS, or to the portable packed kernels for what BLAS does not take). LT_BF16
   * names the bf16 dot-product kernels (A and B bf16, C f32), NULL where the CPU lacks them. */
  const lt__gemm_blocking *(*gemm_blocking)(lt_dtype dtype);
  /* Tile kernels of the streaming small-k GEMM engine (cpu_gemm_stream.c), NULL where there
   * are none (then small-k GEMMs run on the other engines). */
  const lt__gemm_stream *(*gemm_stream)(lt_dtype dtype);
  /* Kernels of the small-GEMM engine (cpu_gemm_small.c), NULL where there are none. */
  const lt__gemm_small *(*gemm_small)(lt_dtype dtype);
  /* Kernels of the k-dot engine (cpu_gemm_kdot.c), NULL where there are none. */
  const lt__gemm_kdot *(*gemm_kdot)(lt_dtype dtype);
} lt__cpu_isa;

/* The widest table the build has and the running CPU (and OS) supports, capped by LT_CPU_ISA
 * (baseline, avx2, avx512, avx512bf16), so the tests can run every code path on one machine and
 * users can rule out a suspect kernel. Reads the environment: call it once per context. */
const lt__cpu_isa *lt__cpu_isa_select(void);

/* Whether the CPU converts f16 <-> f32 in hardware (F16C): the AVX2 tables' f16 paths ask, since
 * a hypervisor may hide it from a CPU that has AVX2. */
bool lt__cpu_has_f16c(void);

#endif
