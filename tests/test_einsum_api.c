/* SPDX-License-Identifier: MIT */
/* Einsum API behaviour beyond random expressions: every invalid-expression family, path
 * quality on hand-checked cases, integer labels past 52, dtype rules, descriptions, the
 * one-shot plan cache (also from several threads). */
#include "harness.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lt_tensor *ones(lt_context *ctx, lt_dtype dt, int rank, const int64_t *shape) {
  lt_tensor *t;
  LT_CHECK(lt_tensor_full(ctx, dt, rank, shape, 1.0, &t));
  return t;
}

typedef struct bad_case {
  const char *expr;
  int n;
  int rank[3];
  int64_t shape[3][4];
  lt_status status;
  const char *message; /* a fragment the message must contain */
} bad_case;

static const bad_case bad_cases[] = {
    {"ij,jk",
     2,
     {2, 2},
     {{2, 3}, {4, 5}},
     LT_ERR_SHAPE_MISMATCH,
     "label 'j' has extents 3 and 4 in operands 0 and 1"},
    {"ii",
     1,
     {2},
     {{2, 3}},
     LT_ERR_SHAPE_MISMATCH,
     "label 'i' repeats in operand 0 with extents 2 and 3"},
    {"i1", 1, {2}, {{2, 3}}, LT_ERR_PARSE, "invalid character '1' at position 1"},
    {"i>", 1, {1}, {{2}}, LT_ERR_PARSE, "invalid character '>' at position 1"},
    {"i\xc3\x84", 1, {1}, {{2}}, LT_ERR_PARSE, "invalid byte 0xc3 at position 1"},
    {"i-", 1, {1}, {{2}}, LT_ERR_PARSE, "'-' at position 1"},
    {"i- >i", 1, {1}, {{2}}, LT_ERR_PARSE, "'-' at position 1"},
    {"i.j", 1, {2}, {{2, 3}}, LT_ERR_PARSE, "'.' at position 1 in operand 0"},
    {"i....j", 1, {2}, {{2, 3}}, LT_ERR_PARSE, "'.' at position"},
    {"...i...", 1, {2}, {{2, 3}}, LT_ERR_PARSE, "'.' at position 4"},
    {"ijk", 1, {2}, {{2, 3}}, LT_ERR_PARSE, "operand 0 has rank 2 but its term names 3 labels"},
    {"i", 1, {2}, {{2, 3}}, LT_ERR_PARSE, "has no '...'"},
    {"i->", 1, {0}, {{0}}, LT_ERR_PARSE, "operand 0 has rank 0"},
    {"ij", 2, {2, 1}, {{2, 3}, {4}}, LT_ERR_PARSE, "1 operand term but 2 inputs were given"},
    {"i,i,i", 2, {1, 1}, {{2}, {2}}, LT_ERR_PARSE, "3 operand terms but 2 inputs"},
    {"i->j", 1, {1}, {{2}}, LT_ERR_PARSE, "output label 'j' does not appear in any input"},
    {"ij->jj", 1, {2}, {{2, 2}}, LT_ERR_PARSE, "output label 'j' appears more than once"},
    {"ij,jk->kik", 2, {2, 2}, {{2, 3}, {3, 2}}, LT_ERR_PARSE, "label 'k' appears more than once"},
    {"ij->ij->", 1, {2}, {{2, 3}}, LT_ERR_PARSE, "position 6"},
    {"...i->i", 1, {2}, {{2, 3}}, LT_ERR_PARSE, "no '...' to receive them"},
    {"...,...",
     2,
     {2, 2},
     {{2, 3}, {4, 3}},
     LT_ERR_SHAPE_MISMATCH,
     "label '...' dimension 0 has extents 2 and 4"},
    {"i,i", 2, {1, 1}, {{2}, {3}}, LT_ERR_SHAPE_MISMATCH, "extents 2 and 3 in operands 0 and 1"},
    {"i->i...i.", 1, {1}, {{2}}, LT_ERR_PARSE, "'.'"},
};

static void test_invalid_expressions(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  for (size_t c = 0; c < sizeof bad_cases / sizeof bad_cases[0]; c++) {
    const bad_case *b = &bad_cases[c];
    lt_tensor *ins[3];
    for (int k = 0; k < b->n; k++)
      ins[k] = ones(ctx, LT_F32, b->rank[k], b->shape[k]);
    lt_plan *plan = (lt_plan *)&plan;
    lt_clear_error();
    lt_status st = lt_plan_einsum(b->expr, b->n, (const lt_tensor *const *)ins, NULL, NULL, &plan);
    if (st != b->status || strstr(lt_last_error(), b->message) == NULL)
      fail_msg("'%s': got %s '%s', expected %s containing '%s'", b->expr, lt_status_string(st),
               lt_last_error(), lt_status_string(b->status), b->message);
    assert_null(plan);
    lt_tensor *out = (lt_tensor *)&out;
    assert_int_equal(lt_einsum(b->expr, b->n, (const lt_tensor *const *)ins, NULL, &out),
                     b->status);
    assert_null(out);
    for (int k = 0; k < b->n; k++)
      lt_tensor_destroy(ins[k]);
  }
  /* Argument errors. */
  int64_t s2[1] = {2};
  lt_tensor *v = ones(ctx, LT_F32, 1, s2), *out = NULL;
  const lt_tensor *one[1] = {v};
  LT_CHECK_FAILS(lt_einsum(NULL, 1, one, NULL, &out), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_einsum("i", 0, one, NULL, &out), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_einsum("i", 1, NULL, NULL, &out), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_einsum("i", 1, one, NULL, NULL), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_einsum_into("i->i", 1, one, NULL, v), LT_ERR_ALIASING);
  int64_t s3[1] = {3};
  lt_tensor *w = ones(ctx, LT_F32, 1, s3);
  LT_CHECK_FAILS(lt_einsum_into("i->i", 1, one, NULL, w), LT_ERR_SHAPE_MISMATCH);
  int32_t m0[1] = {5}, mbad[1] = {6};
  const int32_t *modes[1] = {m0};
  LT_CHECK_FAILS(lt_einsum_modes(1, one, modes, 1, mbad, NULL, &out), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_einsum_modes(1, one, NULL, 1, m0, NULL, &out), LT_ERR_NULL_POINTER);
  int32_t mtwice[2] = {5, 5};
  LT_CHECK_FAILS(lt_einsum_modes(1, one, modes, 2, mtwice, NULL, &out), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "output label 5 appears more than once"));
  lt_tensor_destroy(v);
  lt_tensor_destroy(w);
  lt_context_destroy(ctx);
}

/* Reads "naive flops X, optimized flops Y" from a description. */
static void path_flops(const lt_plan *plan, double *naive, double *optimized) {
  const char *d = strstr(lt_plan_describe(plan), "naive flops");
  assert_non_null(d);
  assert_int_equal(sscanf(d, "naive flops %lf, optimized flops %lf", naive, optimized), 2);
}

static double planned_flops(lt_context *ctx, const char *expr, int n, const int64_t (*shapes)[4],
                            const int *ranks, lt_path_algo algo, int64_t limit, double *naive) {
  lt_tensor *ins[12];
  for (int k = 0; k < n; k++)
    ins[k] = ones(ctx, LT_F64, ranks[k], shapes[k]);
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK(lt_plan_options_set_path(opts, algo));
  LT_CHECK(lt_plan_options_set_memory_limit(opts, limit));
  lt_plan *plan;
  LT_CHECK(lt_plan_einsum(expr, n, (const lt_tensor *const *)ins, NULL, opts, &plan));
  double opt;
  path_flops(plan, naive, &opt);
  /* The plan computes the right numbers too: all-ones inputs give the index-space size. */
  lt_tensor *out;
  LT_CHECK(lt_plan_create_output(plan, &out));
  LT_CHECK(lt_plan_execute(plan, (const lt_tensor *const *)ins, n, NULL, 0, out));
  lt_tensor_destroy(out);
  lt_plan_destroy(plan);
  lt_plan_options_destroy(opts);
  for (int k = 0; k < n; k++)
    lt_tensor_destroy(ins[k]);
  return opt;
}

static void test_paths(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  /* A(100x2) B(2x100) C(100x2): written order costs 2*100*2*100 + 2*100*100*2 = 80000;
   * B.C first costs 2*2*100*2 + 2*100*2*2 = 1600. */
  const int64_t chain[3][4] = {{100, 2}, {2, 100}, {100, 2}};
  const int r2[4] = {2, 2, 2, 2};
  double naive;
  assert_true(planned_flops(ctx, "ij,jk,kl->il", 3, chain, r2, LT_PATH_OPTIMAL, 0, &naive) == 1600);
  assert_true(naive == 80000);
  assert_true(planned_flops(ctx, "ij,jk,kl->il", 3, chain, r2, LT_PATH_NONE, 0, &naive) == 80000);
  assert_true(planned_flops(ctx, "ij,jk,kl->il", 3, chain, r2, LT_PATH_GREEDY, 0, &naive) <= 80000);
  /* Four matrices 10x200, 200x10, 10x200, 200x10: (AB)(CD) = 2*(2*10*200*10) + 2*10*10*10
   * = 82000 is the optimum; left to right costs 2*10*200*10*2 + 2*10*10*200... */
  const int64_t four[4][4] = {{10, 200}, {200, 10}, {10, 200}, {200, 10}};
  double best = planned_flops(ctx, "ab,bc,cd,de->ae", 4, four, r2, LT_PATH_OPTIMAL, 0, &naive);
  assert_true(best == 82000);
  assert_true(best <= naive);
  /* A memory limit forbids the 100x100 intermediate of the written order. */
  double limited =
      planned_flops(ctx, "ij,jk,kl->il", 3, chain, r2, LT_PATH_GREEDY, 8 * 400, &naive);
  assert_true(limited == 1600);
  /* A limit below every intermediate slices (one element per slice: test_einsum_paths checks
   * the numbers); a limit below one element fits nothing. */
  lt_tensor *ins[3];
  for (int k = 0; k < 3; k++)
    ins[k] = ones(ctx, LT_F64, 2, chain[k]);
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK(lt_plan_options_set_memory_limit(opts, 8));
  lt_plan *plan;
  LT_CHECK(lt_plan_einsum("ij,jk,kl->il", 3, (const lt_tensor *const *)ins, NULL, opts, &plan));
  assert_non_null(strstr(lt_plan_describe(plan), "sliced labels:"));
  lt_plan_destroy(plan);
  LT_CHECK(lt_plan_options_set_memory_limit(opts, 4));
  LT_CHECK_FAILS(
      lt_plan_einsum("ij,jk,kl->il", 3, (const lt_tensor *const *)ins, NULL, opts, &plan),
      LT_ERR_OUT_OF_MEMORY);
  lt_plan_options_destroy(opts);
  /* Unary options are refused by name, not silently dropped. */
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK(lt_plan_options_set_unary(opts, 1, LT_UNARY_EXP));
  LT_CHECK_FAILS(
      lt_plan_einsum("ij,jk,kl->il", 3, (const lt_tensor *const *)ins, NULL, opts, &plan),
      LT_ERR_UNSUPPORTED);
  assert_non_null(strstr(lt_last_error(), "unary op on operand 1"));
  lt_plan_options_destroy(opts);
  for (int k = 0; k < 3; k++)
    lt_tensor_destroy(ins[k]);
  /* Random chains: the chosen path never costs more than the written order. */
  lt_test_rng_reset(lt_test_seed());
  for (int it = 0; it < 40; it++) {
    int n = (int)lt_test_rand_int(3, 8);
    char expr[64];
    int64_t sh[12][4];
    int rk[12];
    size_t len = 0;
    for (int k = 0; k < n; k++) {
      sh[k][0] = lt_test_rand_int(1, 12);
      sh[k][1] = k + 1 < n ? lt_test_rand_int(1, 12) : 3;
      if (k > 0) sh[k][0] = sh[k - 1][1];
      rk[k] = 2;
      len += (size_t)sprintf(expr + len, "%s%c%c", k ? "," : "", 'a' + k, 'a' + k + 1);
    }
    for (int algo = 0; algo < 3; algo++) {
      double opt =
          planned_flops(ctx, expr, n, (const int64_t(*)[4])sh, rk, (lt_path_algo)algo, 0, &naive);
      if (opt > naive) fail_msg("%s path %d costs %g > naive %g", expr, algo, opt, naive);
    }
  }
  lt_context_destroy(ctx);
}

/* Integer labels: 60 vectors with distinct labels (past the 52 letters), summed to a scalar:
 * the product of their sums. */
static void test_many_labels(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 7);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    enum { N = 60 };
    lt_tensor *ins[N];
    int32_t labels[N];
    const int32_t *modes[N];
    for (int k = 0; k < N; k++) {
      int64_t s[1] = {2};
      /* Sums near 1 keep the product of 60 of them O(1), so the check has teeth. */
      double vals[2] = {0.5 + 0.1 * lt_test_rand_double(-1, 1),
                        0.5 + 0.1 * lt_test_rand_double(-1, 1)};
      LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, s, NULL, vals, &ins[k]));
      labels[k] = 1000 + 3 * k;
      modes[k] = &labels[k];
    }
    double want = 1.0;
    for (int k = 0; k < N; k++) {
      double *d = lt_test_read_all(ins[k]);
      want *= d[0] + d[1];
      free(d);
    }
    lt_tensor *out;
    LT_CHECK(lt_einsum_modes(N, (const lt_tensor *const *)ins, modes, 0, NULL, NULL, &out));
    double got;
    LT_CHECK(lt_tensor_get(out, NULL, &got));
    assert_true(fabs(want) > 1e-3);
    lt_test_assert_close(&got, &want, 1, 1e-12, "60-label product of sums");
    lt_tensor_destroy(out);
    /* Outer product of two vectors with labels 70 and 90 into output (90, 70). */
    int32_t o[2] = {1000 + 3, 1000};
    LT_CHECK(lt_einsum_modes(2, (const lt_tensor *const *)ins, modes, 2, o, NULL, &out));
    double *a = lt_test_read_all(ins[0]), *b = lt_test_read_all(ins[1]), *g = lt_test_read_all(out);
    double w[4] = {b[0] * a[0], b[0] * a[1], b[1] * a[0], b[1] * a[1]};
    lt_test_assert_close(g, w, 4, 1e-15, "integer-label outer product");
    free(a);
    free(b);
    free(g);
    lt_tensor_destroy(out);
    for (int k = 0; k < N; k++)
      lt_tensor_destroy(ins[k]);
    lt_context_destroy(ctx);
  }
}

static void test_dtypes_and_description(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t s[2] = {40, 40};
  lt_tensor *h = ones(ctx, LT_F16, 2, s), *f = ones(ctx, LT_F32, 2, s),
            *d = ones(ctx, LT_F64, 2, s);
  lt_tensor *out;
  const lt_tensor *hh[2] = {h, h}, *hf[2] = {h, f}, *fd[2] = {f, d};
  LT_CHECK(lt_einsum("ij,jk", 2, hh, NULL, &out));
  assert_int_equal(lt_tensor_dtype(out), LT_F16); /* all inputs share a dtype */
  double v;
  int64_t idx[2] = {3, 5};
  LT_CHECK(lt_tensor_get(out, idx, &v));
  assert_true(v == 40.0);
  lt_tensor_destroy(out);
  LT_CHECK(lt_einsum("ij,jk", 2, hf, NULL, &out));
  assert_int_equal(lt_tensor_dtype(out), LT_F32);
  lt_tensor_destroy(out);
  LT_CHECK(lt_einsum("ij,jk", 2, fd, NULL, &out));
  assert_int_equal(lt_tensor_dtype(out), LT_F64);
  lt_tensor_destroy(out);
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK(lt_plan_options_set_output_dtype(opts, LT_F64));
  LT_CHECK(lt_einsum("ij,jk", 2, hh, opts, &out));
  assert_int_equal(lt_tensor_dtype(out), LT_F64);
  lt_tensor_destroy(out);
  lt_plan *plan;
  LT_CHECK(lt_plan_einsum("ij,jk->ik", 2, fd, NULL, NULL, &plan));
  assert_non_null(strstr(lt_plan_describe(plan), "GEMM"));
  assert_non_null(strstr(lt_plan_describe(plan), "ij,jk->ik"));
  lt_plan_destroy(plan);
  int64_t b3[3] = {8, 40, 40};
  lt_tensor *bt = ones(ctx, LT_F32, 3, b3);
  const lt_tensor *bb[2] = {bt, bt};
  LT_CHECK(lt_plan_einsum("bij,bjk->bik", 2, bb, NULL, NULL, &plan));
  assert_non_null(strstr(lt_plan_describe(plan), "batched GEMM"));
  lt_plan_destroy(plan);
  lt_plan_options_destroy(opts);
  lt_tensor_destroy(bt);
  lt_tensor_destroy(h);
  lt_tensor_destroy(f);
  lt_tensor_destroy(d);
  lt_context_destroy(ctx);
}

static lt_dtype einsum_dtype(lt_context *ctx, const char *expr, int n, const lt_dtype *dts) {
  lt_tensor *ins[3] = {NULL, NULL, NULL}, *out;
  int64_t s[1] = {2};
  for (int k = 0; k < n && k < 3; k++)
    ins[k] = ones(ctx, dts[k], 1, s);
  LT_CHECK(lt_einsum(expr, n, (const lt_tensor *const *)ins, NULL, &out));
  lt_dtype d = lt_tensor_dtype(out);
  lt_tensor_destroy(out);
  for (int k = 0; k < n && k < 3; k++)
    lt_tensor_destroy(ins[k]);
  return d;
}

/* Cases found by probing: an implicit output past 64 dimensions (wrote past the label array),
 * promotion of three or more dtypes (a pairwise fold depended on the order and differed from
 * NumPy's result_type), zero-size tensors with other strides, and plan-time checks. */
static void test_probe_regressions(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t ones20[26];
  for (int i = 0; i < 26; i++)
    ones20[i] = 1;
  lt_tensor *big[3] = {ones(ctx, LT_F32, 20, ones20), ones(ctx, LT_F32, 26, ones20),
                       ones(ctx, LT_F32, 26, ones20)};
  lt_tensor *out = (lt_tensor *)&out;
  LT_CHECK_FAILS(lt_einsum("...,ABCDEFGHIJKLMNOPQRSTUVWXYZ,abcdefghijklmnopqrstuvwxyz", 3,
                           (const lt_tensor *const *)big, NULL, &out),
                 LT_ERR_PARSE);
  assert_non_null(strstr(lt_last_error(), "more than 64 dimensions"));
  assert_null(out);
  for (int k = 0; k < 3; k++)
    lt_tensor_destroy(big[k]);

  /* NumPy's result_type, whatever the order (np.result_type(u16, i16, f32) is f32). */
  static const lt_dtype orders[][3] = {
      {LT_U16, LT_I16, LT_F32}, {LT_F32, LT_U16, LT_I16}, {LT_I16, LT_F32, LT_U16}};
  for (int o = 0; o < 3; o++)
    assert_int_equal(einsum_dtype(ctx, "i,i,i->i", 3, orders[o]), LT_F32);
  static const lt_dtype small[][3] = {{LT_I8, LT_U8, LT_F16}, {LT_U8, LT_F16, LT_I8}};
  for (int o = 0; o < 2; o++)
    assert_int_equal(einsum_dtype(ctx, "i,i,i->i", 3, small[o]), LT_F16);
  static const lt_dtype ints[3] = {LT_U8, LT_I8, LT_U16};
  assert_int_equal(einsum_dtype(ctx, "i,i,i->i", 3, ints), LT_I32);

  /* A zero-size output with strides of its own (NumPy gives empty arrays zero strides). */
  int64_t sa[2] = {0, 3}, sb[2] = {3, 4}, sc[2] = {4, 0};
  lt_tensor *a = ones(ctx, LT_F64, 2, sa), *b = ones(ctx, LT_F64, 2, sb),
            *c = ones(ctx, LT_F64, 2, sc), *ct;
  LT_CHECK(lt_view_transpose(c, 0, 1, &ct)); /* (0, 4) with strides (1, 0) */
  const lt_tensor *ab[2] = {a, b};
  lt_plan *plan;
  LT_CHECK(lt_plan_einsum("ij,jk->ik", 2, ab, NULL, NULL, &plan));
  LT_CHECK(lt_plan_execute(plan, ab, 2, NULL, 0, ct));
  lt_plan_destroy(plan);

  /* A wrong extent is named as such, not as the stride it shifts. */
  int64_t s45[2] = {4, 5}, s54[2] = {5, 4}, s46[2] = {4, 6}, s44[2] = {4, 4};
  lt_tensor *p = ones(ctx, LT_F64, 2, s45), *q = ones(ctx, LT_F64, 2, s54),
            *r = ones(ctx, LT_F64, 2, s46), *d = ones(ctx, LT_F64, 2, s44);
  const lt_tensor *pq[2] = {p, q}, *rq[2] = {r, q};
  LT_CHECK(lt_plan_einsum("ij,jk->ik", 2, pq, NULL, NULL, &plan));
  LT_CHECK_FAILS(lt_plan_execute(plan, rq, 2, NULL, 0, d), LT_ERR_LAYOUT_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "input 0 axis 1 has extent 6"));
  lt_plan_destroy(plan);

  /* An explicit path is checked for one operand too (it takes 0 pairs). */
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  int64_t pair[1][2] = {{0, 1}};
  LT_CHECK(lt_plan_options_set_explicit_path(opts, 1, (const int64_t(*)[2])pair));
  const lt_tensor *only[1] = {p};
  plan = (lt_plan *)&plan;
  LT_CHECK_FAILS(lt_plan_einsum("ab->a", 1, only, NULL, opts, &plan), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "1 operand takes 0"));
  assert_null(plan);
  lt_plan_options_destroy(opts);
  lt_tensor *all[] = {a, b, c, ct, p, q, r, d};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    lt_tensor_destroy(all[k]);
  lt_context_destroy(ctx);
}

typedef struct thread_arg {
  lt_context *ctx;
  const lt_tensor *in[2];
  const double *want;
  int failures;
} thread_arg;

static void *hammer(void *p) {
  thread_arg *a = p;
  for (int it = 0; it < 200; it++) {
    lt_tensor *out = NULL;
    if (lt_einsum(it % 2 ? "ij,jk->ik" : "ij,jk", 2, a->in, NULL, &out) != LT_OK) {
      a->failures++;
      continue;
    }
    double got[9];
    lt_tensor_to_host(out, got, sizeof got);
    for (int i = 0; i < 9; i++)
      a->failures += got[i] != a->want[i];
    lt_tensor_destroy(out);
    if (it % 50 == 49) lt_context_clear_cache(a->ctx);
  }
  return NULL;
}

static void test_cache_threads(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  double x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, want[9];
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) {
      want[i * 3 + k] = 0;
      for (int j = 0; j < 3; j++)
        want[i * 3 + k] += x[i * 3 + j] * x[j * 3 + k];
    }
  int64_t s[2] = {3, 3};
  lt_tensor *t;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 2, s, NULL, x, &t));
  thread_arg args[4];
  pthread_t tid[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (thread_arg){ctx, {t, t}, want, 0};
    assert_int_equal(pthread_create(&tid[i], NULL, hammer, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(tid[i], NULL);
    assert_int_equal(args[i].failures, 0);
  }
  lt_tensor_destroy(t);
  lt_context_destroy(ctx); /* tears down the cache with plans still in it */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_expressions), cmocka_unit_test(test_paths),
      cmocka_unit_test(test_many_labels),         cmocka_unit_test(test_dtypes_and_description),
      cmocka_unit_test(test_cache_threads),       cmocka_unit_test(test_probe_regressions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
