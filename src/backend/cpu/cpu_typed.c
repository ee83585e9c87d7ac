/* SPDX-License-Identifier: MIT */
/* The portable chunk kernels (cpu_typed_instances.inc, names in cpu_typed.h); the context's
 * ISA table (cpu_isa.c) picks these or a wider instance. */
#include "backend/cpu/cpu_isa.h"

#define LT_TYPED_ISA
#include "backend/cpu/cpu_typed_instances.inc"

const lt__cpu_kernels *lt__cpu_kernels_for(lt_dtype compute) {
  if (lt__cpu_table_is_int(compute)) return lt__cpu_kernels_int(compute);
  return compute == LT_F64 ? &kernels_f64 : &kernels_f32;
}
