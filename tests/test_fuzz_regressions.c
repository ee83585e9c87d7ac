/* SPDX-License-Identifier: MIT */
/* Inputs the fuzzers (tests/fuzz) once crashed on, rebuilt by hand with precise expectations.
 * The raw inputs are replayed too (ctest fuzz_replay_*, tests/fuzz/regressions/). */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rank-1 f64 tensor holding 1, 2, ..., n. */
static lt_tensor *iota(lt_context *ctx, int64_t n) {
  double data[16];
  for (int64_t i = 0; i < n; i++)
    data[i] = (double)(i + 1);
  lt_tensor *t = NULL;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &n, NULL, data, &t));
  return t;
}

/* fuzz_views, regressions/views/slice-offset-overflow: an empty tensor may carry huge strides
 * (no element is ever addressed); slicing, selecting, unsqueezing and taking a diagonal of it
 * multiplied them by positions and overflowed (undefined behaviour). */
static void test_empty_tensor_with_huge_strides(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *base = iota(ctx, 4), *e = NULL, *v = NULL;
  /* Every layout's span must fit in 64 bits, even an empty one's (the invariant that keeps all
   * later offset arithmetic overflow-free), so this is refused ... */
  const int64_t shape[3] = {0, 4, 4}, wild[3] = {1, INT64_MAX / 2 + 1, INT64_MAX};
  LT_CHECK_FAILS(lt_view_as_strided(base, 3, shape, wild, 0, &e), LT_ERR_OVERFLOW);
  assert_null(e);
  /* ... while huge strides whose span fits are accepted and views of them work. */
  const int64_t strides[3] = {1, INT64_MAX / 8, INT64_MAX / 16};
  LT_CHECK(lt_view_as_strided(base, 3, shape, strides, 0, &e));
  assert_int_equal(lt_tensor_numel(e), 0);
  LT_CHECK(lt_view_slice(e, 1, 3, 4, 1, &v));
  assert_int_equal(lt_tensor_shape(v)[1], 1);
  lt_tensor_destroy(v);
  LT_CHECK(lt_view_slice(e, 2, 0, 4, 2, &v));
  assert_int_equal(lt_tensor_shape(v)[2], 2);
  lt_tensor_destroy(v);
  LT_CHECK(lt_view_select(e, 2, 3, &v));
  assert_int_equal(lt_tensor_rank(v), 2);
  lt_tensor_destroy(v);
  LT_CHECK(lt_view_unsqueeze(e, 2, &v));
  assert_int_equal(lt_tensor_rank(v), 4);
  lt_tensor_destroy(v);
  LT_CHECK(lt_view_diagonal(e, 1, 1, 2, &v));
  assert_int_equal(lt_tensor_shape(v)[1], 3);
  assert_int_equal(lt_tensor_numel(v), 0);
  lt_tensor_destroy(v);
  /* Copies of such views touch nothing. */
  lt_tensor *c = NULL;
  LT_CHECK(lt_tensor_contiguous(e, LT_DTYPE_INVALID, &c));
  assert_int_equal(lt_tensor_numel(c), 0);
  lt_tensor_destroy(c);
  lt_tensor_destroy(e);
  lt_tensor_destroy(base);
  lt_context_destroy(ctx);
}

/* A size-1 axis may carry any stride, INT64_MIN included: flipping or stepping it must work
 * (it used to be refused as an overflow), and the element read must be the right one. */
static void test_size1_axis_with_extreme_stride(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *base = iota(ctx, 4), *s = NULL, *f = NULL, *d = NULL;
  const int64_t shape[2] = {1, 1}, strides[2] = {INT64_MIN, INT64_MAX};
  LT_CHECK(lt_view_as_strided(base, 2, shape, strides, 2, &s));
  LT_CHECK(lt_view_flip(s, 0, &f));
  double v = 0;
  const int64_t zero[2] = {0, 0};
  LT_CHECK(lt_tensor_get(f, zero, &v));
  assert_true(v == 3.0);
  LT_CHECK(lt_view_diagonal(s, 0, 0, 1, &d)); /* INT64_MIN + INT64_MAX fits; still one element */
  LT_CHECK(lt_tensor_get(d, zero, &v));
  assert_true(v == 3.0);
  lt_tensor_destroy(d);
  lt_tensor_destroy(f);
  /* A step far beyond the axis keeps one element. */
  LT_CHECK(lt_view_slice(base, 0, 1, 4, INT64_MAX, &f));
  assert_int_equal(lt_tensor_shape(f)[0], 1);
  LT_CHECK(lt_tensor_get(f, zero, &v));
  assert_true(v == 2.0);
  lt_tensor_destroy(f);
  /* The diagonal of two size-1 axes with INT64_MAX strides: the sum overflows, yet the view is
   * one element and must be readable. */
  const int64_t big[2] = {INT64_MAX, INT64_MAX};
  lt_tensor_destroy(s);
  LT_CHECK(lt_view_as_strided(base, 2, shape, big, 1, &s));
  LT_CHECK(lt_view_diagonal(s, 0, 0, 1, &d));
  LT_CHECK(lt_tensor_get(d, zero, &v));
  assert_true(v == 2.0);
  lt_tensor_destroy(d);
  lt_tensor_destroy(s);
  lt_tensor_destroy(base);
  lt_context_destroy(ctx);
}

/* fuzz_einsum_exec replayed on OpenCL, regressions/einsum_exec/opencl-extent1-output-mode:
 * "b,eb,d->de" with e of extent 1 was refused ("contraction: output mode 1 appears in neither A
 * nor B") whenever the first pair went through GEMM (always on OpenCL, which has no direct
 * kernel; on the CPU once it exceeded the direct kernel's flop limit): the GEMM intermediate
 * dropped its extent-1 modes, which the next pair still names. */
static void test_einsum_extent1_output_mode_through_intermediate(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    const int64_t lengths[2] = {2, 40000}; /* direct kernel, then GEMM on every backend */
    for (int l = 0; l < 2; l++) {
      const int64_t sb[1] = {lengths[l]}, seb[2] = {1, lengths[l]}, sd[1] = {2};
      lt_tensor *t[3] = {lt_test_random_tensor(ctx, LT_F64, 1, sb, LT_LAYOUT_CONTIGUOUS),
                         lt_test_random_tensor(ctx, LT_F64, 2, seb, LT_LAYOUT_CONTIGUOUS),
                         lt_test_random_tensor(ctx, LT_F64, 1, sd, LT_LAYOUT_NEGATIVE)};
      double *b = lt_test_read_all(t[0]), *eb = lt_test_read_all(t[1]);
      double *dv = lt_test_read_all(t[2]), dot = 0.0, want[2];
      for (int64_t i = 0; i < lengths[l]; i++)
        dot += b[i] * eb[i];
      for (int i = 0; i < 2; i++)
        want[i] = dot * dv[i];
      const char *exprs[3] = {"b,eb,d->de", "b,eb,d->ed", "b,eb,d"};
      for (int k = 0; k < 3; k++) {
        lt_tensor *out = NULL;
        LT_CHECK(lt_einsum(exprs[k], 3, (const lt_tensor *const *)t, NULL, &out));
        assert_int_equal(lt_tensor_numel(out), 2);
        double *got = lt_test_read_all(out);
        lt_test_assert_close(got, want, 2, lt_test_tolerance(LT_F64, lengths[l]), exprs[k]);
        free(got);
        lt_tensor_destroy(out);
      }
      free(b);
      free(eb);
      free(dv);
      for (int i = 0; i < 3; i++)
        lt_tensor_destroy(t[i]);
    }
    lt_context_destroy(ctx);
  }
}

/* fuzz_einsum_parse, regressions/einsum_parse/output-strides-overflow: repeated output labels
 * multiply the output's rank ("i->iii...", a diagonal embedding NumPy refuses); with 63 copies
 * of an extent-2 label the output's contiguous strides overflowed (undefined behaviour) while
 * planning. Output labels may no longer repeat (as in NumPy and the ruTENSOR rules), so both
 * that expression and a small one are refused while parsing. */
static void test_einsum_output_too_large_for_strides(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  const int64_t shape[1] = {2};
  lt_tensor *a = NULL;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 1, shape, &a));
  char expr[80] = "i->";
  for (int k = 0; k < 63; k++)
    strcat(expr, "i");
  lt_plan *plan = (lt_plan *)ctx;
  LT_CHECK_FAILS(lt_plan_einsum(expr, 1, (const lt_tensor *const *)&a, NULL, NULL, &plan),
                 LT_ERR_PARSE); /* output labels may not repeat (it once overflowed strides) */
  assert_null(plan);
  LT_CHECK_FAILS(lt_plan_einsum("i->ii", 1, (const lt_tensor *const *)&a, NULL, NULL, &plan),
                 LT_ERR_PARSE);
  lt_tensor_destroy(a);
  lt_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_tensor_with_huge_strides),
      cmocka_unit_test(test_size1_axis_with_extreme_stride),
      cmocka_unit_test(test_einsum_extent1_output_mode_through_intermediate),
      cmocka_unit_test(test_einsum_output_too_large_for_strides),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
