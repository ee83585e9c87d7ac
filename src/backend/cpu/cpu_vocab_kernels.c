/* SPDX-License-Identifier: MIT */
/* The portable build of cpu_vocab_kernels.inc, and the choice of table per context. */
#include "backend/cpu/cpu.h"

#define VK_ISA
#include "backend/cpu/cpu_vocab_kernels.inc"

const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_for(lt_context *ctx) {
  /* By vector width, not by level name: the avx512bf16 level runs these AVX-512 loops too. */
  lt__cpu_simd simd = lt__cpu_isa_of(ctx)->simd;
  const lt__cpu_vocab_kernels *avx2 = lt__cpu_vocab_kernels_avx2();
  const lt__cpu_vocab_kernels *avx512 = lt__cpu_vocab_kernels_avx512();
  if (avx512 && simd == LT__CPU_SIMD_AVX512) return avx512;
  return avx2 && simd != LT__CPU_SIMD_BASELINE ? avx2 : &vocab_kernels;
}

#if !defined(LT_HAVE_X86_ISA_KERNELS)
const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_avx2(void) { return NULL; }
const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_avx512(void) { return NULL; }
#endif
