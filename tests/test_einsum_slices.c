/* SPDX-License-Identifier: MIT */
/* lt_plan_execute_slices (issue 24): ranges of a sliced einsum plan's slices, as distributed
 * workers run them, against the naive float64 einsum of tests/support/einsum_ref.h, on every
 * device, with inputs and outputs in varied layouts. */
#include "einsum_ref.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct net {
  int n, n_labels, rank_out;
  int rank[4];
  int labels[4][4];
  int64_t ext[8];
  int out[4];
} net;

/* A sliced plan (memory limit a third of the unsliced workspace), its slice count. */
static lt_plan *sliced_plan(const net *g, lt_tensor **ins, const lt_tensor *d, int64_t *slices) {
  const int32_t *modes[4];
  int32_t m32[4][4], out32[4];
  for (int k = 0; k < g->n; k++) {
    for (int a = 0; a < g->rank[k]; a++)
      m32[k][a] = g->labels[k][a];
    modes[k] = m32[k];
  }
  for (int a = 0; a < g->rank_out; a++)
    out32[a] = g->out[a];
  lt_plan *plain;
  LT_CHECK(lt_plan_einsum_modes(g->n, (const lt_tensor *const *)ins, modes, g->rank_out, out32, d,
                                NULL, &plain));
  size_t ws;
  LT_CHECK(lt_plan_workspace_size(plain, &ws));
  lt_plan_destroy(plain);
  lt_plan_options *o;
  LT_CHECK(lt_plan_options_create(&o));
  LT_CHECK(lt_plan_options_set_memory_limit(o, (int64_t)(ws / 3 > 8 ? ws / 3 : 8)));
  lt_plan *plan;
  LT_CHECK(lt_plan_einsum_modes(g->n, (const lt_tensor *const *)ins, modes, g->rank_out, out32, d,
                                o, &plan));
  lt_plan_options_destroy(o);
  double s = 0;
  int ns = 0;
  LT_CHECK(lt_plan_einsum_slicing(plan, &ns, NULL, 0, &s, NULL));
  assert_true(ns > 0 && s >= 3); /* the cases below are chosen to slice */
  *slices = (int64_t)s;
  return plan;
}

static void ranges_case(lt_context *ctx, const net *g, lt_test_layout in_layout,
                        lt_test_layout out_layout) {
  lt_tensor *ins[4];
  double *host[4];
  lt_ref_operand ref[4];
  int64_t shapes[4][4];
  for (int k = 0; k < g->n; k++) {
    for (int a = 0; a < g->rank[k]; a++)
      shapes[k][a] = g->ext[g->labels[k][a]];
    ins[k] = lt_test_random_tensor(ctx, LT_F64, g->rank[k], shapes[k], in_layout);
    host[k] = lt_test_read_all(ins[k]);
    ref[k] = (lt_ref_operand){g->rank[k], g->labels[k], shapes[k], host[k]};
  }
  double *want = lt_ref_einsum(g->n, ref, g->n_labels, g->ext, g->rank_out, g->out);
  int64_t oshape[4];
  for (int a = 0; a < g->rank_out; a++)
    oshape[a] = g->ext[g->out[a]];
  int64_t on = lt_test_numel(g->rank_out, oshape);
  int64_t total = 0;
  lt_test_output outs[4]; /* one layout family: the same strides, so one plan serves all */
  for (int w = 0; w < 4; w++)
    lt_test_output_make(ctx, LT_F64, g->rank_out, oshape, out_layout, &outs[w]);
  lt_plan *plan = sliced_plan(g, ins, outs[0].view, &total);
  const lt_tensor *const *in = (const lt_tensor *const *)ins;
  double tol = lt_test_tolerance(LT_F64, 64);

  /* three workers' shares, each with beta = 0 into its own NaN-poisoned output, add up */
  int64_t cut[4] = {0, total / 3, (2 * total) / 3 + 1, total};
  double *sum = calloc((size_t)on + 1, sizeof(double));
  for (int w = 0; w < 3; w++) {
    lt_test_output d = outs[w];
    double sc[2] = {0.5, 0.0};
    LT_CHECK(lt_plan_execute_slices(plan, cut[w], cut[w + 1] - cut[w], in, g->n, sc, 2, d.view));
    lt_test_output_check_guard(&d);
    double *got = lt_test_read_all(d.view);
    for (int64_t i = 0; i < on; i++)
      sum[i] += got[i];
    free(got);
    lt_test_output_free(&d);
  }
  lt_tensor *d0 = outs[3].view;
  lt_tensor *fill = lt_test_random_tensor(ctx, LT_F64, g->rank_out, oshape, LT_LAYOUT_CONTIGUOUS);
  LT_CHECK(lt_tensor_copy_into(d0, fill));
  lt_tensor_destroy(fill);
  for (int64_t i = 0; i < on; i++)
    want[i] *= 0.5;
  lt_test_assert_close(sum, want, on, tol, "three ranges with beta = 0");

  /* two ranges into one output: beta on the first, 1 on the second: the whole einsum */
  double *before = lt_test_read_all(d0);
  double sc1[2] = {0.5, 2.0}, sc2[2] = {0.5, 1.0};
  LT_CHECK(lt_plan_execute_slices(plan, 0, 1, in, g->n, sc1, 2, d0));
  LT_CHECK(lt_plan_execute_slices(plan, 1, total - 1, in, g->n, sc2, 2, d0));
  double *got = lt_test_read_all(d0);
  for (int64_t i = 0; i < on; i++)
    sum[i] = want[i] + 2.0 * before[i];
  lt_test_assert_close(got, sum, on, tol, "beta applies to the whole output once");
  free(got);
  /* count 0 scales only; the full range is lt_plan_execute */
  double sc3[2] = {0.5, 3.0};
  LT_CHECK(lt_plan_execute_slices(plan, total, 0, in, g->n, sc3, 2, d0));
  got = lt_test_read_all(d0);
  for (int64_t i = 0; i < on; i++)
    sum[i] *= 3.0;
  lt_test_assert_close(got, sum, on, tol, "count 0");
  free(got);
  double sc0[2] = {0.5, 0.0};
  LT_CHECK(lt_plan_execute_slices(plan, 0, total, in, g->n, sc0, 2, d0));
  got = lt_test_read_all(d0);
  lt_test_assert_close(got, want, on, tol, "all slices");
  free(got);

  /* bad ranges and calls */
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, -1, 1, in, g->n, NULL, 0, d0),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, 1, total, in, g->n, NULL, 0, d0),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, total + 1, 0, in, g->n, NULL, 0, d0),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, 0, -1, in, g->n, NULL, 0, d0),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, 0, 1, in, g->n - 1, NULL, 0, d0),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, 0, 1, in, g->n, NULL, 0, ins[0]),
                 LT_ERR_LAYOUT_MISMATCH);
  LT_CHECK_FAILS(lt_plan_execute_slices(NULL, 0, 1, in, g->n, NULL, 0, d0), LT_ERR_NULL_POINTER);
  int32_t m01[2] = {0, 1};
  lt_tensor *sq;
  int64_t sqs[2] = {3, 3};
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, sqs, &sq));
  lt_plan *perm;
  LT_CHECK(lt_plan_permutation(sq, m01, sq, m01, NULL, &perm));
  const lt_tensor *sqin[1] = {sq};
  LT_CHECK_FAILS(lt_plan_execute_slices(perm, 0, 1, sqin, 1, NULL, 0, sq), LT_ERR_INVALID_ARGUMENT);
  lt_plan_destroy(perm);
  lt_tensor_destroy(sq);

  lt_test_output_check_guard(&outs[3]);
  lt_test_output_free(&outs[3]);
  free(before);
  free(sum);
  free(want);
  lt_plan_destroy(plan);
  for (int k = 0; k < g->n; k++) {
    lt_tensor_destroy(ins[k]);
    free(host[k]);
  }
}

static void ranges_on(lt_context *ctx) {
  /* a ring summed to a scalar, and a chain keeping its ends (sliced labels in the output) */
  net ring = {.n = 4,
              .n_labels = 4,
              .rank = {2, 2, 2, 2},
              .labels = {{0, 1}, {1, 2}, {2, 3}, {3, 0}},
              .ext = {7, 6, 5, 8}};
  net chain = {.n = 3,
               .n_labels = 4,
               .rank = {2, 2, 2},
               .labels = {{0, 1}, {1, 2}, {2, 3}},
               .ext = {9, 7, 8, 6},
               .rank_out = 2,
               .out = {0, 3}};
  ranges_case(ctx, &ring, LT_LAYOUT_TRANSPOSED, LT_LAYOUT_CONTIGUOUS);
  ranges_case(ctx, &chain, LT_LAYOUT_NEGATIVE, LT_LAYOUT_STEPPED);
  ranges_case(ctx, &chain, LT_LAYOUT_CONTIGUOUS, LT_LAYOUT_TRANSPOSED);
}

static void test_slice_ranges(void **state) {
  (void)state;
  lt_test_on_each_device(ranges_on);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_slice_ranges)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
