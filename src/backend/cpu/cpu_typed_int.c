/* SPDX-License-Identifier: MIT */
/* The portable exact integer chunk kernels (cpu_typed_int_instances.inc, names there); the
 * context's ISA table picks these or a wider instance (cpu_typed_avx2.c, cpu_typed_avx512.c). */
#define LT_TYPED_ISA
#include "backend/cpu/cpu_typed_int_instances.inc"
