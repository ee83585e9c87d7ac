/* SPDX-License-Identifier: MIT */
/* The portable build of cpu_vocab_kernels.inc, and the choice of table per context. */
#include "backend/cpu/cpu.h"

#define VK_ISA
#include "backend/cpu/cpu_vocab_kernels.inc"

#include <string.h>

const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_for(lt_context *ctx) {
  const lt__cpu_vocab_kernels *avx2 = lt__cpu_vocab_kernels_avx2();
  return avx2 && strcmp(lt__cpu_isa_of(ctx)->name, "baseline") != 0 ? avx2 : &vocab_kernels;
}

#if !defined(LT_HAVE_X86_ISA_KERNELS)
const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_avx2(void) { return NULL; }
#endif
