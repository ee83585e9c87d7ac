/* SPDX-License-Identifier: MIT */
/* The chunk kernels of cpu_typed.inc compiled for AVX512 (names: those of cpu_typed.h with
 * _avx512 appended). The code is the portable one: without -ffast-math (and with ISO C's
 * fp-contract=off) the compiler may only widen the vectors, so results are bit for bit those of
 * the portable kernels. */
#if defined(LT_HAVE_X86_ISA_KERNELS)
#define LT_TYPED_ISA _avx512
#include "backend/cpu/cpu_typed_instances.inc"

const lt__cpu_kernels *lt__cpu_kernels_avx512(lt_dtype compute) {
  if (lt__cpu_compute_is_int(compute)) return lt__cpu_kernels_int(compute);
  return compute == LT_F64 ? &kernels_f64_avx512 : &kernels_f32_avx512;
}
#endif
