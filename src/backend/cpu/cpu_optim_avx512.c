/* SPDX-License-Identifier: MIT */
/* cpu_optim.inc compiled for AVX-512 (adam_f32_avx512, adam_f64_avx512); chosen only where the
 * context's instruction-set table is AVX-512 (cpu_optim.c). */
#if defined(LT_HAVE_X86_ISA_KERNELS)
#include "backend/cpu/cpu_optim.h"
#define ADAM_ISA _avx512
#include "backend/cpu/cpu_optim.inc"

lt__cpu_adam_fn lt__cpu_adam_kernel_avx512(lt_dtype dtype) {
  return dtype == LT_F64 ? adam_f64_avx512 : adam_f32_avx512;
}
#endif
