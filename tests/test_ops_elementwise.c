/* SPDX-License-Identifier: MIT */
/* Elementwise plans (binary, trinary) and the NumPy-style shortcuts against a naive float64
 * loop: every op x unary op x dtype x layout family, scalars in {0, 1, -2.5}, random mode
 * orders and broadcasting, size-0/size-1 modes, rank 0 and rank 8, on every backend. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const lt_dtype dtypes[] = {LT_F16, LT_BF16, LT_F32, LT_F64};
static const double scalar_values[] = {0.0, 1.0, -2.5};

typedef struct ew_case {
  int n_in;
  lt_dtype dtype;
  lt_test_layout layout;
  lt_binary_op op_ab, op_abc;
  lt_unary_op unary[3];
  double scalars[3];
} ew_case;

/* A random output shape (rank 0..4, sometimes 8) with distinct random labels. */
static int random_output(int64_t *shape, int32_t *modes) {
  int rank = lt_test_rand_int(0, 9) == 0 ? 8 : (int)lt_test_rand_int(0, 4);
  for (int i = 0; i < rank; i++) {
    shape[i] = rank == 8 ? lt_test_rand_int(1, 2) : lt_test_rand_int(1, 5);
    if (lt_test_rand_int(0, 24) == 0) shape[i] = 0;
    modes[i] = (int32_t)(100 + 7 * i);
  }
  lt_test_shuffle(modes, rank);
  return rank;
}

/* An input over a random subset of the output's modes, in random order, some broadcast. */
static int random_input(int rank_d, const int64_t *shape_d, const int32_t *modes_d, int64_t *shape,
                        int32_t *modes) {
  int order[LT_MAX_RANK];
  int32_t perm[LT_MAX_RANK];
  for (int i = 0; i < rank_d; i++)
    perm[i] = i;
  lt_test_shuffle(perm, rank_d);
  int rank = 0;
  for (int i = 0; i < rank_d; i++) {
    if (lt_test_rand_int(0, 3) == 0) continue;
    order[rank++] = perm[i];
  }
  for (int i = 0; i < rank; i++) {
    modes[i] = modes_d[order[i]];
    shape[i] = lt_test_rand_int(0, 4) == 0 ? 1 : shape_d[order[i]];
  }
  return rank;
}

/* Unary ops whose output is unbounded would make pow's result ill-conditioned in f32. */
static bool bounded(lt_unary_op op) {
  return op != LT_UNARY_EXP && op != LT_UNARY_RECIPROCAL && op != LT_UNARY_LOG;
}

static void run_case(lt_context *ctx, ew_case *c) {
  int64_t shape_d[LT_MAX_RANK], shapes[3][LT_MAX_RANK];
  int32_t modes_d[LT_MAX_RANK], modes[3][LT_MAX_RANK];
  int rank_d = random_output(shape_d, modes_d), ranks[3];
  lt_tensor *in[3];
  double *snap[3], *vals[3];
  for (int k = 0; k < c->n_in; k++) {
    ranks[k] = random_input(rank_d, shape_d, modes_d, shapes[k], modes[k]);
    in[k] = lt_test_random_tensor(ctx, c->dtype, ranks[k], shapes[k], c->layout);
    snap[k] = lt_test_snapshot(in[k]);
    vals[k] = lt_test_read_all(in[k]);
  }
  if (c->op_ab == LT_BINARY_POW && !bounded(c->unary[1])) c->unary[1] = LT_UNARY_IDENTITY;
  if (c->n_in == 3 && c->op_abc == LT_BINARY_POW && !bounded(c->unary[2]))
    c->unary[2] = LT_UNARY_IDENTITY;
  lt_test_output out;
  lt_test_output_make(ctx, c->dtype, rank_d, shape_d, (lt_test_layout)lt_test_rand_int(0, 3), &out);
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  for (int k = 0; k < c->n_in; k++)
    LT_CHECK(lt_plan_options_set_unary(opts, k, c->unary[k]));
  lt_plan *plan;
  if (c->n_in == 2)
    LT_CHECK(
        lt_plan_binary(in[0], modes[0], in[1], modes[1], c->op_ab, out.view, modes_d, opts, &plan));
  else
    LT_CHECK(lt_plan_trinary(in[0], modes[0], in[1], modes[1], in[2], modes[2], c->op_ab, c->op_abc,
                             out.view, modes_d, opts, &plan));
  LT_CHECK(
      lt_plan_execute(plan, (const lt_tensor *const *)in, c->n_in, c->scalars, c->n_in, out.view));
  int64_t n = lt_test_numel(rank_d, shape_d), idx[LT_MAX_RANK];
  double *want = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) {
    lt_test_unravel(i, rank_d, shape_d, idx);
    double term[3];
    for (int k = 0; k < c->n_in; k++) /* a zero scalar's operand is not read */
      term[k] = c->scalars[k] == 0.0
                    ? 0.0
                    : c->scalars[k] *
                          lt_test_unary_ref(
                              c->unary[k], vals[k][lt_test_mode_index(ranks[k], shapes[k], modes[k],
                                                                      rank_d, modes_d, idx)]);
    double v = lt_test_binary_ref(c->op_ab, term[0], term[1]);
    if (c->n_in == 3) v = lt_test_binary_ref(c->op_abc, v, term[2]);
    want[i] = lt_test_round_to(c->dtype, v);
  }
  double *got = lt_test_read_all(out.view);
  char what[160];
  snprintf(what, sizeof what, "%s %s n_in=%d op_ab=%d op_abc=%d unary=%d,%d,%d s=%g,%g,%g",
           lt_dtype_name(c->dtype), lt_test_layout_name(c->layout), c->n_in, c->op_ab, c->op_abc,
           c->unary[0], c->unary[1], c->unary[2], c->scalars[0], c->scalars[1], c->scalars[2]);
  lt_test_assert_close(got, want, n, lt_test_tolerance(c->dtype == LT_F64 ? LT_F64 : c->dtype, 4),
                       what);
  lt_test_output_check_guard(&out);
  for (int k = 0; k < c->n_in; k++) {
    lt_test_check_unchanged(in[k], snap[k]);
    free(snap[k]);
    free(vals[k]);
    lt_tensor_destroy(in[k]);
  }
  free(got);
  free(want);
  lt_plan_destroy(plan);
  lt_plan_options_destroy(opts);
  lt_test_output_free(&out);
}

static void sweep(int n_in) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + (uint64_t)n_in);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int counter = 0;
    for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++)
      for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++)
        for (int op = LT_BINARY_ADD; op <= LT_BINARY_POW; op++)
          for (int rep = 0; rep < 2; rep++, counter++) {
            ew_case c = {.n_in = n_in, .dtype = dtypes[t], .layout = (lt_test_layout)layout};
            c.op_ab = (lt_binary_op)op;
            c.op_abc = (lt_binary_op)((op + rep + counter / 7) % 7);
            for (int k = 0; k < 3; k++) {
              c.unary[k] = (lt_unary_op)((counter * (k + 1) + k) % 13);
              c.scalars[k] = scalar_values[(counter + k * (rep + 1)) % 3];
            }
            run_case(ctx, &c);
          }
    lt_context_destroy(ctx);
  }
}

static void test_binary(void **state) { sweep(2); }
static void test_trinary(void **state) { sweep(3); }

/* In place: D is A itself (identical layout) is allowed and reads before it writes. */
static void test_in_place(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t shape[2] = {37, 53};
    int32_t m[2] = {1, 2};
    lt_tensor *a = lt_test_random_tensor(ctx, LT_F32, 2, shape, LT_LAYOUT_STEPPED);
    lt_tensor *b = lt_test_random_tensor(ctx, LT_F32, 2, shape, LT_LAYOUT_TRANSPOSED);
    double *va = lt_test_read_all(a), *vb = lt_test_read_all(b);
    lt_plan *plan;
    LT_CHECK(lt_plan_binary(a, m, b, m, LT_BINARY_MUL, a, m, NULL, &plan));
    const lt_tensor *ins[2] = {a, b};
    double s[2] = {-2.5, 1.0};
    LT_CHECK(lt_plan_execute(plan, ins, 2, s, 2, a));
    double *got = lt_test_read_all(a);
    for (int64_t i = 0; i < 37 * 53; i++)
      va[i] = (float)(-2.5 * va[i] * vb[i]);
    lt_test_assert_close(got, va, 37 * 53, lt_test_tolerance(LT_F32, 2), "in place");
    free(got);
    free(va);
    free(vb);
    lt_plan_destroy(plan);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
    lt_context_destroy(ctx);
  }
}

/* A zero scalar's operand is not read (as in cuTENSOR): NaN and Inf there stay out, and the
 * term counts as 0 for every op. Layouts vary so that tiled and row paths both run. */
static void test_zero_scalar_not_read(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t shape[2] = {45, 45}, n = 45 * 45; /* square: B and the permutation transpose */
    int32_t m[2] = {1, 2}, mt[2] = {2, 1};
    lt_tensor *a = lt_test_random_tensor(ctx, LT_F32, 2, shape, LT_LAYOUT_STEPPED), *nan, *inf, *d;
    LT_CHECK(lt_tensor_full(ctx, LT_F32, 2, shape, NAN, &nan));
    LT_CHECK(lt_tensor_full(ctx, LT_F32, 2, shape, INFINITY, &inf));
    LT_CHECK(lt_tensor_full(ctx, LT_F32, 2, shape, NAN, &d));
    double *va = lt_test_read_all(a), *want = malloc(sizeof(double) * (size_t)n);
    lt_plan *plan;
    /* D = 1.5*A * 0*NaN = 0;  D = (1.5*A + 0*NaN) + 0*Inf = 1.5*A;  D^T = 0*NaN = 0. */
    LT_CHECK(lt_plan_binary(a, m, nan, m, LT_BINARY_MUL, d, m, NULL, &plan));
    const lt_tensor *ins2[2] = {a, nan};
    double s2[2] = {1.5, 0.0};
    LT_CHECK(lt_plan_execute(plan, ins2, 2, s2, 2, d));
    lt_plan_destroy(plan);
    double *got = lt_test_read_all(d);
    for (int64_t i = 0; i < n; i++)
      want[i] = 0.0;
    lt_test_assert_close(got, want, n, 0.0, "A * 0*NaN");
    free(got);
    LT_CHECK(
        lt_plan_trinary(a, m, nan, mt, inf, m, LT_BINARY_ADD, LT_BINARY_ADD, d, m, NULL, &plan));
    const lt_tensor *ins3[3] = {a, nan, inf};
    double s3[3] = {1.5, 0.0, 0.0};
    LT_CHECK(lt_plan_execute(plan, ins3, 3, s3, 3, d));
    lt_plan_destroy(plan);
    got = lt_test_read_all(d);
    for (int64_t i = 0; i < n; i++)
      want[i] = (float)(1.5 * va[i]);
    lt_test_assert_close(got, want, n, lt_test_tolerance(LT_F32, 1), "A + 0*NaN + 0*Inf");
    free(got);
    LT_CHECK(lt_plan_permutation(nan, mt, d, m, NULL, &plan));
    const lt_tensor *ins1[1] = {nan};
    double s1[1] = {0.0};
    LT_CHECK(lt_plan_execute(plan, ins1, 1, s1, 1, d));
    lt_plan_destroy(plan);
    got = lt_test_read_all(d);
    for (int64_t i = 0; i < n; i++)
      want[i] = 0.0;
    lt_test_assert_close(got, want, n, 0.0, "0 * NaN^T");
    free(got);
    free(want);
    free(va);
    lt_tensor_destroy(a);
    lt_tensor_destroy(nan);
    lt_tensor_destroy(inf);
    lt_tensor_destroy(d);
    lt_context_destroy(ctx);
  }
}

/* o = a - b through lt_sub, against a naive loop: element i of a meets element (i / div) % mod of
 * b. Destroys a and b. */
static void check_sub(lt_tensor *a, lt_tensor *b, int64_t div, int64_t mod, const char *what) {
  lt_tensor *o;
  lt_dtype dtype = lt_tensor_dtype(a);
  LT_CHECK(lt_sub(a, b, &o));
  assert_int_equal(lt_tensor_dtype(o), dtype);
  assert_int_equal(lt_tensor_rank(o), lt_tensor_rank(a));
  double *va = lt_test_read_all(a), *vb = lt_test_read_all(b), *got = lt_test_read_all(o);
  int64_t n = lt_tensor_numel(a);
  double *want = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    want[i] = lt_test_round_to(dtype, va[i] - vb[(i / div) % mod]);
  lt_test_assert_close(got, want, n, lt_test_tolerance(dtype, 2), what);
  free(want);
  free(va);
  free(vb);
  free(got);
  lt_tensor_destroy(o);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
}

/* Large enough to run on several threads and through every kernel path. */
static void test_large_broadcast(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t sa[3] = {64, 129, 70}, sb[2] = {129, 1};
    for (int t = 0; t < 4; t++) {
      lt_tensor *a = lt_test_random_tensor(ctx, dtypes[t], 3, sa, LT_LAYOUT_CONTIGUOUS);
      lt_tensor *b = lt_test_random_tensor(ctx, dtypes[t], 2, sb, LT_LAYOUT_NEGATIVE);
      check_sub(a, b, 70, 129, "lt_sub broadcast");
    }
    lt_context_destroy(ctx);
  }
}

/* Short inner dims broadcast against long ones ((2500, 3) - (3,), (40, 60, 5) - (60, 1)): the
 * engine walks a longer dim innermost, strided, and takes rows that interleave block by block.
 * Every layout family of A, every dtype, against a naive loop. */
static void test_short_inner_rows(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 31);
  int64_t sa[2][3] = {{2500, 3, 0}, {40, 60, 5}}, sb[2][2] = {{3, 0}, {60, 1}};
  int ra[2] = {2, 3}, rb[2] = {1, 2};
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int c = 0; c < 2; c++)
      for (int t = 0; t < 4; t++)
        for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++) {
          lt_tensor *a = lt_test_random_tensor(ctx, dtypes[t], ra[c], sa[c], layout);
          lt_tensor *b = lt_test_random_tensor(ctx, dtypes[t], rb[c], sb[c], LT_LAYOUT_CONTIGUOUS);
          /* b's element: a's last index, or its middle one */
          int64_t last = sa[c][ra[c] - 1];
          check_sub(a, b, c == 0 ? 1 : last, c == 0 ? last : sa[c][1], "short inner rows");
        }
    lt_context_destroy(ctx);
  }
}

/* Inner dims up to 256 (and 257, not folded) against an operand that holds each value along
 * them ((N, p) - (N, 1)) or repeats them ((N, p) - (p,)): the engine folds them into long rows
 * with stretched or periodic values, whose phase changes at every chunk and row block ((23000,
 * 3): a row longer than a block). Every layout family of A, B contiguous, stepped or negative,
 * every dtype, against a naive loop. */
static void test_folded_rows(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 37);
  const int64_t periods[] = {2, 3, 4, 5, 8, 10, 16, 17, 64, 200, 256, 257};
  const lt_test_layout b_layouts[3] = {LT_LAYOUT_CONTIGUOUS, LT_LAYOUT_STEPPED, LT_LAYOUT_NEGATIVE};
  int64_t total = lt_test_instrumented() ? 6000 : 40000;
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int counter = 0;
    for (size_t i = 0; i < sizeof periods / sizeof *periods; i++)
      for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++)
        for (int stretched = 0; stretched < 2; stretched++, counter++) {
          int64_t p = periods[i], n = p == 3 && layout == 0 ? 23000 : total / p;
          int64_t sa[2] = {n, p}, sb[2] = {n, 1};
          lt_dtype dtype = dtypes[counter % 4];
          lt_tensor *a = lt_test_random_tensor(ctx, dtype, 2, sa, layout);
          lt_tensor *b = lt_test_random_tensor(ctx, dtype, stretched ? 2 : 1,
                                               stretched ? sb : &sa[1], b_layouts[counter % 3]);
          check_sub(a, b, stretched ? p : 1, stretched ? n : p, "folded rows");
        }
    lt_context_destroy(ctx);
  }
}

/* A repeating operand folded into a long row must stay the inner one: X (9,3,2), all strides 0,
 * times Y (9,3,2) with strides (1,0,9) (einsum "eea,caed,c->acde" met this through the fuzzer:
 * the row was folded, then a longer dim was moved inside it). */
static void test_folded_rows_stay_inner(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  double yv[18], xv[1] = {1.25};
  for (int i = 0; i < 18; i++)
    yv[i] = (double)(i * 7 % 18) - 8.5;
  int64_t n18[1] = {18}, n1[1] = {1}, shape[3] = {9, 3, 2}, ys[3] = {1, 0, 9}, xs[3] = {0, 0, 0};
  lt_tensor *yb, *xb, *y, *x, *o;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, n18, NULL, yv, &yb));
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, n1, NULL, xv, &xb));
  LT_CHECK(lt_view_as_strided(yb, 3, shape, ys, 0, &y));
  LT_CHECK(lt_view_as_strided(xb, 3, shape, xs, 0, &x));
  LT_CHECK(lt_mul(x, y, &o));
  double *got = lt_test_read_all(o);
  for (int64_t i = 0; i < 9; i++)
    for (int64_t j = 0; j < 3; j++)
      for (int64_t k = 0; k < 2; k++)
        if (got[(i * 3 + j) * 2 + k] != 1.25 * yv[i + 9 * k])
          fail_msg("element (%lld,%lld,%lld) is %g, want %g", (long long)i, (long long)j,
                   (long long)k, got[(i * 3 + j) * 2 + k], 1.25 * yv[i + 9 * k]);
  free(got);
  lt_tensor_destroy(o);
  lt_tensor_destroy(x);
  lt_tensor_destroy(y);
  lt_tensor_destroy(xb);
  lt_tensor_destroy(yb);
  lt_context_destroy(ctx);
}

/* Outputs of at least 32 MiB are streamed from an L1 buffer with non-temporal stores: rows that
 * start off the 64-byte grid (a column-sliced output), and an output dtype other than the
 * compute dtype (F16 computed in F32). The slice's outside columns must stay untouched. */
static void test_streamed_rows(void **state) {
  if (lt_test_instrumented()) skip(); /* 17M-element outputs: minutes under memcheck */
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  struct {
    lt_dtype dtype;
    int64_t rows;
  } cases[] = {{LT_F32, 34}, {LT_F16, 66}};
  for (int c = 0; c < 2; c++) {
    int64_t sa[3] = {cases[c].rows, 257, 1000}, sbase[3] = {cases[c].rows, 257, 1002};
    int32_t ma[3] = {0, 1, 2}, mb[2] = {0, 1};
    lt_tensor *a = lt_test_random_tensor(ctx, cases[c].dtype, 3, sa, LT_LAYOUT_CONTIGUOUS);
    lt_tensor *b = lt_test_random_tensor(ctx, cases[c].dtype, 2, sa, LT_LAYOUT_NEGATIVE);
    lt_tensor *base, *d;
    LT_CHECK(lt_tensor_full(ctx, cases[c].dtype, 3, sbase, 7.0, &base));
    LT_CHECK(lt_view_slice(base, 2, 1, 1001, 1, &d));
    lt_plan *plan;
    LT_CHECK(lt_plan_binary(a, ma, b, mb, LT_BINARY_SUB, d, ma, NULL, &plan));
    const lt_tensor *ins[2] = {a, b};
    LT_CHECK(lt_plan_execute(plan, ins, 2, NULL, 0, d));
    double *va = lt_test_read_all(a), *vb = lt_test_read_all(b), *got = lt_test_read_all(base);
    int64_t n = lt_test_numel(3, sa);
    for (int64_t i = 0; i < n; i++) {
      int64_t row = i / 1000, col = i % 1000;
      double want = lt_test_round_to(cases[c].dtype, va[i] - vb[row]);
      if (got[row * 1002 + col + 1] != want)
        fail_msg("%s element %lld: %g, expected %g", lt_dtype_name(cases[c].dtype), (long long)i,
                 got[row * 1002 + col + 1], want);
      if (col == 0 && (got[row * 1002] != 7.0 || got[row * 1002 + 1001] != 7.0))
        fail_msg("%s row %lld: a column outside the slice was written",
                 lt_dtype_name(cases[c].dtype), (long long)row);
    }
    free(va);
    free(vb);
    free(got);
    lt_plan_destroy(plan);
    lt_tensor_destroy(d);
    lt_tensor_destroy(base);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
  }
  lt_context_destroy(ctx);
}

/* NumPy-style shortcuts: trailing alignment, result dtype, unary. */
static void test_oneshot(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t sa[3] = {2, 3, 4}, sb[2] = {1, 4};
    lt_tensor *a = lt_test_random_tensor(ctx, LT_F32, 3, sa, LT_LAYOUT_TRANSPOSED);
    lt_tensor *b = lt_test_random_tensor(ctx, LT_F64, 2, sb, LT_LAYOUT_CONTIGUOUS);
    double *va = lt_test_read_all(a), *vb = lt_test_read_all(b);
    lt_status (*fns[4])(const lt_tensor *, const lt_tensor *, lt_tensor **) = {lt_add, lt_sub,
                                                                               lt_mul, lt_div};
    lt_binary_op ops[4] = {LT_BINARY_ADD, LT_BINARY_SUB, LT_BINARY_MUL, LT_BINARY_DIV};
    for (int f = 0; f < 4; f++) {
      lt_tensor *o;
      LT_CHECK(fns[f](a, b, &o));
      assert_int_equal(lt_tensor_dtype(o), LT_F64);
      double *got = lt_test_read_all(o), want[24];
      for (int i = 0; i < 24; i++)
        want[i] = lt_test_binary_ref(ops[f], va[i], vb[i % 4]);
      lt_test_assert_close(got, want, 24, lt_test_tolerance(LT_F64, 1), "one-shot");
      free(got);
      lt_tensor_destroy(o);
    }
    for (int u = LT_UNARY_IDENTITY; u <= LT_UNARY_SQUARE; u++) {
      lt_tensor *o;
      LT_CHECK(lt_unary((lt_unary_op)u, a, &o));
      assert_int_equal(lt_tensor_dtype(o), LT_F32);
      double *got = lt_test_read_all(o), want[24];
      for (int i = 0; i < 24; i++)
        want[i] = lt_test_round_to(LT_F32, lt_test_unary_ref((lt_unary_op)u, va[i]));
      lt_test_assert_close(got, want, 24, lt_test_tolerance(LT_F32, 1), "lt_unary");
      free(got);
      lt_tensor_destroy(o);
    }
    int64_t sc[2] = {3, 5};
    lt_tensor *c = lt_test_random_tensor(ctx, LT_F32, 2, sc, LT_LAYOUT_CONTIGUOUS), *o = NULL;
    LT_CHECK_FAILS(lt_add(a, c, &o), LT_ERR_SHAPE_MISMATCH);
    assert_null(o);
    LT_CHECK_FAILS(lt_binary((lt_binary_op)99, a, b, &o), LT_ERR_INVALID_ARGUMENT);
    LT_CHECK_FAILS(lt_unary((lt_unary_op)-1, a, &o), LT_ERR_INVALID_ARGUMENT);
    lt_tensor_destroy(c);
    free(va);
    free(vb);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
    lt_context_destroy(ctx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_binary),
      cmocka_unit_test(test_trinary),
      cmocka_unit_test(test_in_place),
      cmocka_unit_test(test_zero_scalar_not_read),
      cmocka_unit_test(test_large_broadcast),
      cmocka_unit_test(test_short_inner_rows),
      cmocka_unit_test(test_folded_rows_stay_inner),
      cmocka_unit_test(test_folded_rows),
      cmocka_unit_test(test_streamed_rows),
      cmocka_unit_test(test_oneshot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
