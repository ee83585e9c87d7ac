/* SPDX-License-Identifier: MIT */
/* Row plans (softmax, log_softmax, logsumexp, var/std, cumsum/cumprod) and their one-shot
 * forms against a naive float64 loop: every op x dtype x layout family with random row modes
 * and D mode orders, on every backend; the special values (1e4 inputs, -inf entries and rows,
 * NaN, empty rows), f32 variance over 10^7 elements, and bad input. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lt_dtype dtypes[] = {LT_F16, LT_BF16, LT_F32, LT_F64};

enum { SOFTMAX, LOG_SOFTMAX, LOGSUMEXP, VAR, STD, CUMSUM, CUMPROD, N_OPS };
static const char *op_names[] = {"softmax", "log_softmax", "logsumexp", "var",
                                 "std",     "cumsum",      "cumprod"};

static bool whole_op(int op) { return op != LOGSUMEXP && op != VAR && op != STD; }

/* The reference of one row x[0..n) in float64 (y has n values for whole-row ops, else 1). */
static void ref_row(int op, const double *x, int64_t n, double ddof, double *y) {
  double m = -INFINITY, s = 0, acc;
  switch (op) {
  case SOFTMAX:
  case LOG_SOFTMAX:
  case LOGSUMEXP:
    for (int64_t i = 0; i < n; i++)
      m = isnan(x[i]) || x[i] > m ? x[i] : m;
    if (isnan(m)) m = NAN;
    if (isinf(m) && (m < 0 || op == LOGSUMEXP)) m = 0; /* +inf: softmax NaN, as PyTorch */
    for (int64_t i = 0; i < n; i++)
      s += exp(x[i] - m);
    if (op == LOGSUMEXP) y[0] = m + log(s);
    for (int64_t i = 0; i < n && op != LOGSUMEXP; i++)
      y[i] = op == SOFTMAX ? exp(x[i] - m) / s : x[i] - m - log(s);
    break;
  case VAR:
  case STD:
    for (int64_t i = 0; i < n; i++)
      s += x[i];
    m = s / (double)n;
    acc = 0;
    for (int64_t i = 0; i < n; i++)
      acc += (x[i] - m) * (x[i] - m);
    y[0] = acc / fmax((double)n - ddof, 0.0);
    if (n == 0) y[0] = NAN;
    if (op == STD) y[0] = sqrt(y[0]);
    break;
  default:
    acc = op == CUMPROD ? 1.0 : 0.0;
    for (int64_t i = 0; i < n; i++)
      y[i] = acc = op == CUMPROD ? acc * x[i] : acc + x[i];
  }
}

/* Reference for A (va in C order; modes_a) -> D (modes_d): row modes `row` (n_row, in row
 * order) for whole ops, A's modes absent from D otherwise. */
static double *reference(int op, int rank_a, const int64_t *shape_a, const int32_t *modes_a,
                         const double *va, int rank_d, const int64_t *shape_d,
                         const int32_t *modes_d, const int32_t *row, int n_row, double ddof) {
  bool is_row[LT_MAX_RANK] = {false};
  int row_axes[LT_MAX_RANK], nr = 0;
  if (whole_op(op)) {
    for (int r = 0; r < n_row; r++)
      for (int i = 0; i < rank_a; i++)
        if (modes_a[i] == row[r]) row_axes[nr++] = i;
  } else {
    for (int i = 0; i < rank_a; i++) {
      bool in_d = false;
      for (int k = 0; k < rank_d; k++)
        in_d |= modes_d[k] == modes_a[i];
      if (!in_d) row_axes[nr++] = i;
    }
  }
  int64_t rlen = 1;
  for (int r = 0; r < nr; r++) {
    is_row[row_axes[r]] = true;
    rlen *= shape_a[row_axes[r]];
  }
  int64_t na = lt_test_numel(rank_a, shape_a), nd = lt_test_numel(rank_d, shape_d);
  int64_t nk = rlen ? na / rlen : 0;
  if (rlen == 0) {
    nk = 1;
    for (int i = 0; i < rank_a; i++)
      if (!is_row[i]) nk *= shape_a[i];
  }
  double *want = malloc(sizeof(double) * (size_t)(nd ? nd : 1));
  double *rows = malloc(sizeof(double) * (size_t)(na ? na : 1));
  int64_t *dpos = malloc(sizeof(int64_t) * (size_t)(na ? na : 1));
  int64_t *kpos = malloc(sizeof(int64_t) * (size_t)(nk ? nk : 1));
  double *y = malloc(sizeof(double) * (size_t)(rlen ? rlen : 1));
  int64_t idx[LT_MAX_RANK];
  for (int64_t i = 0; i < na; i++) {
    lt_test_unravel(i, rank_a, shape_a, idx);
    int64_t k = 0, p = 0;
    for (int a = 0; a < rank_a; a++)
      if (!is_row[a]) k = k * shape_a[a] + idx[a];
    for (int r = 0; r < nr; r++)
      p = p * shape_a[row_axes[r]] + idx[row_axes[r]];
    rows[k * rlen + p] = va[i];
    dpos[k * rlen + p] = lt_test_mode_index(rank_d, shape_d, modes_d, rank_a, modes_a, idx);
    kpos[k] = dpos[k * rlen + p];
  }
  if (rlen == 0) { /* empty rows: one output per kept index */
    for (int64_t k = 0; k < nd; k++) {
      ref_row(op, NULL, 0, ddof, y);
      want[k] = y[0];
    }
  }
  for (int64_t k = 0; k < nk && rlen > 0; k++) {
    ref_row(op, rows + k * rlen, rlen, ddof, y);
    if (whole_op(op))
      for (int64_t p = 0; p < rlen; p++)
        want[dpos[k * rlen + p]] = y[p];
    else
      want[kpos[k]] = y[0];
  }
  free(rows);
  free(dpos);
  free(kpos);
  free(y);
  return want;
}

static lt_status make_plan(int op, const lt_tensor *a, const int32_t *modes_a, const int32_t *row,
                           int n_row, double ddof, const lt_tensor *d, const int32_t *modes_d,
                           lt_plan **plan) {
  switch (op) {
  case SOFTMAX:
  case LOG_SOFTMAX:
    return lt_plan_softmax(a, modes_a, n_row, row, op == LOG_SOFTMAX, d, modes_d, NULL, plan);
  case LOGSUMEXP: return lt_plan_logsumexp(a, modes_a, d, modes_d, NULL, plan);
  case VAR:
  case STD: return lt_plan_variance(a, modes_a, d, modes_d, ddof, op == STD, NULL, plan);
  default:
    return lt_plan_scan(a, modes_a, row[0], op == CUMSUM ? LT_SCAN_SUM : LT_SCAN_PROD, d, modes_d,
                        NULL, plan);
  }
}

static void run_case(lt_context *ctx, int op, lt_dtype dtype, lt_test_layout layout, int counter) {
  int64_t shape_a[LT_MAX_RANK], shape_d[LT_MAX_RANK];
  int32_t modes_a[LT_MAX_RANK], modes_d[LT_MAX_RANK], row[LT_MAX_RANK];
  bool scan = op == CUMSUM || op == CUMPROD;
  int rank_a = (int)lt_test_rand_int(scan ? 1 : 0, 4), rank_d = 0, n_row = 0;
  for (int i = 0; i < rank_a; i++) {
    shape_a[i] = lt_test_rand_int(1, counter % 5 == 0 ? 40 : 6);
    if (lt_test_rand_int(0, 20) == 0) shape_a[i] = 0;
    modes_a[i] = (int32_t)(10 + 7 * i);
  }
  lt_test_shuffle(modes_a, rank_a);
  if (whole_op(op)) {
    rank_d = rank_a;
    for (int i = 0; i < rank_a; i++) {
      modes_d[i] = modes_a[i];
      if (scan ? i == 0 : lt_test_rand_int(0, 1)) row[n_row++] = modes_a[i];
    }
    if (scan) row[0] = modes_a[lt_test_rand_int(0, rank_a - 1)];
    lt_test_shuffle(modes_d, rank_d);
    for (int k = 0; k < rank_d; k++)
      for (int i = 0; i < rank_a; i++)
        if (modes_a[i] == modes_d[k]) shape_d[k] = shape_a[i];
  } else {
    for (int i = 0; i < rank_a; i++)
      if (lt_test_rand_int(0, 1)) {
        modes_d[rank_d] = modes_a[i];
        shape_d[rank_d++] = shape_a[i];
      }
  }
  double ddof = (double)(counter % 3) * 0.5;
  /* Products of many factors in [-1, 1) vanish; cumprod reads values near +-1 instead. */
  double lo = op == CUMPROD ? 0.8 : -3, hi = op == CUMPROD ? 1.2 : 3;
  lt_tensor *a = lt_test_random_tensor_range(ctx, dtype, rank_a, shape_a, layout, lo, hi);
  double *snap = lt_test_snapshot(a), *va = lt_test_read_all(a);
  lt_test_output out;
  lt_test_output_make(ctx, dtype, rank_d, shape_d, (lt_test_layout)(counter % 4), &out);
  lt_plan *plan;
  LT_CHECK(make_plan(op, a, modes_a, row, n_row, ddof, out.view, modes_d, &plan));
  LT_CHECK(lt_plan_execute(plan, (const lt_tensor *const *)&a, 1, NULL, 0, out.view));
  double *want =
      reference(op, rank_a, shape_a, modes_a, va, rank_d, shape_d, modes_d, row, n_row, ddof);
  int64_t nd = lt_test_numel(rank_d, shape_d), na = lt_test_numel(rank_a, shape_a);
  for (int64_t i = 0; i < nd; i++)
    want[i] = lt_test_round_to(dtype, want[i]);
  double *got = lt_test_read_all(out.view);
  char what[160];
  snprintf(what, sizeof what, "%s %s %s rank %d ddof %g", op_names[op], lt_dtype_name(dtype),
           lt_test_layout_name(layout), rank_a, ddof);
  lt_dtype compute_eps = dtype == LT_F64 ? LT_F64 : (dtype == LT_F32 ? LT_F32 : dtype);
  int64_t terms = nd ? na / (whole_op(op) ? 1 : nd) : 1;
  if (whole_op(op)) terms = na;
  lt_test_assert_close(got, want, nd, 4 * lt_test_tolerance(compute_eps, terms), what);
  lt_test_output_check_guard(&out);
  lt_test_check_unchanged(a, snap);
  free(got);
  free(want);
  free(snap);
  free(va);
  lt_plan_destroy(plan);
  lt_test_output_free(&out);
  lt_tensor_destroy(a);
}

static void sweep_on(lt_context *ctx) {
  int counter = 0;
  for (int op = 0; op < N_OPS; op++)
    for (size_t t = 0; t < 4; t++)
      for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++)
        for (int rep = 0; rep < 3; rep++)
          run_case(ctx, op, dtypes[t], (lt_test_layout)layout, counter++);
}

static void test_rows_sweep(void **state) {
  (void)state;
  lt_test_on_each_device(sweep_on);
}

/* A 1-D f64 tensor of the given values on ctx. */
static lt_tensor *vec(lt_context *ctx, lt_dtype dtype, int64_t n, const double *v) {
  lt_tensor *t;
  LT_CHECK(lt_tensor_zeros(ctx, dtype, 1, &n, &t));
  for (int64_t i = 0; i < n; i++)
    LT_CHECK(lt_tensor_set(t, &i, v[i]));
  return t;
}

static void check_vec(lt_tensor *t, const double *want, int64_t n, double rtol, const char *what) {
  double *got = lt_test_read_all(t);
  lt_test_assert_close(got, want, n, rtol, what);
  free(got);
}

/* Large, infinite and NaN inputs give what SciPy / PyTorch give. */
static void special_on(lt_context *ctx) {
  const lt_dtype ts[] = {LT_F32, LT_F64};
  for (int k = 0; k < 2; k++) {
    lt_dtype t = ts[k];
    double big[3] = {1e4, 1e4 - 1, -1e4};
    lt_tensor *a = vec(ctx, t, 3, big), *o;
    double e1 = exp(-1.0), s = 1 + e1;
    double want_sm[3] = {1 / s, e1 / s, 0}, want_lsm[3] = {-log(s), -1 - log(s), -2e4 - log(s)};
    double want_lse[1] = {1e4 + log(s)};
    LT_CHECK(lt_softmax(a, -1, NULL, &o));
    check_vec(o, want_sm, 3, 1e-6, "softmax of 1e4");
    lt_tensor_destroy(o);
    LT_CHECK(lt_log_softmax(a, -1, NULL, &o));
    check_vec(o, want_lsm, 3, 1e-6, "log_softmax of 1e4");
    lt_tensor_destroy(o);
    LT_CHECK(lt_logsumexp(a, -1, NULL, false, &o));
    check_vec(o, want_lse, 1, 1e-6, "logsumexp of 1e4");
    lt_tensor_destroy(o);
    lt_tensor_destroy(a);
    /* -inf entries are 0 / -inf; an all -inf row is NaN (softmax) and -inf (logsumexp). */
    double mixed[2] = {-INFINITY, 0}, ninf[2] = {-INFINITY, -INFINITY};
    a = vec(ctx, t, 2, mixed);
    double w1[2] = {0, 1}, w2[2] = {-INFINITY, 0};
    LT_CHECK(lt_softmax(a, 1, (int[]){0}, &o));
    check_vec(o, w1, 2, 1e-6, "softmax with -inf");
    lt_tensor_destroy(o);
    LT_CHECK(lt_log_softmax(a, 1, (int[]){0}, &o));
    check_vec(o, w2, 2, 1e-6, "log_softmax with -inf");
    lt_tensor_destroy(o);
    lt_tensor_destroy(a);
    a = vec(ctx, t, 2, ninf);
    double wn[2] = {NAN, NAN}, wl[1] = {-INFINITY};
    LT_CHECK(lt_softmax(a, -1, NULL, &o));
    check_vec(o, wn, 2, 0, "softmax of all -inf");
    lt_tensor_destroy(o);
    LT_CHECK(lt_logsumexp(a, -1, NULL, false, &o));
    check_vec(o, wl, 1, 0, "logsumexp of all -inf");
    lt_tensor_destroy(o);
    lt_tensor_destroy(a);
    double pinf[2] = {INFINITY, 1}, nanv[2] = {NAN, 1}, wi[1] = {INFINITY}, wnan[1] = {NAN};
    a = vec(ctx, t, 2, pinf);
    LT_CHECK(lt_logsumexp(a, -1, NULL, false, &o));
    check_vec(o, wi, 1, 0, "logsumexp with +inf");
    lt_tensor_destroy(o);
    lt_tensor_destroy(a);
    /* +inf anywhere in a row: softmax and log_softmax are NaN throughout (PyTorch), at the
     * first lane, in the vector body and in the tail; they gave 0 / -inf off the +inf. */
    const int at_inf[4] = {0, 1, 20, 40};
    for (int p = 0; p < 4; p++) {
      double row[41], all_nan[41];
      for (int i = 0; i < 41; i++)
        row[i] = 0.1 * i, all_nan[i] = NAN;
      row[at_inf[p]] = INFINITY;
      int64_t len = p == 1 ? 2 : 41;
      a = vec(ctx, t, len, row);
      LT_CHECK(lt_softmax(a, -1, NULL, &o));
      check_vec(o, all_nan, len, 0, "softmax with +inf");
      lt_tensor_destroy(o);
      LT_CHECK(lt_log_softmax(a, -1, NULL, &o));
      check_vec(o, all_nan, len, 0, "log_softmax with +inf");
      lt_tensor_destroy(o);
      LT_CHECK(lt_logsumexp(a, -1, NULL, false, &o));
      check_vec(o, wi, 1, 0, "logsumexp with +inf");
      lt_tensor_destroy(o);
      lt_tensor_destroy(a);
    }
    a = vec(ctx, t, 2, nanv);
    LT_CHECK(lt_logsumexp(a, -1, NULL, false, &o));
    check_vec(o, wnan, 1, 0, "logsumexp with NaN");
    lt_tensor_destroy(o);
    LT_CHECK(lt_var(a, -1, NULL, 0, false, &o));
    check_vec(o, wnan, 1, 0, "var with NaN");
    lt_tensor_destroy(o);
    lt_tensor_destroy(a);
    if (t == LT_F64) { /* squares past the double range: the deviations are 0 (it gave NaN) */
      double huge[2] = {1e155, 1e155}, zero[1] = {0}, one_huge[1] = {1e300};
      a = vec(ctx, t, 2, huge);
      LT_CHECK(lt_var(a, -1, NULL, 0, false, &o));
      check_vec(o, zero, 1, 0, "var of 1e155 twice");
      lt_tensor_destroy(o);
      lt_tensor_destroy(a);
      a = vec(ctx, t, 1, one_huge);
      LT_CHECK(lt_std(a, -1, NULL, 0, false, &o));
      check_vec(o, zero, 1, 0, "std of 1e300");
      lt_tensor_destroy(o);
      lt_tensor_destroy(a);
    }
    /* A NaN anywhere in a longer row, with larger values after it: in the first lane, in the
     * vector body of the max pass (16 f32 / 8 f64 lanes) and in its scalar tail. */
    const int at[5] = {0, 5, 20, 39, 40};
    for (int p = 0; p < 5; p++) {
      double row[41];
      for (int i = 0; i < 41; i++)
        row[i] = 0.1 * i;
      row[at[p]] = NAN;
      a = vec(ctx, t, 41, row);
      LT_CHECK(lt_logsumexp(a, -1, NULL, false, &o));
      check_vec(o, wnan, 1, 0, "logsumexp with a NaN in a row of 41");
      lt_tensor_destroy(o);
      lt_tensor_destroy(a);
    }
    /* The shift is the row's max wherever it sits (first lane, vector body, tail): 1e4 among
     * -1e4s gives a one-hot softmax and a logsumexp of 1e4 with no overflow. */
    for (int p = 0; p < 5; p++) {
      double row[41], hot[41], w[1] = {1e4};
      for (int i = 0; i < 41; i++) {
        row[i] = i == at[p] ? 1e4 : -1e4;
        hot[i] = i == at[p] ? 1 : 0;
      }
      a = vec(ctx, t, 41, row);
      LT_CHECK(lt_logsumexp(a, -1, NULL, false, &o));
      check_vec(o, w, 1, 1e-7, "logsumexp of 1e4 among -1e4");
      lt_tensor_destroy(o);
      LT_CHECK(lt_softmax(a, -1, NULL, &o));
      check_vec(o, hot, 41, 0, "softmax of 1e4 among -1e4");
      lt_tensor_destroy(o);
      lt_tensor_destroy(a);
    }
    /* var with ddof >= n: inf (or NaN for a constant row), as NumPy. */
    double two[2] = {1, 2}, winf[1] = {INFINITY};
    a = vec(ctx, t, 2, two);
    LT_CHECK(lt_var(a, -1, NULL, 2, true, &o));
    assert_int_equal(lt_tensor_rank(o), 1);
    check_vec(o, winf, 1, 0, "var with ddof = n");
    lt_tensor_destroy(o);
    lt_tensor_destroy(a);
  }
  /* Empty rows: logsumexp -inf, var NaN; empty whole-row outputs stay empty. */
  int64_t shape[2] = {3, 0};
  lt_tensor *e, *o;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, shape, &e));
  double wl[3] = {-INFINITY, -INFINITY, -INFINITY}, wv[3] = {NAN, NAN, NAN};
  LT_CHECK(lt_logsumexp(e, 1, (int[]){1}, false, &o));
  check_vec(o, wl, 3, 0, "logsumexp of empty rows");
  lt_tensor_destroy(o);
  LT_CHECK(lt_std(e, 1, (int[]){-1}, 0, false, &o));
  check_vec(o, wv, 3, 0, "std of empty rows");
  lt_tensor_destroy(o);
  LT_CHECK(lt_cumsum(e, 1, &o));
  assert_int_equal(lt_tensor_numel(o), 0);
  lt_tensor_destroy(o);
  lt_tensor_destroy(e);
}

static void test_rows_special(void **state) {
  (void)state;
  lt_test_on_each_device(special_on);
}

/* 10^7 f32 values around a large mean: var within 1e-5 of the float64 two-pass answer, and a
 * single long row of cumsum / softmax going through the chunked paths. */
static void long_on(lt_context *ctx) {
  int64_t n = lt_test_instrumented() ? 300000 : 10000000;
  float *v = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    v[i] = (float)(1000.0 + lt_test_rand_double(-1, 1));
  lt_tensor *a, *o;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 1, &n, NULL, v, &a));
  double s = 0, q = 0;
  for (int64_t i = 0; i < n; i++)
    s += v[i];
  double m = s / (double)n;
  for (int64_t i = 0; i < n; i++)
    q += (v[i] - m) * (v[i] - m);
  double want[1] = {q / (double)(n - 1)};
  LT_CHECK(lt_var(a, -1, NULL, 1, false, &o));
  check_vec(o, want, 1, 1e-5, "var of 10^7 f32");
  lt_tensor_destroy(o);
  LT_CHECK(lt_softmax(a, -1, NULL, &o));
  double *got = lt_test_read_all(o), total = 0;
  for (int64_t i = 0; i < n; i++)
    total += got[i];
  assert_true(fabs(total - 1.0) < 1e-3);
  free(got);
  lt_tensor_destroy(o);
  lt_tensor_destroy(a);
  free(v);
}

static void test_rows_long(void **state) {
  (void)state;
  lt_test_on_each_device(long_on);
}

static void errors_on(lt_context *ctx) {
  int64_t shape[2] = {3, 4};
  lt_tensor *a = lt_test_random_tensor(ctx, LT_F32, 2, shape, LT_LAYOUT_CONTIGUOUS), *d, *di, *o;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, shape, &d));
  LT_CHECK(lt_tensor_zeros(ctx, LT_I64, 2, shape, &di));
  int32_t ma[2] = {1, 2}, bad[1] = {9}, twice[2] = {1, 1};
  lt_plan *p = NULL;
  LT_CHECK_FAILS(lt_plan_softmax(a, ma, 1, bad, false, d, ma, NULL, &p), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_softmax(a, ma, 2, twice, false, d, ma, NULL, &p), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_softmax(a, ma, 1, ma, false, di, ma, NULL, &p), LT_ERR_DTYPE);
  LT_CHECK_FAILS(lt_plan_softmax(a, ma, 1, ma, false, d, twice, NULL, &p), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_variance(a, ma, d, ma, -1, false, NULL, &p), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_variance(a, ma, d, ma, NAN, false, NULL, &p), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_scan(a, ma, 9, LT_SCAN_SUM, d, ma, NULL, &p), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_scan(a, ma, 1, (lt_scan_op)7, d, ma, NULL, &p), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_scan(a, ma, 1, LT_SCAN_SUM, d, ma, NULL, NULL), LT_ERR_NULL_POINTER);
  int64_t other[2] = {3, 5};
  lt_tensor *d5;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, other, &d5));
  LT_CHECK_FAILS(lt_plan_logsumexp(a, ma, d5, ma, NULL, &p), LT_ERR_SHAPE_MISMATCH);
  LT_CHECK_FAILS(lt_cumsum(a, 2, &o), LT_ERR_OUT_OF_RANGE);
  LT_CHECK_FAILS(lt_softmax(a, 2, (int[]){0, -2}, &o), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_var(NULL, -1, NULL, 0, false, &o), LT_ERR_NULL_POINTER);
  /* The output may not overlap the input, even exactly. */
  LT_CHECK(lt_plan_softmax(a, ma, 1, ma, false, d, ma, NULL, &p));
  LT_CHECK_FAILS(lt_plan_execute(p, (const lt_tensor *const *)&a, 1, NULL, 0, a), LT_ERR_ALIASING);
  lt_plan_destroy(p);
  lt_tensor_destroy(d5);
  lt_tensor_destroy(a);
  lt_tensor_destroy(d);
  lt_tensor_destroy(di);
}

static void test_rows_errors(void **state) {
  (void)state;
  lt_test_on_each_device(errors_on);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_sweep),
      cmocka_unit_test(test_rows_special),
      cmocka_unit_test(test_rows_long),
      cmocka_unit_test(test_rows_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
