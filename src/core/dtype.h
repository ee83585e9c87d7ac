/* SPDX-License-Identifier: MIT */
/* Per-dtype load/store converters for single elements (host side: items, scalars, files) and
 * the dtype classification; the bulk converters are the backends' typed kernels. */
#ifndef LT_CORE_DTYPE_H
#define LT_CORE_DTYPE_H

#include "tensor.h"

#include <math.h>
#include <string.h>

static inline bool lt__dtype_valid(lt_dtype d) { return d >= LT_F16 && d <= LT_BOOL; }
static inline bool lt__dtype_is_float(lt_dtype d) { return d >= LT_F16 && d <= LT_F64; }
static inline bool lt__dtype_is_int(lt_dtype d) { return d >= LT_I64 && d <= LT_U64; }
static inline bool lt__dtype_is_signed_int(lt_dtype d) { return d >= LT_I64 && d <= LT_I32; }
/* Integers and bool: computed exactly in the 64-bit integer compute types. */
static inline bool lt__dtype_is_exact(lt_dtype d) { return lt__dtype_is_int(d) || d == LT_BOOL; }

/* NumPy 2 promotion (lt_dtype_promote); LT_DTYPE_INVALID for an invalid input. */
lt_dtype lt__dtype_promote(lt_dtype a, lt_dtype b);
/* NumPy's result_type of n dtypes (n >= 1; LT_DTYPE_INVALID entries are skipped, all of them
 * give LT_DTYPE_INVALID): the same whatever their order, which a pairwise fold is not (int8,
 * uint8, f16 folds to f32 through int16; NumPy gives f16). */
lt_dtype lt__dtype_promote_many(int n, const lt_dtype *dtypes);

/* Reads element `i` of an integer or bool buffer as the two's complement bits of its value
 * (sign-extended for signed dtypes, zero-extended for unsigned ones and bool). */
static inline uint64_t lt__load_bits(const void *base, lt_dtype dtype, int64_t i) {
  switch (dtype) {
  case LT_I8: return (uint64_t)(int64_t)((const int8_t *)base)[i];
  case LT_I16: return (uint64_t)(int64_t)((const int16_t *)base)[i];
  case LT_I32: return (uint64_t)(int64_t)((const int32_t *)base)[i];
  case LT_I64: return (uint64_t)((const int64_t *)base)[i];
  case LT_U8: return ((const uint8_t *)base)[i];
  case LT_U16: return ((const uint16_t *)base)[i];
  case LT_U32: return ((const uint32_t *)base)[i];
  case LT_U64: return ((const uint64_t *)base)[i];
  case LT_BOOL: return ((const uint8_t *)base)[i] != 0;
  default: return 0;
  }
}

/* Writes the low bits of `v` (wrapping, as a C cast to an unsigned type) as element `i`; BOOL
 * stores v != 0. */
static inline void lt__store_bits(void *base, lt_dtype dtype, int64_t i, uint64_t v) {
  switch (dtype) {
  case LT_I8:
  case LT_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
  case LT_I16:
  case LT_U16: ((uint16_t *)base)[i] = (uint16_t)v; break;
  case LT_I32:
  case LT_U32: ((uint32_t *)base)[i] = (uint32_t)v; break;
  case LT_I64:
  case LT_U64: ((uint64_t *)base)[i] = v; break;
  case LT_BOOL: ((uint8_t *)base)[i] = v != 0; break;
  default: break;
  }
}

/* Reads element `i` of a buffer of `dtype` as double (integers rounded to nearest). */
static inline double lt__load_f64(const void *base, lt_dtype dtype, int64_t i) {
  switch (dtype) {
  case LT_F16: return lt_f16_to_f32(((const uint16_t *)base)[i]);
  case LT_BF16: return lt_bf16_to_f32(((const uint16_t *)base)[i]);
  case LT_F32: return ((const float *)base)[i];
  case LT_F64: return ((const double *)base)[i];
  case LT_U64: return (double)lt__load_bits(base, dtype, i);
  default: return (double)(int64_t)lt__load_bits(base, dtype, i);
  }
}

/* Doubles to f16 / bf16, rounded once to nearest even (not through the nearest float first,
 * which is off by one unit in rare halfway cases). */
uint16_t lt__f64_to_f16(double v);
uint16_t lt__f64_to_bf16(double v);

/* 64-bit integers as doubles rounded to odd (the neighbour with an odd last bit when inexact),
 * for conversions on to f16 / bf16: rounding those doubles to nearest even then gives the
 * correctly rounded value, where a double rounded to nearest first can land on a tie and round
 * the wrong way (2^62 + 2^54 + 1 became 2^62 in bf16, not 2^62 + 2^55). Exact below 2^53.
 * x holds the bits of an int64 (sgn) or a uint64. */
static inline double lt__int_to_f64_odd(uint64_t x, bool sgn) {
  double d = sgn ? (double)(int64_t)x : (double)x;
  double top = sgn ? 9.2233720368547758e18 : 1.8446744073709552e19; /* above every value */
  bool exact = d < top && (sgn ? (int64_t)d == (int64_t)x : (uint64_t)d == x);
  if (exact) return d;
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  if (bits & 1) return d;
  bool above = d >= top || (sgn ? (int64_t)d > (int64_t)x : (uint64_t)d > x);
  return nextafter(d, above ? -INFINITY : INFINITY);
}

/* Converts a double to int64 the way a saturating cast would (NaN -> 0). */
static inline int64_t lt__f64_to_i64(double v) {
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)v;
}

/* The same to uint64 (NaN and negatives -> 0). */
static inline uint64_t lt__f64_to_u64(double v) {
  if (!(v > 0)) return 0;
  if (v >= 1.8446744073709552e19) return UINT64_MAX;
  return (uint64_t)v;
}

/* Writes `v` converted to `dtype` as element `i` of a buffer: integers saturate to 64 bits and
 * then wrap to their width (callers that must not lose values check the range first). */
static inline void lt__store_f64(void *base, lt_dtype dtype, int64_t i, double v) {
  switch (dtype) {
  case LT_F16: ((uint16_t *)base)[i] = lt__f64_to_f16(v); break;
  case LT_BF16: ((uint16_t *)base)[i] = lt__f64_to_bf16(v); break;
  case LT_F32: ((float *)base)[i] = (float)v; break;
  case LT_F64: ((double *)base)[i] = v; break;
  case LT_U64: lt__store_bits(base, dtype, i, lt__f64_to_u64(v)); break;
  case LT_BOOL: lt__store_bits(base, dtype, i, v != 0); break;
  default: lt__store_bits(base, dtype, i, (uint64_t)lt__f64_to_i64(v)); break;
  }
}

/* The range of values an integer dtype holds, as doubles (exact: powers of two). */
static inline void lt__int_range(lt_dtype d, double *lo, double *hi_exclusive) {
  double bits = (double)(lt_dtype_size(d) * 8);
  bool s = lt__dtype_is_signed_int(d);
  *lo = s ? -ldexp(1.0, (int)bits - 1) : 0.0;
  *hi_exclusive = ldexp(1.0, (int)bits - (s ? 1 : 0));
}

#endif
