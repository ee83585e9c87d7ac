/* SPDX-License-Identifier: MIT */
/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) and the
 * transforms from its words to distributions: ONE definition compiled both as C (the CPU
 * backend and the front end include this file) and as OpenCL C (the host prepends it to
 * kernels/random.cl), so both devices derive the same values from the same counters.
 *
 * The stream layout, shared by every device (element i of a fill of n elements):
 *   group g = i / G, lane l = i % G, G = lt_rng_group(dist, ...) elements per Philox block;
 *   counter = (block lo, block hi, stream lo, stream hi), block = offset + g; key = seed.
 * A rejected integer draw retries with the attempt number in bits 24..31 of counter word 1
 * (block numbers stay below 2^56). Only integer arithmetic and correctly rounded + - * / and
 * sqrt decide the values (normals use the log and sincos below, not libm's), so every device
 * computes the same bits. */
#ifndef LT_KERNELS_PHILOX_H
#define LT_KERNELS_PHILOX_H

#ifdef __OPENCL_VERSION__
/* No fused multiply-adds: the CPU build (ISO C, fp-contract off) has none either. */
#pragma OPENCL FP_CONTRACT OFF
typedef uint lt_u32;
typedef ulong lt_u64;
#define LT_RNG_FN inline
#else
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
typedef uint32_t lt_u32;
typedef uint64_t lt_u64;
#define LT_RNG_FN static inline
#endif

#define LT_PHILOX_M0 0xD2511F53u
#define LT_PHILOX_M1 0xCD9E8D57u
#define LT_PHILOX_W0 0x9E3779B9u
#define LT_PHILOX_W1 0xBB67AE85u

/* Distributions, numbered as lt__rng_dist in src/backend/backend.h. */
#define LT_RNG_UNIFORM 0
#define LT_RNG_NORMAL 1
#define LT_RNG_INTEGERS 2
#define LT_RNG_BERNOULLI 3

/* The retry limit of bounded integers: after it the last (slightly biased) draw stands. A
 * retry happens with probability < range / 2^64 per draw, so 255 in a row never happens for
 * ranges below 2^63 and with probability < 2^-255 above. */
#define LT_RNG_MAX_ATTEMPTS 255

typedef struct lt_philox4 {
  lt_u32 v[4];
} lt_philox4;

/* One Philox round and key bump, written out ten times below (no loop, so a loop over blocks
 * around it vectorises). */
#define LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1)                                                    \
  do {                                                                                             \
    lt_u64 p0 = (lt_u64)LT_PHILOX_M0 * c0, p1 = (lt_u64)LT_PHILOX_M1 * c2;                         \
    lt_u32 n0 = (lt_u32)(p1 >> 32) ^ c1 ^ k0, n2 = (lt_u32)(p0 >> 32) ^ c3 ^ k1;                   \
    c1 = (lt_u32)p1;                                                                               \
    c3 = (lt_u32)p0;                                                                               \
    c0 = n0;                                                                                       \
    c2 = n2;                                                                                       \
    k0 += LT_PHILOX_W0;                                                                            \
    k1 += LT_PHILOX_W1;                                                                            \
  } while (0)

/* Ten rounds of Philox4x32 on counter (c0..c3) with key (k0, k1). */
LT_RNG_FN lt_philox4 lt_philox4x32_10(lt_u32 c0, lt_u32 c1, lt_u32 c2, lt_u32 c3, lt_u32 k0,
                                      lt_u32 k1) {
  LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  LT_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
  lt_philox4 out;
  out.v[0] = c0;
  out.v[1] = c1;
  out.v[2] = c2;
  out.v[3] = c3;
  return out;
}

/* The block of group g (retry `attempt`, 0 for the first draw). */
LT_RNG_FN lt_philox4 lt_rng_block(lt_u64 seed, lt_u64 stream, lt_u64 block, lt_u32 attempt) {
  return lt_philox4x32_10((lt_u32)block, (lt_u32)(block >> 32) | (attempt << 24), (lt_u32)stream,
                          (lt_u32)(stream >> 32), (lt_u32)seed, (lt_u32)(seed >> 32));
}

/* Elements per block: four 32-bit lanes for single-precision uniforms and Bernoulli draws,
 * two 64-bit lanes otherwise (double uniforms, integers; normals come in Box-Muller pairs). */
LT_RNG_FN int lt_rng_group(int dist, int wide) {
  return (dist == LT_RNG_UNIFORM && !wide) || dist == LT_RNG_BERNOULLI ? 4 : 2;
}

/* Uniform in [0, 1) from the top 24 bits of a word (every value exact in float). */
LT_RNG_FN float lt_rng_unit24(lt_u32 w) { return (float)(int)(w >> 8) * (1.0f / 16777216.0f); }

#if !defined(__OPENCL_VERSION__) || defined(LT_FP64)
/* Uniform in [0, 1) from the top 53 bits of hi:lo (exact in double). */
LT_RNG_FN double lt_rng_unit53(lt_u32 hi, lt_u32 lo) {
  return (double)((((lt_u64)hi << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, 1) from the top 52 bits of hi:lo, built as the bits of a double in [1, 2)
 * minus 1 (no integer-to-double conversion, which vector units of most CPUs lack). */
LT_RNG_FN double lt_rng_unit52(lt_u32 hi, lt_u32 lo) {
  lt_u64 bits = ((((lt_u64)hi << 32) | lo) >> 12) | 0x3ff0000000000000UL;
  double d;
#ifdef __OPENCL_VERSION__
  d = as_double(bits);
#else
  memcpy(&d, &bits, sizeof d);
#endif
  return d - 1.0;
}

/* log(u) for u in (0, 1]: u = m 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s),
 * s = (m - 1) / (m + 1), |s| < 0.172, by its series to s^23 (error below 1e-17). Only + - * /
 * and bit moves, so every device computes the same bits (libm's log may differ by an ulp). */
LT_RNG_FN double lt_rng_log(double u) {
  lt_u64 bits;
#ifdef __OPENCL_VERSION__
  bits = as_ulong(u);
#else
  memcpy(&bits, &u, sizeof bits);
#endif
  int e = (int)((bits >> 52) & 0x7ff) - 1023;
  lt_u64 mant = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
  double m;
#ifdef __OPENCL_VERSION__
  m = as_double(mant);
#else
  memcpy(&m, &mant, sizeof m);
#endif
  bool big = m > 1.4142135623730951;
  m = big ? m * 0.5 : m;
  e = big ? e + 1 : e;
  double s = (m - 1.0) / (m + 1.0), z = s * s;
  double p = 1.0 / 23;
  p = p * z + 1.0 / 21;
  p = p * z + 1.0 / 19;
  p = p * z + 1.0 / 17;
  p = p * z + 1.0 / 15;
  p = p * z + 1.0 / 13;
  p = p * z + 1.0 / 11;
  p = p * z + 1.0 / 9;
  p = p * z + 1.0 / 7;
  p = p * z + 1.0 / 5;
  p = p * z + 1.0 / 3;
  p = p * z;
  double ed = (double)e;
  return ed * 0.6931471805599453 + (2.0 * s + 2.0 * s * p + ed * 2.3190468138462996e-17);
}

/* cos and sin of 2 pi u for u in [0, 1): the quadrant from 4u, the rest as phi in [-pi/4,
 * pi/4) by Taylor series to phi^17 / phi^16, rotated by pi/4 and the quadrant. */
LT_RNG_FN void lt_rng_sincos2pi(double u, double *c, double *s) {
  double q = u * 4.0;
  double k = (double)(int)q; /* 0..3 */
  double phi = ((q - k) - 0.5) * 1.5707963267948966, z = phi * phi;
  double sp = 1.0 / 355687428096000.0; /* 1/17! */
  sp = sp * z - 1.0 / 1307674368000.0;
  sp = sp * z + 1.0 / 6227020800.0;
  sp = sp * z - 1.0 / 39916800.0;
  sp = sp * z + 1.0 / 362880.0;
  sp = sp * z - 1.0 / 5040.0;
  sp = sp * z + 1.0 / 120.0;
  sp = sp * z - 1.0 / 6.0;
  sp = phi + phi * z * sp;
  double cp = 1.0 / 20922789888000.0; /* 1/16! */
  cp = cp * z - 1.0 / 87178291200.0;
  cp = cp * z + 1.0 / 479001600.0;
  cp = cp * z - 1.0 / 3628800.0;
  cp = cp * z + 1.0 / 40320.0;
  cp = cp * z - 1.0 / 720.0;
  cp = cp * z + 1.0 / 24.0;
  cp = cp * z - 0.5;
  cp = 1.0 + z * cp;
  /* theta = phi + pi/4 in [0, pi/2). */
  double st = (sp + cp) * 0.7071067811865476, ct = (cp - sp) * 0.7071067811865476;
  int quad = (int)k;
  double cc = quad == 0 ? ct : (quad == 1 ? -st : (quad == 2 ? -ct : st));
  double ss = quad == 0 ? st : (quad == 1 ? ct : (quad == 2 ? -st : -ct));
  *c = cc;
  *s = ss;
}

/* Box-Muller: lane 0 -> r cos(2 pi u2), lane 1 -> r sin(2 pi u2), with u1 in (0, 1] from 52
 * bits so the tails reach 8.49 standard deviations. */
LT_RNG_FN void lt_rng_normal_pair(lt_philox4 b, double *z0, double *z1) {
  double u1 = 1.0 - lt_rng_unit52(b.v[0], b.v[1]);
  double r = sqrt(-2.0 * lt_rng_log(u1)), c, s;
  lt_rng_sincos2pi(lt_rng_unit52(b.v[2], b.v[3]), &c, &s);
  *z0 = r * c;
  *z1 = r * s;
}

LT_RNG_FN double lt_rng_normal_lane(lt_philox4 b, int lane) {
  double z0, z1;
  lt_rng_normal_pair(b, &z0, &z1);
  return lane == 0 ? z0 : z1;
}
#endif

/* High 64 bits of a * b, from 32-bit halves (the same on every device). */
LT_RNG_FN lt_u64 lt_rng_mulhi64(lt_u64 a, lt_u64 b) {
  lt_u64 al = (lt_u32)a, ah = a >> 32, bl = (lt_u32)b, bh = b >> 32;
  lt_u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  lt_u64 mid = (ll >> 32) + (lt_u32)lh + (lt_u32)hl;
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* Lemire's bounded draw: an offset in [0, range) (range >= 1) from 64-bit words of lane
 * `lane` of group g, retrying rejected draws on fresh counters, so no value is favoured. */
LT_RNG_FN lt_u64 lt_rng_bounded(lt_u64 seed, lt_u64 stream, lt_u64 block, int lane, lt_u64 range) {
  lt_u64 threshold = (0 - range) % range;
  lt_u64 x = 0;
  for (lt_u32 attempt = 0; attempt <= LT_RNG_MAX_ATTEMPTS; attempt++) {
    lt_philox4 b = lt_rng_block(seed, stream, block, attempt);
    x = ((lt_u64)b.v[2 * lane] << 32) | b.v[2 * lane + 1];
    if (x * range >= threshold) break;
  }
  return lt_rng_mulhi64(x, range);
}

/* Bernoulli: true when the lane's word is below threshold = round(p * 2^32) (0..2^32). */
LT_RNG_FN int lt_rng_bernoulli_lane(lt_philox4 b, int lane, lt_u64 threshold) {
  return (lt_u64)b.v[lane] < threshold;
}

#endif
