/* SPDX-License-Identifier: MIT */
/* Autograd: every backward rule against central finite differences in float64 on random inputs
 * in the layout families (contiguous, transposed, stepped, negative strides) on every device;
 * min/max ties and prod with zeros against closed-form references; the tape's contract (no_grad,
 * detach, retain_graph, in-place detection, non-differentiable ops, memory kept); optimisers
 * against their formulas. */
#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY LT_GC_TRY
#define gradcheck lt_gc_check
#define rnd lt_gc_rnd

/* ---- the functions under test ---- */

static int g_op, g_op2;
static double g_s[3];

static lt_status f_unary(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  return lt_ad_unary(t, (lt_unary_op)g_op, in[0], o);
}
static lt_status f_binary(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  return lt_ad_binary(t, (lt_binary_op)g_op, in[0], in[1], o);
}
static lt_status f_trinary(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  return lt_ad_trinary(t, (lt_binary_op)g_op, (lt_binary_op)g_op2, in[0], in[1], in[2], g_s, o);
}

static void test_elementwise_on(lt_context *ctx) {
  static const int64_t s34[2] = {3, 4}, s4[1] = {4}, s31[2] = {3, 1};
  for (int lay = 0; lay < LT_LAYOUT_BROADCAST; lay++) {
    for (int op = LT_UNARY_IDENTITY; op <= LT_UNARY_SQUARE; op++) {
      bool positive = op == LT_UNARY_SQRT || op == LT_UNARY_LOG || op == LT_UNARY_RECIPROCAL;
      lt_tensor *x = rnd(ctx, 2, s34, (lt_test_layout)lay, positive ? 0.5 : -2, 2);
      g_op = op;
      char name[64];
      snprintf(name, sizeof name, "unary %d (%s)", op, lt_test_layout_name(lay));
      gradcheck(ctx, name, f_unary, 1, &x);
      lt_tensor_destroy(x);
    }
    for (int op = LT_BINARY_ADD; op <= LT_BINARY_POW; op++) {
      bool pos = op == LT_BINARY_POW || op == LT_BINARY_DIV;
      lt_tensor *in[2] = {rnd(ctx, 2, s34, (lt_test_layout)lay, pos ? 0.5 : -1, 1.5),
                          rnd(ctx, op == LT_BINARY_MUL ? 1 : 2, op == LT_BINARY_MUL ? s4 : s31,
                              (lt_test_layout)lay, pos ? 0.5 : -1, 1.5)};
      g_op = op;
      char name[64];
      snprintf(name, sizeof name, "binary %d (%s)", op, lt_test_layout_name(lay));
      gradcheck(ctx, name, f_binary, 2, in);
      lt_tensor_destroy(in[0]);
      lt_tensor_destroy(in[1]);
    }
  }
  /* trinary with alpha/beta/gamma, broadcasting */
  static const int ops[][2] = {{LT_BINARY_MUL, LT_BINARY_ADD},
                               {LT_BINARY_ADD, LT_BINARY_MUL},
                               {LT_BINARY_DIV, LT_BINARY_SUB},
                               {LT_BINARY_SUB, LT_BINARY_DIV},
                               {LT_BINARY_MAX, LT_BINARY_POW}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    lt_tensor *in[3] = {rnd(ctx, 2, s34, LT_LAYOUT_TRANSPOSED, 0.5, 1.5),
                        rnd(ctx, 1, s4, LT_LAYOUT_NEGATIVE, 0.5, 1.5),
                        rnd(ctx, 2, s31, LT_LAYOUT_STEPPED, 0.5, 1.5)};
    g_op = ops[i][0];
    g_op2 = ops[i][1];
    g_s[0] = 0.7;
    g_s[1] = -1.3;
    g_s[2] = 0.9;
    if (g_op == LT_BINARY_MAX) g_s[1] = 1.1;
    gradcheck(ctx, "trinary", f_trinary, 3, in);
    for (int k = 0; k < 3; k++)
      lt_tensor_destroy(in[k]);
  }
}
static void test_elementwise(void **state) {
  (void)state;
  lt_test_on_each_device(test_elementwise_on);
}

/* ---- reductions ---- */

static int g_naxes, g_axes[4];
static bool g_keep;
static lt_status f_reduce(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  return lt_ad_reduce(t, (lt_reduce_op)g_op, in[0], g_naxes, g_axes, g_keep, o);
}

static void test_reduce_on(lt_context *ctx) {
  static const int64_t s[3] = {2, 3, 4};
  static const lt_reduce_op ops[] = {LT_REDUCE_SUM, LT_REDUCE_MEAN,  LT_REDUCE_PROD,  LT_REDUCE_MIN,
                                     LT_REDUCE_MAX, LT_REDUCE_SUMSQ, LT_REDUCE_MAXABS};
  static const int axes_sets[][3] = {{1, 1, 0}, {2, 0, 2}, {-1, 0, 0}, {1, 2, 0}};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (size_t a = 0; a < 4; a++) {
      lt_test_layout lay = (lt_test_layout)((o + a) % LT_LAYOUT_BROADCAST);
      lt_tensor *x = rnd(ctx, 3, s, lay, 0.5, 1.5);
      g_op = ops[o];
      g_naxes = axes_sets[a][0];
      g_axes[0] = axes_sets[a][1];
      g_axes[1] = axes_sets[a][2];
      g_keep = a % 2 == 1;
      char name[64];
      snprintf(name, sizeof name, "reduce %d axes set %zu (%s)", ops[o], a,
               lt_test_layout_name(lay));
      gradcheck(ctx, name, f_reduce, 1, &x);
      lt_tensor_destroy(x);
    }
}
static void test_reduce(void **state) {
  (void)state;
  lt_test_on_each_device(test_reduce_on);
}

/* d/dx of reduce(op, x) over all of x, by the tape. */
static double *grad_of_reduce(lt_context *ctx, lt_reduce_op op, const double *v, int64_t n) {
  lt_tensor *x;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &n, NULL, v, &x));
  lt_tape *tape;
  LT_CHECK(lt_tape_create(ctx, &tape));
  LT_CHECK(lt_tape_requires_grad(tape, x, true));
  lt_tensor *y, *g;
  LT_CHECK(lt_ad_reduce(tape, op, x, -1, NULL, false, &y));
  LT_CHECK(lt_tape_backward(tape, y, NULL, 0));
  LT_CHECK(lt_tape_grad(tape, x, &g));
  double *r = lt_test_read_all(g);
  lt_tensor_destroy(g);
  lt_tensor_destroy(y);
  lt_tape_destroy(tape);
  lt_tensor_destroy(x);
  return r;
}

static void test_ties_and_zeros_on(lt_context *ctx) {
  /* max ties split evenly (PyTorch amax); prod with one and with two zeros */
  const double ties[5] = {1, 3, -2, 3, 3};
  double *g = grad_of_reduce(ctx, LT_REDUCE_MAX, ties, 5);
  const double want_max[5] = {0, 1.0 / 3, 0, 1.0 / 3, 1.0 / 3};
  lt_test_assert_close(g, want_max, 5, 1e-15, "max ties");
  free(g);
  g = grad_of_reduce(ctx, LT_REDUCE_MIN, ties, 5);
  const double want_min[5] = {0, 0, 1, 0, 0};
  lt_test_assert_close(g, want_min, 5, 1e-15, "min");
  free(g);
  const double abs_ties[4] = {-3, 1, 3, 2};
  g = grad_of_reduce(ctx, LT_REDUCE_MAXABS, abs_ties, 4);
  const double want_abs[4] = {-0.5, 0, 0.5, 0};
  lt_test_assert_close(g, want_abs, 4, 1e-15, "maxabs ties");
  free(g);
  const double one_zero[4] = {2, 0, 3, 5};
  g = grad_of_reduce(ctx, LT_REDUCE_PROD, one_zero, 4);
  const double want_p1[4] = {0, 30, 0, 0};
  lt_test_assert_close(g, want_p1, 4, 1e-15, "prod one zero");
  free(g);
  const double two_zeros[4] = {2, 0, 3, 0};
  g = grad_of_reduce(ctx, LT_REDUCE_PROD, two_zeros, 4);
  const double want_p2[4] = {0, 0, 0, 0};
  lt_test_assert_close(g, want_p2, 4, 1e-15, "prod two zeros");
  free(g);
  /* binary max with ties: half each */
  int64_t n = 3;
  const double a[3] = {1, 2, 3}, b[3] = {1, 5, 0};
  lt_tensor *ta, *tb, *y, *l, *ga, *gb;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &n, NULL, a, &ta));
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &n, NULL, b, &tb));
  lt_tape *tape;
  LT_CHECK(lt_tape_create(ctx, &tape));
  LT_CHECK(lt_tape_requires_grad(tape, ta, true));
  LT_CHECK(lt_tape_requires_grad(tape, tb, true));
  LT_CHECK(lt_ad_binary(tape, LT_BINARY_MAX, ta, tb, &y));
  LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, y, -1, NULL, false, &l));
  LT_CHECK(lt_tape_backward(tape, l, NULL, 0));
  LT_CHECK(lt_tape_grad(tape, ta, &ga));
  LT_CHECK(lt_tape_grad(tape, tb, &gb));
  double *hga = lt_test_read_all(ga), *hgb = lt_test_read_all(gb);
  const double wa[3] = {0.5, 0, 1}, wb[3] = {0.5, 1, 0};
  lt_test_assert_close(hga, wa, 3, 1e-15, "maximum ties a");
  lt_test_assert_close(hgb, wb, 3, 1e-15, "maximum ties b");
  free(hga);
  free(hgb);
  lt_tensor *all[] = {ta, tb, y, l, ga, gb};
  for (int i = 0; i < 6; i++)
    lt_tensor_destroy(all[i]);
  lt_tape_destroy(tape);
}
static void test_ties_and_zeros(void **state) {
  (void)state;
  lt_test_on_each_device(test_ties_and_zeros_on);
}

/* ---- views and copies ---- */

static int g_view;
static lt_status f_view(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  const lt_tensor *x = in[0]; /* shape [3, 4, 4] */
  switch (g_view) {
  case 0: {
    const int64_t s[2] = {6, 8};
    return lt_ad_reshape(t, x, 2, s, o);
  }
  case 1: {
    const int p[3] = {2, 0, 1};
    return lt_ad_permute(t, x, p, o);
  }
  case 2: return lt_ad_slice(t, x, 1, 3, -1, -2, o);
  case 3: return lt_ad_slice(t, x, 2, 1, 4, 2, o);
  case 4: return lt_ad_select(t, x, 0, -1, o);
  case 5: {
    const int64_t s[4] = {2, 3, 4, 4};
    return lt_ad_broadcast_to(t, x, 4, s, o);
  }
  case 6: return lt_ad_unsqueeze(t, x, 1, o);
  case 7: return lt_ad_flip(t, x, 2, o);
  case 8: return lt_ad_diagonal(t, x, 1, 1, 2, o);
  case 9: return lt_ad_contiguous(t, x, LT_F64, o);
  case 10: { /* overlapping windows: elements read several times */
    const int64_t sh[2] = {3, 5}, st[2] = {2, 1};
    return lt_ad_as_strided(t, x, 2, sh, st, lt_tensor_offset(x), o);
  }
  case 11: { /* squeeze of an unsqueeze, then a transpose through permute */
    lt_tensor *u;
    lt_status s = lt_ad_unsqueeze(t, x, 0, &u);
    if (s == LT_OK) s = lt_ad_squeeze(t, u, 0, o);
    lt_tensor_destroy(u);
    return s;
  }
  }
  return LT_ERR_INTERNAL;
}

static void test_views_on(lt_context *ctx) {
  static const int64_t s[3] = {3, 4, 4};
  for (g_view = 0; g_view < 12; g_view++)
    for (int lay = 0; lay < LT_LAYOUT_BROADCAST; lay++) {
      if (g_view == 10 && lay != LT_LAYOUT_CONTIGUOUS) continue; /* as_strided is storage-based */
      lt_tensor *x = rnd(ctx, 3, s, (lt_test_layout)lay, -1, 1);
      char name[64];
      snprintf(name, sizeof name, "view %d (%s)", g_view, lt_test_layout_name(lay));
      gradcheck(ctx, name, f_view, 1, &x);
      lt_tensor_destroy(x);
    }
}
static void test_views(void **state) {
  (void)state;
  lt_test_on_each_device(test_views_on);
}

/* ---- einsum ---- */

static const char *g_expr;
static int g_n;
static lt_status f_einsum(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  return lt_ad_einsum(t, g_expr, g_n, (const lt_tensor *const *)in, o);
}

static void test_einsum_on(lt_context *ctx) {
  static const struct {
    const char *expr;
    int n, rank[3];
    int64_t shape[3][3];
  } cases[] = {
      {"ij,jk->ik", 2, {2, 2}, {{3, 4}, {4, 2}}},
      {"ii->i", 1, {2}, {{3, 3}}},
      {"ii", 1, {2}, {{4, 4}}},
      {"iij,j->ij", 2, {3, 1}, {{3, 3, 2}, {2}}},
      {"...ij,...jk->...ik", 2, {3, 2}, {{2, 3, 4}, {4, 2}}},
      {"bij,bjk->bik", 2, {3, 3}, {{1, 2, 3}, {3, 3, 2}}}, /* size-1 batch broadcast */
      {"ij,jk,kl->il", 3, {2, 2, 2}, {{2, 3}, {3, 4}, {4, 2}}},
      {"i,i->", 2, {1, 1}, {{5}, {5}}},
      {"ijk->", 1, {3}, {{2, 3, 2}}},
      {"ij,k->ijk", 2, {2, 1}, {{2, 3}, {2}}},
      {"ij->j", 1, {2}, {{3, 4}}},
      {"ijk,ik->j", 2, {3, 2}, {{2, 3, 2}, {2, 2}}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    lt_tensor *in[3];
    lt_test_layout lay = (lt_test_layout)(c % LT_LAYOUT_BROADCAST);
    for (int k = 0; k < cases[c].n; k++)
      in[k] = rnd(ctx, cases[c].rank[k], cases[c].shape[k], lay, -1, 1);
    g_expr = cases[c].expr;
    g_n = cases[c].n;
    char name[64];
    snprintf(name, sizeof name, "einsum %s (%s)", g_expr, lt_test_layout_name(lay));
    gradcheck(ctx, name, f_einsum, g_n, in);
    for (int k = 0; k < cases[c].n; k++)
      lt_tensor_destroy(in[k]);
  }
}
static void test_einsum(void **state) {
  (void)state;
  lt_test_on_each_device(test_einsum_on);
}

/* Integer labels (the contraction-plan form): D[m,n] = sum_k A[k,m] B[n,k,m] (batch m). */
static lt_status f_modes(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  static const int32_t ma[2] = {7, 3}, mb[3] = {11, 7, 3}, md[2] = {3, 11};
  const int32_t *modes[2] = {ma, mb};
  return lt_ad_einsum_modes(t, 2, (const lt_tensor *const *)in, modes, 2, md, o);
}

static void test_einsum_modes_on(lt_context *ctx) {
  static const int64_t sa[2] = {4, 3}, sb[3] = {2, 4, 3};
  lt_tensor *in[2] = {rnd(ctx, 2, sa, LT_LAYOUT_NEGATIVE, -1, 1),
                      rnd(ctx, 3, sb, LT_LAYOUT_TRANSPOSED, -1, 1)};
  gradcheck(ctx, "einsum modes", f_modes, 2, in);
  lt_tensor_destroy(in[0]);
  lt_tensor_destroy(in[1]);
  /* mixed dtypes: an f32 operand gets an f32 gradient of the f64 product */
  const int64_t n = 3;
  const float a32[3] = {1.5f, -2.0f, 0.25f};
  const double b64[3] = {0.5, 3.0, -4.0};
  lt_tensor *a, *b, *y, *l, *g;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 1, &n, NULL, a32, &a));
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &n, NULL, b64, &b));
  lt_tape *tape;
  LT_CHECK(lt_tape_create(ctx, &tape));
  LT_CHECK(lt_tape_requires_grad(tape, a, true));
  LT_CHECK(lt_ad_binary(tape, LT_BINARY_MUL, a, b, &y));
  assert_int_equal(lt_tensor_dtype(y), LT_F64);
  LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, y, -1, NULL, false, &l));
  LT_CHECK(lt_tape_backward(tape, l, NULL, 0));
  LT_CHECK(lt_tape_grad(tape, a, &g));
  assert_int_equal(lt_tensor_dtype(g), LT_F32);
  double *hg = lt_test_read_all(g);
  lt_test_assert_close(hg, b64, 3, 1e-7, "mixed dtypes");
  free(hg);
  lt_tensor *all[] = {a, b, y, l, g};
  for (int i = 0; i < 5; i++)
    lt_tensor_destroy(all[i]);
  lt_tape_destroy(tape);
}
static void test_einsum_modes(void **state) {
  (void)state;
  lt_test_on_each_device(test_einsum_modes_on);
}

/* A composition of many ops (tanh(x W + b), views, reductions): the whole chain at once. */
static lt_status f_mlp(lt_tape *t, lt_tensor *const *in, lt_tensor **o) {
  lt_tensor *h, *hb, *a, *at, *s, *e;
  const lt_tensor *ein[2] = {in[0], in[1]};
  TRY(lt_ad_einsum(t, "bi,ih->bh", 2, ein, &h));
  TRY(lt_ad_binary(t, LT_BINARY_ADD, h, in[2], &hb));
  TRY(lt_ad_unary(t, LT_UNARY_TANH, hb, &a));
  const int p[2] = {1, 0};
  TRY(lt_ad_permute(t, a, p, &at));
  TRY(lt_ad_unary(t, LT_UNARY_EXP, at, &e));
  const int ax = 1;
  TRY(lt_ad_reduce(t, LT_REDUCE_SUM, e, 1, &ax, true, &s));
  lt_status st = lt_ad_unary(t, LT_UNARY_LOG, s, o);
  lt_tensor *all[] = {h, hb, a, at, s, e};
  for (int i = 0; i < 6; i++)
    lt_tensor_destroy(all[i]);
  return st;
}

static void test_composition_on(lt_context *ctx) {
  static const int64_t sx[2] = {4, 3}, sw[2] = {3, 5}, sb[1] = {5};
  lt_tensor *in[3] = {rnd(ctx, 2, sx, LT_LAYOUT_TRANSPOSED, -1, 1),
                      rnd(ctx, 2, sw, LT_LAYOUT_NEGATIVE, -1, 1),
                      rnd(ctx, 1, sb, LT_LAYOUT_STEPPED, -1, 1)};
  gradcheck(ctx, "composition", f_mlp, 3, in);
  for (int k = 0; k < 3; k++)
    lt_tensor_destroy(in[k]);
}
static void test_composition(void **state) {
  (void)state;
  lt_test_on_each_device(test_composition_on);
}

/* ---- the tape's contract ---- */

/* 20 layers: x/c, tanh, x*c, sin, ... (c: in[1], a constant the tape does not track). */
static lt_status chain_with_constant(lt_tape *tape, lt_tensor *const *in, lt_tensor **out) {
  lt_tensor *cur = NULL;
  for (int i = 0; i < 20; i++) {
    const lt_tensor *a = i ? cur : in[0];
    lt_tensor *next = NULL;
    lt_status st = i % 4 == 0 ? lt_ad_binary(tape, LT_BINARY_DIV, a, in[1], &next)
                   : i % 4 == 2
                       ? lt_ad_binary(tape, LT_BINARY_MUL, a, in[1], &next)
                       : lt_ad_unary(tape, i % 4 == 1 ? LT_UNARY_TANH : LT_UNARY_SIN, a, &next);
    lt_tensor_destroy(cur);
    if (st != LT_OK) return st;
    cur = next;
  }
  *out = cur;
  return LT_OK;
}

static void test_tape_contract_on(lt_context *ctx) {
  static const int64_t s[2] = {3, 4};
  lt_tensor *x = rnd(ctx, 2, s, LT_LAYOUT_CONTIGUOUS, 0.5, 1.5);
  lt_tape *tape;
  LT_CHECK(lt_tape_create(ctx, &tape));
  LT_CHECK(lt_tape_requires_grad(tape, x, true));
  bool tracked;
  /* no_grad: nothing recorded */
  bool prev;
  lt_tensor *y, *l, *g;
  LT_CHECK(lt_tape_set_recording(tape, false, &prev));
  assert_true(prev);
  LT_CHECK(lt_ad_unary(tape, LT_UNARY_EXP, x, &y));
  LT_CHECK(lt_tape_is_tracked(tape, y, &tracked));
  assert_false(tracked);
  LT_CHECK_FAILS(lt_tape_backward(tape, y, NULL, 0), LT_ERR_INVALID_ARGUMENT);
  lt_tensor_destroy(y);
  LT_CHECK(lt_tape_set_recording(tape, true, NULL));
  /* detach stops gradients */
  lt_tensor *d;
  LT_CHECK(lt_tape_detach(tape, x, &d));
  LT_CHECK(lt_tape_is_tracked(tape, d, &tracked));
  assert_false(tracked);
  lt_tensor_destroy(d);
  /* retain_graph: two backwards add up; a third without the graph fails */
  LT_CHECK(lt_ad_unary(tape, LT_UNARY_SQUARE, x, &y));
  LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, y, -1, NULL, false, &l));
  LT_CHECK(lt_tape_backward(tape, l, NULL, LT_BACKWARD_RETAIN_GRAPH));
  LT_CHECK(lt_tape_backward(tape, l, NULL, 0));
  LT_CHECK_FAILS(lt_tape_backward(tape, l, NULL, 0), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK(lt_tape_grad(tape, x, &g));
  double *hx = lt_test_read_all(x), *hg = lt_test_read_all(g);
  for (int i = 0; i < 12; i++)
    hx[i] *= 4; /* 2 * (2x) */
  lt_test_assert_close(hg, hx, 12, 1e-14, "retain_graph twice");
  free(hx);
  free(hg);
  lt_tensor_destroy(g);
  LT_CHECK_FAILS(lt_tape_backward(tape, y, NULL, 0), LT_ERR_INVALID_ARGUMENT); /* not scalar */
  lt_tensor_destroy(y);
  lt_tensor_destroy(l);
  /* set_grad(NULL) drops; zero_grads drops all */
  LT_CHECK(lt_tape_set_grad(tape, x, NULL));
  LT_CHECK(lt_tape_grad(tape, x, &g));
  assert_null(g);
  LT_CHECK(lt_tape_clear(tape));
  /* in-place modification of a saved tensor is refused, and no gradient changes */
  LT_CHECK(lt_ad_unary(tape, LT_UNARY_LOG, x, &y)); /* saves x */
  LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, y, -1, NULL, false, &l));
  const int64_t i0[2] = {1, 2};
  LT_CHECK(lt_tensor_set(x, i0, 2.0));
  LT_CHECK_FAILS(lt_tape_backward(tape, l, NULL, 0), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "modified in place"));
  LT_CHECK(lt_tape_grad(tape, x, &g));
  assert_null(g);
  lt_tensor_destroy(y);
  lt_tensor_destroy(l);
  LT_CHECK(lt_tape_clear(tape));
  /* argmax's integer result is a constant, as in PyTorch: a loss of it alone is not tracked,
   * and x * argmax gives x the argmax values as its gradient */
  const int ax = 1;
  LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_ARGMAX, x, 1, &ax, false, &y));
  tracked = true;
  LT_CHECK(lt_tape_is_tracked(tape, y, &tracked));
  assert_false(tracked);
  lt_tensor *yf, *xy;
  LT_CHECK(lt_ad_contiguous(tape, y, LT_F64, &yf));
  LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, yf, -1, NULL, false, &l));
  LT_CHECK_FAILS(lt_tape_backward(tape, l, NULL, 0), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "not tracked"));
  lt_tensor_destroy(l);
  int64_t keep_shape[2] = {lt_tensor_shape(y)[0], 1};
  lt_tensor *yk;
  LT_CHECK(lt_view_reshape(yf, 2, keep_shape, &yk));
  LT_CHECK(lt_ad_binary(tape, LT_BINARY_MUL, x, yk, &xy));
  LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, xy, -1, NULL, false, &l));
  LT_CHECK(lt_tape_backward(tape, l, NULL, 0));
  LT_CHECK(lt_tape_grad(tape, x, &g));
  double *ga = lt_test_read_all(g), *hy = lt_test_read_all(y);
  for (int64_t i = 0; i < lt_tensor_numel(g); i++)
    assert_true(ga[i] == hy[i / lt_tensor_shape(x)[1]]);
  free(ga);
  free(hy);
  lt_tensor_destroy(g);
  lt_tensor_destroy(xy);
  lt_tensor_destroy(yk);
  lt_tensor_destroy(y);
  lt_tensor_destroy(yf);
  lt_tensor_destroy(l);
  LT_CHECK(lt_tape_clear(tape));
  /* memory: a chain of 20 unary ops saves one tensor per op */
  lt_tensor *cur;
  LT_CHECK(lt_tape_detach(tape, x, &cur));
  lt_tensor_destroy(cur);
  LT_CHECK(lt_ad_unary(tape, LT_UNARY_SIN, x, &cur));
  for (int i = 1; i < 20; i++) {
    lt_tensor *next;
    LT_CHECK(lt_ad_unary(tape, i % 2 ? LT_UNARY_TANH : LT_UNARY_EXP, cur, &next));
    lt_tensor_destroy(cur);
    cur = next;
  }
  int64_t count;
  size_t bytes;
  LT_CHECK(lt_tape_saved_count(tape, &count, &bytes));
  assert_int_equal(count, 20);
  assert_int_equal(bytes, 20 * 12 * sizeof(double));
  LT_CHECK(lt_tape_backward(tape, cur, cur, 0));
  LT_CHECK(lt_tape_saved_count(tape, &count, &bytes));
  assert_int_equal(count, 0);
  lt_tensor_destroy(cur);
  /* and a chain mixing unary ops with a constant divisor and factor: one saved tensor per op
   * (x/c saves c, not x too), the constant's memory counted once; its gradient checked */
  lt_tensor *c = lt_gc_rnd(ctx, 2, s, LT_LAYOUT_CONTIGUOUS, 0.8, 1.25);
  lt_tensor *xc[2] = {x, c};
  LT_CHECK(chain_with_constant(tape, xc, &cur));
  LT_CHECK(lt_tape_saved_count(tape, &count, &bytes));
  assert_int_equal(count, 20);
  assert_int_equal(bytes, (10 + 1) * 12 * sizeof(double));
  lt_tensor_destroy(cur);
  LT_CHECK(lt_tape_clear(tape));
  lt_gc_check(ctx, "chain with a constant", chain_with_constant, 1, xc);
  lt_tensor_destroy(c);
  /* bad inputs */
  LT_CHECK_FAILS(lt_tape_backward(NULL, x, NULL, 0), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_tape_backward(tape, x, NULL, 7), LT_ERR_INVALID_ARGUMENT);
  lt_tensor *xi;
  LT_CHECK(lt_tensor_zeros(ctx, LT_I64, 2, s, &xi));
  LT_CHECK_FAILS(lt_tape_requires_grad(tape, xi, true), LT_ERR_DTYPE);
  lt_tensor_destroy(xi);
  lt_tape_destroy(tape);
  lt_tape_destroy(tape); /* a second destroy is refused, not a crash */
  lt_tensor_destroy(x);
}
static void test_tape_contract(void **state) {
  (void)state;
  lt_test_on_each_device(test_tape_contract_on);
}

/* ---- optimisers against their formulas (float64 references, three steps) ---- */

/* One optimiser over a parameter of n elements of dtype, every `step`-th element of a buffer
 * (step 1: contiguous, where Adam runs as the backend's fused pass; 2 or -1: strided, where it
 * runs as maps), with loss = sum(exp(p)) so that the gradient is not proportional to p (Adam
 * is blind to a gradient scaled by a constant, such as an L2 term added to the gradient of
 * sum(p^2)). The elements between the parameter's must stay untouched. */
static void optim_case(lt_context *ctx, lt_optim_kind kind, int variant, lt_dtype dtype, int64_t n,
                       int64_t step) {
  int64_t nb = n * (step < 0 ? -step : step);
  double *p = malloc(sizeof(double) * (size_t)nb), *ref = malloc(sizeof(double) * (size_t)n);
  double *m = calloc((size_t)n, sizeof(double)), *v = calloc((size_t)n, sizeof(double));
  assert_true(p && ref && m && v);
  for (int64_t i = 0; i < nb; i++)
    p[i] = lt_test_round_to(dtype, lt_test_rand_double(-1, 1));
  lt_tensor *base, *tp;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &nb, NULL, p, &tp));
  LT_CHECK(lt_tensor_contiguous(tp, dtype, &base));
  lt_tensor_destroy(tp);
  if (step == 1)
    LT_CHECK(lt_view_reshape(base, 1, &n, &tp));
  else
    LT_CHECK(lt_view_slice(base, 0, LT_SLICE_DEFAULT, LT_SLICE_DEFAULT, step, &tp));
  double *p0 = lt_test_read_all(tp);
  memcpy(ref, p0, sizeof(double) * (size_t)n);
  free(p0);
  lt_tape *tape;
  lt_optimizer *opt;
  LT_CHECK(lt_tape_create(ctx, &tape));
  LT_CHECK(lt_tape_requires_grad(tape, tp, true));
  LT_CHECK(lt_optim_create(tape, kind, 1, &tp, &opt));
  double lr = 0.1, mom = 0.9, wd = variant ? 0.05 : 0.0;
  bool nesterov = variant == 1;
  LT_CHECK(lt_optim_set(opt, LT_OPTIM_LR, lr));
  LT_CHECK(lt_optim_set(opt, LT_OPTIM_WEIGHT_DECAY, wd));
  if (kind == LT_OPTIM_SGD) {
    LT_CHECK(lt_optim_set(opt, LT_OPTIM_MOMENTUM, mom));
    LT_CHECK(lt_optim_set(opt, LT_OPTIM_NESTEROV, nesterov));
  } else {
    LT_CHECK_FAILS(lt_optim_set(opt, LT_OPTIM_MOMENTUM, mom), LT_ERR_INVALID_ARGUMENT);
  }
  for (int t = 1; t <= 3; t++) {
    lt_tensor *c, *l;
    LT_CHECK(lt_ad_unary(tape, LT_UNARY_EXP, tp, &c));
    LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, c, -1, NULL, false, &l));
    LT_CHECK(lt_tape_backward(tape, l, NULL, 0));
    lt_tensor_destroy(c);
    lt_tensor_destroy(l);
    LT_CHECK(lt_optim_step(opt));
    LT_CHECK(lt_optim_zero_grad(opt));
    LT_CHECK(lt_tape_clear(tape));
    for (int64_t i = 0; i < n; i++) {
      double g = lt_test_round_to(dtype, exp(ref[i]));
      if (kind == LT_OPTIM_SGD) {
        double d = g + wd * ref[i];
        m[i] = t == 1 ? d : mom * m[i] + d;
        ref[i] -= lr * (nesterov ? d + mom * m[i] : m[i]);
      } else {
        if (kind == LT_OPTIM_ADAMW) ref[i] *= 1 - lr * wd;
        double d = g + (kind == LT_OPTIM_ADAM ? wd * ref[i] : 0.0);
        m[i] = 0.9 * m[i] + 0.1 * d;
        v[i] = 0.999 * v[i] + 0.001 * d * d;
        double mh = m[i] / (1 - pow(0.9, t)), vh = v[i] / (1 - pow(0.999, t));
        ref[i] -= lr * mh / (sqrt(vh) + 1e-8);
      }
    }
  }
  double *got = lt_test_read_all(tp), *all = lt_test_read_all(base);
  char what[96];
  snprintf(what, sizeof what, "optimiser %d variant %d, %s, %lld elements, step %lld", (int)kind,
           variant, lt_dtype_name(dtype), (long long)n, (long long)step);
  lt_test_assert_close(got, ref, n, dtype == LT_F64 ? 1e-12 : 1e-5, what);
  if (step == 2) /* the skipped elements */
    for (int64_t i = 1; i < nb; i += 2)
      if (all[i] != p[i])
        fail_msg("%s: element %lld between the parameter's was written", what, (long long)i);
  free(got);
  free(all);
  free(p);
  free(ref);
  free(m);
  free(v);
  lt_optim_destroy(opt);
  lt_tape_destroy(tape);
  lt_tensor_destroy(tp);
  lt_tensor_destroy(base);
}

static void test_optim_on(lt_context *ctx) {
  /* 20000 elements: several chunks of the fused pass, vector loops and their remainders */
  static const struct {
    lt_dtype dtype;
    int64_t n, step;
  } cases[] = {
      {LT_F64, 5, 1}, {LT_F64, 20000, 1}, {LT_F32, 20000, 1}, {LT_F64, 37, 2}, {LT_F32, 37, -1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int kind = LT_OPTIM_SGD; kind <= LT_OPTIM_ADAMW; kind++)
      for (int variant = 0; variant < 2; variant++)
        optim_case(ctx, (lt_optim_kind)kind, variant, cases[c].dtype, cases[c].n, cases[c].step);
  /* a step writes the parameter in place (fused or as maps): a graph that saved it for
   * backward now refuses */
  const int64_t n = 64;
  for (int lay = 0; lay < 2; lay++) {
    lt_tensor *p =
        lt_test_random_tensor(ctx, LT_F32, 1, &n, lay ? LT_LAYOUT_STEPPED : LT_LAYOUT_CONTIGUOUS);
    lt_tensor *s, *l;
    lt_tape *tape;
    lt_optimizer *opt;
    LT_CHECK(lt_tape_create(ctx, &tape));
    LT_CHECK(lt_tape_requires_grad(tape, p, true));
    LT_CHECK(lt_optim_create(tape, LT_OPTIM_ADAM, 1, &p, &opt));
    LT_CHECK(lt_tape_set_grad(tape, p, p));
    LT_CHECK(lt_ad_unary(tape, LT_UNARY_SIN, p, &s)); /* saves p */
    LT_CHECK(lt_ad_reduce(tape, LT_REDUCE_SUM, s, -1, NULL, false, &l));
    LT_CHECK(lt_optim_step(opt));
    LT_CHECK_FAILS(lt_tape_backward(tape, l, NULL, 0), LT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(lt_last_error(), "modified in place"));
    lt_tensor_destroy(s);
    lt_tensor_destroy(l);
    lt_optim_destroy(opt);
    lt_tape_destroy(tape);
    lt_tensor_destroy(p);
  }
}

static void test_optim(void **state) {
  (void)state;
  lt_test_on_each_device(test_optim_on);
}

/* Arguments that used to pass: a parameter listed twice (each step updated it twice) and a
 * grad_output from another context (a vague "an operand and another" message from deep inside
 * the sweep). */
static void test_bad_arguments(void **state) {
  (void)state;
  lt_context *ctx, *other;
  LT_CHECK(lt_context_create("cpu", &ctx));
  LT_CHECK(lt_context_create("cpu", &other));
  const int64_t shape[2] = {2, 3};
  lt_tensor *p = lt_test_random_tensor(ctx, LT_F32, 2, shape, LT_LAYOUT_CONTIGUOUS);
  lt_tensor *row = NULL, *col = NULL;
  LT_CHECK(lt_view_select(p, 0, 1, &row));
  LT_CHECK(lt_view_select(p, 1, 1, &col));
  lt_tape *tape;
  LT_CHECK(lt_tape_create(ctx, &tape));
  lt_optimizer *opt = NULL;
  lt_tensor *twice[2] = {p, p};
  LT_CHECK_FAILS(lt_optim_create(tape, LT_OPTIM_SGD, 2, twice, &opt), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "params[0] and params[1] share memory"));
  assert_null(opt);
  lt_tensor *crossing[2] = {row, col}; /* one element in common */
  LT_CHECK_FAILS(lt_optim_create(tape, LT_OPTIM_ADAM, 2, crossing, &opt), LT_ERR_INVALID_ARGUMENT);
  lt_tensor *r0 = NULL;
  LT_CHECK(lt_view_select(p, 0, 0, &r0));
  lt_tensor *disjoint[2] = {r0, row}; /* two rows of one storage: fine */
  LT_CHECK(lt_optim_create(tape, LT_OPTIM_ADAM, 2, disjoint, &opt));
  lt_optim_destroy(opt);
  /* Nesterov without momentum, or with dampening, is refused at the step (PyTorch refuses it) */
  LT_CHECK(lt_optim_create(tape, LT_OPTIM_SGD, 1, &p, &opt));
  LT_CHECK(lt_optim_set(opt, LT_OPTIM_NESTEROV, 1));
  LT_CHECK_FAILS(lt_optim_step(opt), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "Nesterov momentum needs momentum > 0"));
  LT_CHECK(lt_optim_set(opt, LT_OPTIM_MOMENTUM, 0.9));
  LT_CHECK(lt_optim_set(opt, LT_OPTIM_DAMPENING, 0.5));
  LT_CHECK_FAILS(lt_optim_step(opt), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK(lt_optim_set(opt, LT_OPTIM_DAMPENING, 0));
  LT_CHECK(lt_optim_step(opt));
  lt_optim_destroy(opt);
  /* grad_output on another context */
  LT_CHECK(lt_tape_requires_grad(tape, p, true));
  lt_tensor *y = NULL, *g = NULL;
  LT_CHECK(lt_ad_unary(tape, LT_UNARY_SIN, p, &y));
  LT_CHECK(lt_tensor_full(other, LT_F32, 2, shape, 1.0, &g));
  LT_CHECK_FAILS(lt_tape_backward(tape, y, g, 0), LT_ERR_CONTEXT_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "lt_tape_backward: grad_output and the tape"));
  lt_tensor *grad = NULL;
  LT_CHECK(lt_tape_grad(tape, p, &grad));
  assert_null(grad); /* nothing accumulated */
  /* a gradient set from another context was kept there (its copy stayed on that context) */
  LT_CHECK_FAILS(lt_tape_set_grad(tape, p, g), LT_ERR_CONTEXT_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "lt_tape_set_grad: grad and the tape"));
  LT_CHECK(lt_tape_grad(tape, p, &grad));
  assert_null(grad);
  lt_tensor_destroy(g);
  lt_tensor_destroy(y);
  lt_tape_destroy(tape);
  lt_tensor_destroy(r0);
  lt_tensor_destroy(row);
  lt_tensor_destroy(col);
  lt_tensor_destroy(p);
  lt_context_destroy(other);
  lt_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_elementwise),    cmocka_unit_test(test_reduce),
      cmocka_unit_test(test_ties_and_zeros), cmocka_unit_test(test_views),
      cmocka_unit_test(test_einsum),         cmocka_unit_test(test_einsum_modes),
      cmocka_unit_test(test_composition),    cmocka_unit_test(test_tape_contract),
      cmocka_unit_test(test_optim),          cmocka_unit_test(test_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
