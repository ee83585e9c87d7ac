/* SPDX-License-Identifier: MIT */
/* The exact integer chunk kernels: cpu_typed_int.inc instantiated for I64 (signed) and U64
 * compute. Generated names: load_i64, store_i64, stretch_i64, scalar_i64, fill_i64,
 * transform_i64, combine_i64, select_i64, kernels_i64 and the same with _u64. */
#include "backend/cpu/cpu_int_ops.h"
#include "backend/cpu/cpu_typed.h"
#include "core/dtype.h"

#include <math.h>
#include <string.h>

#define T int64_t
#define SGN true
#define SUFFIX(name) name##_i64
#define T_DTYPE LT_I64
#include "backend/cpu/cpu_typed_int.inc"
#undef T
#undef SGN
#undef SUFFIX
#undef T_DTYPE

#define T uint64_t
#define SGN false
#define SUFFIX(name) name##_u64
#define T_DTYPE LT_U64
#include "backend/cpu/cpu_typed_int.inc"
#undef T
#undef SGN
#undef SUFFIX
#undef T_DTYPE

const lt__cpu_kernels *lt__cpu_kernels_int(lt_dtype compute) {
  return compute == LT_U64 ? &kernels_u64 : &kernels_i64;
}
