/* SPDX-License-Identifier: MIT */
/* Error paths of the operation plans: each a status with a message naming operand and mode;
 * nothing is created on failure and the caller's tensors are untouched. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void expect_message(const char *needle) {
  if (strstr(lt_last_error(), needle) == NULL)
    fail_msg("message '%s' does not mention '%s'", lt_last_error(), needle);
}

static void test_plan_errors(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t s34[2] = {3, 4}, s35[2] = {3, 5}, s4[1] = {4};
    lt_tensor *a = lt_test_random_tensor(ctx, LT_F32, 2, s34, LT_LAYOUT_CONTIGUOUS);
    lt_tensor *b = lt_test_random_tensor(ctx, LT_F32, 2, s35, LT_LAYOUT_CONTIGUOUS);
    lt_tensor *v = lt_test_random_tensor(ctx, LT_F32, 1, s4, LT_LAYOUT_CONTIGUOUS);
    lt_tensor *d = NULL;
    LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s34, &d));
    int32_t mij[2] = {1, 2}, mii[2] = {1, 1}, mik[2] = {1, 3}, mj[1] = {2}, mk[1] = {3};
    lt_plan *plan = (lt_plan *)&plan; /* must be reset to NULL on failure */

    LT_CHECK_FAILS(lt_plan_binary(a, mij, b, mij, LT_BINARY_ADD, d, mij, NULL, &plan),
                   LT_ERR_SHAPE_MISMATCH);
    expect_message("mode 2 has extent 5 in B but 4 in D");
    assert_null(plan);
    LT_CHECK_FAILS(lt_plan_binary(a, mij, v, mk, LT_BINARY_ADD, d, mij, NULL, &plan),
                   LT_ERR_SHAPE_MISMATCH);
    expect_message("mode 3 of B");
    LT_CHECK_FAILS(lt_plan_binary(a, mii, v, mj, LT_BINARY_ADD, d, mij, NULL, &plan),
                   LT_ERR_INVALID_ARGUMENT);
    expect_message("mode 1 appears twice in A");
    LT_CHECK_FAILS(lt_plan_binary(a, mij, v, mj, (lt_binary_op)99, d, mij, NULL, &plan),
                   LT_ERR_INVALID_ARGUMENT);
    expect_message("op code 99");
    LT_CHECK_FAILS(lt_plan_trinary(a, mij, v, mj, a, mij, LT_BINARY_ADD, (lt_binary_op)-1, d, mij,
                                   NULL, &plan),
                   LT_ERR_INVALID_ARGUMENT);
    LT_CHECK_FAILS(lt_plan_permutation(a, mij, d, mik, NULL, &plan), LT_ERR_SHAPE_MISMATCH);
    expect_message("mode 2 of A");
    LT_CHECK_FAILS(lt_plan_permutation(a, NULL, d, mij, NULL, &plan), LT_ERR_NULL_POINTER);
    LT_CHECK_FAILS(lt_plan_permutation(NULL, mij, d, mij, NULL, &plan), LT_ERR_NULL_POINTER);
    LT_CHECK_FAILS(lt_plan_reduction(a, mij, NULL, NULL, (lt_reduce_op)9, v, mj, NULL, &plan),
                   LT_ERR_INVALID_ARGUMENT);
    expect_message("reduce op code 9");
    LT_CHECK_FAILS(lt_plan_reduction(a, mij, NULL, NULL, LT_REDUCE_SUM, v, mk, NULL, &plan),
                   LT_ERR_SHAPE_MISMATCH);
    expect_message("mode 3 of D");
    LT_CHECK_FAILS(lt_plan_reduction(b, mij, NULL, NULL, LT_REDUCE_SUM, v, mj, NULL, &plan),
                   LT_ERR_SHAPE_MISMATCH);
    expect_message("mode 2 has extent 5 in A but 4 in D");
    LT_CHECK_FAILS(lt_plan_reduction(a, mij, NULL, NULL, LT_REDUCE_ARGMAX, v, mj, NULL, &plan),
                   LT_ERR_DTYPE);
    assert_null(plan);

    /* An output whose elements overlap each other (a broadcast view) is refused. */
    lt_tensor *bd;
    LT_CHECK(lt_view_broadcast_to(v, 2, s34, &bd));
    LT_CHECK_FAILS(lt_plan_binary(a, mij, v, mj, LT_BINARY_ADD, bd, mij, NULL, &plan),
                   LT_ERR_ALIASING);
    lt_tensor_destroy(bd);

    /* Execute: wrong layout, and an output overlapping an input in another arrangement. */
    int64_t s44[2] = {4, 4};
    lt_tensor *sq = lt_test_random_tensor(ctx, LT_F32, 2, s44, LT_LAYOUT_CONTIGUOUS), *sqt;
    double *snap = lt_test_snapshot(sq);
    LT_CHECK(lt_view_transpose(sq, 0, 1, &sqt));
    LT_CHECK(lt_plan_permutation(sq, mij, sq, mij, NULL, &plan));
    LT_CHECK_FAILS(lt_plan_execute(plan, (const lt_tensor *const *)&sq, 1, NULL, 0, sqt),
                   LT_ERR_LAYOUT_MISMATCH);
    LT_CHECK_FAILS(lt_plan_execute(plan, (const lt_tensor *const *)&a, 1, NULL, 0, sq),
                   LT_ERR_LAYOUT_MISMATCH);
    lt_plan_destroy(plan);
    int32_t mji[2] = {2, 1};
    LT_CHECK(lt_plan_permutation(sq, mij, sq, mji, NULL, &plan));
    LT_CHECK_FAILS(lt_plan_execute(plan, (const lt_tensor *const *)&sq, 1, NULL, 0, sq),
                   LT_ERR_ALIASING);
    lt_test_check_unchanged(sq, snap);
    lt_plan_destroy(plan);
    LT_CHECK(lt_plan_reduction(sq, mij, NULL, NULL, LT_REDUCE_SUM, sq, mij, NULL, &plan));
    LT_CHECK_FAILS(lt_plan_execute(plan, (const lt_tensor *const *)&sq, 1, NULL, 0, sq),
                   LT_ERR_ALIASING);
    lt_test_check_unchanged(sq, snap);
    lt_plan_destroy(plan);
    free(snap);
    lt_tensor_destroy(sqt);
    lt_tensor_destroy(sq);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
    lt_tensor_destroy(v);
    lt_tensor_destroy(d);
    lt_context_destroy(ctx);
  }
}

/* Plan metadata: workspace, description, create_output, default scalars. */
static void test_plan_metadata(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t s[2] = {3, 4};
  int32_t m[2] = {1, 2}, mt[2] = {2, 1};
  lt_tensor *a = lt_test_random_tensor(ctx, LT_F64, 2, s, LT_LAYOUT_CONTIGUOUS), *d;
  int64_t st[2] = {4, 3};
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, st, &d));
  lt_plan *plan;
  LT_CHECK(lt_plan_permutation(a, m, d, mt, NULL, &plan));
  size_t ws = 1;
  LT_CHECK(lt_plan_workspace_size(plan, &ws));
  assert_int_equal(ws, 0);
  assert_true(strlen(lt_plan_describe(plan)) > 0);
  lt_tensor *o;
  LT_CHECK(lt_plan_create_output(plan, &o));
  LT_CHECK(lt_plan_execute(plan, (const lt_tensor *const *)&a, 1, NULL, 0, o));
  double *va = lt_test_read_all(a), *vo = lt_test_read_all(o), want[12];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      want[j * 3 + i] = va[i * 4 + j];
  lt_test_assert_close(vo, want, 12, 0.0, "create_output + default alpha");
  free(va);
  free(vo);
  lt_tensor_destroy(o);
  lt_plan_destroy(plan);
  lt_tensor_destroy(a);
  lt_tensor_destroy(d);
  lt_context_destroy(ctx);
}

/* Failing constructors set their out-parameter to NULL whatever failed, and messages name the
 * public function the caller used, not an internal helper. */
static void test_outputs_and_names_on_failure(void **state) {
  int64_t s[2] = {3, 4};
  lt_tensor *t = (lt_tensor *)s;
  LT_CHECK_FAILS(lt_tensor_zeros(NULL, LT_F32, 2, s, &t), LT_ERR_NULL_POINTER);
  assert_null(t);
  expect_message("context (ctx) is NULL");
  t = (lt_tensor *)s;
  LT_CHECK_FAILS(lt_plan_create_output(NULL, &t), LT_ERR_NULL_POINTER);
  assert_null(t);
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *a = lt_test_random_tensor(ctx, LT_F64, 2, s, LT_LAYOUT_CONTIGUOUS);
  t = (lt_tensor *)s;
  LT_CHECK_FAILS(lt_argmax(a, 5, &t), LT_ERR_OUT_OF_RANGE);
  assert_null(t);
  expect_message("lt_argmax");
  LT_CHECK_FAILS(lt_reduce(LT_REDUCE_ARGMIN, a, -1, NULL, false, &t), LT_ERR_INVALID_ARGUMENT);
  expect_message("lt_reduce: argmax and argmin take exactly one axis, not 2");
  int32_t m[2] = {1, 2};
  lt_plan *plan = (lt_plan *)s;
  LT_CHECK_FAILS(lt_plan_permutation(a, m, a, m, NULL, NULL), LT_ERR_NULL_POINTER);
  expect_message("plan pointer (out) is NULL");
  LT_CHECK_FAILS(lt_plan_permutation(NULL, m, a, m, NULL, &plan), LT_ERR_NULL_POINTER);
  assert_null(plan);
  /* Messages name the function called, not the one it forwards to, and the actual cause. */
  LT_CHECK_FAILS(lt_plan_permutation(a, m, NULL, m, NULL, &plan), LT_ERR_NULL_POINTER);
  expect_message("lt_plan_permutation: tensor D is NULL");
  LT_CHECK_FAILS(lt_plan_variance(a, m, a, NULL, 0, false, NULL, &plan), LT_ERR_NULL_POINTER);
  expect_message("lt_plan_variance: modes of D are NULL");
  LT_CHECK_FAILS(lt_context_create("cpu", NULL), LT_ERR_NULL_POINTER);
  expect_message("lt_context_create: out is NULL");
  LT_CHECK_FAILS(lt_unary((lt_unary_op)99, a, &t), LT_ERR_INVALID_ARGUMENT);
  expect_message("lt_unary: unknown unary op code 99");
  LT_CHECK_FAILS(lt_tensor_reshape(a, 1, NULL, &t), LT_ERR_NULL_POINTER);
  expect_message("lt_tensor_reshape: shape is NULL");
  LT_CHECK_FAILS(lt_permute(a, NULL, &t), LT_ERR_NULL_POINTER);
  expect_message("lt_permute: axes is NULL");
  LT_CHECK_FAILS(lt_tensor_reshape(a, 2, (int64_t[]){-1, 0}, &t), LT_ERR_SHAPE_MISMATCH);
  expect_message("the other extents multiply to 0");
  lt_rng *rng;
  LT_CHECK(lt_rng_create(1, 0, &rng));
  LT_CHECK_FAILS(lt_rng_uniform(rng, a, -1.5e308, 1.5e308), LT_ERR_INVALID_ARGUMENT);
  expect_message("high - low overflows");
  lt_rng_destroy(rng);
  lt_tensor_destroy(a);
  lt_context_destroy(ctx);
}

/* Two tensors wrapping the same host memory alias as views of one storage do: an output
 * overlapping its input in another arrangement is refused, the same arrangement is in place. */
static void test_aliasing_across_wraps(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  double buf[65];
  for (int i = 0; i < 65; i++)
    buf[i] = i + 0.5;
  int64_t s[2] = {8, 8}, s1[1] = {64};
  int32_t m[2] = {1, 2}, mt[2] = {2, 1}, mi[1] = {1};
  lt_tensor *a, *d, *head, *tail;
  LT_CHECK(lt_tensor_wrap_host(ctx, LT_F64, 2, s, NULL, buf, NULL, NULL, &a));
  LT_CHECK(lt_tensor_wrap_host(ctx, LT_F64, 2, s, NULL, buf, NULL, NULL, &d));
  lt_plan *plan;
  LT_CHECK(lt_plan_permutation(a, m, d, mt, NULL, &plan));
  LT_CHECK_FAILS(lt_plan_execute(plan, (const lt_tensor *const *)&a, 1, NULL, 0, d),
                 LT_ERR_ALIASING);
  lt_plan_destroy(plan);
  assert_true(buf[1] == 1.5 && buf[8] == 8.5);            /* untouched */
  LT_CHECK(lt_plan_permutation(a, m, d, m, NULL, &plan)); /* same arrangement: in place */
  double two[1] = {2.0};
  LT_CHECK(lt_plan_execute(plan, (const lt_tensor *const *)&a, 1, two, 1, d));
  assert_true(buf[9] == 19.0);
  lt_plan_destroy(plan);
  /* Shifted by one element: D[i] = 2 A[i] would read what it already wrote. */
  LT_CHECK(lt_tensor_wrap_host(ctx, LT_F64, 1, s1, NULL, buf, NULL, NULL, &head));
  LT_CHECK(lt_tensor_wrap_host(ctx, LT_F64, 1, s1, NULL, buf + 1, NULL, NULL, &tail));
  LT_CHECK(lt_plan_permutation(head, mi, tail, mi, NULL, &plan));
  LT_CHECK_FAILS(lt_plan_execute(plan, (const lt_tensor *const *)&head, 1, two, 1, tail),
                 LT_ERR_ALIASING);
  lt_plan_destroy(plan);
  lt_tensor_destroy(head);
  lt_tensor_destroy(tail);
  lt_tensor_destroy(a);
  lt_tensor_destroy(d);
  lt_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plan_errors),
      cmocka_unit_test(test_plan_metadata),
      cmocka_unit_test(test_outputs_and_names_on_failure),
      cmocka_unit_test(test_aliasing_across_wraps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
