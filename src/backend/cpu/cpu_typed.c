/* The portable chunk kernels (cpu_typed_instances.inc, names in cpu_typed.h) and the choice of
 * the widest instance the CPU runs. */
#include "backend/cpu/cpu_isa.h"

#define LT_TYPED_ISA
#include "backend/cpu/cpu_typed_instances.inc"

const lt__cpu_kernels *lt__cpu_kernels_for(lt_dtype compute) {
  return compute == LT_F64 ? &kernels_f64 : &kernels_f32;
}

const lt__cpu_kernels *lt__cpu_kernels_widest(lt_dtype compute) {
#if defined(LT_HAVE_X86_ISA_KERNELS)
  if (lt__cpu_has_avx512()) return lt__cpu_kernels_avx512(compute);
  if (lt__cpu_has_avx2()) return lt__cpu_kernels_avx2(compute);
#endif
  return lt__cpu_kernels_for(compute);
}
