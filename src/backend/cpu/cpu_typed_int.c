/* SPDX-License-Identifier: MIT */
/* The exact integer chunk kernels: cpu_typed_int.inc instantiated for I64 (signed) and U64
 * compute, and for the narrow widths the map engine computes at where the result is the same
 * (cpu_map.c). Generated names: load_X, store_X, stretch_X, scalar_X, fill_X, transform_X,
 * combine_X, select_X and kernels_X for X in i64 u64 i32 u32 i16 u16 i8 u8. */
#include "backend/cpu/cpu_int_ops.h"
#include "backend/cpu/cpu_typed.h"
#include "core/dtype.h"

#include <math.h>
#include <string.h>

#define T int64_t
#define UACC uint64_t
#define SGN true
#define SUFFIX(name) name##_i64
#define T_DTYPE LT_I64
#include "backend/cpu/cpu_typed_int.inc"
#undef T
#undef UACC
#undef SGN
#undef SUFFIX
#undef T_DTYPE

#define T uint64_t
#define UACC uint64_t
#define SGN false
#define SUFFIX(name) name##_u64
#define T_DTYPE LT_U64
#include "backend/cpu/cpu_typed_int.inc"
#undef T
#undef UACC
#undef SGN
#undef SUFFIX
#undef T_DTYPE

#define T int32_t
#define UACC uint32_t
#define SGN true
#define SUFFIX(name) name##_i32
#define T_DTYPE LT_I32
#include "backend/cpu/cpu_typed_int.inc"
#undef T
#undef UACC
#undef SGN
#undef SUFFIX
#undef T_DTYPE

#define T uint32_t
#define UACC uint32_t
#define SGN false
#define SUFFIX(name) name##_u32
#define T_DTYPE LT_U32
#include "backend/cpu/cpu_typed_int.inc"
#undef T
#undef UACC
#undef SGN
#undef SUFFIX
#undef T_DTYPE

#define T int16_t
#define UACC unsigned
#define SGN true
#define SUFFIX(name) name##_i16
#define T_DTYPE LT_I16
#include "backend/cpu/cpu_typed_int.inc"
#undef T
#undef UACC
#undef SGN
#undef SUFFIX
#undef T_DTYPE

#define T uint16_t
#define UACC unsigned
#define SGN false
#define SUFFIX(name) name##_u16
#define T_DTYPE LT_U16
#include "backend/cpu/cpu_typed_int.inc"
#undef T
#undef UACC
#undef SGN
#undef SUFFIX
#undef T_DTYPE

#define T int8_t
#define UACC unsigned
#define SGN true
#define SUFFIX(name) name##_i8
#define T_DTYPE LT_I8
#include "backend/cpu/cpu_typed_int.inc"
#undef T
#undef UACC
#undef SGN
#undef SUFFIX
#undef T_DTYPE

#define T uint8_t
#define UACC unsigned
#define SGN false
#define SUFFIX(name) name##_u8
#define T_DTYPE LT_U8
#include "backend/cpu/cpu_typed_int.inc"
#undef T
#undef UACC
#undef SGN
#undef SUFFIX
#undef T_DTYPE

const lt__cpu_kernels *lt__cpu_kernels_int(lt_dtype compute) {
  switch (compute) {
  case LT_U64: return &kernels_u64;
  case LT_I32: return &kernels_i32;
  case LT_U32: return &kernels_u32;
  case LT_I16: return &kernels_i16;
  case LT_U16: return &kernels_u16;
  case LT_I8: return &kernels_i8;
  case LT_U8: return &kernels_u8;
  default: return &kernels_i64;
  }
}
