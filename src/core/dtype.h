/* Per-dtype load/store converters: the only place where dtypes differ. */
#ifndef LT_CORE_DTYPE_H
#define LT_CORE_DTYPE_H

#include "tensor.h"

#include <string.h>

/* Reads element `i` of a buffer of `dtype` as double. */
static inline double lt__load_f64(const void *base, lt_dtype dtype, int64_t i) {
  switch (dtype) {
  case LT_F16: return lt_f16_to_f32(((const uint16_t *)base)[i]);
  case LT_BF16: return lt_bf16_to_f32(((const uint16_t *)base)[i]);
  case LT_F32: return ((const float *)base)[i];
  case LT_F64: return ((const double *)base)[i];
  case LT_I64: return (double)((const int64_t *)base)[i];
  default: return 0.0;
  }
}

/* Doubles to f16 / bf16, rounded once to nearest even (not through the nearest float first,
 * which is off by one unit in rare halfway cases). */
uint16_t lt__f64_to_f16(double v);
uint16_t lt__f64_to_bf16(double v);

/* Converts a double to int64 the way a saturating cast would (NaN -> 0). */
static inline int64_t lt__f64_to_i64(double v) {
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)v;
}

/* Writes `v` converted to `dtype` as element `i` of a buffer. */
static inline void lt__store_f64(void *base, lt_dtype dtype, int64_t i, double v) {
  switch (dtype) {
  case LT_F16: ((uint16_t *)base)[i] = lt__f64_to_f16(v); break;
  case LT_BF16: ((uint16_t *)base)[i] = lt__f64_to_bf16(v); break;
  case LT_F32: ((float *)base)[i] = (float)v; break;
  case LT_F64: ((double *)base)[i] = v; break;
  case LT_I64: ((int64_t *)base)[i] = lt__f64_to_i64(v); break;
  default: break;
  }
}

static inline bool lt__dtype_valid(lt_dtype d) { return d >= LT_F16 && d <= LT_I64; }
static inline bool lt__dtype_is_float(lt_dtype d) { return d >= LT_F16 && d <= LT_F64; }

#endif
