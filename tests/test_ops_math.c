/* SPDX-License-Identifier: MIT */
/* Issue 20 B: the array API's elementwise functions (tan .. log10, signbit, copysign,
 * logaddexp) against the harness's float64 references, which use other formulas (atan2 for
 * asin/acos, exp for sinh/cosh, log ratios for log2/log10, long double for logaddexp), on f32
 * and f64 in every layout family, on each device; plus integer and bool operands (computed in
 * f64, signbit exact) and the special values the standard names. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const lt_unary_op un[] = {LT_UNARY_TAN,   LT_UNARY_ASIN, LT_UNARY_ACOS,  LT_UNARY_ATAN,
                                 LT_UNARY_SINH,  LT_UNARY_COSH, LT_UNARY_ASINH, LT_UNARY_ACOSH,
                                 LT_UNARY_ATANH, LT_UNARY_LOG2, LT_UNARY_LOG10, LT_UNARY_SIGNBIT};
static const lt_binary_op bin[] = {LT_BINARY_COPYSIGN, LT_BINARY_LOGADDEXP};
#define N_UN (sizeof un / sizeof un[0])
#define N_BIN (sizeof bin / sizeof bin[0])

static void check_value(const char *what, int op, lt_dtype d, lt_dtype out_dtype, double x,
                        double y, double got, double want) {
  if (out_dtype != LT_BOOL) want = lt_test_round_to(d, want);
  /* a few ulps of the compute type, relative to the value (the references use other formulas) */
  double tol = 8 * lt_test_tolerance(d, 1) * fabs(want);
  bool ok = (isnan(want) && isnan(got)) || want == got || fabs(got - want) <= tol;
  if (!ok)
    fail_msg("%s %d on %s(%g, %g): %.17g, expected %.17g", what, op, lt_dtype_name(d), x, y, got,
             want);
}

/* Random values in [-3, 3) with +-0, +-inf, NaN, +-1 and values in (-1, 1) planted, so that
 * every function sees its domain edges; b mixes signs for copysign. */
static void run_float(lt_context *ctx) {
  static const lt_dtype fd[] = {LT_F32, LT_F64};
  static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5, -0.25, 2.5};
  int64_t shape[2] = {4, 6};
  for (size_t di = 0; di < 2; di++)
    for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++) {
      lt_dtype d = fd[di];
      lt_tensor *a = lt_test_random_tensor_range(ctx, d, 2, shape, (lt_test_layout)layout, -3, 3);
      lt_tensor *b = lt_test_random_tensor_range(ctx, d, 2, shape, (lt_test_layout)layout, -3, 3);
      int64_t idx[2];
      if (layout != LT_LAYOUT_BROADCAST) /* a broadcast view has no writable distinct elements */
        for (int64_t i = 0; i < 10; i++) {
          lt_test_unravel(i * 2, 2, shape, idx);
          LT_CHECK(lt_tensor_set(a, idx, special[i]));
          lt_test_unravel(23 - i, 2, shape, idx);
          LT_CHECK(lt_tensor_set(b, idx, special[9 - i]));
        }
      double *av = lt_test_read_all(a), *bv = lt_test_read_all(b);
      for (size_t k = 0; k < N_UN; k++) {
        lt_tensor *o;
        LT_CHECK(lt_unary(un[k], a, &o));
        assert_int_equal(lt_tensor_dtype(o), un[k] == LT_UNARY_SIGNBIT ? LT_BOOL : d);
        double *ov = lt_test_read_all(o);
        for (int64_t i = 0; i < 24; i++)
          check_value("unary", un[k], d, lt_tensor_dtype(o), av[i], 0, ov[i],
                      lt_test_unary_ref(un[k], av[i]));
        free(ov);
        lt_tensor_destroy(o);
      }
      for (size_t k = 0; k < N_BIN; k++) {
        lt_tensor *o;
        LT_CHECK(lt_binary(bin[k], a, b, &o));
        assert_int_equal(lt_tensor_dtype(o), d);
        double *ov = lt_test_read_all(o);
        for (int64_t i = 0; i < 24; i++)
          check_value("binary", bin[k], d, d, av[i], bv[i], ov[i],
                      lt_test_binary_ref(bin[k], av[i], bv[i]));
        free(ov);
        lt_tensor_destroy(o);
      }
      free(av);
      free(bv);
      lt_tensor_destroy(a);
      lt_tensor_destroy(b);
    }
}
static void test_float(void **state) {
  (void)state;
  lt_test_on_each_device(run_float);
}

/* The sign bit itself: -0.0 and a negative NaN are "negative", which x < 0 cannot see. */
static void run_signbit_bits(lt_context *ctx) {
  double v[4] = {-0.0, 0.0, -NAN, NAN};
  int64_t n = 4;
  lt_tensor *a, *o;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &n, NULL, v, &a));
  LT_CHECK(lt_unary(LT_UNARY_SIGNBIT, a, &o));
  double *ov = lt_test_read_all(o);
  for (int i = 0; i < 4; i++)
    if (ov[i] != (signbit(v[i]) ? 1.0 : 0.0)) fail_msg("signbit element %d: %g", i, ov[i]);
  free(ov);
  lt_tensor_destroy(o);
  /* copysign takes the sign bit of -0.0 */
  double one = 1.0;
  lt_tensor *s;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 0, NULL, NULL, &one, &s));
  LT_CHECK(lt_binary(LT_BINARY_COPYSIGN, s, a, &o));
  ov = lt_test_read_all(o);
  for (int i = 0; i < 2; i++)
    if (ov[i] != (i == 0 ? -1.0 : 1.0)) fail_msg("copysign(1, %g): %g", v[i], ov[i]);
  free(ov);
  lt_tensor_destroy(o);
  lt_tensor_destroy(s);
  lt_tensor_destroy(a);
}
/* Float e^x and tanh x (backend/cpu/cpu_math_f32.h: evaluated in double, rounded once) against
 * glibc's double exp and tanh rounded to float: never more than 1 ulp apart, and apart at all
 * for at most 1 in 65536 inputs (none of these 2^18; dropping the series' last two terms gives
 * 46); the special values exact; the same bits on every CPU
 * instruction-set level (contexts made under LT_CPU_ISA=baseline, avx2 and the default). */
static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static int64_t ulps_apart(float a, float b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0 : INT64_MAX;
  int64_t ia = (int32_t)f32_bits(a), ib = (int32_t)f32_bits(b);
  if (ia < 0) ia = INT32_MIN - ia; /* order the negative floats below the positive ones */
  if (ib < 0) ib = INT32_MIN - ib;
  return ia > ib ? ia - ib : ib - ia;
}

static float *unary_on_isa(const char *isa, lt_unary_op op, const float *x, int64_t n) {
  lt_context *ctx = lt_test_cpu_context_with("LT_CPU_ISA", isa);
  lt_tensor *a, *d;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 1, &n, NULL, x, &a));
  LT_CHECK(lt_unary(op, a, &d));
  float *got = malloc(sizeof(float) * (size_t)n);
  LT_CHECK(lt_tensor_to_host(d, got, sizeof(float) * (size_t)n));
  lt_tensor_destroy(d);
  lt_tensor_destroy(a);
  lt_context_destroy(ctx);
  return got;
}

static void test_exp_tanh_f32_ulps(void **state) {
  (void)state;
  int64_t n = lt_test_instrumented() ? 1 << 14 : 1 << 18;
  float *x = malloc(sizeof(float) * (size_t)n);
  static const float special[] = {0.0f,        -0.0f,       INFINITY,     -INFINITY,    NAN,
                                  88.7228317f, 88.7228394f, -87.3365479f, -103.972076f, -104.0f,
                                  1e-30f,      -1e-10f,     0.0625f,      0.06249999f,  20.0f,
                                  -20.0f,      1e-45f};
  int n_special = (int)(sizeof special / sizeof special[0]);
  for (int64_t i = 0; i < n; i++)
    x[i] = i < n_special ? special[i]
           : i % 3 == 0  ? (float)lt_test_rand_double(-110, 100)
           : i % 3 == 1  ? (float)lt_test_rand_double(-4, 4)
                         : (float)ldexp(lt_test_rand_double(-1, 1), -(int)(i % 40));
  const lt_unary_op ops[2] = {LT_UNARY_EXP, LT_UNARY_TANH};
  for (int o = 0; o < 2; o++) {
    float *got = unary_on_isa(NULL, ops[o], x, n);
    static const char *const isas[2] = {"baseline", "avx2"};
    for (int v = 0; v < 2; v++) {
      float *other = unary_on_isa(isas[v], ops[o], x, n);
      for (int64_t i = 0; i < n; i++)
        if (f32_bits(other[i]) != f32_bits(got[i]))
          fail_msg("%s(%a): %a under LT_CPU_ISA=%s, %a by default", o ? "tanh" : "exp",
                   (double)x[i], (double)other[i], isas[v], (double)got[i]);
      free(other);
    }
    int64_t off = 0;
    for (int64_t i = 0; i < n; i++) {
      float want = (float)(o ? tanh((double)x[i]) : exp((double)x[i]));
      int64_t u = ulps_apart(got[i], want);
      if (u > 1 || (i < n_special && u != 0 && !(isinf(want) || want == 0)) ||
          (want == 0 && signbit(want) != signbit(got[i])))
        fail_msg("%s(%a) = %a, want %a (%lld ulps)", o ? "tanh" : "exp", (double)x[i],
                 (double)got[i], (double)want, (long long)u);
      off += u != 0;
    }
    if (off * 65536 > n)
      fail_msg("%s: %lld of %lld results 1 ulp off", o ? "tanh" : "exp", (long long)off,
               (long long)n);
    free(got);
  }
  free(x);
}

static void test_signbit_bits(void **state) {
  (void)state;
  lt_test_on_each_device(run_signbit_bits);
}

/* Integer operands: float functions give NumPy's float for the width (i8/u8: f16, i32: f64)
 * computed from the exact values; signbit is x < 0. */
static void run_ints(lt_context *ctx) {
  static const lt_dtype id[] = {LT_I8, LT_I32, LT_I64, LT_U8, LT_U64};
  int64_t vals[6] = {-3, -1, 0, 1, 2, 100};
  int64_t n = 6;
  for (size_t di = 0; di < sizeof id / sizeof id[0]; di++) {
    lt_tensor *a64, *a;
    LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, &n, NULL, vals, &a64));
    LT_CHECK(lt_tensor_contiguous(a64, id[di], &a)); /* unsigned: wraps like a C cast */
    double *av = lt_test_read_all(a);
    for (size_t k = 0; k < N_UN; k++) {
      lt_tensor *o;
      LT_CHECK(lt_unary(un[k], a, &o));
      double *ov = lt_test_read_all(o);
      lt_dtype od = lt_tensor_dtype(o);
      assert_true(un[k] == LT_UNARY_SIGNBIT ? od == LT_BOOL : lt_dtype_is_float(od));
      for (int64_t i = 0; i < n; i++)
        check_value("int unary", un[k], od == LT_BOOL ? LT_F64 : od, od, av[i], 0, ov[i],
                    lt_test_unary_ref(un[k], av[i]));
      free(ov);
      lt_tensor_destroy(o);
    }
    lt_tensor *o;
    LT_CHECK(lt_binary(LT_BINARY_LOGADDEXP, a, a, &o));
    double *ov = lt_test_read_all(o);
    for (int64_t i = 0; i < n; i++)
      check_value("int logaddexp", LT_BINARY_LOGADDEXP, lt_tensor_dtype(o), lt_tensor_dtype(o),
                  av[i], av[i], ov[i], lt_test_binary_ref(LT_BINARY_LOGADDEXP, av[i], av[i]));
    free(ov);
    lt_tensor_destroy(o);
    free(av);
    lt_tensor_destroy(a);
    lt_tensor_destroy(a64);
  }
}
static void test_ints(void **state) {
  (void)state;
  lt_test_on_each_device(run_ints);
}

/* The new codes pass the plan options' check, one past the last is refused with a message, and
 * autograd says it has no rule rather than computing a wrong gradient. */
static void test_codes(void **state) {
  (void)state;
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK(lt_plan_options_set_unary(opts, 0, LT_UNARY_SIGNBIT));
  LT_CHECK_FAILS(lt_plan_options_set_unary(opts, 0, (lt_unary_op)(LT_UNARY_SIGNBIT + 1)),
                 LT_ERR_INVALID_ARGUMENT);
  lt_plan_options_destroy(opts);
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  double v = 0.5;
  lt_tensor *a, *o = NULL;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 0, NULL, NULL, &v, &a));
  LT_CHECK_FAILS(lt_binary((lt_binary_op)(LT_BINARY_LOGADDEXP + 1), a, a, &o),
                 LT_ERR_INVALID_ARGUMENT);
  assert_null(o);
  lt_tensor_destroy(a);
  lt_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float),
      cmocka_unit_test(test_signbit_bits),
      cmocka_unit_test(test_exp_tanh_f32_ulps),
      cmocka_unit_test(test_ints),
      cmocka_unit_test(test_codes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
