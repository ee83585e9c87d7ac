/* SPDX-License-Identifier: MIT */
/* The chunk kernels of cpu_typed.inc compiled for AVX2 (names: those of cpu_typed.h with
 * _avx2 appended). The code is the portable one: without -ffast-math (and with ISO C's
 * fp-contract=off) the compiler may only widen the vectors, so results are bit for bit those of
 * the portable kernels. */
#if defined(LT_HAVE_X86_ISA_KERNELS)
#define LT_TYPED_ISA _avx2
#include "backend/cpu/cpu_typed_instances.inc"
#include "backend/cpu/cpu_typed_int_instances.inc"

const lt__cpu_kernels *lt__cpu_kernels_avx2(lt_dtype compute) {
  if (lt__cpu_table_is_int(compute)) return lt__cpu_kernels_int_avx2(compute);
  return compute == LT_F64 ? &kernels_f64_avx2 : &kernels_f32_avx2;
}
#endif
