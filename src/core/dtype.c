/* Dtype names, sizes and the f16/bf16 conversions (round to nearest even, NaN/Inf kept). */
#include "core/dtype.h"
#include "core/error.h"

#include <math.h>
#include <string.h>

static const struct {
  lt_dtype dtype;
  size_t size;
  const char *names[4];
} dtype_table[] = {
    {LT_F16, 2, {"f16", "float16", "half", NULL}},  {LT_BF16, 2, {"bf16", "bfloat16", NULL, NULL}},
    {LT_F32, 4, {"f32", "float32", "float", NULL}}, {LT_F64, 8, {"f64", "float64", "double", NULL}},
    {LT_I64, 8, {"i64", "int64", NULL, NULL}},
};

size_t lt_dtype_size(lt_dtype dtype) {
  for (size_t i = 0; i < sizeof dtype_table / sizeof dtype_table[0]; i++)
    if (dtype_table[i].dtype == dtype) return dtype_table[i].size;
  return 0;
}

const char *lt_dtype_name(lt_dtype dtype) {
  for (size_t i = 0; i < sizeof dtype_table / sizeof dtype_table[0]; i++)
    if (dtype_table[i].dtype == dtype) return dtype_table[i].names[0];
  return NULL;
}

lt_status lt_dtype_from_name(const char *name, lt_dtype *out) {
  LT_CHECK_NULL(name, "name");
  LT_CHECK_NULL(out, "out");
  for (size_t i = 0; i < sizeof dtype_table / sizeof dtype_table[0]; i++)
    for (int j = 0; j < 4 && dtype_table[i].names[j]; j++)
      if (strcmp(name, dtype_table[i].names[j]) == 0) {
        *out = dtype_table[i].dtype;
        return LT_OK;
      }
  return lt__error(LT_ERR_DTYPE, "unknown dtype '%s' (expected f16, bf16, f32, f64 or i64)", name);
}

static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t lt_f32_to_bf16(float value) {
  uint32_t u = float_bits(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

float lt_bf16_to_f32(uint16_t bits) { return bits_float((uint32_t)bits << 16); }

uint16_t lt_f32_to_f16(float value) {
  uint32_t u = float_bits(value);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((absu >> 13) & 0x3ffu));
  if (absu >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* overflow (rounds to inf) */
  if (absu < 0x38800000u) {
    /* Subnormal or zero half: shift the implicit-one mantissa into place, rounding to even. */
    if (absu < 0x33000000u) return sign; /* below half the smallest subnormal */
    int exp = (int)(absu >> 23);
    uint32_t mant = (absu & 0x7fffffu) | 0x800000u;
    int shift = 126 - exp; /* 14..24 */
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t rounded = absu + 0xfffu + ((absu >> 13) & 1u);
  return (uint16_t)(sign | (((rounded - 0x38000000u) >> 13) & 0x7fffu));
}

/* f64 -> f32 rounded to odd: truncated, with the last bit set when inexact. Rounding that on
 * to f16 or bf16 (13 or 16 bits shorter) gives the correctly rounded result. */
static float f64_to_f32_odd(double d) {
  float f = (float)d;
  if ((double)f == d || d != d) return f;
  uint32_t u = float_bits(f);
  if (fabs((double)f) > fabs(d)) u -= 1; /* rounded away from zero: its truncated neighbour */
  return bits_float(u | 1u);
}

uint16_t lt__f64_to_f16(double v) { return lt_f32_to_f16(f64_to_f32_odd(v)); }

uint16_t lt__f64_to_bf16(double v) { return lt_f32_to_bf16(f64_to_f32_odd(v)); }

float lt_f16_to_f32(uint16_t bits) {
  uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t mant = bits & 0x3ffu;
  if (exp == 0x1fu) return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    float f = (float)mant * (1.0f / 16777216.0f); /* mant * 2^-24 */
    return sign ? -f : f;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}
