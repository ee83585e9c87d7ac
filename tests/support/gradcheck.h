/* SPDX-License-Identifier: MIT */
/* Gradient checks shared by the autograd tests: a differentiable function of up to
 * LT_GC_MAX_IN inputs is run through the tape and compared with central finite differences in
 * float64. */
#ifndef LT_TEST_GRADCHECK_H
#define LT_TEST_GRADCHECK_H

#include "harness.h"

#define LT_GC_MAX_IN 8

/* Returns the status of the first failing call. */
#define LT_GC_TRY(call)                                                                            \
  do {                                                                                             \
    lt_status gc_try_st_ = (call);                                                                 \
    if (gc_try_st_ != LT_OK) return gc_try_st_;                                                    \
  } while (0)

/* One differentiable function computed through lt_ad_* on `tape` (NULL when finite differences
 * evaluate it). */
typedef lt_status (*lt_gc_fn)(lt_tape *tape, lt_tensor *const *in, lt_tensor **out);

/* Checks d loss / d in[k] for k < n of loss = sum(f(in) * w), w a fixed random weight of f's
 * output shape, against central differences (step 1e-6, relative tolerance 1e-5). Inputs must
 * be float64 tensors whose elements do not alias (no broadcast layouts). */
void lt_gc_check(lt_context *ctx, const char *name, lt_gc_fn f, int n, lt_tensor *const *in);

/* A float64 random tensor in [lo, hi) of the given layout family. */
lt_tensor *lt_gc_rnd(lt_context *ctx, int rank, const int64_t *shape, lt_test_layout lay, double lo,
                     double hi);

#endif
