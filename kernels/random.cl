/* SPDX-License-Identifier: MIT */
/* Random fills (lt__rng_step in src/backend/backend.h); compiled after kernels/philox.h, the
 * definition the CPU shares. One work-item per Philox group of LT_GROUP elements; element i is
 * numbered row-major over desc's shape (desc: shape[rank], out strides[rank]). dist numbered as
 * LT_RNG_* in philox.h. LT_OUT_I64 marks an integer output of integers (stored exactly: the
 * value, inside the dtype's range, converts without rounding). */
#pragma OPENCL FP_CONTRACT OFF

#ifndef LT_GROUP
#define LT_GROUP 4
#endif

kernel void lt_rng(long n, int rank, constant const long *desc, global LT_ST(LT_OUT) *out,
                   long out_off, int dist, ulong seed, ulong stream, ulong offset, real_t a,
                   real_t b, long low, ulong range, ulong threshold) {
  long groups = (n + LT_GROUP - 1) / LT_GROUP;
  for (long g = get_global_id(0); g < groups; g += get_global_size(0)) {
    ulong block = offset + (ulong)g;
    lt_philox4 w = lt_rng_block(seed, stream, block, 0);
    for (int l = 0; l < LT_GROUP; l++) {
      long i = g * LT_GROUP + l;
      if (i >= n) break;
      long offs[1] = {out_off};
      lt_unravel(i, rank, desc, 1, offs);
      if (dist == LT_RNG_INTEGERS) {
        long v = (long)((ulong)low + lt_rng_bounded(seed, stream, block, l, range));
#ifdef LT_OUT_I64
        out[offs[0]] = (LT_ST(LT_OUT))v;
#else
        LT_STORE(LT_OUT, out, offs[0], (real_t)v);
#endif
        continue;
      }
      real_t v;
#ifdef LT_COMPUTE_F64
      if (dist == LT_RNG_NORMAL)
        v = a + b * lt_rng_normal_lane(w, l);
      else
        v = a + (b - a) * lt_rng_unit53(w.v[2 * l], w.v[2 * l + 1]);
#else
      if (dist == LT_RNG_BERNOULLI)
        v = (real_t)lt_rng_bernoulli_lane(w, l, threshold);
      else
        v = a + (b - a) * lt_rng_unit24(w.v[l]);
#endif
      LT_STORE(LT_OUT, out, offs[0], v);
    }
  }
}
