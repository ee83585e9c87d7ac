/* SPDX-License-Identifier: MIT */
/* lt_clip_into and lt_where_into: written straight into an existing output (NumPy's out=),
 * checked against a naive float64 reference on every dtype family, every input layout
 * (broadcast included) into every output layout, size-0 and rank-0 shapes, in place, into an
 * output of another dtype, against the one-shot lt_clip / lt_where, and their bad input. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lt_dtype dtypes[] = {LT_F32, LT_I32, LT_F16, LT_F64, LT_BF16, LT_I64, LT_U8, LT_I16};

/* Dtypes and output layouts to run on ctx: all on the CPU; on a device (PoCL in CI builds a
 * program per dtype, seconds each) the first three dtypes into two output layouts, the kernels
 * being the same generated code for every dtype. */
static size_t n_dtypes(lt_context *ctx) {
  return strcmp(lt_context_device(ctx), "cpu") == 0 ? sizeof dtypes / sizeof *dtypes : 3;
}
static int out_layout_step(lt_context *ctx) {
  return strcmp(lt_context_device(ctx), "cpu") == 0 ? 1 : 3;
}

/* Value ranges per operand: lo below hi so that clip's three outcomes all occur. */
static void ranges(lt_dtype d, double r[3][2]) {
  bool u = d == LT_U8;
  double base = u ? 100 : 0;
  r[0][0] = base - 90, r[0][1] = base + 90; /* a */
  r[1][0] = base - 40, r[1][1] = base - 1;  /* lo */
  r[2][0] = base + 1, r[2][1] = base + 40;  /* hi */
}

/* Operand k of shape (5, 7) broadcast: a full, lo a (7,) row, hi a (5, 1) column. */
static lt_tensor *operand(lt_context *ctx, lt_dtype d, int k, lt_test_layout layout) {
  double r[3][2];
  ranges(d, r);
  int64_t full[2] = {5, 7}, row[1] = {7}, col[2] = {5, 1};
  if (k == 0) return lt_test_random_tensor_range(ctx, d, 2, full, layout, r[0][0], r[0][1]);
  if (k == 1) return lt_test_random_tensor_range(ctx, d, 1, row, layout, r[1][0], r[1][1]);
  return lt_test_random_tensor_range(ctx, d, 2, col, layout, r[2][0], r[2][1]);
}

static void check_clip(const lt_tensor *out, const double *av, const double *lov, const double *hiv,
                       const char *what) {
  double *ov = lt_test_read_all(out);
  for (int64_t i = 0; i < 35; i++) {
    double x = av[i], lo = lov[i % 7], hi = hiv[i / 7];
    double want = x < lo ? lo : x;
    want = want > hi ? hi : want;
    if (ov[i] != want)
      fail_msg("%s element %lld: clip(%g, %g, %g) gave %.17g", what, (long long)i, x, lo, hi,
               ov[i]);
  }
  free(ov);
}

static void clip_layouts(lt_context *ctx) {
  for (size_t di = 0; di < n_dtypes(ctx); di++) {
    lt_dtype d = dtypes[di];
    for (int li = 0; li < LT_LAYOUT_COUNT; li++) {
      lt_tensor *x[3];
      double *v[3];
      for (int k = 0; k < 3; k++) {
        x[k] = operand(ctx, d, k, (lt_test_layout)li);
        v[k] = lt_test_read_all(x[k]);
      }
      for (int lo = 0; lo < LT_LAYOUT_BROADCAST; lo += out_layout_step(ctx)) {
        int64_t shape[2] = {5, 7};
        lt_test_output out;
        lt_test_output_make(ctx, d, 2, shape, (lt_test_layout)lo, &out);
        LT_CHECK(lt_clip_into(x[0], x[1], x[2], out.view));
        char what[96];
        snprintf(what, sizeof what, "clip_into %s, inputs %s, out %s", lt_dtype_name(d),
                 lt_test_layout_name((lt_test_layout)li), lt_test_layout_name((lt_test_layout)lo));
        check_clip(out.view, v[0], v[1], v[2], what);
        lt_test_output_check_guard(&out);
        lt_test_output_free(&out);
      }
      for (int k = 0; k < 3; k++)
        lt_test_check_unchanged(x[k], v[k]);
      /* In place (out = a), as np.clip(a, lo, hi, out=a). */
      lt_tensor *own;
      LT_CHECK(lt_tensor_contiguous(x[0], d, &own));
      LT_CHECK(lt_clip_into(own, x[1], x[2], own));
      check_clip(own, v[0], v[1], v[2], "clip_into in place");
      lt_tensor_destroy(own);
      for (int k = 0; k < 3; k++) {
        free(v[k]);
        lt_tensor_destroy(x[k]);
      }
    }
  }
}

static void test_clip_into_layouts(void **state) {
  (void)state;
  lt_test_on_each_device(clip_layouts);
}

/* where_into on every dtype, input layout and output layout; cond broadcast as a (5, 1)
 * column, b as a rank-0 scalar. */
static void where_layouts(lt_context *ctx) {
  int64_t full[2] = {5, 7}, col[2] = {5, 1};
  for (size_t di = 0; di < n_dtypes(ctx); di++) {
    lt_dtype d = dtypes[di];
    for (int li = 0; li < LT_LAYOUT_COUNT; li++) {
      lt_tensor *cf = lt_test_random_tensor(ctx, LT_F32, 2, col, (lt_test_layout)li), *c, *zero;
      LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 0, NULL, &zero));
      LT_CHECK(lt_binary(LT_BINARY_GT, cf, zero, &c));
      lt_tensor *a = lt_test_random_tensor_range(ctx, d, 2, full, (lt_test_layout)li, 1, 90);
      lt_tensor *b = lt_test_random_tensor_range(ctx, d, 0, NULL, (lt_test_layout)li, 1, 90);
      double *cv = lt_test_read_all(c), *av = lt_test_read_all(a), *bv = lt_test_read_all(b);
      for (int lo = 0; lo < LT_LAYOUT_BROADCAST; lo += out_layout_step(ctx)) {
        lt_test_output out;
        lt_test_output_make(ctx, d, 2, full, (lt_test_layout)lo, &out);
        LT_CHECK(lt_where_into(c, a, b, out.view));
        double *ov = lt_test_read_all(out.view);
        for (int64_t i = 0; i < 35; i++) {
          double want = cv[i / 7] != 0 ? av[i] : bv[0];
          if (ov[i] != want)
            fail_msg("where_into %s, inputs %s, out %s, element %lld: %.17g, expected %.17g",
                     lt_dtype_name(d), lt_test_layout_name((lt_test_layout)li),
                     lt_test_layout_name((lt_test_layout)lo), (long long)i, ov[i], want);
        }
        free(ov);
        lt_test_output_check_guard(&out);
        lt_test_output_free(&out);
      }
      free(cv);
      free(av);
      free(bv);
      lt_tensor_destroy(a);
      lt_tensor_destroy(b);
      lt_tensor_destroy(c);
      lt_tensor_destroy(cf);
      lt_tensor_destroy(zero);
    }
  }
}

static void test_where_into_layouts(void **state) {
  (void)state;
  lt_test_on_each_device(where_layouts);
}

/* The same bits as the one-shot calls; an f32 clip into an f64 output holds the f32 result;
 * NaN propagates; size-0 and rank-0 shapes; a (5, 7) clip broadcast into a (3, 5, 7) out. */
static void shapes_and_dtypes(lt_context *ctx) {
  int64_t full[2] = {5, 7};
  lt_tensor *a = lt_test_random_tensor_range(ctx, LT_F32, 2, full, LT_LAYOUT_TRANSPOSED, -2, 2);
  lt_tensor *lo, *hi, *once, *wide, *big;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 0, NULL, -0.5, &lo));
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 0, NULL, 0.75, &hi));
  int64_t nan_at[2] = {1, 2};
  LT_CHECK(lt_tensor_set(a, nan_at, NAN));
  LT_CHECK(lt_clip(a, lo, hi, &once));
  LT_CHECK(lt_tensor_empty(ctx, LT_F64, 2, full, &wide));
  LT_CHECK(lt_clip_into(a, lo, hi, wide));
  int64_t shape3[3] = {3, 5, 7};
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 3, shape3, &big));
  LT_CHECK(lt_clip_into(a, lo, hi, big));
  double *ov = lt_test_read_all(once), *wv = lt_test_read_all(wide), *bv = lt_test_read_all(big);
  double *av = lt_test_read_all(a);
  for (int64_t i = 0; i < 35; i++) {
    double want = isnan(av[i]) ? NAN : fmin(fmax(av[i], -0.5), 0.75);
    assert_true(isnan(want) ? isnan(ov[i]) && isnan(wv[i]) : ov[i] == want && wv[i] == want);
    for (int r = 0; r < 3; r++)
      assert_true(isnan(want) ? isnan(bv[r * 35 + i]) : bv[r * 35 + i] == want);
  }
  free(ov);
  free(wv);
  free(bv);
  free(av);
  lt_tensor_destroy(once);
  lt_tensor_destroy(wide);
  lt_tensor_destroy(big);
  /* Size 0: nothing to write, no error; rank 0: one element. */
  int64_t empty[2] = {0, 7};
  lt_tensor *e, *eo, *s, *so;
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 2, empty, &e));
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 2, empty, &eo));
  LT_CHECK(lt_clip_into(e, lo, hi, eo));
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 0, NULL, 3.0, &s));
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 0, NULL, &so));
  LT_CHECK(lt_clip_into(s, lo, hi, so));
  double got;
  LT_CHECK(lt_tensor_get(so, NULL, &got));
  assert_true(got == 0.75);
  lt_tensor *cond;
  LT_CHECK(lt_tensor_full(ctx, LT_BOOL, 0, NULL, 0, &cond));
  LT_CHECK(lt_where_into(cond, s, lo, so));
  LT_CHECK(lt_tensor_get(so, NULL, &got));
  assert_true(got == -0.5);
  lt_tensor_destroy(cond);
  lt_tensor_destroy(e);
  lt_tensor_destroy(eo);
  lt_tensor_destroy(s);
  lt_tensor_destroy(so);
  lt_tensor_destroy(lo);
  lt_tensor_destroy(hi);
  lt_tensor_destroy(a);
}

static void test_shapes_and_dtypes(void **state) {
  (void)state;
  lt_test_on_each_device(shapes_and_dtypes);
}

/* Bad input: a status and a message naming the operand; the output is left as it was. */
static void errors_on(lt_context *ctx) {
  int64_t s3 = 3, s4 = 4, s6 = 6;
  lt_tensor *f, *w, *c, *i, *m, *o2, *buf, *lo_part, *hi_part;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 1, &s3, 1.5, &f));
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 1, &s4, 7.0, &w));
  LT_CHECK(lt_tensor_zeros(ctx, LT_BOOL, 1, &s3, &c));
  LT_CHECK(lt_tensor_zeros(ctx, LT_I32, 1, &s3, &i));
  int64_t s23[2] = {2, 3};
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s23, &m));
  LT_CHECK_FAILS(lt_clip_into(f, f, f, w), LT_ERR_SHAPE_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "lt_clip_into: a has extent 3"));
  LT_CHECK_FAILS(lt_clip_into(f, w, f, f), LT_ERR_SHAPE_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "lo"));
  LT_CHECK_FAILS(lt_clip_into(f, f, m, f), LT_ERR_SHAPE_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "hi has rank 2"));
  LT_CHECK_FAILS(lt_where_into(i, f, f, f), LT_ERR_DTYPE);
  assert_non_null(strstr(lt_last_error(), "cond"));
  LT_CHECK_FAILS(lt_where_into(c, f, w, f), LT_ERR_SHAPE_MISMATCH);
  assert_non_null(strstr(lt_last_error(), " b "));
  LT_CHECK_FAILS(lt_clip_into(f, f, f, NULL), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_where_into(NULL, f, f, f), LT_ERR_NULL_POINTER);
  double *wv = lt_test_read_all(w);
  assert_true(wv[0] == 7.0 && wv[3] == 7.0);
  free(wv);
  /* An output that partly overlaps an input: refused, the data untouched. */
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 1, &s6, 9.0, &buf));
  LT_CHECK(lt_view_slice(buf, 0, 0, 3, 1, &lo_part));
  LT_CHECK(lt_view_slice(buf, 0, 1, 4, 1, &hi_part));
  LT_CHECK_FAILS(lt_clip_into(hi_part, f, f, lo_part), LT_ERR_ALIASING);
  double *bv = lt_test_read_all(buf);
  for (int k = 0; k < 6; k++)
    assert_true(bv[k] == 9.0);
  free(bv);
  /* An operand on another context. */
  lt_context *other;
  LT_CHECK(lt_context_create("cpu", &other));
  LT_CHECK(lt_tensor_zeros(other, LT_F32, 1, &s3, &o2));
  LT_CHECK_FAILS(lt_clip_into(f, o2, f, f), LT_ERR_CONTEXT_MISMATCH);
  LT_CHECK_FAILS(lt_where_into(c, f, f, o2), LT_ERR_CONTEXT_MISMATCH);
  lt_tensor_destroy(o2);
  lt_context_destroy(other);
  lt_tensor_destroy(lo_part);
  lt_tensor_destroy(hi_part);
  lt_tensor_destroy(buf);
  lt_tensor_destroy(f);
  lt_tensor_destroy(w);
  lt_tensor_destroy(c);
  lt_tensor_destroy(i);
  lt_tensor_destroy(m);
}

static void test_errors(void **state) {
  (void)state;
  lt_test_on_each_device(errors_on);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_clip_into_layouts),
      cmocka_unit_test(test_where_into_layouts),
      cmocka_unit_test(test_shapes_and_dtypes),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
