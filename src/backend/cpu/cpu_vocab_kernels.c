/* SPDX-License-Identifier: MIT */
/* The portable build of cpu_vocab_kernels.inc, and the choice of table per context. */
#include "backend/cpu/cpu.h"

#define VK_ISA
#include "backend/cpu/cpu_vocab_kernels.inc"

#include <string.h>

const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_for(lt_context *ctx) {
  const char *isa = lt__cpu_isa_of(ctx)->name;
  const lt__cpu_vocab_kernels *avx2 = lt__cpu_vocab_kernels_avx2();
  const lt__cpu_vocab_kernels *avx512 = lt__cpu_vocab_kernels_avx512();
  if (avx512 && strcmp(isa, "avx512") == 0) return avx512;
  return avx2 && strcmp(isa, "baseline") != 0 ? avx2 : &vocab_kernels;
}

#if !defined(LT_HAVE_X86_ISA_KERNELS)
const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_avx2(void) { return NULL; }
const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_avx512(void) { return NULL; }
#endif
