/* SPDX-License-Identifier: MIT */
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
    {LT_I64, 8, {"i64", "int64", NULL, NULL}},      {LT_I8, 1, {"i8", "int8", NULL, NULL}},
    {LT_I16, 2, {"i16", "int16", NULL, NULL}},      {LT_I32, 4, {"i32", "int32", NULL, NULL}},
    {LT_U8, 1, {"u8", "uint8", NULL, NULL}},        {LT_U16, 2, {"u16", "uint16", NULL, NULL}},
    {LT_U32, 4, {"u32", "uint32", NULL, NULL}},     {LT_U64, 8, {"u64", "uint64", NULL, NULL}},
    {LT_BOOL, 1, {"bool", "b1", NULL, NULL}},
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
  return lt__error(LT_ERR_DTYPE,
                   "unknown dtype '%s' (expected f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, "
                   "u32, u64 or bool)",
                   name);
}

bool lt_dtype_is_integer(lt_dtype d) { return lt__dtype_is_int(d); }
bool lt_dtype_is_signed(lt_dtype d) { return lt__dtype_is_signed_int(d); }
bool lt_dtype_is_float(lt_dtype d) { return lt__dtype_is_float(d); }

/* Bits of an integer dtype. */
static int int_bits(lt_dtype d) { return (int)lt_dtype_size(d) * 8; }

static lt_dtype signed_of_bits(int bits) {
  return bits <= 8 ? LT_I8 : bits <= 16 ? LT_I16 : bits <= 32 ? LT_I32 : LT_I64;
}

/* The smallest float that holds every value of an integer dtype (bf16/f16: 8 bits). */
static lt_dtype float_for_int(lt_dtype i, lt_dtype f) {
  int bits = int_bits(i);
  if (f == LT_F64 || bits >= 32) return LT_F64;
  if (f == LT_F32 || bits == 16) return LT_F32;
  return f; /* f16 / bf16 with 8-bit integers */
}

lt_dtype lt__dtype_promote(lt_dtype a, lt_dtype b) {
  if (!lt__dtype_valid(a) || !lt__dtype_valid(b)) return LT_DTYPE_INVALID;
  if (a == b) return a;
  if (a == LT_BOOL) return b;
  if (b == LT_BOOL) return a;
  bool fa = lt__dtype_is_float(a), fb = lt__dtype_is_float(b);
  if (fa && fb) {
    if ((a == LT_F16 && b == LT_BF16) || (a == LT_BF16 && b == LT_F16)) return LT_F32;
    return lt_dtype_size(a) >= lt_dtype_size(b) ? a : b;
  }
  if (fa) return float_for_int(b, a);
  if (fb) return float_for_int(a, b);
  bool sa = lt__dtype_is_signed_int(a), sb = lt__dtype_is_signed_int(b);
  if (sa == sb) return int_bits(a) >= int_bits(b) ? a : b;
  lt_dtype s = sa ? a : b, u = sa ? b : a;
  if (int_bits(s) > int_bits(u)) return s;
  return u == LT_U64 ? LT_F64 : signed_of_bits(2 * int_bits(u));
}

/* The floats' common dtype first, then every operand promoted with it: promotion among floats
 * and among integers is associative, so this is order-free, and it matches NumPy's
 * PyArray_PromoteDTypeSequence on every sequence of up to 4 of NumPy's dtypes (checked
 * exhaustively against np.result_type). */
lt_dtype lt__dtype_promote_many(int n, const lt_dtype *dtypes) {
  lt_dtype f = LT_DTYPE_INVALID, r = LT_DTYPE_INVALID;
  for (int i = 0; i < n; i++)
    if (lt__dtype_is_float(dtypes[i]))
      f = f == LT_DTYPE_INVALID ? dtypes[i] : lt__dtype_promote(f, dtypes[i]);
  for (int i = 0; i < n; i++) {
    if (dtypes[i] == LT_DTYPE_INVALID) continue;
    lt_dtype x = f == LT_DTYPE_INVALID ? dtypes[i] : lt__dtype_promote(f, dtypes[i]);
    r = r == LT_DTYPE_INVALID ? x : lt__dtype_promote(r, x);
  }
  return r;
}

lt_status lt_dtype_promote(lt_dtype a, lt_dtype b, lt_dtype *out) {
  LT_CHECK_NULL(out, "out");
  *out = lt__dtype_promote(a, b);
  LT_RETURN_IF(*out == LT_DTYPE_INVALID, LT_ERR_DTYPE, "lt_dtype_promote: invalid dtype %d",
               lt__dtype_valid(a) ? (int)b : (int)a);
  return LT_OK;
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
  /* A signalling NaN comes out quiet, as IEEE 754's conversion and F16C's vcvtph2ps make it,
   * so the vector paths give the same bits (lt_f32_to_f16 quiets the other way too). */
  if (exp == 0x1fu) return bits_float(sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u));
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    float f = (float)mant * (1.0f / 16777216.0f); /* mant * 2^-24 */
    return sign ? -f : f;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}
