/* SPDX-License-Identifier: MIT */
/* e^x and tanh x for float arguments, evaluated in double without branches so that the chunk
 * kernels vectorise them (libm's expf and tanhf are calls per element: a 1M-element f32 exp ran
 * at 4.6 ns an element, tanh at 19-22, against NumPy's SIMD 0.6 and 0.5). The double result
 * is within about 2^-40 of the true value and is rounded to float once, so it is the correctly
 * rounded float but for inputs within 2^-40 of a rounding boundary (off by one ulp there).
 * Only +, -, *, / and bit moves, with no fused multiply-adds (cpu_typed*.c compile with
 * -ffp-contract=off): the same bits on every instruction-set level. */
#ifndef LT_BACKEND_CPU_MATH_F32_H
#define LT_BACKEND_CPU_MATH_F32_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* e^x for |x| <= 700 (NaN passes through): 2^n * e^r with n = round(x / ln 2) found by the
 * 1.5 * 2^52 shifter (whose low mantissa bits then hold n), r = x - n ln 2 in two parts (the
 * high part has 32 significant bits, so n * ln2_hi is exact), and e^r, |r| <= 0.35, by its
 * Taylor series to r^10 (the first term left out: r^11 / 11! < 2.2e-13). */
static inline double lt__exp_core(double x) {
  const double shifter = 0x1.8p52;
  double t = x * 0x1.71547652b82fep0 + shifter;
  double n = t - shifter;
  double r = (x - n * 0x1.62e42feep-1) - n * 0x1.a39ef35793c76p-33;
  double p = 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  int64_t tb, sb;
  memcpy(&tb, &t, sizeof tb);
  memcpy(&sb, &shifter, sizeof sb);
  int64_t scale_bits = (int64_t)((uint64_t)(tb - sb + 1023) << 52);
  double scale;
  memcpy(&scale, &scale_bits, sizeof scale);
  return p * scale;
}

/* The clamps and selects below work on bits with masks, not on floats: an ordered float
 * comparison may raise the invalid flag on NaN, and a select feeding arithmetic lets the
 * compiler specialise that arithmetic per branch; either way it keeps a branch and does not
 * vectorise (unless told that FP flags do not matter, and then it emits vector compares whose
 * NaN handling valgrind's emulation gets wrong). */
static inline int32_t lt__f32_bits(float x) {
  int32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static inline float lt__f32_of_bits(int32_t b) {
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* A mask of all ones where c, else zero. */
static inline int32_t lt__mask32(int c) { return -(int32_t)(c != 0); }

/* e^x rounded to float: inputs past the float range are clamped where e^x already overflows
 * (100) or underflows to zero (-110), so infinities give inf and 0; NaN, whose bits the clamps
 * also catch, is put back at the end. */
static inline float lt__exp_f32(float xf) {
  int32_t b = lt__f32_bits(xf), mag = b & 0x7fffffff;
  int32_t hi = lt__mask32(b >= 0 && mag > 0x42c80000); /* above 100.0f */
  int32_t lo = lt__mask32(b < 0 && mag > 0x42dc0000);  /* below -110.0f */
  int32_t nan = lt__mask32(mag > 0x7f800000);
  int32_t cb = (b & ~(hi | lo)) | (0x42c80000 & hi) | ((int32_t)0xc2dc0000 & lo);
  int32_t r = lt__f32_bits((float)lt__exp_core((double)lt__f32_of_bits(cb)));
  return lt__f32_of_bits((b & nan) | (r & ~nan));
}

/* tanh x rounded to float: (e^2a - 1) / (e^2a + 1) for a = |x| >= 1/16 (a clamped at 20, where
 * tanh is 1 in float), the series a - a^3/3 + 2a^5/15 - 17a^7/315 below (its next term is
 * under 2^-37 of a there), the sign of x put back (tanh -0 = -0), NaN kept. */
static inline float lt__tanh_f32(float xf) {
  int32_t b = lt__f32_bits(xf), mag = b & 0x7fffffff;
  int32_t big_mask = lt__mask32(mag > 0x41a00000); /* above 20.0f */
  int32_t nan = lt__mask32(mag > 0x7f800000);
  double a = (double)lt__f32_of_bits((mag & ~big_mask) | (0x41a00000 & big_mask));
  double e = lt__exp_core(2.0 * a);
  double a2 = a * a;
  float big = (float)((e - 1.0) / (e + 1.0));
  float small = (float)(a + a * a2 * (-1.0 / 3.0 + a2 * (2.0 / 15.0 + a2 * (-17.0 / 315.0))));
  int32_t use_small = lt__mask32(mag < 0x3d800000); /* below 0.0625f */
  int32_t t = (lt__f32_bits(small) & use_small) | (lt__f32_bits(big) & ~use_small);
  t |= b & (int32_t)0x80000000; /* the sign of x: tanh is odd */
  return lt__f32_of_bits((b & nan) | (t & ~nan));
}

#endif
