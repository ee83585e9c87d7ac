/* SPDX-License-Identifier: MIT */
/* cpu_vocab_kernels.inc compiled for AVX2 (names with _avx2 appended); chosen only where the
 * context's instruction-set table is AVX2 or wider (cpu_vocab_kernels.c). */
#if defined(LT_HAVE_X86_ISA_KERNELS)
#define VK_ISA _avx2
#include "backend/cpu/cpu_vocab_kernels.inc"

const lt__cpu_vocab_kernels *lt__cpu_vocab_kernels_avx2(void) { return &vocab_kernels_avx2; }
#endif
