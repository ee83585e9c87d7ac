/* SPDX-License-Identifier: MIT */
/* Reduction plans and lt_reduce/lt_argmax against a naive float64 loop: every reduce op x
 * dtype x layout family, random kept modes and orders, C with beta in {0, 1, -2.5}, NaN and
 * empty semantics, float32 accuracy over 10^7 elements, on every backend. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lt_dtype dtypes[] = {LT_F16, LT_BF16, LT_F32, LT_F64};
static const double scalar_values[] = {0.0, 1.0, -2.5};

static double identity(lt_reduce_op op) {
  switch (op) {
  case LT_REDUCE_PROD: return 1.0;
  case LT_REDUCE_MIN: return INFINITY;
  case LT_REDUCE_MAX: return -INFINITY;
  default: return 0.0;
  }
}

static double accumulate(lt_reduce_op op, double acc, double x) {
  switch (op) {
  case LT_REDUCE_PROD: return acc * x;
  case LT_REDUCE_MIN: return (isnan(acc) || isnan(x)) ? NAN : fmin(acc, x);
  case LT_REDUCE_MAX: return (isnan(acc) || isnan(x)) ? NAN : fmax(acc, x);
  case LT_REDUCE_SUMSQ: return acc + x * x;
  case LT_REDUCE_MAXABS: return (isnan(acc) || isnan(x)) ? NAN : fmax(acc, fabs(x));
  default: return acc + x;
  }
}

/* Naive reference: reduce vals (A in C order) over modes of A absent from D. */
static double *reference(lt_reduce_op op, lt_unary_op unary, int rank_a, const int64_t *shape_a,
                         const int32_t *modes_a, const double *vals, int rank_d,
                         const int64_t *shape_d, const int32_t *modes_d) {
  int64_t nd = lt_test_numel(rank_d, shape_d), na = lt_test_numel(rank_a, shape_a);
  double *acc = malloc(sizeof(double) * (size_t)(nd ? nd : 1));
  for (int64_t i = 0; i < nd; i++)
    acc[i] = identity(op);
  int64_t idx[LT_MAX_RANK];
  for (int64_t i = 0; i < na; i++) {
    lt_test_unravel(i, rank_a, shape_a, idx);
    int64_t o = lt_test_mode_index(rank_d, shape_d, modes_d, rank_a, modes_a, idx);
    acc[o] = accumulate(op, acc[o], lt_test_unary_ref(unary, vals[i]));
  }
  if (op == LT_REDUCE_MEAN) {
    int64_t count = nd ? na / nd : 0;
    for (int64_t i = 0; i < nd; i++)
      acc[i] = count ? acc[i] / (double)count : NAN;
  }
  return acc;
}

/* Extents of the `wide` cases: short and long dims mixed, so that both walks of the CPU engine
 * (an output at a time; chunks of outputs, a row per reduced position) and its choice between
 * them by kernel calls are met, with kept and reduced dims of unit and other strides. */
static const int64_t wide_extents[6] = {1, 3, 7, 64, 300, 1100};

static void check_reduction(lt_context *ctx, lt_reduce_op op, lt_tensor *a, const int32_t *modes_a,
                            int rank_d, const int64_t *shape_d, const int32_t *modes_d, int counter,
                            const char *layout);

static void run_case(lt_context *ctx, lt_reduce_op op, lt_dtype dtype, lt_test_layout layout,
                     int counter, bool wide) {
  int64_t shape_a[LT_MAX_RANK], shape_d[LT_MAX_RANK];
  int32_t modes_a[LT_MAX_RANK], modes_d[LT_MAX_RANK];
  int rank_a = lt_test_rand_int(0, 9) == 0 ? 8 : (int)lt_test_rand_int(0, 4), rank_d = 0;
  if (wide) rank_a = (int)lt_test_rand_int(2, 3);
  for (int i = 0; i < rank_a; i++) {
    shape_a[i] = rank_a == 8 ? lt_test_rand_int(1, 3) : lt_test_rand_int(1, 6);
    if (lt_test_rand_int(0, 24) == 0) shape_a[i] = 0;
    if (wide) shape_a[i] = wide_extents[lt_test_rand_int(0, 5)];
    if (wide && lt_test_numel(i + 1, shape_a) > 150000) shape_a[i] = 1 + i;
    modes_a[i] = (int32_t)(50 + 3 * i);
  }
  lt_test_shuffle(modes_a, rank_a);
  for (int i = 0; i < rank_a; i++)
    if (lt_test_rand_int(0, 1)) {
      modes_d[rank_d] = modes_a[i];
      shape_d[rank_d++] = shape_a[i];
    }
  /* Random order of D's modes (shuffle modes and extents together). */
  for (int i = rank_d - 1; i > 0; i--) {
    int j = (int)lt_test_rand_int(0, i);
    int32_t m = modes_d[i];
    int64_t e = shape_d[i];
    modes_d[i] = modes_d[j];
    shape_d[i] = shape_d[j];
    modes_d[j] = m;
    shape_d[j] = e;
  }
  lt_tensor *a = lt_test_random_tensor(ctx, dtype, rank_a, shape_a, layout);
  check_reduction(ctx, op, a, modes_a, rank_d, shape_d, modes_d, counter,
                  lt_test_layout_name(layout));
  lt_tensor_destroy(a);
}

/* Reduces A (modes_a) into a D of rank_d (shape_d, modes_d) with alpha, beta, C, D's layout and
 * unary op chosen by `counter`, and compares with the float64 reference. */
static void check_reduction(lt_context *ctx, lt_reduce_op op, lt_tensor *a, const int32_t *modes_a,
                            int rank_d, const int64_t *shape_d, const int32_t *modes_d, int counter,
                            const char *layout) {
  lt_dtype dtype = lt_tensor_dtype(a);
  int rank_a = lt_tensor_rank(a);
  const int64_t *shape_a = lt_tensor_shape(a);
  double *snap = lt_test_snapshot(a), *va = lt_test_read_all(a);
  double alpha = scalar_values[counter % 3], beta = scalar_values[(counter / 3) % 3];
  bool with_c = counter % 2 == 0;
  lt_tensor *c = NULL;
  if (with_c && beta == 0.0) /* beta = 0 must not read C: poison it */
    LT_CHECK(lt_tensor_full(ctx, dtype, rank_d, shape_d, NAN, &c));
  else if (with_c)
    c = lt_test_random_tensor(ctx, dtype, rank_d, shape_d, (lt_test_layout)(counter % 4));
  double *vc = c ? lt_test_read_all(c) : NULL;
  lt_test_output out;
  lt_test_output_make(ctx, dtype, rank_d, shape_d, (lt_test_layout)((counter / 2) % 4), &out);
  double *vd = lt_test_read_all(out.view);
  if (!with_c && beta != 0.0) {
    /* beta*D is added: give D finite values first. */
    lt_tensor *init = lt_test_random_tensor(ctx, dtype, rank_d, shape_d, LT_LAYOUT_CONTIGUOUS);
    LT_CHECK(lt_tensor_copy_into(out.view, init));
    free(vd);
    vd = lt_test_read_all(out.view);
    lt_tensor_destroy(init);
  }
  lt_unary_op unary = (lt_unary_op)(counter % 13);
  if (op == LT_REDUCE_PROD && (unary == LT_UNARY_EXP || unary == LT_UNARY_RECIPROCAL))
    unary = LT_UNARY_IDENTITY; /* products of large values lose relative accuracy in f32 */
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK(lt_plan_options_set_unary(opts, 0, unary));
  lt_plan *plan;
  LT_CHECK(lt_plan_reduction(a, modes_a, c, modes_d, op, out.view, modes_d, opts, &plan));
  const lt_tensor *ins[2] = {a, c};
  double s[2] = {alpha, beta};
  LT_CHECK(lt_plan_execute(plan, ins, c ? 2 : 1, s, 2, out.view));
  double *want = reference(op, unary, rank_a, shape_a, modes_a, va, rank_d, shape_d, modes_d);
  int64_t nd = lt_test_numel(rank_d, shape_d), na = lt_test_numel(rank_a, shape_a);
  for (int64_t i = 0; i < nd; i++) {
    double v = alpha * want[i];
    if (beta != 0.0) v += beta * (c ? vc[i] : vd[i]);
    want[i] = lt_test_round_to(dtype, v);
  }
  double *got = lt_test_read_all(out.view);
  char what[128];
  snprintf(what, sizeof what, "reduce op %d %s %s unary %d alpha %g beta %g C %d", op,
           lt_dtype_name(dtype), layout, unary, alpha, beta, with_c);
  lt_test_assert_close(got, want, nd, lt_test_tolerance(dtype, nd ? na / nd : 1), what);
  lt_test_output_check_guard(&out);
  lt_test_check_unchanged(a, snap);
  free(got);
  free(want);
  free(vd);
  free(vc);
  free(snap);
  free(va);
  lt_plan_destroy(plan);
  lt_plan_options_destroy(opts);
  lt_test_output_free(&out);
  lt_tensor_destroy(c);
}

/* run_case over every op x dtype x layout family, reps times each, on every device. */
static void reduce_sweep(unsigned seed, int reps, bool wide) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + seed);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int counter = 0;
    for (int op = LT_REDUCE_SUM; op <= LT_REDUCE_MAXABS; op++)
      for (size_t t = 0; t < 4; t++)
        for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++)
          for (int rep = 0; rep < reps; rep++)
            run_case(ctx, (lt_reduce_op)op, dtypes[t], (lt_test_layout)layout, counter++, wide);
    lt_context_destroy(ctx);
  }
}

static void test_reduce_sweep(void **state) { reduce_sweep(11, 2, false); }

/* The same on tensors of up to 150000 elements with short and long dims (wide_extents). */
static void test_reduce_wide(void **state) {
  reduce_sweep(15, lt_test_instrumented() ? 1 : 3, true);
}

/* Short contiguous reduced runs following each other ((n, p) over p, (n, 2, 3) over the 2 and
 * the 3, (r, n, p) over r and p): the CPU engine reduces them as groups in one pass (sizes 2-4
 * compiled apart, up to 16 in general, sums of 32-256 each as a row with a partial last lane
 * block; 17, and min/max past 16, as transposed tiles), and stores sums straight from the compute
 * type when alpha is 1 and beta 0. Inputs are contiguous or a row slice of one (an offset); every
 * op and dtype. */
static void reduce_groups_on(lt_context *ctx) {
  const int64_t groups[] = {2, 3, 4, 5, 6, 16, 17, 32, 72, 200}, rows[] = {1, 5, 341, 1000};
  int counter = 0;
  for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
    for (int op = LT_REDUCE_SUM; op <= LT_REDUCE_MAXABS; op++) {
      lt_dtype dtype = dtypes[counter % 4];
      int64_t n = rows[(counter / 4) % 4], p = groups[g];
      bool split = p == 6 && counter % 2 == 0, sliced = counter % 3 == 0;
      int64_t shape[3] = {n + (sliced ? 2 : 0), split ? 2 : p, split ? 3 : 1};
      int32_t modes[3] = {0, 1, 2}, kept[1] = {0};
      lt_tensor *base = lt_test_random_tensor(ctx, dtype, 3, shape, LT_LAYOUT_CONTIGUOUS), *a;
      if (sliced) /* rows 1 .. n: the groups start one row in */
        LT_CHECK(lt_view_slice(base, 0, 1, n + 1, 1, &a));
      else
        LT_CHECK(lt_view_reshape(base, 3, shape, &a));
      check_reduction(ctx, (lt_reduce_op)op, a, modes, 1, &n, kept, counter, "groups");
      /* Alpha 1 and beta 0 (stored directly), with unary op 1 and into a transposed D with
       * the identity op. */
      for (int k = 0; k < 2; k++)
        check_reduction(ctx, (lt_reduce_op)op, a, modes, 1, &n, kept, k ? 91 : 1, "groups");
      lt_tensor_destroy(a);
      lt_tensor_destroy(base);
      /* Groups under an outer reduced dim: (r, n, p) over its r and p (r group rows per
       * output, flushed from the compute type every 64 / p of them when r is large). */
      int64_t r = counter % 2 ? 70 : 5;
      if (r * n * p > 200000) r = 200000 / (n * p);
      int64_t shape3[3] = {r, n, p};
      int32_t kept3[1] = {1};
      a = lt_test_random_tensor(ctx, dtype, 3, shape3, LT_LAYOUT_CONTIGUOUS);
      check_reduction(ctx, (lt_reduce_op)op, a, modes, 1, &n, kept3, counter, "groups, outer");
      check_reduction(ctx, (lt_reduce_op)op, a, modes, 1, &n, kept3, 1, "groups, outer");
      lt_tensor_destroy(a);
      counter++;
    }
}

static void test_reduce_groups(void **state) { lt_test_on_each_device(reduce_groups_on); }

/* Column sums of tall matrices ((n, w) over axis 0, w from 2 to 512, and 513): the CPU engine
 * reads blocks of rows whole into n * (1024 / w) accumulators and folds their copies at the end;
 * the last block is partial, long ones flush from the compute type, (5000, 64) is split between
 * threads. Also under a kept outer dim ((4, n, w) over 1) and under a reduced outer dim that
 * does not fuse (a row slice of (3, n + 1, w), over 0 and 1). Every op, dtypes in turn. */
static void reduce_lanes_on(lt_context *ctx) {
  const int64_t widths[] = {2, 3, 5, 16, 64, 100, 512, 513};
  int counter = 0;
  for (size_t i = 0; i < sizeof widths / sizeof *widths; i++)
    for (int op = LT_REDUCE_SUM; op <= LT_REDUCE_MAXABS; op++, counter++) {
      int64_t w = widths[i], n = widths[i] == 64 && op == LT_REDUCE_SUM ? 5000 : 20000 / w + 7;
      lt_dtype dtype = dtypes[counter % 4];
      int32_t modes[3] = {0, 1, 2}, kept_last[1] = {1}, kept_mid[2] = {0, 2};
      int64_t s2[2] = {n, w}, s3[3] = {4, n, w}, kept3[2] = {4, w}, sb[3] = {3, n + 1, w};
      lt_tensor *a = lt_test_random_tensor(ctx, dtype, 2, s2, LT_LAYOUT_CONTIGUOUS);
      check_reduction(ctx, (lt_reduce_op)op, a, modes, 1, &w, kept_last, counter, "lanes");
      lt_tensor_destroy(a);
      a = lt_test_random_tensor(ctx, dtype, 3, s3, LT_LAYOUT_CONTIGUOUS);
      check_reduction(ctx, (lt_reduce_op)op, a, modes, 2, kept3, kept_mid, counter + 1,
                      "lanes, kept outer");
      lt_tensor_destroy(a);
      lt_tensor *base = lt_test_random_tensor(ctx, dtype, 3, sb, LT_LAYOUT_CONTIGUOUS);
      LT_CHECK(lt_view_slice(base, 1, 1, n + 1, 1, &a));
      int32_t kept_w[1] = {2};
      check_reduction(ctx, (lt_reduce_op)op, a, modes, 1, &w, kept_w, counter + 2,
                      "lanes, reduced outer");
      lt_tensor_destroy(a);
      lt_tensor_destroy(base);
    }
}

static void test_reduce_lanes(void **state) { lt_test_on_each_device(reduce_lanes_on); }

/* Reference argmax/argmin of row r of a (rows x len) matrix read as doubles. */
static int64_t ref_arg(const double *v, int64_t len, int64_t stride, bool is_max) {
  int64_t best = 0;
  for (int64_t i = 0; i < len; i++) {
    double x = v[i * stride];
    if (isnan(x)) return i;
    if (is_max ? x > v[best * stride] : x < v[best * stride]) best = i;
  }
  return best;
}

/* An (n, p) view whose rows are contiguous but not each other's neighbours in order: kind 0
 * contiguous, 1 rows reversed, 2 every other row of a wider buffer (rows off the 64-byte line
 * grid), 3 one row broadcast to n (kept stride 0), 4 every axis flipped. *base gets what to
 * destroy besides the view (or NULL). */
static lt_tensor *row_view(lt_context *ctx, lt_dtype dtype, int kind, int64_t n, int64_t p,
                           lt_tensor **base) {
  int64_t wide[2] = {2 * n, p + 3}, one[2] = {1, p}, shape[2] = {n, p};
  lt_tensor *a = NULL, *rows;
  *base = NULL;
  switch (kind) {
  case 1:
    *base = lt_test_random_tensor(ctx, dtype, 2, shape, LT_LAYOUT_CONTIGUOUS);
    LT_CHECK(lt_view_slice(*base, 0, LT_SLICE_DEFAULT, LT_SLICE_DEFAULT, -1, &a));
    break;
  case 2:
    *base = lt_test_random_tensor(ctx, dtype, 2, wide, LT_LAYOUT_CONTIGUOUS);
    LT_CHECK(lt_view_slice(*base, 0, 1, 2 * n, 2, &rows));
    LT_CHECK(lt_view_slice(rows, 1, 1, p + 1, 1, &a));
    lt_tensor_destroy(rows);
    break;
  case 3:
    *base = lt_test_random_tensor(ctx, dtype, 2, one, LT_LAYOUT_CONTIGUOUS);
    LT_CHECK(lt_view_broadcast_to(*base, 2, shape, &a));
    break;
  case 4: a = lt_test_random_tensor(ctx, dtype, 2, shape, LT_LAYOUT_NEGATIVE); break;
  default: a = lt_test_random_tensor(ctx, dtype, 2, shape, LT_LAYOUT_CONTIGUOUS); break;
  }
  return a;
}

/* Reductions along many short contiguous rows ((n, p) over p, p from 17 to 250, and (r, n, p)
 * over r and p): the CPU engine transposes tiles of up to 128 rows by 32 positions (the last
 * partial) into a buffer and accumulates them a row at a time, flushing from the compute type
 * every 64 values; argmax/argmin keep a running best row. Every op and dtype (F16 and BF16 are
 * loaded, not transposed) on each row_view kind; argmax/argmin against ref_arg. */
static void reduce_tiles_on(lt_context *ctx) {
  const int64_t widths[] = {17, 33, 64, 100, 250};
  int counter = 0;
  for (size_t i = 0; i < sizeof widths / sizeof *widths; i++)
    for (int op = LT_REDUCE_SUM; op <= LT_REDUCE_MAXABS; op++, counter++) {
      int64_t p = widths[i], n = counter % 2 ? 1000 : 130, r = counter % 3 ? 3 : 70;
      if (r * n * p > 300000) r = 300000 / (n * p) + 1;
      lt_dtype dtype = dtypes[counter % 4];
      int kind = counter % 5;
      int32_t modes[3] = {0, 1, 2}, kept_first[1] = {0}, kept_mid[1] = {1};
      lt_tensor *base, *a = row_view(ctx, dtype, kind, n, p, &base);
      check_reduction(ctx, (lt_reduce_op)op, a, modes, 1, &n, kept_first, counter, "tiles");
      for (int is_max = 0; is_max < 2 && op == LT_REDUCE_SUM; is_max++) {
        double *v = lt_test_read_all(a), *got;
        lt_tensor *o;
        LT_CHECK(is_max ? lt_argmax(a, 1, &o) : lt_argmin(a, 1, &o));
        got = lt_test_read_all(o);
        for (int64_t row = 0; row < n; row++)
          if ((int64_t)got[row] != ref_arg(v + row * p, p, 1, is_max))
            fail_msg("arg%s tiles, row view %d (%lld, %lld): row %lld is %lld",
                     is_max ? "max" : "min", kind, (long long)n, (long long)p, (long long)row,
                     (long long)got[row]);
        free(v);
        free(got);
        lt_tensor_destroy(o);
      }
      lt_tensor_destroy(a);
      lt_tensor_destroy(base);
      int64_t s3[3] = {r, n, p};
      a = lt_test_random_tensor(ctx, dtype, 3, s3, LT_LAYOUT_CONTIGUOUS);
      check_reduction(ctx, (lt_reduce_op)op, a, modes, 1, &n, kept_mid, counter + 1,
                      "tiles, reduced outer");
      lt_tensor_destroy(a);
    }
}

static void test_reduce_tiles(void **state) { lt_test_on_each_device(reduce_tiles_on); }

/* Reduced dims outside the kept ones and long reduced rows ((6, 9, 600) over axes 0 and 2, (4,
 * 5, 3, 600) over 0, 2 and 3): the CPU engine reads the input in memory order, each output
 * folding one row per outer reduced position. Every op, dtype and layout family. */
static void row_walk_on(lt_context *ctx) {
  int counter = 0;
  for (int c = 0; c < 2; c++)
    for (int op = LT_REDUCE_SUM; op <= LT_REDUCE_MAXABS; op++)
      for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++, counter++) {
        int64_t shapes[2][4] = {{6, 9, 600}, {4, 5, 3, 600}};
        int rank = c ? 4 : 3;
        int32_t modes[4] = {0, 1, 2, 3}, kept[1] = {1};
        lt_dtype dtype = dtypes[counter % 4];
        lt_tensor *a = lt_test_random_tensor(ctx, dtype, rank, shapes[c], layout);
        check_reduction(ctx, (lt_reduce_op)op, a, modes, 1, &shapes[c][1], kept, counter,
                        lt_test_layout_name(layout));
        lt_tensor_destroy(a);
      }
}

static void test_row_walk(void **state) { lt_test_on_each_device(row_walk_on); }

/* The CPU engine finishes outer-walk outputs in the compute type when C is not read; with beta
 * 1 and a C of zeros it finishes them in double: both must give the same values, for every
 * alpha, the mean's division, compute F32 (storage F16/F32) and F64, as groups ((1000, 3) over
 * its 3) and as rows ((3, 1000) over its 3). */
static void test_direct_finish(void **state) {
  const lt_reduce_op ops[] = {LT_REDUCE_SUM, LT_REDUCE_MEAN, LT_REDUCE_SUMSQ, LT_REDUCE_MAX};
  const double alphas[] = {1.0, -2.5, 0.1};
  const lt_dtype types[] = {LT_F16, LT_F32, LT_F64};
  lt_test_rng_reset(lt_test_seed() + 29);
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  for (int layout = 0; layout < 2; layout++)
    for (size_t t = 0; t < 3; t++)
      for (size_t o = 0; o < 4; o++)
        for (size_t al = 0; al < 3; al++) {
          int64_t shape[2] = {layout ? 3 : 1000, layout ? 1000 : 3}, n = 1000;
          int32_t modes[2] = {0, 1}, kept[1] = {layout ? 1 : 0};
          lt_tensor *a = lt_test_random_tensor(ctx, types[t], 2, shape, LT_LAYOUT_CONTIGUOUS);
          lt_tensor *zeros, *d[2];
          LT_CHECK(lt_tensor_full(ctx, types[t], 1, &n, 0.0, &zeros));
          lt_plan *plan;
          LT_CHECK(lt_plan_reduction(a, modes, zeros, kept, ops[o], zeros, kept, NULL, &plan));
          for (int k = 0; k < 2; k++) {
            LT_CHECK(lt_tensor_full(ctx, types[t], 1, &n, NAN, &d[k]));
            const lt_tensor *ins[2] = {a, zeros};
            double scalars[2] = {alphas[al], k};
            LT_CHECK(lt_plan_execute(plan, ins, 2, scalars, 2, d[k]));
          }
          double *direct = lt_test_read_all(d[0]), *through_double = lt_test_read_all(d[1]);
          for (int64_t i = 0; i < n; i++)
            if (direct[i] != through_double[i])
              fail_msg("op %d %s alpha %g %s: output %lld is %.17g, through double %.17g", ops[o],
                       lt_dtype_name(types[t]), alphas[al], layout ? "rows" : "groups",
                       (long long)i, direct[i], through_double[i]);
          free(direct);
          free(through_double);
          lt_tensor_destroy(d[0]);
          lt_tensor_destroy(d[1]);
          lt_tensor_destroy(zeros);
          lt_tensor_destroy(a);
          lt_plan_destroy(plan);
        }
  lt_context_destroy(ctx);
}

/* argmax/argmin of one (rows x cols) matrix of doubles converted to each dtype, along both
 * axes, against ref_arg. */
static void check_arg_matrix(lt_context *ctx, const double *v, int64_t rows, int64_t cols) {
  int64_t shape[2] = {rows, cols};
  lt_tensor *host;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 2, shape, NULL, v, &host));
  for (int t = 0; t < 4; t++) {
    lt_tensor *a;
    LT_CHECK(lt_tensor_zeros(ctx, dtypes[t], 2, shape, &a));
    LT_CHECK(lt_tensor_copy_into(a, host));
    for (int axis = 0; axis < 2; axis++)
      for (int is_max = 0; is_max < 2; is_max++) {
        lt_tensor *o;
        LT_CHECK(is_max ? lt_argmax(a, axis, &o) : lt_argmin(a, axis, &o));
        double *got = lt_test_read_all(o);
        for (int64_t r = 0; r < shape[1 - axis]; r++) {
          int64_t want = axis == 0 ? ref_arg(v + r, rows, cols, is_max)
                                   : ref_arg(v + r * cols, cols, 1, is_max);
          if ((int64_t)got[r] != want)
            fail_msg("arg%s %s (%lld, %lld) axis %d: output %lld is %lld, expected %lld",
                     is_max ? "max" : "min", lt_dtype_name(dtypes[t]), (long long)rows,
                     (long long)cols, axis, (long long)r, (long long)got[r], (long long)want);
        }
        free(got);
        lt_tensor_destroy(o);
      }
    lt_tensor_destroy(a);
  }
  lt_tensor_destroy(host);
}

/* argmax/argmin over a short axis of many rows (the outer walk: a running best row), over the
 * long one, and down the columns of tall matrices (the outer walk's blocks of rows for 8 to 512
 * columns, the last block partial; strided outputs for 5 and 513; (40000, 16) and (30011, 5)
 * split between threads in pieces, folded in position order), on values with many ties
 * (-1, 0, 1, 2) and columns with two NaNs: the first best and the first NaN win. */
static void test_argmax_ties(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_test_rng_reset(lt_test_seed() + 16);
  const int64_t shapes[][2] = {{7, 3000}, {3001, 8}, {1500, 64},  {703, 100}, {37, 512},
                               {41, 513}, {2000, 5}, {40000, 16}, {30011, 5}};
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
    int64_t rows = shapes[k][0], cols = shapes[k][1];
    double *v = malloc(sizeof(double) * (size_t)(rows * cols));
    for (int64_t i = 0; i < rows * cols; i++)
      v[i] = (double)lt_test_rand_int(-1, 2);
    for (int64_t c = 0; c < cols; c += 7) { /* two NaNs in every seventh column, late in odd ones */
      int64_t r = (c * 13 + 5 + c % 2 * (rows / 2)) % rows;
      v[r * cols + c] = NAN;
      v[(r + rows / 3) % rows * cols + c] = NAN;
    }
    check_arg_matrix(ctx, v, rows, cols);
    free(v);
  }
  lt_context_destroy(ctx);
}

/* argmax/argmin along each axis of random 3-d tensors, some with NaN, both lt_argmax and the
 * plan; ties resolve to the first occurrence (f16 makes ties likely). */
static void test_argmax(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 12);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (size_t t = 0; t < 4; t++)
      for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++)
        for (int axis = 0; axis < 3; axis++) {
          int64_t shape[3] = {lt_test_rand_int(1, 5), lt_test_rand_int(1, 40),
                              lt_test_rand_int(1, 5)};
          lt_tensor *a = lt_test_random_tensor(ctx, dtypes[t], 3, shape, (lt_test_layout)layout);
          if (layout != LT_LAYOUT_BROADCAST && lt_test_rand_int(0, 1)) {
            int64_t at[3] = {lt_test_rand_int(0, shape[0] - 1), lt_test_rand_int(0, shape[1] - 1),
                             lt_test_rand_int(0, shape[2] - 1)};
            LT_CHECK(lt_tensor_set(a, at, NAN));
          }
          double *v = lt_test_read_all(a);
          for (int is_max = 0; is_max < 2; is_max++) {
            lt_tensor *o;
            LT_CHECK(is_max ? lt_argmax(a, axis, &o) : lt_argmin(a, axis, &o));
            assert_int_equal(lt_tensor_dtype(o), LT_I64);
            double *got = lt_test_read_all(o);
            int64_t strides[3] = {shape[1] * shape[2], shape[2], 1};
            int64_t k = 0;
            for (int64_t i = 0; i < shape[0]; i++)
              for (int64_t j = 0; j < shape[1]; j++)
                for (int64_t l = 0; l < shape[2]; l++) {
                  int64_t idx[3] = {i, j, l};
                  if (idx[axis] != 0) continue;
                  int64_t want = ref_arg(v + i * strides[0] + j * strides[1] + l, shape[axis],
                                         strides[axis], is_max);
                  if ((int64_t)got[k] != want)
                    fail_msg("arg%s %s axis %d: output %lld is %lld, expected %lld",
                             is_max ? "max" : "min", lt_dtype_name(dtypes[t]), axis, (long long)k,
                             (long long)got[k], (long long)want);
                  k++;
                }
            free(got);
            lt_tensor_destroy(o);
          }
          free(v);
          lt_tensor_destroy(a);
        }
    lt_context_destroy(ctx);
  }
}

/* min/max/maxabs propagate NaN wherever it sits, for lengths 1..64, along a contiguous axis
 * (inner walk, or groups of the outer walk when short) and along an outer axis (outer walk);
 * argmax/argmin return its index. */
static void test_nan_everywhere(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_reduce_op ops[3] = {LT_REDUCE_MIN, LT_REDUCE_MAX, LT_REDUCE_MAXABS};
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int64_t len = 1; len <= 64; len++)
      for (int64_t pos = 0; pos < len; pos++)
        for (int axis = 0; axis < 2; axis++) {
          int64_t shape[2] = {axis ? 40 : len, axis ? len : 40};
          lt_tensor *a = lt_test_random_tensor(ctx, LT_F32, 2, shape, LT_LAYOUT_CONTIGUOUS);
          int64_t at[2] = {axis ? 1 : pos, axis ? pos : 1};
          LT_CHECK(lt_tensor_set(a, at, NAN));
          for (int o = 0; o < 3; o++) {
            lt_tensor *r;
            int ax = axis;
            LT_CHECK(lt_reduce(ops[o], a, 1, &ax, false, &r));
            double got[3];
            double *g = lt_test_read_all(r);
            memcpy(got, g, sizeof got);
            free(g);
            if (!isnan(got[1]) || isnan(got[0]) || isnan(got[2]))
              fail_msg("op %d len %lld NaN at %lld axis %d: got %g %g %g", ops[o], (long long)len,
                       (long long)pos, axis, got[0], got[1], got[2]);
            lt_tensor_destroy(r);
          }
          lt_tensor *r;
          LT_CHECK(lt_argmax(a, axis, &r));
          double *g = lt_test_read_all(r);
          assert_true(g[1] == (double)pos);
          free(g);
          lt_tensor_destroy(r);
          lt_tensor_destroy(a);
        }
    lt_context_destroy(ctx);
  }
}

/* Empty reductions give the identity; the mean of nothing is NaN. */
static void test_empty(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t shape[2] = {3, 0};
    lt_tensor *a;
    LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, shape, &a));
    double want[7] = {0.0, 1.0, INFINITY, -INFINITY, NAN, 0.0, 0.0};
    for (int op = LT_REDUCE_SUM; op <= LT_REDUCE_MAXABS; op++) {
      lt_tensor *r;
      int axis = 1;
      LT_CHECK(lt_reduce((lt_reduce_op)op, a, 1, &axis, false, &r));
      double *g = lt_test_read_all(r);
      double w[3] = {want[op], want[op], want[op]};
      lt_test_assert_close(g, w, 3, 0.0, "empty reduction");
      free(g);
      lt_tensor_destroy(r);
    }
    lt_tensor *r = NULL;
    int axis = 1;
    LT_CHECK_FAILS(lt_argmax(a, axis, &r), LT_ERR_INVALID_ARGUMENT);
    assert_null(r);
    lt_tensor_destroy(a);
    lt_context_destroy(ctx);
  }
}

/* float32 sums of 10^7 elements stay within 1e-6 of the float64 sum, on every walk. */
static void test_f32_accuracy(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  const int64_t n = 10000000;
  float *data = malloc(sizeof(float) * (size_t)n);
  lt_test_rng_reset(lt_test_seed() + 13);
  for (int64_t i = 0; i < n; i++)
    data[i] = (float)lt_test_rand_double(0.0, 1.0);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t shapes[3][2] = {{1, n}, {8, n / 8}, {n / 8, 8}};
    for (int s = 0; s < 3; s++) {
      lt_tensor *a, *r;
      LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 2, shapes[s], NULL, data, &a));
      int axes[2] = {0, 1};
      LT_CHECK(lt_reduce(LT_REDUCE_SUM, a, s == 0 ? 2 : 1, s == 1 ? axes + 1 : axes, false, &r));
      double *got = lt_test_read_all(r);
      int64_t nout = lt_tensor_numel(r);
      for (int64_t o = 0; o < nout; o++) {
        double want = 0;
        for (int64_t i = 0; i < n / nout; i++)
          want += s == 2 ? data[i * 8 + o] : data[o * (n / nout) + i];
        if (fabs(got[o] - want) > 1e-6 * fabs(want))
          fail_msg("f32 sum (case %d, output %lld) is %.9g, float64 says %.9g (rel %.3g)", s,
                   (long long)o, got[o], want, fabs(got[o] - want) / want);
      }
      free(got);
      lt_tensor_destroy(r);
      lt_tensor_destroy(a);
    }
    lt_context_destroy(ctx);
  }
  free(data);
}

/* lt_reduce of A over `axes` for every op, keeping its axis 1 (the only one kept), against the
 * float64 reference. Products of hundreds of values in [-1, 1) underflow: only their zeros are
 * taken from the result. */
static void check_every_op(const lt_tensor *a, int n_axes, const int *axes, double rtol,
                           const char *what) {
  int rank = lt_tensor_rank(a);
  const int64_t *shape = lt_tensor_shape(a);
  double *v = lt_test_read_all(a);
  int32_t ma[3] = {0, 1, 2}, md[1] = {1};
  for (int op = LT_REDUCE_SUM; op <= LT_REDUCE_MAXABS; op++) {
    double *want =
        reference((lt_reduce_op)op, LT_UNARY_IDENTITY, rank, shape, ma, v, 1, shape + 1, md);
    lt_tensor *r;
    LT_CHECK(lt_reduce((lt_reduce_op)op, a, n_axes, axes, false, &r));
    double *got = lt_test_read_all(r);
    if (op == LT_REDUCE_PROD)
      for (int64_t i = 0; i < shape[1]; i++)
        want[i] = want[i] == 0 ? got[i] : want[i];
    lt_test_assert_close(got, want, shape[1], rtol, what);
    free(got);
    free(want);
    lt_tensor_destroy(r);
  }
  free(v);
}

/* Few wide kept rows over a long reduced space: the outer walk splits the reduced space between
 * threads (partials folded afterwards); every op, with a NaN in one column. */
static void test_outer_split(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  /* (3000, 5) over axis 0: rows; (3000, 5, 3) over axes 0 and 2: groups of 3 */
  int64_t shapes[2][3] = {{3000, 5, 1}, {3000, 5, 3}};
  lt_test_rng_reset(lt_test_seed() + 14);
  for (int c = 0; c < 2; c++) {
    int rank = c ? 3 : 2, axes[2] = {0, 2};
    lt_tensor *a = lt_test_random_tensor(ctx, LT_F64, rank, shapes[c], LT_LAYOUT_CONTIGUOUS);
    int64_t at[3] = {1234, 3, c ? 2 : 0};
    LT_CHECK(lt_tensor_set(a, at, NAN));
    check_every_op(a, c ? 2 : 1, axes, lt_test_tolerance(LT_F64, 9000), "outer split");
    lt_tensor_destroy(a);
  }
  lt_context_destroy(ctx);
}

/* A context of 256 threads splits one chunk of outputs over more pieces than a (300, 1000) max
 * over axis 0 has rows: pieces must never be empty (an empty piece's partials were never written
 * and came out as the maximum of negative values: 0). */
static void test_outer_split_many_threads(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  LT_CHECK(lt_context_set_num_threads(ctx, 256));
  int64_t shape[2] = {300, 1000};
  lt_test_rng_reset(lt_test_seed() + 43);
  lt_tensor *a =
      lt_test_random_tensor_range(ctx, LT_F64, 2, shape, LT_LAYOUT_CONTIGUOUS, -2.0, -1.0);
  int axis = 0;
  check_every_op(a, 1, &axis, lt_test_tolerance(LT_F64, 300), "256 threads");
  lt_tensor_destroy(a);
  lt_context_destroy(ctx);
}

/* lt_reduce with several axes, negative axes and keepdims. */
/* Narrow integers: opA and MAXABS's abs wrap to the input's width (NumPy computes them in it),
 * SUMSQ's square is exact in its i64/u64 result; the CPU squared in int8 (SUMSQ -18 for 45038)
 * and wrapped MAXABS once after both transforms (50 where NumPy's int8 gives 120). */
static void narrow_int_on(lt_context *ctx) {
  int8_t v[6] = {-128, 127, 100, -5, 50, 0};
  int64_t n[1] = {6};
  lt_tensor *a = NULL, *d = NULL;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I8, 1, n, NULL, v, &a));
  int32_t ma[1] = {'i'};
  struct {
    lt_reduce_op op;
    lt_unary_op unary;
    lt_dtype out;
    double want;
  } cases[] = {
      {LT_REDUCE_SUMSQ, LT_UNARY_IDENTITY, LT_I64, 45038},
      /* squares in int8: 0, 1, 16, 25, -60, 0; |.| in int8; max 60 */
      {LT_REDUCE_MAXABS, LT_UNARY_SQUARE, LT_I8, 60},
      {LT_REDUCE_SUMSQ, LT_UNARY_NEG, LT_I64, 45038},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    LT_CHECK(lt_tensor_zeros(ctx, cases[c].out, 0, NULL, &d));
    lt_plan_options *o = NULL;
    LT_CHECK(lt_plan_options_create(&o));
    LT_CHECK(lt_plan_options_set_unary(o, 0, cases[c].unary));
    lt_plan *p = NULL;
    LT_CHECK(lt_plan_reduction(a, ma, NULL, NULL, cases[c].op, d, NULL, o, &p));
    const lt_tensor *in[1] = {a};
    LT_CHECK(lt_plan_execute(p, in, 1, NULL, 0, d));
    double got;
    LT_CHECK(lt_tensor_get(d, NULL, &got));
    if (got != cases[c].want)
      fail_msg("%s: case %zu gives %g, expected %g", lt_context_device(ctx), c, got, cases[c].want);
    lt_plan_destroy(p);
    lt_plan_options_destroy(o);
    lt_tensor_destroy(d);
  }
  lt_tensor_destroy(a);
}

static void test_narrow_int_transforms(void **state) { lt_test_on_each_device(narrow_int_on); }

static void test_oneshot_axes(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t shape[3] = {4, 5, 6};
    lt_tensor *a = lt_test_random_tensor(ctx, LT_F64, 3, shape, LT_LAYOUT_NEGATIVE), *r;
    double *v = lt_test_read_all(a);
    int axes[2] = {-1, 0};
    LT_CHECK(lt_reduce(LT_REDUCE_SUM, a, 2, axes, true, &r));
    assert_int_equal(lt_tensor_rank(r), 3);
    assert_true(lt_tensor_shape(r)[0] == 1 && lt_tensor_shape(r)[1] == 5 &&
                lt_tensor_shape(r)[2] == 1);
    double *g = lt_test_read_all(r), w[5] = {0};
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 5; j++)
        for (int k = 0; k < 6; k++)
          w[j] += v[(i * 5 + j) * 6 + k];
    lt_test_assert_close(g, w, 5, lt_test_tolerance(LT_F64, 24), "keepdims sum");
    free(g);
    lt_tensor_destroy(r);
    LT_CHECK(lt_reduce(LT_REDUCE_MEAN, a, -1, NULL, false, &r));
    assert_int_equal(lt_tensor_rank(r), 0);
    g = lt_test_read_all(r);
    double total = 0;
    for (int i = 0; i < 120; i++)
      total += v[i];
    double wm = total / 120;
    lt_test_assert_close(g, &wm, 1, lt_test_tolerance(LT_F64, 120), "mean of all");
    free(g);
    lt_tensor_destroy(r);
    r = NULL;
    int dup[2] = {1, -2};
    LT_CHECK_FAILS(lt_reduce(LT_REDUCE_SUM, a, 2, dup, false, &r), LT_ERR_INVALID_ARGUMENT);
    int bad = 3;
    LT_CHECK_FAILS(lt_reduce(LT_REDUCE_SUM, a, 1, &bad, false, &r), LT_ERR_OUT_OF_RANGE);
    LT_CHECK_FAILS(lt_reduce(LT_REDUCE_ARGMAX, a, 2, axes, false, &r), LT_ERR_INVALID_ARGUMENT);
    LT_CHECK_FAILS(lt_reduce((lt_reduce_op)42, a, 1, axes, false, &r), LT_ERR_INVALID_ARGUMENT);
    assert_null(r);
    free(v);
    lt_tensor_destroy(a);
    lt_context_destroy(ctx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reduce_sweep),   cmocka_unit_test(test_argmax),
      cmocka_unit_test(test_nan_everywhere), cmocka_unit_test(test_empty),
      cmocka_unit_test(test_f32_accuracy),   cmocka_unit_test(test_narrow_int_transforms),
      cmocka_unit_test(test_oneshot_axes),   cmocka_unit_test(test_outer_split),
      cmocka_unit_test(test_reduce_wide),    cmocka_unit_test(test_argmax_ties),
      cmocka_unit_test(test_reduce_groups),  cmocka_unit_test(test_direct_finish),
      cmocka_unit_test(test_row_walk),       cmocka_unit_test(test_outer_split_many_threads),
      cmocka_unit_test(test_reduce_lanes),   cmocka_unit_test(test_reduce_tiles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
