/* SPDX-License-Identifier: MIT */
/* Autograd of the vocabulary ops (issue 19): the issue-18 unary and binary math ops, softmax /
 * log_softmax / logsumexp, var / std, cumsum / cumprod, take / index_select / take_along_axis /
 * scatter_add, where, clip, concatenate / stack / split, each against central finite
 * differences in float64 on random inputs in the layout families (contiguous, transposed,
 * stepped, negative strides, broadcast by shape, size-1, size-0, rank 0) on every device;
 * cumprod with zeros against a naive float64 loop; ops without a gradient (comparisons,
 * isnan, ...) stop it without making backward fail; memory kept by a chain of new ops. */
#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYOUTS 4 /* contiguous, transposed, stepped, negative: tensors whose elements differ */

static int g_op, g_axis, g_naxes, g_axes[3];
static bool g_keep;
static double g_ddof;
static lt_tensor *g_index; /* the index operand of the gather/scatter cases */

static lt_status f_unary(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  return lt_ad_unary(t, (lt_unary_op)g_op, in[0], o);
}
static lt_status f_binary(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  return lt_ad_binary(t, (lt_binary_op)g_op, in[0], in[1], o);
}

static void test_math_on(lt_context *ctx) {
  static const int64_t s34[2] = {3, 4}, s31[2] = {3, 1}, s0[2] = {0, 3};
  static const int unary[] = {
      LT_UNARY_LOG1P,    LT_UNARY_EXPM1, LT_UNARY_FLOOR, LT_UNARY_CEIL, LT_UNARY_ROUND,
      LT_UNARY_TRUNC,    LT_UNARY_SIGN,  LT_UNARY_ERF,   LT_UNARY_GELU, LT_UNARY_SILU,
      LT_UNARY_SOFTPLUS, LT_UNARY_RSQRT, LT_UNARY_RELU,  LT_UNARY_ABS,  LT_UNARY_TAN,
      LT_UNARY_ASIN,     LT_UNARY_ACOS,  LT_UNARY_ATAN,  LT_UNARY_SINH, LT_UNARY_COSH,
      LT_UNARY_ASINH,    LT_UNARY_ACOSH, LT_UNARY_ATANH, LT_UNARY_LOG2, LT_UNARY_LOG10};
  for (size_t u = 0; u < sizeof unary / sizeof unary[0]; u++)
    for (int lay = 0; lay <= LAYOUTS; lay++) {
      g_op = unary[u];
      bool positive = g_op == LT_UNARY_RSQRT || g_op == LT_UNARY_LOG1P || g_op == LT_UNARY_LOG2 ||
                      g_op == LT_UNARY_LOG10;
      bool inside_one = g_op == LT_UNARY_ASIN || g_op == LT_UNARY_ACOS || g_op == LT_UNARY_ATANH;
      double lo = positive ? 0.2 : inside_one ? -0.9 : g_op == LT_UNARY_ACOSH ? 1.2 : -2.2;
      double hi = inside_one ? 0.9 : g_op == LT_UNARY_TAN ? 1.2 : 2.2;
      if (g_op == LT_UNARY_TAN) lo = -1.2;
      /* lay == LAYOUTS: rank 0 */
      lt_tensor *x = lay < LAYOUTS ? lt_gc_rnd(ctx, 2, s34, (lt_test_layout)lay, lo, hi)
                                   : lt_gc_rnd(ctx, 0, NULL, LT_LAYOUT_CONTIGUOUS, lo, hi);
      char name[64];
      snprintf(name, sizeof name, "unary %d (%s)", g_op,
               lay < LAYOUTS ? lt_test_layout_name(lay) : "rank 0");
      lt_gc_check(ctx, name, f_unary, 1, &x);
      lt_tensor_destroy(x);
    }
  g_op = LT_UNARY_GELU; /* size 0 */
  lt_tensor *e = lt_gc_rnd(ctx, 2, s0, LT_LAYOUT_CONTIGUOUS, -1, 1);
  lt_gc_check(ctx, "gelu size 0", f_unary, 1, &e);
  lt_tensor_destroy(e);
  static const int binary[] = {LT_BINARY_ATAN2,       LT_BINARY_HYPOT,    LT_BINARY_FMOD,
                               LT_BINARY_REMAINDER,   LT_BINARY_COPYSIGN, LT_BINARY_LOGADDEXP,
                               LT_BINARY_FLOOR_DIVIDE};
  for (size_t b = 0; b < sizeof binary / sizeof binary[0]; b++)
    for (int lay = 0; lay < LAYOUTS; lay++) {
      g_op = binary[b];
      /* operands off zero and p/q off integers, where fmod and remainder jump */
      lt_tensor *in[2] = {lt_gc_rnd(ctx, 2, s34, (lt_test_layout)lay, -3, 3),
                          lt_gc_rnd(ctx, 2, s31, (lt_test_layout)lay, 0.7, 1.3)};
      char name[64];
      snprintf(name, sizeof name, "binary %d (%s)", g_op, lt_test_layout_name(lay));
      lt_gc_check(ctx, name, f_binary, 2, in);
      lt_tensor_destroy(in[0]);
      lt_tensor_destroy(in[1]);
    }
}
static void test_math(void **state) {
  (void)state;
  lt_test_on_each_device(test_math_on);
}

/* x * (x > 0.2) + where(isnan(x) == false, x, 0): the comparisons carry no gradient. */
static lt_status f_masked(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  lt_tensor *c, *m, *n, *nn, *w, *zero;
  LT_GC_TRY(lt_tensor_full(lt_tensor_context(in[0]), LT_F64, 0, NULL, 0.2, &zero));
  LT_GC_TRY(lt_ad_binary(t, LT_BINARY_GT, in[0], zero, &c));
  LT_GC_TRY(lt_ad_binary(t, LT_BINARY_MUL, in[0], c, &m));
  LT_GC_TRY(lt_ad_unary(t, LT_UNARY_ISNAN, in[0], &n));
  LT_GC_TRY(lt_ad_unary(t, LT_UNARY_NOT, n, &nn));
  LT_GC_TRY(lt_ad_where(t, nn, in[0], zero, &w));
  lt_status st = lt_ad_binary(t, LT_BINARY_ADD, m, w, o);
  lt_tensor *all[] = {c, m, n, nn, w, zero};
  for (int i = 0; i < 6; i++)
    lt_tensor_destroy(all[i]);
  return st;
}

static void test_stop_gradients_on(lt_context *ctx) {
  static const int64_t s[2] = {3, 5};
  lt_tensor *x = lt_gc_rnd(ctx, 2, s, LT_LAYOUT_TRANSPOSED, -1, 1);
  lt_gc_check(ctx, "comparisons as masks", f_masked, 1, &x);
  /* a loss made only of a comparison is not tracked: backward is an error, not a zero */
  lt_tape *tape;
  lt_tensor *c, *cf;
  LT_CHECK(lt_tape_create(ctx, &tape));
  LT_CHECK(lt_tape_requires_grad(tape, x, true));
  LT_CHECK(lt_ad_binary(tape, LT_BINARY_LT, x, x, &c));
  assert_int_equal(lt_tensor_dtype(c), LT_BOOL); /* the plain call's result */
  LT_CHECK(lt_ad_contiguous(tape, c, LT_F64, &cf));
  bool tracked = true;
  LT_CHECK(lt_tape_is_tracked(tape, cf, &tracked));
  assert_false(tracked);
  LT_CHECK_FAILS(lt_tape_backward(tape, cf, cf, 0), LT_ERR_INVALID_ARGUMENT);
  /* a conversion to integers stops gradients too: its result is not tracked (PyTorch), so a
   * loss of it alone cannot be differentiated */
  lt_tensor *xi, *xf;
  LT_CHECK(lt_ad_contiguous(tape, x, LT_I32, &xi));
  LT_CHECK(lt_tape_is_tracked(tape, xi, &tracked));
  assert_false(tracked);
  LT_CHECK(lt_ad_contiguous(tape, xi, LT_F64, &xf));
  LT_CHECK_FAILS(lt_tape_backward(tape, xf, xf, 0), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "not tracked"));
  lt_tensor_destroy(xi);
  lt_tensor_destroy(xf);
  lt_tensor_destroy(c);
  lt_tensor_destroy(cf);
  lt_tape_destroy(tape);
  lt_tensor_destroy(x);
}
static void test_stop_gradients(void **state) {
  (void)state;
  lt_test_on_each_device(test_stop_gradients_on);
}

/* ---- statistics ---- */

static lt_status f_stats(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  switch (g_op) {
  case 0: return lt_ad_softmax(t, in[0], g_naxes, g_axes, o);
  case 1: return lt_ad_log_softmax(t, in[0], g_naxes, g_axes, o);
  case 2: return lt_ad_logsumexp(t, in[0], g_naxes, g_axes, g_keep, o);
  case 3: return lt_ad_var(t, in[0], g_naxes, g_axes, g_ddof, g_keep, o);
  case 4: return lt_ad_std(t, in[0], g_naxes, g_axes, g_ddof, g_keep, o);
  case 5: return lt_ad_cumsum(t, in[0], g_axis, o);
  case 6: return lt_ad_cumprod(t, in[0], g_axis, o);
  }
  return LT_ERR_INTERNAL;
}

static void test_stats_on(lt_context *ctx) {
  static const int64_t s[3] = {2, 3, 4};
  static const int axes_sets[][3] = {{1, 1, 0}, {2, 0, 2}, {-1, 0, 0}, {1, -1, 0}};
  for (g_op = 0; g_op < 7; g_op++)
    for (int a = 0; a < 4; a++) {
      lt_test_layout lay = (lt_test_layout)((g_op + a) % LAYOUTS);
      lt_tensor *x = lt_gc_rnd(ctx, 3, s, lay, 0.5, 1.5);
      g_naxes = axes_sets[a][0];
      g_axes[0] = axes_sets[a][1];
      g_axes[1] = axes_sets[a][2];
      g_keep = a % 2 == 1;
      g_ddof = a % 2;
      g_axis = a - 1; /* -1, 0, 1, 2 */
      char name[64];
      snprintf(name, sizeof name, "stats %d axes set %d (%s)", g_op, a, lt_test_layout_name(lay));
      lt_gc_check(ctx, name, f_stats, 1, &x);
      lt_tensor_destroy(x);
    }
  /* rank 0 and a size-1 axis */
  static const int64_t s1[2] = {1, 4};
  for (g_op = 0; g_op < 7; g_op++) {
    g_naxes = -1;
    g_keep = false;
    g_ddof = 0;
    g_axis = 0;
    lt_tensor *x = lt_gc_rnd(ctx, 2, s1, LT_LAYOUT_NEGATIVE, 0.5, 1.5);
    lt_gc_check(ctx, "stats size-1", f_stats, 1, &x);
    lt_tensor_destroy(x);
    if (g_op >= 3) continue; /* var of one element: 0/0; scans need an axis */
    x = lt_gc_rnd(ctx, 0, NULL, LT_LAYOUT_CONTIGUOUS, 0.5, 1.5);
    lt_gc_check(ctx, "stats rank 0", f_stats, 1, &x);
    lt_tensor_destroy(x);
  }
}
static void test_stats(void **state) {
  (void)state;
  lt_test_on_each_device(test_stats_on);
}

/* Zero-stride operands: each rule applied to a [1, 4] leaf broadcast to [3, 4] (a view with a
 * zero stride), and to size-0 tensors. */
static lt_gc_fn g_inner;
static lt_status f_bcast(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  static const int64_t s34[2] = {3, 4};
  lt_tensor *b;
  LT_GC_TRY(lt_ad_broadcast_to(t, in[0], 2, s34, &b));
  lt_tensor *const inner[1] = {b};
  lt_status st = g_inner(t, inner, o);
  lt_tensor_destroy(b);
  return st;
}

static void test_broadcast_and_empty_on(lt_context *ctx) {
  static const int64_t s14[2] = {1, 4}, s03[2] = {0, 3}, s30[2] = {3, 0};
  static const int unary[] = {LT_UNARY_GELU, LT_UNARY_SILU, LT_UNARY_RELU, LT_UNARY_ABS,
                              LT_UNARY_EXPM1};
  char name[64];
  for (size_t u = 0; u < sizeof unary / sizeof unary[0]; u++) {
    g_op = unary[u];
    g_inner = f_unary;
    lt_tensor *x = lt_gc_rnd(ctx, 2, s14, LT_LAYOUT_STEPPED, -1.5, 1.5);
    snprintf(name, sizeof name, "unary %d of a broadcast", g_op);
    lt_gc_check(ctx, name, f_bcast, 1, &x);
    lt_tensor_destroy(x);
  }
  g_inner = f_stats;
  for (g_op = 0; g_op < 7; g_op++) {
    g_naxes = 1;
    /* along the broadcast axis, or across it (std of equal values has no derivative) */
    g_axes[0] = g_op == 4 ? 1 : g_op % 2;
    g_keep = true;
    g_ddof = 0;
    g_axis = g_op % 2;
    lt_tensor *x = lt_gc_rnd(ctx, 2, s14, LT_LAYOUT_NEGATIVE, 0.5, 1.5);
    snprintf(name, sizeof name, "stats %d of a broadcast", g_op);
    lt_gc_check(ctx, name, f_bcast, 1, &x);
    lt_tensor_destroy(x);
    /* size 0: along an empty axis and across one */
    if (g_op == 3 || g_op == 4) continue; /* var of no elements is NaN, as NumPy */
    for (int e = 0; e < 2; e++) {
      lt_tensor *z = lt_gc_rnd(ctx, 2, e ? s30 : s03, LT_LAYOUT_CONTIGUOUS, 0.5, 1.5);
      snprintf(name, sizeof name, "stats %d of size 0 (%d)", g_op, e);
      lt_gc_check(ctx, name, f_stats, 1, &z);
      lt_tensor_destroy(z);
    }
  }
}
static void test_broadcast_and_empty(void **state) {
  (void)state;
  lt_test_on_each_device(test_broadcast_and_empty_on);
}

/* cumprod with zeros: against d/dx_i sum_j w_j prod_{k <= j} x_k by a naive loop. */
static void test_cumprod_zeros_on(lt_context *ctx) {
  static const double rows[3][5] = {{2, 0, 3, 0.5, 4}, {0, 1.5, 0, 2, 3}, {1.5, -2, 0.5, 3, 0}};
  const int64_t n = 5;
  for (int r = 0; r < 3; r++) {
    const double w[5] = {0.3, -1.1, 0.7, 1.9, -0.4};
    lt_tensor *x, *tw, *y, *p, *l, *g;
    LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &n, NULL, rows[r], &x));
    LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &n, NULL, w, &tw));
    lt_tape *tape;
    LT_CHECK(lt_tape_create(ctx, &tape));
    LT_CHECK(lt_tape_requires_grad(tape, x, true));
    LT_CHECK(lt_ad_cumprod(tape, x, 0, &y));
    LT_CHECK(lt_ad_binary(tape, LT_BINARY_MUL, y, tw, &p));
    LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, p, -1, NULL, false, &l));
    LT_CHECK(lt_tape_backward(tape, l, NULL, 0));
    LT_CHECK(lt_tape_grad(tape, x, &g));
    double *got = lt_test_read_all(g), want[5];
    for (int i = 0; i < n; i++) {
      want[i] = 0;
      for (int j = i; j < n; j++) {
        double prod = 1;
        for (int k = 0; k <= j; k++)
          if (k != i) prod *= rows[r][k];
        want[i] += w[j] * prod;
      }
    }
    lt_test_assert_close(got, want, n, 1e-14, "cumprod with zeros");
    free(got);
    lt_tensor *all[] = {x, tw, y, p, l, g};
    for (int i = 0; i < 6; i++)
      lt_tensor_destroy(all[i]);
    lt_tape_destroy(tape);
  }
}
static void test_cumprod_zeros(void **state) {
  (void)state;
  lt_test_on_each_device(test_cumprod_zeros_on);
}

/* ---- indexing, selection, joining ---- */

static lt_status f_index(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  switch (g_op) {
  case 0: return lt_ad_take(t, in[0], g_index, g_axis, o);
  case 1: return lt_ad_index_select(t, in[0], g_axis, g_index, o);
  case 2: return lt_ad_take_along_axis(t, in[0], g_index, g_axis, o);
  case 3: return lt_ad_scatter_add(t, in[0], g_axis, g_index, in[1], o);
  }
  return LT_ERR_INTERNAL;
}

static lt_tensor *index_tensor(lt_context *ctx, int rank, const int64_t *shape, const int64_t *v) {
  lt_tensor *t;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, rank, shape, NULL, v, &t));
  return t;
}

static void test_index_on(lt_context *ctx) {
  static const int64_t s34[2] = {3, 4}, s35[2] = {3, 5}, s14[2] = {1, 4}, s33[2] = {3, 3};
  static const int64_t i23[2] = {2, 3}, i5[1] = {5}, i34s[2] = {2, 4}, i31[2] = {3, 1};
  static const int64_t v23[6] = {0, -1, 2, 2, 0, 0}; /* repeats and a negative index */
  static const int64_t v5[5] = {3, 0, 3, -1, 1};
  static const int64_t v24[8] = {2, 0, 1, 2, 0, 0, 2, 1};
  static const int64_t v31[3] = {1, 3, 0};
  for (int lay = 0; lay < LAYOUTS; lay++) {
    lt_test_layout L = (lt_test_layout)lay;
    const char *ln = lt_test_layout_name(lay);
    char name[64];
    /* take along axis 0 with a 2-D index; index_select along axis 1 */
    lt_tensor *x = lt_gc_rnd(ctx, 2, s34, L, -1, 1);
    g_index = index_tensor(ctx, 2, i23, v23);
    g_op = 0;
    g_axis = 0;
    snprintf(name, sizeof name, "take (%s)", ln);
    lt_gc_check(ctx, name, f_index, 1, &x);
    lt_tensor_destroy(g_index);
    g_index = index_tensor(ctx, 1, i5, v5);
    g_op = 1;
    g_axis = -1;
    snprintf(name, sizeof name, "index_select (%s)", ln);
    lt_gc_check(ctx, name, f_index, 1, &x);
    lt_tensor_destroy(g_index);
    /* take_along_axis on axis 0: index [2,4] against x [3,4]; and an index [3,1] broadcast
     * against a [1,4] input on axis 1 */
    g_index = index_tensor(ctx, 2, i34s, v24);
    g_op = 2;
    g_axis = 0;
    snprintf(name, sizeof name, "take_along_axis (%s)", ln);
    lt_gc_check(ctx, name, f_index, 1, &x);
    lt_tensor_destroy(g_index);
    lt_tensor *x14 = lt_gc_rnd(ctx, 2, s14, L, -1, 1);
    g_index = index_tensor(ctx, 2, i31, v31);
    g_axis = 1;
    snprintf(name, sizeof name, "take_along_axis broadcast (%s)", ln);
    lt_gc_check(ctx, name, f_index, 1, &x14);
    lt_tensor_destroy(g_index);
    lt_tensor_destroy(x14);
    /* scatter_add: index_add form (1-D index, src [3,5]) and scatter form (index of src's
     * shape [2,4] along axis 0) */
    lt_tensor *in[2] = {x, lt_gc_rnd(ctx, 2, s35, L, -1, 1)};
    g_index = index_tensor(ctx, 1, i5, v5);
    g_op = 3;
    g_axis = 1;
    snprintf(name, sizeof name, "scatter_add index form (%s)", ln);
    lt_gc_check(ctx, name, f_index, 2, in);
    lt_tensor_destroy(g_index);
    lt_tensor_destroy(in[1]);
    in[1] = lt_gc_rnd(ctx, 2, i34s, L, -1, 1);
    g_index = index_tensor(ctx, 2, i34s, v24);
    g_axis = 0;
    snprintf(name, sizeof name, "scatter_add scatter form (%s)", ln);
    lt_gc_check(ctx, name, f_index, 2, in);
    lt_tensor_destroy(g_index);
    lt_tensor_destroy(in[1]);
    lt_tensor_destroy(x);
    (void)s33;
  }
}
static void test_index(void **state) {
  (void)state;
  lt_test_on_each_device(test_index_on);
}

static lt_status f_select(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  switch (g_op) {
  case 0: { /* where(x > y, x, y) with a broadcast y */
    lt_tensor *c;
    LT_GC_TRY(lt_ad_binary(t, LT_BINARY_GT, in[0], in[1], &c));
    lt_status st = lt_ad_where(t, c, in[0], in[1], o);
    lt_tensor_destroy(c);
    return st;
  }
  case 1: return lt_ad_clip(t, in[0], in[1], in[2], o);
  case 2: return lt_ad_concatenate(t, 3, (const lt_tensor *const *)in, g_axis, o);
  case 3: return lt_ad_stack(t, 3, (const lt_tensor *const *)in, g_axis, o);
  case 4: { /* split into 3 pieces, joined back in reverse order */
    lt_tensor *p[3];
    const int64_t points[2] = {1, -1};
    LT_GC_TRY(lt_ad_split(t, in[0], g_axis, 2, points, p));
    const lt_tensor *r[3] = {p[2], p[0], p[1]};
    lt_status st = lt_ad_concatenate(t, 3, r, g_axis, o);
    for (int k = 0; k < 3; k++)
      lt_tensor_destroy(p[k]);
    return st;
  }
  }
  return LT_ERR_INTERNAL;
}

static void test_select_join_on(lt_context *ctx) {
  static const int64_t s34[2] = {3, 4}, s4[1] = {4}, s31[2] = {3, 1}, s24[2] = {2, 4};
  for (int lay = 0; lay < LAYOUTS; lay++) {
    lt_test_layout L = (lt_test_layout)lay;
    char name[64];
    snprintf(name, sizeof name, "where (%s)", lt_test_layout_name(lay));
    g_op = 0;
    lt_tensor *in[3] = {lt_gc_rnd(ctx, 2, s34, L, -1, 1), lt_gc_rnd(ctx, 1, s4, L, -1, 1), NULL};
    lt_gc_check(ctx, name, f_select, 2, in);
    lt_tensor_destroy(in[1]);
    /* clip with broadcast bounds; some lo above hi (hi wins) */
    in[1] = lt_gc_rnd(ctx, 2, s31, L, -0.6, 0.1);
    in[2] = lt_gc_rnd(ctx, 1, s4, L, -0.3, 0.6);
    g_op = 1;
    snprintf(name, sizeof name, "clip (%s)", lt_test_layout_name(lay));
    lt_gc_check(ctx, name, f_select, 3, in);
    lt_tensor_destroy(in[1]);
    lt_tensor_destroy(in[2]);
    /* concatenate along 0 of [3,4], [2,4], [3,4]; stack along 1 of three [3,4] */
    in[1] = lt_gc_rnd(ctx, 2, s24, L, -1, 1);
    in[2] = lt_gc_rnd(ctx, 2, s34, (lt_test_layout)((lay + 1) % LAYOUTS), -1, 1);
    g_op = 2;
    g_axis = 0;
    snprintf(name, sizeof name, "concatenate (%s)", lt_test_layout_name(lay));
    lt_gc_check(ctx, name, f_select, 3, in);
    lt_tensor_destroy(in[1]);
    in[1] = lt_gc_rnd(ctx, 2, s34, L, -1, 1);
    g_op = 3;
    g_axis = 1;
    snprintf(name, sizeof name, "stack (%s)", lt_test_layout_name(lay));
    lt_gc_check(ctx, name, f_select, 3, in);
    g_op = 4;
    g_axis = -1;
    snprintf(name, sizeof name, "split (%s)", lt_test_layout_name(lay));
    lt_gc_check(ctx, name, f_select, 1, in);
    for (int k = 0; k < 3; k++)
      lt_tensor_destroy(in[k]);
  }
}
static void test_select_join(void **state) {
  (void)state;
  lt_test_on_each_device(test_select_join_on);
}

/* Memory: a 20-op chain of the new ops saves one tensor per op, and backward frees them. */
static void test_memory_on(lt_context *ctx) {
  static const int64_t s[2] = {3, 4};
  static const lt_unary_op ops[4] = {LT_UNARY_GELU, LT_UNARY_SILU, LT_UNARY_SOFTPLUS, LT_UNARY_ERF};
  lt_tensor *x = lt_gc_rnd(ctx, 2, s, LT_LAYOUT_CONTIGUOUS, -1, 1), *cur;
  lt_tape *tape;
  LT_CHECK(lt_tape_create(ctx, &tape));
  LT_CHECK(lt_tape_requires_grad(tape, x, true));
  LT_CHECK(lt_ad_unary(tape, LT_UNARY_RELU, x, &cur));
  for (int i = 1; i < 20; i++) {
    lt_tensor *next;
    if (i % 5 == 4) {
      const int ax = 1;
      LT_CHECK(lt_ad_softmax(tape, cur, 1, &ax, &next));
    } else {
      LT_CHECK(lt_ad_unary(tape, ops[i % 4], cur, &next));
    }
    lt_tensor_destroy(cur);
    cur = next;
  }
  int64_t count;
  size_t bytes;
  LT_CHECK(lt_tape_saved_count(tape, &count, &bytes));
  assert_int_equal(count, 20);
  /* relu's and softmax's outputs (saved by them) are the inputs the next op saves: 4 of the
   * 20 saved tensors share their memory with another, which is held once */
  assert_int_equal(bytes, 16 * 12 * sizeof(double));
  LT_CHECK(lt_tape_backward(tape, cur, cur, 0));
  LT_CHECK(lt_tape_saved_count(tape, &count, &bytes));
  assert_int_equal(count, 0);
  lt_tensor_destroy(cur);
  lt_tape_destroy(tape);
  lt_tensor_destroy(x);
}
static void test_memory(void **state) {
  (void)state;
  lt_test_on_each_device(test_memory_on);
}

/* A backward without retain_graph frees only the graph it walked: another graph on the tape
 * keeps its history; a graph whose results were forgotten is released at the next prune. */
static void test_graphs_on(lt_context *ctx) {
  static const int64_t s[1] = {4};
  lt_tensor *x = lt_gc_rnd(ctx, 1, s, LT_LAYOUT_NEGATIVE, -1, 1);
  lt_tape *tape;
  LT_CHECK(lt_tape_create(ctx, &tape));
  LT_CHECK(lt_tape_requires_grad(tape, x, true));
  lt_tensor *a, *la, *b, *lb, *c, *g;
  LT_CHECK(lt_ad_unary(tape, LT_UNARY_EXP, x, &a)); /* graph A: sum(exp(x)) */
  LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, a, -1, NULL, false, &la));
  LT_CHECK(lt_ad_unary(tape, LT_UNARY_SIN, x, &b)); /* graph B: sum(sin(x)) */
  LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, b, -1, NULL, false, &lb));
  LT_CHECK(lt_ad_unary(tape, LT_UNARY_SQUARE, x, &c)); /* graph C: forgotten */
  int64_t count;
  LT_CHECK(lt_tape_saved_count(tape, &count, NULL));
  assert_int_equal(count, 3);
  LT_CHECK(lt_tape_forget(tape, c));
  LT_CHECK(lt_tape_backward(tape, lb, NULL, 0));
  LT_CHECK(lt_tape_saved_count(tape, &count, NULL));
  assert_int_equal(count, 1); /* only A's exp output is left */
  LT_CHECK_FAILS(lt_tape_backward(tape, lb, NULL, 0), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK(lt_tape_set_grad(tape, x, NULL));
  LT_CHECK(lt_tape_backward(tape, la, NULL, 0)); /* A survived B's backward */
  LT_CHECK(lt_tape_grad(tape, x, &g));
  double *hx = lt_test_read_all(x), *hg = lt_test_read_all(g);
  for (int i = 0; i < 4; i++)
    hx[i] = exp(hx[i]);
  lt_test_assert_close(hg, hx, 4, 1e-14, "graph A after graph B's backward");
  free(hx);
  free(hg);
  LT_CHECK(lt_tape_saved_count(tape, &count, NULL));
  assert_int_equal(count, 0);
  LT_CHECK(lt_tape_forget(tape, x)); /* a leaf: as requires_grad false */
  bool tracked = true;
  LT_CHECK(lt_tape_is_tracked(tape, x, &tracked));
  assert_false(tracked);
  LT_CHECK_FAILS(lt_tape_forget(NULL, x), LT_ERR_NULL_POINTER);
  lt_tensor *all[] = {a, la, b, lb, c, g, x};
  for (int i = 0; i < 7; i++)
    lt_tensor_destroy(all[i]);
  lt_tape_destroy(tape);
}
static void test_graphs(void **state) {
  (void)state;
  lt_test_on_each_device(test_graphs_on);
}

/* A label repeated in the output ('i->ii') is refused, as NumPy and PyTorch refuse it, in
 * both einsum forms; nothing is recorded. */
static void test_einsum_repeated_output_on(lt_context *ctx) {
  static const int64_t s[1] = {3};
  lt_tensor *x = lt_gc_rnd(ctx, 1, s, LT_LAYOUT_CONTIGUOUS, -1, 1), *y = NULL;
  lt_tape *tape;
  LT_CHECK(lt_tape_create(ctx, &tape));
  LT_CHECK(lt_tape_requires_grad(tape, x, true));
  const lt_tensor *in[1] = {x};
  lt_status st = lt_ad_einsum(tape, "i->ii", 1, in, &y);
  assert_int_not_equal(st, LT_OK);
  assert_null(y);
  assert_non_null(strstr(lt_last_error(), "more than once"));
  static const int32_t m[1] = {5}, mo[2] = {5, 5};
  const int32_t *modes[1] = {m};
  st = lt_ad_einsum_modes(tape, 1, in, modes, 2, mo, &y);
  assert_int_not_equal(st, LT_OK);
  assert_null(y);
  assert_true(lt_last_error()[0] != '\0');
  int64_t count;
  LT_CHECK(lt_tape_saved_count(tape, &count, NULL));
  assert_int_equal(count, 0);
  lt_tape_destroy(tape);
  lt_tensor_destroy(x);
}
static void test_einsum_repeated_output(void **state) {
  (void)state;
  lt_test_on_each_device(test_einsum_repeated_output_on);
}

/* Bad inputs: a status and a message, nothing recorded, nothing leaked (the ASan run checks). */
static void test_bad_inputs_on(lt_context *ctx) {
  static const int64_t s[2] = {2, 3};
  lt_tensor *x = lt_gc_rnd(ctx, 2, s, LT_LAYOUT_CONTIGUOUS, -1, 1), *y = NULL, *outs[3];
  lt_tape *tape;
  LT_CHECK(lt_tape_create(ctx, &tape));
  LT_CHECK(lt_tape_requires_grad(tape, x, true));
  const lt_tensor *many[65];
  for (int i = 0; i < 65; i++)
    many[i] = x;
  LT_CHECK_FAILS(lt_ad_concatenate(tape, 65, many, 0, &y), LT_ERR_UNSUPPORTED);
  assert_null(y);
  LT_CHECK_FAILS(lt_ad_stack(tape, 65, many, 0, &y), LT_ERR_UNSUPPORTED);
  assert_null(y);
  LT_CHECK(lt_ad_stack(NULL, 65, many, 0, &y)); /* without a tape it only computes */
  lt_tensor_destroy(y);
  y = NULL;
  int64_t three = 3;
  const int64_t bad[3] = {0, 7, -9};
  const int ax2 = 2;
  lt_tensor *idx;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, &three, NULL, bad, &idx));
  LT_CHECK_FAILS(lt_ad_take(tape, x, idx, 1, &y), LT_ERR_OUT_OF_RANGE);
  assert_null(y);
  LT_CHECK_FAILS(lt_ad_scatter_add(tape, x, 1, idx, x, &y), LT_ERR_OUT_OF_RANGE);
  assert_null(y);
  lt_status st = lt_ad_where(tape, x, x, x, &y); /* a float condition */
  assert_int_not_equal(st, LT_OK);
  assert_null(y);
  st = lt_ad_softmax(tape, x, 1, &ax2, &y);
  assert_int_not_equal(st, LT_OK);
  st = lt_ad_cumsum(tape, x, 5, &y);
  assert_int_not_equal(st, LT_OK);
  st = lt_ad_var(tape, x, -1, NULL, -1.0, false, &y);
  assert_int_not_equal(st, LT_OK);
  st = lt_ad_split(tape, x, 4, 1, &three, outs);
  assert_int_not_equal(st, LT_OK);
  assert_null(y);
  LT_CHECK_FAILS(lt_ad_clip(tape, x, NULL, x, &y), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_tape_forget(tape, NULL), LT_ERR_NULL_POINTER);
  int64_t count;
  LT_CHECK(lt_tape_saved_count(tape, &count, NULL));
  assert_int_equal(count, 0);
  lt_tensor_destroy(idx);
  lt_tape_destroy(tape);
  lt_tensor_destroy(x);
}
static void test_bad_inputs(void **state) {
  (void)state;
  lt_test_on_each_device(test_bad_inputs_on);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_math),
      cmocka_unit_test(test_stop_gradients),
      cmocka_unit_test(test_stats),
      cmocka_unit_test(test_cumprod_zeros),
      cmocka_unit_test(test_index),
      cmocka_unit_test(test_select_join),
      cmocka_unit_test(test_memory),
      cmocka_unit_test(test_graphs),
      cmocka_unit_test(test_einsum_repeated_output),
      cmocka_unit_test(test_broadcast_and_empty),
      cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
