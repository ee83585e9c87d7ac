/* SPDX-License-Identifier: MIT */
/* Integer contractions as float GEMMs where the float arithmetic is exact (pair.h). */
#include "core/dtype.h"
#include "lower/pair.h"

#include <math.h>

/* The float dtype (f32 when it suffices, else f64) in which an integer contraction over k
 * terms is exact: every product and partial sum an integer below 2^24 or 2^53, so that the
 * float GEMM's result is the exact sum; alpha, beta and D's conversion then run in the integer
 * compute (lower_gemm's final map, p->int_compute), wrapping as the direct kernel does. Only for
 * A and B of at most 16 bits with no unary under an integer compute; LT_DTYPE_INVALID
 * otherwise. An int8 1024^3 product took 1.2 GOP/s in the direct kernel.
 */
lt_dtype lt__pair_exact_float_compute(const lt__pair *p, int64_t k) {
  lt_dtype ta = p->a.dtype, tb = p->b.dtype;
  if (!lt__dtype_is_int(ta) || !lt__dtype_is_int(tb) || lt_dtype_size(ta) > 2 ||
      lt_dtype_size(tb) > 2 || p->unary[0] != LT_UNARY_IDENTITY ||
      p->unary[1] != LT_UNARY_IDENTITY || !lt__dtype_is_int(p->compute))
    return LT_DTYPE_INVALID;
  /* an unsigned compute takes floats saturated at 0: only sums that cannot be negative */
  if (!lt__dtype_is_signed_int(p->compute) &&
      (lt__dtype_is_signed_int(ta) || lt__dtype_is_signed_int(tb)))
    return LT_DTYPE_INVALID;
  double alo, ahi, blo, bhi;
  lt__int_range(ta, &alo, &ahi);
  lt__int_range(tb, &blo, &bhi);
  double bound = fmax(-alo, ahi) * fmax(-blo, bhi) * (double)k;
  /* f64 only where it is the host's (a device may lack it, and refuses f64 steps) */
  return bound <= 0x1p24                           ? LT_F32
         : bound <= 0x1p53 && p->caps->host_memory ? LT_F64
                                                   : LT_DTYPE_INVALID;
}
