/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) and the
 * transforms from its words to distributions: ONE definition compiled both as C (the CPU
 * backend and the front end include this file) and as OpenCL C (the host prepends it to
 * kernels/random.cl), so both devices derive the same values from the same counters.
 *
 * The stream layout, shared by every device (element i of a fill of n elements):
 *   group g = i / G, lane l = i % G, G = lt_rng_group(dist, ...) elements per Philox block;
 *   counter = (block lo, block hi, stream lo, stream hi), block = offset + g; key = seed.
 * A rejected integer draw retries with the attempt number in bits 24..31 of counter word 1
 * (block numbers stay below 2^56). Only integer arithmetic and correctly rounded +-* / and
 * sqrt decide uniform, integer and Bernoulli values, so they are bit-identical everywhere;
 * normals also call log, sin and cos, whose last bit may differ between libms. */
#ifndef LT_KERNELS_PHILOX_H
#define LT_KERNELS_PHILOX_H

#ifdef __OPENCL_VERSION__
typedef uint lt_u32;
typedef ulong lt_u64;
#define LT_RNG_FN inline
#else
#include <math.h>
#include <stdint.h>
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

/* Ten rounds of Philox4x32 on counter (c0..c3) with key (k0, k1). */
LT_RNG_FN lt_philox4 lt_philox4x32_10(lt_u32 c0, lt_u32 c1, lt_u32 c2, lt_u32 c3, lt_u32 k0,
                                      lt_u32 k1) {
  for (int r = 0; r < 10; r++) {
    lt_u64 p0 = (lt_u64)LT_PHILOX_M0 * c0, p1 = (lt_u64)LT_PHILOX_M1 * c2;
    lt_u32 n0 = (lt_u32)(p1 >> 32) ^ c1 ^ k0, n2 = (lt_u32)(p0 >> 32) ^ c3 ^ k1;
    c1 = (lt_u32)p1;
    c3 = (lt_u32)p0;
    c0 = n0;
    c2 = n2;
    k0 += LT_PHILOX_W0;
    k1 += LT_PHILOX_W1;
  }
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
LT_RNG_FN float lt_rng_unit24(lt_u32 w) { return (float)(w >> 8) * (1.0f / 16777216.0f); }

#if !defined(__OPENCL_VERSION__) || defined(LT_FP64)
/* Uniform in [0, 1) from the top 53 bits of hi:lo (exact in double). */
LT_RNG_FN double lt_rng_unit53(lt_u32 hi, lt_u32 lo) {
  return (double)((((lt_u64)hi << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
}

/* Box-Muller: lane 0 -> r cos(2 pi u2), lane 1 -> r sin(2 pi u2), with u1 in (0, 1] from 53
 * bits so the tails reach 8.57 standard deviations. */
LT_RNG_FN double lt_rng_normal_lane(lt_philox4 b, int lane) {
  double u1 = 1.0 - lt_rng_unit53(b.v[0], b.v[1]);
  double t = 6.283185307179586 * lt_rng_unit53(b.v[2], b.v[3]);
  double r = sqrt(-2.0 * log(u1));
  return lane == 0 ? r * cos(t) : r * sin(t);
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
