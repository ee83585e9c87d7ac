/* SPDX-License-Identifier: MIT */
/* Central finite differences against the tape (see gradcheck.h). */
#include "gradcheck.h"

#include <stdio.h>
#include <stdlib.h>

static double loss_of(lt_tape *tape, lt_gc_fn f, lt_tensor *const *in, const lt_tensor *w,
                      lt_tensor **loss_out) {
  lt_tensor *y, *p, *l;
  LT_CHECK(f(tape, in, &y));
  LT_CHECK(lt_ad_binary(tape, LT_BINARY_MUL, y, w, &p));
  LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, p, -1, NULL, false, &l));
  double v;
  LT_CHECK(lt_tensor_get(l, NULL, &v));
  lt_tensor_destroy(y);
  lt_tensor_destroy(p);
  if (loss_out)
    *loss_out = l;
  else
    lt_tensor_destroy(l);
  return v;
}

void lt_gc_check(lt_context *ctx, const char *name, lt_gc_fn f, int n, lt_tensor *const *in) {
  lt_tensor *y;
  LT_CHECK(f(NULL, in, &y));
  lt_tensor *w = lt_test_random_tensor(ctx, LT_F64, lt_tensor_rank(y), lt_tensor_shape(y),
                                       LT_LAYOUT_CONTIGUOUS);
  lt_tensor_destroy(y);
  lt_tape *tape;
  LT_CHECK(lt_tape_create(ctx, &tape));
  for (int k = 0; k < n; k++)
    LT_CHECK(lt_tape_requires_grad(tape, in[k], true));
  lt_tensor *loss;
  loss_of(tape, f, in, w, &loss);
  LT_CHECK(lt_tape_backward(tape, loss, NULL, 0));
  lt_tensor_destroy(loss);
  for (int k = 0; k < n; k++) {
    lt_tensor *g;
    LT_CHECK(lt_tape_grad(tape, in[k], &g));
    int64_t m = lt_tensor_numel(in[k]);
    if (g == NULL && m > 0) fail_msg("%s: input %d got no gradient", name, k);
    if (g == NULL) continue;
    assert_int_equal(lt_tensor_rank(g), lt_tensor_rank(in[k]));
    double *got = lt_test_read_all(g);
    double *want = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
    int rank = lt_tensor_rank(in[k]);
    for (int64_t i = 0; i < m; i++) {
      int64_t idx[LT_MAX_RANK];
      lt_test_unravel(i, rank, lt_tensor_shape(in[k]), idx);
      double x0, h = 1e-6;
      LT_CHECK(lt_tensor_get(in[k], idx, &x0));
      LT_CHECK(lt_tensor_set(in[k], idx, x0 + h));
      double lp = loss_of(NULL, f, in, w, NULL);
      LT_CHECK(lt_tensor_set(in[k], idx, x0 - h));
      double lm = loss_of(NULL, f, in, w, NULL);
      LT_CHECK(lt_tensor_set(in[k], idx, x0));
      want[i] = (lp - lm) / (2 * h);
    }
    char what[160];
    snprintf(what, sizeof what, "%s d/d input %d", name, k);
    lt_test_assert_close(got, want, m, 1e-5, what);
    free(got);
    free(want);
    lt_tensor_destroy(g);
  }
  lt_tape_destroy(tape);
  lt_tensor_destroy(w);
}

lt_tensor *lt_gc_rnd(lt_context *ctx, int rank, const int64_t *shape, lt_test_layout lay, double lo,
                     double hi) {
  return lt_test_random_tensor_range(ctx, LT_F64, rank, shape, lay, lo, hi);
}
