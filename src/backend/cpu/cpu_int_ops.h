/* SPDX-License-Identifier: MIT */
/* Exact integer arithmetic on 64-bit two's complement bits, shared by the integer chunk kernels
 * (cpu_typed_int.inc) and the integer reductions (cpu_reduce_int.c). `sgn` gives the bits the
 * signed (I64 compute) or unsigned (U64 compute) meaning. Every operation is defined for every
 * input, as NumPy defines it: sums and products wrap (computed unsigned, so no C signed
 * overflow), division by zero gives 0, INT64_MIN // -1 wraps, shifts by the width or more
 * give 0 (or -1). Narrower dtypes are computed here widened and wrap when stored, which gives
 * the same bits as NumPy's computation at their width. */
#ifndef LT_BACKEND_CPU_INT_OPS_H
#define LT_BACKEND_CPU_INT_OPS_H

#include "tensor.h"

static inline bool lt__int_less(uint64_t x, uint64_t y, bool sgn) {
  return sgn ? (int64_t)x < (int64_t)y : x < y;
}
static inline bool lt__int_negative(uint64_t x, bool sgn) { return sgn && (int64_t)x < 0; }

static inline uint64_t lt__int_floor_divide(uint64_t x, uint64_t y, bool sgn) {
  if (y == 0) return 0;
  if (!sgn) return x / y;
  int64_t a = (int64_t)x, b = (int64_t)y;
  if (b == -1) return 0 - x; /* INT64_MIN / -1 traps in C */
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) q--;
  return (uint64_t)q;
}

/* The floor remainder (the divisor's sign), or the truncated one (C's %, fmod) when !floor. */
static inline uint64_t lt__int_remainder(uint64_t x, uint64_t y, bool sgn, bool floor) {
  if (y == 0) return 0;
  if (!sgn) return x % y;
  int64_t a = (int64_t)x, b = (int64_t)y;
  if (b == -1) return 0;
  int64_t r = a % b;
  if (floor && r != 0 && ((r < 0) != (b < 0))) r += b;
  return (uint64_t)r;
}

static inline bool lt__int_shift_out(uint64_t count, bool sgn) {
  return lt__int_negative(count, sgn) || count >= 64;
}
static inline uint64_t lt__int_shift_left(uint64_t x, uint64_t count, bool sgn) {
  return lt__int_shift_out(count, sgn) ? 0 : x << count;
}
static inline uint64_t lt__int_shift_right(uint64_t x, uint64_t count, bool sgn) {
  if (lt__int_shift_out(count, sgn)) return lt__int_negative(x, sgn) ? ~(uint64_t)0 : 0;
  return sgn ? (uint64_t)((int64_t)x >> count) : x >> count;
}

static inline uint64_t lt__int_pow(uint64_t base, uint64_t e, bool sgn) {
  if (lt__int_negative(e, sgn)) {
    if (base == 1) return 1;
    if (sgn && base == ~(uint64_t)0) return (e & 1) ? base : 1;
    return 0;
  }
  uint64_t r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

static inline uint64_t lt__int_binary(uint64_t x, uint64_t y, lt_binary_op op, bool sgn) {
  switch (op) {
  case LT_BINARY_ADD: return x + y;
  case LT_BINARY_MUL: return x * y;
  case LT_BINARY_SUB: return x - y;
  case LT_BINARY_MIN: return lt__int_less(y, x, sgn) ? y : x;
  case LT_BINARY_MAX: return lt__int_less(x, y, sgn) ? y : x;
  case LT_BINARY_POW: return lt__int_pow(x, y, sgn);
  case LT_BINARY_EQ: return x == y;
  case LT_BINARY_NE: return x != y;
  case LT_BINARY_LT: return lt__int_less(x, y, sgn);
  case LT_BINARY_LE: return !lt__int_less(y, x, sgn);
  case LT_BINARY_GT: return lt__int_less(y, x, sgn);
  case LT_BINARY_GE: return !lt__int_less(x, y, sgn);
  case LT_BINARY_LOGICAL_AND: return (x != 0) & (y != 0);
  case LT_BINARY_LOGICAL_OR: return (x != 0) | (y != 0);
  case LT_BINARY_LOGICAL_XOR: return (x != 0) ^ (y != 0);
  case LT_BINARY_BITWISE_AND: return x & y;
  case LT_BINARY_BITWISE_OR: return x | y;
  case LT_BINARY_BITWISE_XOR: return x ^ y;
  case LT_BINARY_SHIFT_LEFT: return lt__int_shift_left(x, y, sgn);
  case LT_BINARY_SHIFT_RIGHT: return lt__int_shift_right(x, y, sgn);
  case LT_BINARY_FLOOR_DIVIDE: return lt__int_floor_divide(x, y, sgn);
  case LT_BINARY_REMAINDER: return lt__int_remainder(x, y, sgn, true);
  case LT_BINARY_FMOD: return lt__int_remainder(x, y, sgn, false);
  default: return 0; /* float-only ops compute in f64 (the front end sees to it) */
  }
}

static inline uint64_t lt__int_unary(uint64_t x, lt_unary_op op, bool sgn) {
  bool neg = lt__int_negative(x, sgn);
  switch (op) {
  case LT_UNARY_NEG: return 0 - x;
  case LT_UNARY_ABS: return neg ? 0 - x : x;
  case LT_UNARY_RELU: return neg ? 0 : x;
  case LT_UNARY_SQUARE: return x * x;
  case LT_UNARY_SIGN: return neg ? ~(uint64_t)0 : x != 0;
  case LT_UNARY_RECIPROCAL: return x == 1 ? 1 : (sgn && x == ~(uint64_t)0) ? x : 0;
  case LT_UNARY_NOT: return x == 0;
  case LT_UNARY_INVERT: return ~x;
  case LT_UNARY_ISNAN:
  case LT_UNARY_ISINF: return 0;
  case LT_UNARY_ISFINITE: return 1;
  case LT_UNARY_SIGNBIT: return neg;
  default: return x; /* identity, floor, ceil, round, trunc; float functions never come here */
  }
}

#endif
