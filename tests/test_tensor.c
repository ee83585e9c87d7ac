/* SPDX-License-Identifier: MIT */
/* Tensors: creation, wrapping, dtypes and their conversions, elements, properties, copies with
 * broadcasting/conversion/overlap, transfers, size checks, NULL handles and error reporting.
 * References are computed here independently: element addresses from shape/strides over the
 * raw host memory, and f16/bf16 rounding from exact double arithmetic. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "harness.h"

#include <unistd.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 8

/* ---- independent dtype references ---- */

static double ref_f16_value(uint16_t b) {
  int e = (b >> 10) & 31, m = b & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (b & 0x8000) ? -v : v;
}

/* Nearest f16 to x, ties to the even pattern, overflow to infinity (IEEE 754). */
static uint16_t ref_to_f16(double x) {
  if (isnan(x)) return 0x7e00;
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  if (a >= 65520.0) return sign | 0x7c00; /* 65504 + half an ulp (16) rounds to even = inf */
  uint16_t lo = 0, hi = 0x7c00;           /* value(lo) <= a < value(hi), value(0x7c00) = 2^16 */
  while (hi - lo > 1) {
    uint16_t mid = (uint16_t)((lo + hi) / 2);
    if (ref_f16_value(mid) <= a)
      lo = mid;
    else
      hi = mid;
  }
  double vlo = ref_f16_value(lo), vhi = hi == 0x7c00 ? 65536.0 : ref_f16_value(hi);
  double dlo = a - vlo, dhi = vhi - a;
  uint16_t r = dlo < dhi ? lo : dhi < dlo ? hi : (lo & 1) ? hi : lo;
  return sign | r;
}

static float bits_to_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t float_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Nearest bf16 to a float, ties to even, overflow to infinity. */
static uint16_t ref_to_bf16(float x) {
  if (isnan(x)) return (uint16_t)((float_to_bits(x) >> 16) | 0x40);
  uint32_t u = float_to_bits(x);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint16_t t = (uint16_t)((u >> 16) & 0x7fff);
  if (t >= 0x7f80) return sign | t; /* infinity */
  double a = fabs((double)x);
  double vlo = bits_to_float((uint32_t)t << 16);
  double vhi = t + 1 == 0x7f80 ? ldexp(1.0, 128) : bits_to_float((uint32_t)(t + 1) << 16);
  double dlo = a - vlo, dhi = vhi - a;
  uint16_t r = dlo < dhi ? t : dhi < dlo ? (uint16_t)(t + 1) : (t & 1) ? (uint16_t)(t + 1) : t;
  return sign | r;
}

/* Nearest bf16 to a double, ties to even: between the largest bf16 at most |x| (the bf16
 * truncation of the largest float at most |x|) and the next one up; the differences are exact
 * (Sterbenz). */
static uint16_t ref_double_to_bf16(double x) {
  if (isnan(x)) return 0x7fc0;
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  if (a >= ldexp(1.0, 128)) return sign | 0x7f80;
  float f = (float)a;
  if ((double)f > a) f = nextafterf(f, 0.0f);
  uint16_t t = (uint16_t)(float_to_bits(f) >> 16);
  double vlo = bits_to_float((uint32_t)t << 16);
  double vhi = t + 1 == 0x7f80 ? ldexp(1.0, 128) : bits_to_float((uint32_t)(t + 1) << 16);
  double dlo = a - vlo, dhi = vhi - a;
  uint16_t r = dlo < dhi ? t : dhi < dlo ? (uint16_t)(t + 1) : (t & 1) ? (uint16_t)(t + 1) : t;
  return sign | r;
}

/* The value v becomes when stored as dtype: f16/bf16 rounded once from the double. */
static double stored_value(lt_dtype dtype, double v) {
  switch (dtype) {
  case LT_F16: return ref_f16_value(ref_to_f16(v));
  case LT_BF16: return bits_to_float((uint32_t)ref_double_to_bf16(v) << 16);
  case LT_F32: return (float)v;
  case LT_I64: return isnan(v) ? 0.0 : trunc(v);
  default: return v;
  }
}

/* Element idx of t from its raw memory and strides (host tensors), else through get. */
static double ref_element(const lt_tensor *t, const int64_t *idx) {
  void *p = NULL;
  if (lt_tensor_host_pointer(t, &p) != LT_OK) {
    lt_clear_error();
    double v;
    LT_CHECK(lt_tensor_get(t, idx, &v));
    return v;
  }
  int64_t off = 0;
  for (int d = 0; d < lt_tensor_rank(t); d++)
    off += idx[d] * lt_tensor_strides(t)[d];
  const char *e = (const char *)p + off * (int64_t)lt_dtype_size(lt_tensor_dtype(t));
  uint16_t h;
  float f;
  double x;
  int64_t i;
  switch (lt_tensor_dtype(t)) {
  case LT_F16: memcpy(&h, e, 2); return ref_f16_value(h);
  case LT_BF16: memcpy(&h, e, 2); return bits_to_float((uint32_t)h << 16);
  case LT_F32: memcpy(&f, e, 4); return f;
  case LT_I64: memcpy(&i, e, 8); return (double)i;
  default: memcpy(&x, e, 8); return x;
  }
}

/* All elements of t in C order via ref_element. */
static double *ref_all(const lt_tensor *t) {
  int64_t n = lt_tensor_numel(t), idx[LT_MAX_RANK];
  double *v = malloc(sizeof(double) * (size_t)(n + 1));
  for (int64_t k = 0; k < n; k++) {
    lt_test_unravel(k, lt_tensor_rank(t), lt_tensor_shape(t), idx);
    v[k] = ref_element(t, idx);
  }
  return v;
}

static const lt_dtype all_dtypes[] = {LT_F16, LT_BF16, LT_F32, LT_F64, LT_I64};
#define N_DTYPES 5

/* ---- f16 / bf16 conversions ---- */

static void test_f16_exhaustive(void **state) {
  for (uint32_t b = 0; b < 65536; b++) {
    float f = lt_f16_to_f32((uint16_t)b);
    double want = ref_f16_value((uint16_t)b);
    if (isnan(want)) {
      assert_true(isnan(f));
      assert_int_equal(!!signbit(f), b >> 15);
      /* quiet, payload kept: IEEE 754's conversion, and F16C's vcvtph2ps on the vector paths */
      assert_int_equal(float_to_bits(f), (b & 0x8000u) << 16 | 0x7fc00000u | (b & 0x3ffu) << 13);
      uint16_t back = lt_f32_to_f16(f);
      assert_true((back & 0x7c00) == 0x7c00 && (back & 0x3ff) != 0); /* still NaN */
      assert_int_equal(back >> 15, b >> 15);
      continue;
    }
    if ((double)f != want || !!signbit(f) != !!signbit(want))
      fail_msg("f16 0x%04x decodes to %.9g, expected %.9g", b, f, want);
    if (lt_f32_to_f16(f) != b) fail_msg("f16 0x%04x does not round trip", b);
  }
  /* Midpoints between neighbours round to the even pattern; a hair off decides by distance. */
  for (uint32_t h = 0; h < 0x7bff; h++) {
    float mid = (float)((ref_f16_value((uint16_t)h) + ref_f16_value((uint16_t)(h + 1))) / 2);
    float probes[3] = {mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY)};
    for (int k = 0; k < 3; k++)
      for (int s = 0; s < 2; s++) {
        float x = s ? -probes[k] : probes[k];
        if (lt_f32_to_f16(x) != ref_to_f16(x))
          fail_msg("f32 %.9g -> f16 0x%04x, expected 0x%04x", x, lt_f32_to_f16(x), ref_to_f16(x));
      }
    assert_int_equal(lt_f32_to_f16(mid) & 1, 0);
  }
  /* Overflow, underflow and random patterns over the whole float range. */
  assert_int_equal(lt_f32_to_f16(65519.0f), 0x7bff);
  assert_int_equal(lt_f32_to_f16(65520.0f), 0x7c00);
  assert_int_equal(lt_f32_to_f16(-1e30f), 0xfc00);
  assert_int_equal(lt_f32_to_f16(INFINITY), 0x7c00);
  assert_int_equal(lt_f32_to_f16(ldexpf(1.0f, -25)), 0x0000); /* tie between 0 and 2^-24 */
  assert_int_equal(lt_f32_to_f16(ldexpf(1.5f, -25)), 0x0001);
  assert_int_equal(lt_f32_to_f16(-0.0f), 0x8000);
  lt_test_rng_reset(lt_test_seed());
  for (int i = 0; i < 1 << 20; i++) {
    float x = bits_to_float((uint32_t)lt_test_rand_u64());
    uint16_t got = lt_f32_to_f16(x), want = ref_to_f16(x);
    if (isnan(x))
      assert_true((got & 0x7c00) == 0x7c00 && (got & 0x3ff));
    else if (got != want)
      fail_msg("f32 %.9g -> f16 0x%04x, expected 0x%04x", x, got, want);
  }
}

static void test_bf16_rounding(void **state) {
  for (uint32_t b = 0; b < 65536; b++) {
    float f = lt_bf16_to_f32((uint16_t)b);
    assert_int_equal(float_to_bits(f), b << 16);
    if (isnan(f)) {
      uint16_t back = lt_f32_to_bf16(f);
      assert_true((back & 0x7f80) == 0x7f80 && (back & 0x7f)); /* NaN kept, sign kept */
      assert_int_equal(back >> 15, b >> 15);
      continue;
    }
    assert_int_equal(lt_f32_to_bf16(f), b);
    /* Midpoint to the next pattern (and a hair around it). */
    if ((b & 0x7fff) >= 0x7f80) continue;
    uint32_t mid = (b << 16) | 0x8000u;
    uint32_t probes[3] = {mid, mid - 1, mid + 1};
    for (int k = 0; k < 3; k++) {
      float x = bits_to_float(probes[k]);
      if (lt_f32_to_bf16(x) != ref_to_bf16(x))
        fail_msg("f32 %.9g -> bf16 0x%04x, expected 0x%04x", x, lt_f32_to_bf16(x), ref_to_bf16(x));
    }
  }
  assert_int_equal(lt_f32_to_bf16(bits_to_float(0x7f7f8000u)), 0x7f80); /* rounds to inf */
  assert_int_equal(lt_f32_to_bf16(-INFINITY), 0xff80);
  lt_test_rng_reset(lt_test_seed() + 1);
  for (int i = 0; i < 1 << 20; i++) {
    float x = bits_to_float((uint32_t)lt_test_rand_u64());
    if (isnan(x)) continue;
    if (lt_f32_to_bf16(x) != ref_to_bf16(x))
      fail_msg("f32 %.9g -> bf16 0x%04x, expected 0x%04x", x, lt_f32_to_bf16(x), ref_to_bf16(x));
  }
}

static void test_dtype_names(void **state) {
  static const size_t sizes[] = {2, 2, 4, 8, 8};
  static const char *names[] = {"f16", "bf16", "f32", "f64", "i64"};
  static const char *long_names[] = {"float16", "bfloat16", "float32", "float64", "int64"};
  for (int i = 0; i < N_DTYPES; i++) {
    assert_int_equal(lt_dtype_size(all_dtypes[i]), sizes[i]);
    assert_string_equal(lt_dtype_name(all_dtypes[i]), names[i]);
    lt_dtype d = LT_DTYPE_INVALID;
    LT_CHECK(lt_dtype_from_name(names[i], &d));
    assert_int_equal(d, all_dtypes[i]);
    LT_CHECK(lt_dtype_from_name(long_names[i], &d));
    assert_int_equal(d, all_dtypes[i]);
  }
  assert_int_equal(lt_dtype_size(LT_DTYPE_INVALID), 0);
  assert_int_equal(lt_dtype_size((lt_dtype)99), 0);
  assert_null(lt_dtype_name((lt_dtype)99));
  lt_dtype d = LT_F32;
  LT_CHECK_FAILS(lt_dtype_from_name("f128", &d), LT_ERR_DTYPE);
  assert_non_null(strstr(lt_last_error(), "f128"));
  LT_CHECK_FAILS(lt_dtype_from_name(NULL, &d), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_dtype_from_name("f32", NULL), LT_ERR_NULL_POINTER);
}

/* ---- creation ---- */

static void check_c_layout(const lt_tensor *t, lt_dtype dtype, int rank, const int64_t *shape) {
  assert_int_equal(lt_tensor_dtype(t), dtype);
  assert_int_equal(lt_tensor_rank(t), rank);
  assert_int_equal(lt_tensor_offset(t), 0);
  int64_t stride = 1, n = 1;
  for (int d = rank - 1; d >= 0; d--) {
    assert_int_equal(lt_tensor_shape(t)[d], shape[d]);
    assert_int_equal(lt_tensor_strides(t)[d], stride);
    stride *= shape[d] ? shape[d] : 1;
    n *= shape[d];
  }
  assert_int_equal(lt_tensor_numel(t), n);
  assert_int_equal(lt_tensor_nbytes(t), (size_t)n * lt_dtype_size(dtype));
  assert_true(lt_tensor_is_contiguous(t));
}

static void test_create(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  static const int64_t shapes[][3] = {{0}, {5}, {3, 4}, {2, 3, 4}, {2, 0, 3}};
  static const int ranks[] = {0, 1, 2, 3, 3};
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int di = 0; di < N_DTYPES; di++)
      for (int s = 0; s < 5; s++) {
        lt_dtype dtype = all_dtypes[di];
        lt_tensor *e = NULL, *z = NULL, *f = NULL;
        LT_CHECK(lt_tensor_empty(ctx, dtype, ranks[s], shapes[s], &e));
        LT_CHECK(lt_tensor_zeros(ctx, dtype, ranks[s], shapes[s], &z));
        LT_CHECK(lt_tensor_full(ctx, dtype, ranks[s], shapes[s], -7.3, &f));
        check_c_layout(e, dtype, ranks[s], shapes[s]);
        check_c_layout(z, dtype, ranks[s], shapes[s]);
        check_c_layout(f, dtype, ranks[s], shapes[s]);
        assert_ptr_equal(lt_tensor_context(f), ctx);
        double *zv = ref_all(z), *fv = ref_all(f);
        for (int64_t k = 0; k < lt_tensor_numel(z); k++) {
          assert_true(zv[k] == 0.0);
          assert_true(fv[k] == stored_value(dtype, -7.3));
        }
        free(zv);
        free(fv);
        lt_tensor_destroy(e);
        lt_tensor_destroy(z);
        lt_tensor_destroy(f);
      }
    lt_context_destroy(ctx);
  }
}

typedef struct release_log {
  int calls;
  void *data;
} release_log;

static void log_release(void *data, void *user) {
  release_log *log = user;
  log->calls++;
  log->data = data;
}

/* from_host with C order, transposed, stepped and negative source strides. */
static void test_from_host(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 2);
  double buf[8 * 10];
  for (int i = 0; i < 80; i++)
    buf[i] = lt_test_rand_double(-50, 50);
  int64_t shape[2] = {3, 4};
  struct {
    int64_t strides[2];
    int64_t origin; /* index into buf of element [0,0] */
  } cases[] = {{{4, 1}, 0}, {{1, 3}, 0}, {{20, 3}, 5}, {{-10, -2}, 79}, {{0, 1}, 7}};
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int di = 0; di < N_DTYPES; di++) {
      lt_dtype dtype = all_dtypes[di];
      size_t es = lt_dtype_size(dtype);
      unsigned char raw[80 * 8];
      for (int i = 0; i < 80; i++) {
        double v = stored_value(dtype, buf[i]);
        uint16_t h;
        float f;
        int64_t iv;
        switch (dtype) {
        case LT_F16:
          h = ref_to_f16(v);
          memcpy(raw + i * 2, &h, 2);
          break;
        case LT_BF16:
          h = ref_to_bf16((float)v);
          memcpy(raw + i * 2, &h, 2);
          break;
        case LT_F32:
          f = (float)v;
          memcpy(raw + i * 4, &f, 4);
          break;
        case LT_I64:
          iv = (int64_t)v;
          memcpy(raw + i * 8, &iv, 8);
          break;
        default: memcpy(raw + i * 8, &v, 8); break;
        }
      }
      for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        lt_tensor *t = NULL;
        const int64_t *st = c == 0 ? NULL : cases[c].strides;
        LT_CHECK(lt_tensor_from_host(ctx, dtype, 2, shape, st, raw + cases[c].origin * es, &t));
        check_c_layout(t, dtype, 2, shape);
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 4; j++) {
            int64_t idx[2] = {i, j};
            double want = stored_value(
                dtype, buf[cases[c].origin + i * cases[c].strides[0] + j * cases[c].strides[1]]);
            assert_true(ref_element(t, idx) == want);
          }
        lt_tensor_destroy(t);
      }
    }
    /* Rank 0 and size 0. */
    lt_tensor *t = NULL;
    double one = 2.5;
    LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 0, NULL, NULL, &one, &t));
    double v;
    LT_CHECK(lt_tensor_get(t, NULL, &v));
    assert_true(v == 2.5);
    lt_tensor_destroy(t);
    int64_t zero[2] = {3, 0};
    LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 2, zero, NULL, NULL, &t));
    assert_int_equal(lt_tensor_numel(t), 0);
    lt_tensor_destroy(t);
    t = (lt_tensor *)&t;
    LT_CHECK_FAILS(lt_tensor_from_host(ctx, LT_F32, 2, shape, NULL, NULL, &t), LT_ERR_NULL_POINTER);
    assert_null(t);
    int64_t wild[2] = {INT64_MAX / 2, 1};
    LT_CHECK_FAILS(lt_tensor_from_host(ctx, LT_F32, 2, shape, wild, buf, &t), LT_ERR_OVERFLOW);
    assert_non_null(strstr(lt_last_error(), "lt_tensor_from_host"));
    assert_null(t);
    /* Wrapping host memory is for host contexts only. */
    if (strcmp(lt_context_device(ctx), "cpu") != 0) {
      release_log log = {0, NULL};
      LT_CHECK_FAILS(lt_tensor_wrap_host(ctx, LT_F64, 2, shape, NULL, buf, log_release, &log, &t),
                     LT_ERR_UNSUPPORTED);
      assert_int_equal(log.calls, 0);
      LT_CHECK(lt_tensor_full(ctx, LT_F64, 2, shape, 1.0, &t));
      void *p = NULL;
      LT_CHECK_FAILS(lt_tensor_host_pointer(t, &p), LT_ERR_UNSUPPORTED);
      lt_tensor_destroy(t);
    }
    lt_context_destroy(ctx);
  }
}

static void test_wrap_host(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  double buf[24];
  for (int i = 0; i < 24; i++)
    buf[i] = i * 1.25 - 3;
  /* A [3,2] view with negative row stride and stepped columns, element [0,0] at buf[13]. */
  int64_t shape[2] = {3, 2}, strides[2] = {-6, 2};
  release_log log = {0, NULL};
  lt_tensor *t = NULL, *v = NULL, *c = NULL;
  LT_CHECK(lt_tensor_wrap_host(ctx, LT_F64, 2, shape, strides, buf + 13, log_release, &log, &t));
  assert_int_equal(lt_tensor_strides(t)[0], -6);
  assert_int_equal(lt_tensor_strides(t)[1], 2);
  assert_false(lt_tensor_is_contiguous(t));
  void *p;
  LT_CHECK(lt_tensor_host_pointer(t, &p));
  assert_ptr_equal(p, buf + 13);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) {
      int64_t idx[2] = {i, j};
      double got;
      LT_CHECK(lt_tensor_get(t, idx, &got));
      assert_true(got == buf[13 - 6 * i + 2 * j]);
    }
  /* Zero-copy both ways. */
  int64_t idx[2] = {2, 1};
  LT_CHECK(lt_tensor_set(t, idx, 99.5));
  assert_true(buf[13 - 12 + 2] == 99.5);
  buf[13] = -42.0;
  int64_t origin[2] = {0, 0};
  double got;
  LT_CHECK(lt_tensor_get(t, origin, &got));
  assert_true(got == -42.0);
  /* The storage spans exactly the reachable elements: as_strided cannot reach past them. */
  lt_tensor *bad = (lt_tensor *)&bad;
  int64_t one = 1, unit = 1;
  LT_CHECK_FAILS(lt_view_as_strided(t, 1, &one, &unit, 16, &bad), LT_ERR_OUT_OF_RANGE);
  assert_null(bad);
  /* Release after the last view dies, exactly once, with the wrapped pointer. */
  LT_CHECK(lt_view_transpose(t, 0, 1, &v));
  LT_CHECK(lt_tensor_contiguous(t, LT_F32, &c));
  assert_true(lt_tensor_shares_storage(t, v));
  assert_false(lt_tensor_shares_storage(t, c));
  lt_tensor_destroy(t);
  assert_int_equal(log.calls, 0);
  lt_tensor_destroy(c);
  assert_int_equal(log.calls, 0);
  lt_context_destroy(ctx); /* the view keeps the context alive too */
  assert_int_equal(log.calls, 0);
  lt_tensor_destroy(v);
  assert_int_equal(log.calls, 1);
  assert_ptr_equal(log.data, buf + 13);

  /* Failures never call release and leave *out NULL. */
  LT_CHECK(lt_context_create("cpu", &ctx));
  log.calls = 0;
  int64_t huge[2] = {INT64_C(1) << 40, INT64_C(1) << 40}, hs[2] = {1, 1};
  t = (lt_tensor *)&t;
  LT_CHECK_FAILS(lt_tensor_wrap_host(ctx, LT_F64, 2, huge, hs, buf, log_release, &log, &t),
                 LT_ERR_OVERFLOW);
  assert_null(t);
  int64_t big_stride[2] = {INT64_C(1) << 62, 1}, small[2] = {3, 2};
  LT_CHECK_FAILS(lt_tensor_wrap_host(ctx, LT_F64, 2, small, big_stride, buf, log_release, &log, &t),
                 LT_ERR_OVERFLOW);
  LT_CHECK_FAILS(lt_tensor_wrap_host(ctx, (lt_dtype)42, 2, small, NULL, buf, log_release, &log, &t),
                 LT_ERR_DTYPE);
  LT_CHECK_FAILS(lt_tensor_wrap_host(ctx, LT_F64, 2, small, NULL, NULL, log_release, &log, &t),
                 LT_ERR_NULL_POINTER);
  int64_t neg[2] = {3, -2};
  LT_CHECK_FAILS(lt_tensor_wrap_host(ctx, LT_F64, 2, neg, NULL, buf, log_release, &log, &t),
                 LT_ERR_INVALID_ARGUMENT);
  /* A misaligned address: refused (element loads there are undefined behaviour), with a
   * pointer to the copying alternative, which accepts it and whose byte span is checked. */
  LT_CHECK_FAILS(
      lt_tensor_wrap_host(ctx, LT_F64, 2, small, NULL, (char *)buf + 1, log_release, &log, &t),
      LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "not aligned to 8 bytes"));
  assert_null(t);
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 2, small, NULL, (char *)buf + 1, &t));
  lt_tensor_destroy(t);
  int64_t max_stride[2] = {INT64_MAX / 4, 1};
  LT_CHECK_FAILS(lt_tensor_from_host(ctx, LT_F64, 2, small, max_stride, buf, &t), LT_ERR_OVERFLOW);
  assert_null(t);
  assert_int_equal(log.calls, 0);
  /* Allocation failures inside wrap_host: OOM, no release, nothing leaked. */
  for (int budget = 0; budget < 8; budget++) {
    lt_test_alloc a = {-1, 0, 0};
    lt_context *actx;
    LT_CHECK(lt_context_create_with_allocator("cpu", lt_test_alloc_fn, lt_test_free_fn, &a, &actx));
    a.budget = budget;
    lt_status st = lt_tensor_wrap_host(actx, LT_F64, 2, small, NULL, buf, log_release, &log, &t);
    if (st == LT_OK) {
      assert_int_equal(log.calls, 0);
      lt_tensor_destroy(t);
      assert_int_equal(log.calls, 1);
      log.calls = 0;
    } else {
      assert_int_equal(st, LT_ERR_OUT_OF_MEMORY);
      assert_null(t);
      assert_int_equal(log.calls, 0);
    }
    lt_context_destroy(actx);
    assert_int_equal(a.live, 0);
  }
  /* A NULL release callback is fine; size 0 may wrap NULL. */
  LT_CHECK(lt_tensor_wrap_host(ctx, LT_F64, 2, small, NULL, buf, NULL, NULL, &t));
  lt_tensor_destroy(t);
  int64_t empty[2] = {0, 4};
  LT_CHECK(lt_tensor_wrap_host(ctx, LT_F64, 2, empty, NULL, NULL, log_release, &log, &t));
  lt_tensor_destroy(t);
  assert_int_equal(log.calls, 1);
  lt_context_destroy(ctx);
}

/* Every creation call under allocation failure: OOM, *out NULL, no leak. */
static void test_creation_allocation_failures(void **state) {
  int64_t shape[3] = {2, 3, 4}, strides[3] = {1, 2, 6};
  double data[24] = {1};
  for (int call = 0; call < 6; call++) {
    bool ok = false;
    for (int budget = 0; budget < 16 && !ok; budget++) {
      lt_test_alloc a = {-1, 0, 0};
      lt_context *ctx;
      LT_CHECK(
          lt_context_create_with_allocator("cpu", lt_test_alloc_fn, lt_test_free_fn, &a, &ctx));
      lt_tensor *src = NULL, *t = (lt_tensor *)&a;
      LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 3, shape, strides, data, &src));
      a.budget = budget;
      lt_status st = LT_OK;
      switch (call) {
      case 0: st = lt_tensor_empty(ctx, LT_F32, 3, shape, &t); break;
      case 1: st = lt_tensor_full(ctx, LT_F16, 3, shape, 1.0, &t); break;
      case 2: st = lt_tensor_from_host(ctx, LT_F64, 3, shape, strides, data, &t); break;
      case 3: st = lt_tensor_contiguous(src, LT_BF16, &t); break;
      case 4: {
        lt_tensor *tr = NULL;
        a.budget = -1;
        LT_CHECK(lt_view_transpose(src, 0, 2, &tr));
        a.budget = budget;
        int64_t flat[1] = {24};
        st = lt_tensor_reshape(tr, 1, flat, &t);
        lt_tensor_destroy(tr);
        break;
      }
      default: st = lt_view_transpose(src, 0, 1, &t); break;
      }
      if (st == LT_OK)
        ok = true;
      else {
        assert_int_equal(st, LT_ERR_OUT_OF_MEMORY);
        assert_null(t);
        assert_true(lt_last_error()[0] != '\0');
      }
      lt_tensor_destroy(st == LT_OK ? t : NULL);
      lt_tensor_destroy(src);
      lt_context_destroy(ctx);
      assert_int_equal(a.live, 0);
    }
    assert_true(ok);
  }
}

/* ---- elements and properties ---- */

static void test_get_set(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int di = 0; di < N_DTYPES; di++) {
      lt_dtype dtype = all_dtypes[di];
      int64_t shape[3] = {2, 3, 4};
      lt_tensor *t = NULL;
      LT_CHECK(lt_tensor_zeros(ctx, dtype, 3, shape, &t));
      /* Write through negative indices, read through positive ones. */
      for (int64_t k = 0; k < 24; k++) {
        int64_t idx[3], neg[3];
        lt_test_unravel(k, 3, shape, idx);
        for (int d = 0; d < 3; d++)
          neg[d] = idx[d] - shape[d];
        LT_CHECK(lt_tensor_set(t, neg, 0.37 * (double)k - 4.1));
      }
      for (int64_t k = 0; k < 24; k++) {
        int64_t idx[3];
        lt_test_unravel(k, 3, shape, idx);
        double v;
        LT_CHECK(lt_tensor_get(t, idx, &v));
        assert_true(v == stored_value(dtype, 0.37 * (double)k - 4.1));
        assert_true(ref_element(t, idx) == v);
      }
      /* Bounds. */
      int64_t bad[][3] = {{2, 0, 0}, {0, 3, 0}, {0, 0, 4}, {-3, 0, 0}, {0, 0, -5}};
      for (int b = 0; b < 5; b++) {
        double v = 123.0;
        LT_CHECK_FAILS(lt_tensor_get(t, bad[b], &v), LT_ERR_OUT_OF_RANGE);
        assert_true(v == 123.0);
        assert_non_null(strstr(lt_last_error(), "out of range"));
        LT_CHECK_FAILS(lt_tensor_set(t, bad[b], 1.0), LT_ERR_OUT_OF_RANGE);
      }
      double v;
      LT_CHECK_FAILS(lt_tensor_get(t, NULL, &v), LT_ERR_NULL_POINTER);
      LT_CHECK_FAILS(lt_tensor_set(t, NULL, 1.0), LT_ERR_NULL_POINTER);
      LT_CHECK_FAILS(lt_tensor_get(t, bad[0], NULL), LT_ERR_NULL_POINTER);
      /* Special values. */
      int64_t first[3] = {0, 0, 0};
      double specials[] = {INFINITY, -INFINITY, NAN, -0.0};
      for (int s = 0; s < 4; s++) {
        if (dtype == LT_I64 && (isnan(specials[s]) || isinf(specials[s]))) {
          /* An integer tensor refuses them (never saturated) and keeps its element. */
          LT_CHECK(lt_tensor_set(t, first, 5.0));
          LT_CHECK_FAILS(lt_tensor_set(t, first, specials[s]), LT_ERR_OUT_OF_RANGE);
          assert_non_null(strstr(lt_last_error(), "lt_tensor_set"));
          LT_CHECK(lt_tensor_get(t, first, &v));
          assert_true(v == 5.0);
          continue;
        }
        LT_CHECK(lt_tensor_set(t, first, specials[s]));
        LT_CHECK(lt_tensor_get(t, first, &v));
        double want = stored_value(dtype, specials[s]);
        if (dtype == LT_I64) want = 0.0;
        assert_true(isnan(want) ? isnan(v) : v == want);
      }
      lt_tensor_destroy(t);
    }
    /* Rank 0: get/set with a NULL index. */
    lt_tensor *s = NULL;
    LT_CHECK(lt_tensor_full(ctx, LT_F32, 0, NULL, 1.5, &s));
    LT_CHECK(lt_tensor_set(s, NULL, 2.5));
    double v;
    LT_CHECK(lt_tensor_get(s, NULL, &v));
    assert_true(v == 2.5);
    assert_int_equal(lt_tensor_numel(s), 1);
    lt_tensor_destroy(s);
    lt_context_destroy(ctx);
  }
}

/* lt_tensor_full and lt_tensor_set on integer dtypes: values are truncated toward zero, and
 * NaN or a truncation outside the dtype's range is LT_ERR_OUT_OF_RANGE naming the call (it used
 * to store 300 in an i8 as 44 and NaN as 0). */
static void test_full_set_integer_range(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  const int64_t shape[1] = {3}, at[1] = {1};
  static const struct {
    lt_dtype dtype;
    double ok_lo, ok_hi, bad_lo, bad_hi;
  } cases[] = {
      {LT_I8, -128.9, 127.9, -129.0, 128.0},
      {LT_U8, -0.9, 255.5, -1.0, 256.0},
      {LT_I32, -2147483648.0, 2147483647.0, -2147483649.0, 2147483648.0},
      {LT_U16, 0.0, 65535.0, -1.0, 65536.0},
      {LT_I64, -9223372036854775808.0, 9223372036854774784.0, -1e19, 9223372036854775808.0},
      {LT_U64, 0.0, 18446744073709549568.0, -1.0, 18446744073709551616.0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    lt_dtype d = cases[c].dtype;
    lt_tensor *t = NULL;
    LT_CHECK(lt_tensor_full(ctx, d, 1, shape, cases[c].ok_hi, &t));
    double v;
    LT_CHECK(lt_tensor_get(t, at, &v));
    assert_true(v == trunc(cases[c].ok_hi));
    LT_CHECK(lt_tensor_set(t, at, cases[c].ok_lo));
    LT_CHECK(lt_tensor_get(t, at, &v));
    assert_true(v == trunc(cases[c].ok_lo) || (v == 0 && trunc(cases[c].ok_lo) == 0));
    const double bad[3] = {cases[c].bad_lo, cases[c].bad_hi, NAN};
    for (int b = 0; b < 3; b++) {
      lt_tensor *u = NULL;
      LT_CHECK_FAILS(lt_tensor_full(ctx, d, 1, shape, bad[b], &u), LT_ERR_OUT_OF_RANGE);
      assert_null(u);
      assert_non_null(strstr(lt_last_error(), "lt_tensor_full"));
      assert_non_null(strstr(lt_last_error(), lt_dtype_name(d)));
      LT_CHECK_FAILS(lt_tensor_set(t, at, bad[b]), LT_ERR_OUT_OF_RANGE);
      LT_CHECK(lt_tensor_get(t, at, &v));
      assert_true(v == trunc(cases[c].ok_lo) || (v == 0 && trunc(cases[c].ok_lo) == 0));
    }
    lt_tensor_destroy(t);
  }
  lt_tensor *b = NULL; /* bool and floats take any value */
  LT_CHECK(lt_tensor_full(ctx, LT_BOOL, 1, shape, 300.0, &b));
  lt_tensor_destroy(b);
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 1, shape, NAN, &b));
  lt_tensor_destroy(b);
  lt_context_destroy(ctx);
}

static lt_tensor *view_of(lt_tensor *base, int rank, const int64_t *shape, const int64_t *strides,
                          int64_t offset) {
  lt_tensor *v = NULL;
  LT_CHECK(lt_view_as_strided(base, rank, shape, strides, offset, &v));
  return v;
}

static void test_properties(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t bshape[1] = {100};
  lt_tensor *base = NULL;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 1, bshape, 1.0, &base));
  struct {
    int rank;
    int64_t shape[3], strides[3], offset;
    bool contiguous;
  } cases[] = {
      {2, {3, 4}, {4, 1}, 0, true},       {2, {3, 4}, {1, 3}, 0, false},
      {2, {3, 4}, {8, 2}, 1, false},      {2, {3, 1}, {1, 77}, 5, true},
      {3, {1, 3, 1}, {9, 1, 0}, 2, true}, {2, {3, 4}, {0, 1}, 0, false},
      {2, {3, 0}, {5, 7}, 0, true},       {0, {0}, {0}, 9, true},
      {2, {3, 4}, {-4, -1}, 11, false},   {1, {1}, {-3}, 4, true},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    lt_tensor *v = view_of(base, cases[c].rank, cases[c].shape, cases[c].strides, cases[c].offset);
    assert_int_equal(lt_tensor_rank(v), cases[c].rank);
    assert_int_equal(lt_tensor_offset(v), cases[c].offset);
    int64_t n = lt_test_numel(cases[c].rank, cases[c].shape);
    assert_int_equal(lt_tensor_numel(v), n);
    assert_int_equal(lt_tensor_nbytes(v), (size_t)n * 4);
    for (int d = 0; d < cases[c].rank; d++) {
      assert_int_equal(lt_tensor_shape(v)[d], cases[c].shape[d]);
      assert_int_equal(lt_tensor_strides(v)[d], cases[c].strides[d]);
    }
    if (lt_tensor_is_contiguous(v) != cases[c].contiguous)
      fail_msg("case %zu: is_contiguous is %d", c, !cases[c].contiguous);
    assert_true(lt_tensor_shares_storage(v, base));
    assert_true(lt_tensor_shares_storage(base, v));
    lt_tensor_destroy(v);
  }
  lt_tensor *other = NULL;
  LT_CHECK(lt_tensor_contiguous(base, LT_DTYPE_INVALID, &other));
  assert_false(lt_tensor_shares_storage(base, other));
  assert_false(lt_tensor_shares_storage(base, NULL));
  assert_false(lt_tensor_shares_storage(NULL, NULL));
  /* NULL handles: documented neutral values. */
  assert_int_equal(lt_tensor_dtype(NULL), LT_DTYPE_INVALID);
  assert_int_equal(lt_tensor_rank(NULL), 0);
  assert_null(lt_tensor_shape(NULL));
  assert_null(lt_tensor_strides(NULL));
  assert_int_equal(lt_tensor_offset(NULL), 0);
  assert_int_equal(lt_tensor_numel(NULL), 0);
  assert_int_equal(lt_tensor_nbytes(NULL), 0);
  assert_false(lt_tensor_is_contiguous(NULL));
  assert_null(lt_tensor_context(NULL));
  assert_null(lt_context_device(NULL));
  assert_string_equal(lt_context_device(ctx), "cpu");
  lt_tensor_destroy(other);
  lt_tensor_destroy(base);
  lt_context_destroy(ctx);
}

/* ---- copies ---- */

/* contiguous() of every layout and dtype pair, compared with the raw-memory reference. */
static void test_contiguous_conversions(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 3);
  static const int64_t shapes[][3] = {{0}, {7}, {4, 5}, {3, 1, 4}, {2, 0, 3}};
  static const int ranks[] = {0, 1, 2, 3, 3};
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int si = 0; si < N_DTYPES; si++)
      for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++)
        for (int s = 0; s < 5; s++) {
          lt_tensor *src = lt_test_random_tensor_range(ctx, all_dtypes[si], ranks[s], shapes[s],
                                                       (lt_test_layout)layout, -300.0, 300.0);
          double *in = ref_all(src);
          for (int di = 0; di <= N_DTYPES; di++) {
            lt_dtype dst_type = di == N_DTYPES ? LT_DTYPE_INVALID : all_dtypes[di];
            lt_dtype effective = di == N_DTYPES ? all_dtypes[si] : dst_type;
            lt_tensor *c = NULL;
            LT_CHECK(lt_tensor_contiguous(src, dst_type, &c));
            check_c_layout(c, effective, ranks[s], shapes[s]);
            assert_false(lt_tensor_shares_storage(c, src));
            double *out = ref_all(c);
            for (int64_t k = 0; k < lt_tensor_numel(c); k++)
              if (out[k] != stored_value(effective, in[k]))
                fail_msg("%s %s -> %s element %lld: %.9g, expected %.9g",
                         lt_test_layout_name((lt_test_layout)layout), lt_dtype_name(all_dtypes[si]),
                         lt_dtype_name(effective), (long long)k, out[k],
                         stored_value(effective, in[k]));
            free(out);
            lt_tensor_destroy(c);
          }
          free(in);
          lt_tensor_destroy(src);
        }
    lt_tensor *src = NULL, *c = (lt_tensor *)&src;
    LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 0, NULL, &src));
    LT_CHECK_FAILS(lt_tensor_contiguous(src, (lt_dtype)17, &c), LT_ERR_DTYPE);
    assert_null(c);
    lt_tensor_destroy(src);
    lt_context_destroy(ctx);
  }
}

/* f64 -> f16 / bf16 rounds once, to nearest even: values a hair past a halfway point between
 * two halves are where rounding through float first goes wrong. */
static void check_f64_to_half(lt_context *ctx, lt_dtype dtype, const double *v, int64_t n) {
  lt_tensor *src, *c;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &n, NULL, v, &src));
  LT_CHECK(lt_tensor_contiguous(src, dtype, &c));
  double *out = ref_all(c);
  for (int64_t k = 0; k < n; k++)
    if (out[k] != stored_value(dtype, v[k]) && !(isnan(out[k]) && isnan(v[k])))
      fail_msg("%s: f64 %.17g -> %s %.9g, expected %.9g", lt_context_device(ctx), v[k],
               lt_dtype_name(dtype), out[k], stored_value(dtype, v[k]));
  free(out);
  lt_tensor_destroy(c);
  lt_tensor_destroy(src);
}

static void f64_to_half_on(lt_context *ctx) {
  enum { N = 1 << 16 };
  double *v = malloc(sizeof(double) * N);
  int64_t n = 0;
  for (int k = 0; k < 2; k++) { /* f16: halfway at 2^-11 relative; bf16: at 2^-8 */
    double half_ulp = k ? ldexp(1.0, -8) : ldexp(1.0, -11), tiny = ldexp(1.0, -40);
    double probes[] = {1 + half_ulp + tiny, 1 + 3 * half_ulp - tiny, -(1 + half_ulp + tiny),
                       1 + half_ulp,        1 + 3 * half_ulp,        1 + half_ulp - tiny};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
      v[n++] = probes[i];
  }
  double specials[] = {0.0,
                       -0.0,
                       INFINITY,
                       -INFINITY,
                       NAN,
                       65519.999,
                       65520.0,
                       1e300,
                       1e-300,
                       ldexp(1.0, -25),
                       ldexp(1.0, -25) + ldexp(1.0, -70),
                       3.4e38,
                       3.3961e38};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
    v[n++] = specials[i];
  while (n < N) /* random magnitudes across both formats' ranges */
    v[n++] = lt_test_rand_double(-1, 1) * ldexp(1.0, (int)lt_test_rand_int(-30, 20));
  check_f64_to_half(ctx, LT_F16, v, n);
  check_f64_to_half(ctx, LT_BF16, v, n);
  free(v);
}

static void test_f64_to_half_rounds_once(void **state) { lt_test_on_each_device(f64_to_half_on); }

/* int64 copies keep all 64 bits (no detour through double) in every layout. */
static void test_i64_copies_exact(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 9);
  int64_t shape[2] = {5, 7}, v[35];
  for (int i = 0; i < 35; i++)
    v[i] = (int64_t)lt_test_rand_u64();
  v[0] = INT64_MAX;
  v[1] = INT64_MIN;
  v[2] = (INT64_C(1) << 53) + 1;
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    lt_tensor *t = NULL, *tt = NULL, *c = NULL, *back = NULL;
    LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 2, shape, NULL, v, &t));
    LT_CHECK(lt_view_transpose(t, 0, 1, &tt));
    LT_CHECK(lt_tensor_contiguous(tt, LT_DTYPE_INVALID, &c));
    int64_t got[35];
    LT_CHECK(lt_tensor_to_host(c, got, sizeof got));
    for (int i = 0; i < 7; i++)
      for (int j = 0; j < 5; j++)
        if (got[i * 5 + j] != v[j * 7 + i])
          fail_msg("%s: int64 [%d,%d] is %lld, expected %lld", devs[dv], i, j,
                   (long long)got[i * 5 + j], (long long)v[j * 7 + i]);
    int64_t tshape[2] = {7, 5};
    LT_CHECK(lt_tensor_zeros(ctx, LT_I64, 2, tshape, &back));
    LT_CHECK(lt_tensor_copy_into(back, tt));
    LT_CHECK(lt_tensor_to_host(back, got, sizeof got));
    for (int i = 0; i < 7; i++)
      for (int j = 0; j < 5; j++)
        assert_true(got[i * 5 + j] == v[j * 7 + i]);
    lt_tensor *list[] = {t, tt, c, back};
    for (int i = 0; i < 4; i++)
      lt_tensor_destroy(list[i]);
    lt_context_destroy(ctx);
  }
}

/* copy_into: broadcasting src into guarded strided outputs of every layout, with conversion. */
static void test_copy_into_broadcast(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 4);
  int64_t dshape[3] = {3, 4, 5};
  static const int64_t sshapes[][3] = {{0}, {5}, {4, 1}, {3, 1, 5}, {1, 4, 5}, {3, 4, 5}};
  static const int sranks[] = {0, 1, 2, 3, 3, 3};
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int si = 0; si < N_DTYPES; si++)
      for (int di = 0; di < N_DTYPES; di++)
        for (int s = 0; s < 6; s++)
          for (int layout = 0; layout < LT_LAYOUT_BROADCAST; layout++) {
            lt_tensor *src = lt_test_random_tensor_range(
                ctx, all_dtypes[si], sranks[s], sshapes[s],
                (lt_test_layout)((s + layout) % LT_LAYOUT_COUNT), -100.0, 100.0);
            double *snap = lt_test_snapshot(src);
            double *in = ref_all(src);
            lt_test_output out;
            lt_test_output_make(ctx, all_dtypes[di], 3, dshape, (lt_test_layout)layout, &out);
            LT_CHECK(lt_tensor_copy_into(out.view, src));
            double *got = ref_all(out.view);
            for (int64_t k = 0; k < 60; k++) {
              int64_t idx[3], sk = 0;
              lt_test_unravel(k, 3, dshape, idx);
              /* Trailing alignment; extent-1 source axes repeat. */
              for (int d = 0; d < sranks[s]; d++) {
                int64_t e = sshapes[s][d], i = idx[3 - sranks[s] + d];
                sk = sk * e + (e == 1 ? 0 : i);
              }
              double want = stored_value(all_dtypes[di], in[sk]);
              if (got[k] != want)
                fail_msg("%s -> %s, source rank %d, %s output: element %lld is %.9g, expected "
                         "%.9g",
                         lt_dtype_name(all_dtypes[si]), lt_dtype_name(all_dtypes[di]), sranks[s],
                         lt_test_layout_name((lt_test_layout)layout), (long long)k, got[k], want);
            }
            lt_test_output_check_guard(&out);
            lt_test_check_unchanged(src, snap);
            free(got);
            free(in);
            free(snap);
            lt_test_output_free(&out);
            lt_tensor_destroy(src);
          }
    lt_context_destroy(ctx);
  }
}

/* Overlapping source and destination in the same storage: the result is as if the source had
 * been read completely first. */
static void test_copy_into_overlap(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 5);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t n = 6, shape[2] = {6, 6};
    for (int c = 0; c < 6; c++) {
      lt_tensor *a = lt_test_random_tensor(ctx, LT_F64, 2, shape, LT_LAYOUT_CONTIGUOUS);
      double *before = ref_all(a);
      lt_tensor *dst = NULL, *src = NULL;
      int64_t sub[2] = {5, 6}, rows[2] = {6, 1}, cols[2] = {1, 6}, rev[2] = {-6, -1};
      /* dst[i,j] = before[map(i,j)] for the cases below. */
      switch (c) {
      case 0: /* a[1:] = a[:-1] (shift down: overlapping, forward order would smear) */
        dst = view_of(a, 2, sub, rows, 6);
        src = view_of(a, 2, sub, rows, 0);
        break;
      case 1: /* a[:-1] = a[1:] */
        dst = view_of(a, 2, sub, rows, 0);
        src = view_of(a, 2, sub, rows, 6);
        break;
      case 2: /* a = a.T in place */
        dst = view_of(a, 2, shape, rows, 0);
        src = view_of(a, 2, shape, cols, 0);
        break;
      case 3: /* a = a[::-1, ::-1] */
        dst = view_of(a, 2, shape, rows, 0);
        src = view_of(a, 2, shape, rev, 35);
        break;
      case 4: /* a = a (same layout) */
        dst = view_of(a, 2, shape, rows, 0);
        src = view_of(a, 2, shape, rows, 0);
        break;
      default: { /* a[:, 0..5] = a[0, :] broadcast down the rows */
        int64_t one[1] = {6}, unit[1] = {1};
        dst = view_of(a, 2, shape, rows, 0);
        src = view_of(a, 1, one, unit, 0);
        break;
      }
      }
      LT_CHECK(lt_tensor_copy_into(dst, src));
      double *after = ref_all(a);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
          double want;
          switch (c) {
          case 0: want = i >= 1 ? before[(i - 1) * 6 + j] : before[j]; break;
          case 1: want = i <= 4 ? before[(i + 1) * 6 + j] : before[30 + j]; break;
          case 2: want = before[j * 6 + i]; break;
          case 3: want = before[(5 - i) * 6 + (5 - j)]; break;
          case 4: want = before[i * 6 + j]; break;
          default: want = before[j]; break;
          }
          if (after[i * 6 + j] != want)
            fail_msg("overlap case %d: element [%lld,%lld] is %.17g, expected %.17g", c,
                     (long long)i, (long long)j, after[i * 6 + j], want);
        }
      free(before);
      free(after);
      lt_tensor_destroy(dst);
      lt_tensor_destroy(src);
      lt_tensor_destroy(a);
    }
    lt_context_destroy(ctx);
  }
}

static void test_copy_into_errors(void **state) {
  lt_context *ctx, *ctx2;
  LT_CHECK(lt_context_create("cpu", &ctx));
  LT_CHECK(lt_context_create("cpu", &ctx2));
  int64_t shape[2] = {3, 4}, row[2] = {1, 4}, bad[2] = {3, 3};
  lt_tensor *dst = NULL, *src = NULL, *b = NULL, *other = NULL, *wrong = NULL;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 2, shape, 1.0, &dst));
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 2, shape, 2.0, &src));
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 2, bad, 2.0, &wrong));
  LT_CHECK(lt_tensor_full(ctx2, LT_F32, 2, shape, 3.0, &other));
  double *snap = lt_test_snapshot(dst);
  LT_CHECK_FAILS(lt_tensor_copy_into(dst, wrong), LT_ERR_SHAPE_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "broadcast"));
  LT_CHECK_FAILS(lt_tensor_copy_into(dst, other), LT_ERR_CONTEXT_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "dst and src belong to two different 'cpu' contexts"));
  LT_CHECK_FAILS(lt_tensor_copy_into(wrong, dst), LT_ERR_SHAPE_MISMATCH);
  lt_tensor *small = NULL;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 2, row, 1.0, &small));
  LT_CHECK(lt_view_broadcast_to(small, 2, shape, &b));
  LT_CHECK_FAILS(lt_tensor_copy_into(b, src), LT_ERR_ALIASING);
  LT_CHECK_FAILS(lt_tensor_copy_into(NULL, src), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_tensor_copy_into(dst, NULL), LT_ERR_NULL_POINTER);
  lt_test_check_unchanged(dst, snap);
  /* A broadcast source larger in rank than dst is refused too. */
  int64_t s3[3] = {2, 3, 4};
  lt_tensor *r3 = NULL;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 3, s3, 1.0, &r3));
  LT_CHECK_FAILS(lt_tensor_copy_into(dst, r3), LT_ERR_SHAPE_MISMATCH);
  lt_test_check_unchanged(dst, snap);
  free(snap);
  lt_tensor *list[] = {dst, src, b, other, wrong, small, r3};
  for (int i = 0; i < 7; i++)
    lt_tensor_destroy(list[i]);
  lt_context_destroy(ctx2);
  lt_context_destroy(ctx);
}

static void test_reshape_or_copy(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t shape[2] = {4, 6}, flat[1] = {24};
  lt_tensor *a = lt_test_random_tensor(ctx, LT_F32, 2, shape, LT_LAYOUT_TRANSPOSED);
  lt_tensor *r = NULL, *v = NULL;
  LT_CHECK_FAILS(lt_view_reshape(a, 1, flat, &v), LT_ERR_NOT_VIEWABLE);
  LT_CHECK(lt_tensor_reshape(a, 1, flat, &r));
  assert_false(lt_tensor_shares_storage(a, r));
  double *in = ref_all(a), *out = ref_all(r);
  for (int i = 0; i < 24; i++)
    assert_true(in[i] == out[i]);
  free(in);
  free(out);
  lt_tensor_destroy(r);
  lt_tensor *c = lt_test_random_tensor(ctx, LT_F32, 2, shape, LT_LAYOUT_CONTIGUOUS);
  LT_CHECK(lt_tensor_reshape(c, 1, flat, &r));
  assert_true(lt_tensor_shares_storage(c, r)); /* a view when possible */
  int64_t wrong[1] = {25};
  lt_tensor *w = (lt_tensor *)&w;
  LT_CHECK_FAILS(lt_tensor_reshape(a, 1, wrong, &w), LT_ERR_SHAPE_MISMATCH);
  assert_null(w);
  lt_tensor_destroy(r);
  lt_tensor_destroy(c);
  lt_tensor_destroy(a);
  lt_context_destroy(ctx);
}

static void test_to_host_and_context(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 6);
  int64_t shape[3] = {3, 4, 5};
  for (int dv = 0; dv < ndev; dv++)
    for (int dv2 = 0; dv2 < ndev; dv2++) {
      lt_context *ctx, *ctx2;
      LT_CHECK(lt_context_create(devs[dv], &ctx));
      LT_CHECK(lt_context_create(devs[dv2], &ctx2));
      for (int di = 0; di < N_DTYPES; di++)
        for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++) {
          lt_tensor *t = lt_test_random_tensor_range(ctx, all_dtypes[di], 3, shape,
                                                     (lt_test_layout)layout, -9.0, 9.0);
          double *want = ref_all(t);
          lt_tensor *u = NULL;
          LT_CHECK(lt_tensor_to_context(t, ctx2, &u));
          assert_ptr_equal(lt_tensor_context(u), ctx2);
          check_c_layout(u, all_dtypes[di], 3, shape);
          assert_false(lt_tensor_shares_storage(t, u));
          double *got = ref_all(u);
          for (int k = 0; k < 60; k++)
            assert_true(got[k] == want[k]);
          /* to_host: C order, own dtype; short buffers refused. */
          size_t nb = lt_tensor_nbytes(t);
          unsigned char *host = malloc(nb), *host2 = malloc(nb);
          LT_CHECK(lt_tensor_to_host(t, host, nb));
          LT_CHECK(lt_tensor_to_host(u, host2, nb));
          assert_memory_equal(host, host2, nb);
          LT_CHECK_FAILS(lt_tensor_to_host(t, host, nb - 1), LT_ERR_INVALID_ARGUMENT);
          LT_CHECK_FAILS(lt_tensor_to_host(t, NULL, nb), LT_ERR_NULL_POINTER);
          free(host);
          free(host2);
          free(got);
          free(want);
          lt_tensor_destroy(u);
          lt_tensor_destroy(t);
        }
      lt_tensor *u = (lt_tensor *)&u;
      LT_CHECK_FAILS(lt_tensor_to_context(NULL, ctx2, &u), LT_ERR_NULL_POINTER);
      assert_null(u);
      lt_context_destroy(ctx2);
      lt_context_destroy(ctx);
    }
}

/* ---- sizes ---- */

static void test_size_checks(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *t = (lt_tensor *)&t;
  int64_t s1[2] = {INT64_C(1) << 32, INT64_C(1) << 32};
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F32, 2, s1, &t), LT_ERR_OVERFLOW);
  assert_null(t);
  assert_non_null(strstr(lt_last_error(), "overflow"));
  int64_t s2[2] = {INT64_C(1) << 61, 8};
  LT_CHECK_FAILS(lt_tensor_zeros(ctx, LT_F16, 2, s2, &t), LT_ERR_OVERFLOW);
  int64_t s3[1] = {INT64_C(1) << 62};
  LT_CHECK_FAILS(lt_tensor_full(ctx, LT_F64, 1, s3, 1.0, &t), LT_ERR_OVERFLOW);
  int64_t s4[3] = {0, INT64_C(1) << 40, INT64_C(1) << 40};
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F32, 3, s4, &t), LT_ERR_OVERFLOW);
  int64_t s4b[2] = {0, INT64_MAX}; /* empty: the message must not claim 2^63 elements */
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F32, 2, s4b, &t), LT_ERR_OVERFLOW);
  assert_non_null(strstr(lt_last_error(), "the tensor is empty, but the strides"));
  int64_t s5[2] = {3, -1};
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F32, 2, s5, &t), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "negative"));
  int64_t s65[65];
  for (int i = 0; i < 65; i++)
    s65[i] = 1;
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F32, 65, s65, &t), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "rank 65"));
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F32, -1, s65, &t), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F32, 2, NULL, &t), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_DTYPE_INVALID, 1, s65, &t), LT_ERR_DTYPE);
  /* An impossible (but representable) allocation: 2^50 bytes. */
  int64_t huge[1] = {INT64_C(1) << 47};
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F64, 1, huge, &t), LT_ERR_OUT_OF_MEMORY);
  assert_null(t);
  LT_CHECK_FAILS(lt_tensor_full(ctx, LT_F64, 1, huge, 2.0, &t), LT_ERR_OUT_OF_MEMORY);
  assert_non_null(strstr(lt_last_error(), "bytes"));
  lt_context_destroy(ctx);
}

static void test_rank_64(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t shape[LT_MAX_RANK];
    for (int i = 0; i < LT_MAX_RANK; i++)
      shape[i] = (i == 0 || i == 30 || i == 63) ? 2 : 1;
    lt_tensor *t = lt_test_random_tensor(ctx, LT_F64, LT_MAX_RANK, shape, LT_LAYOUT_NEGATIVE);
    lt_tensor *tt = NULL, *c = NULL, *u = (lt_tensor *)&u;
    LT_CHECK(lt_view_transpose(t, 0, 63, &tt));
    LT_CHECK(lt_tensor_contiguous(tt, LT_F32, &c));
    int64_t idx[LT_MAX_RANK] = {0}, tidx[LT_MAX_RANK] = {0};
    for (int k = 0; k < 8; k++) {
      idx[0] = k & 1;
      idx[30] = (k >> 1) & 1;
      idx[63] = (k >> 2) & 1;
      tidx[0] = idx[63];
      tidx[30] = idx[30];
      tidx[63] = idx[0];
      assert_true(ref_element(c, tidx) == stored_value(LT_F32, ref_element(t, idx)));
      double want = ref_element(t, idx), v;
      idx[5] = -1; /* negative index on an extent-1 axis */
      LT_CHECK(lt_tensor_get(t, idx, &v));
      idx[5] = 0;
      assert_true(v == want);
    }
    LT_CHECK_FAILS(lt_view_unsqueeze(t, 0, &u), LT_ERR_INVALID_ARGUMENT);
    assert_null(u);
    lt_tensor_destroy(c);
    lt_tensor_destroy(tt);
    lt_tensor_destroy(t);
    lt_context_destroy(ctx);
  }
}

/* ---- NULL handles and arguments to every function ---- */

static void test_null_arguments(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t shape[2] = {2, 3}, idx[2] = {0, 0};
  lt_tensor *t = NULL, *o = NULL;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 2, shape, 1.0, &t));
  int axes[2] = {1, 0};
  double v;
  void *p;
#define NULLS(call) LT_CHECK_FAILS(call, LT_ERR_NULL_POINTER)
  NULLS(lt_context_create("cpu", NULL));
  NULLS(lt_context_create_with_allocator("cpu", NULL, NULL, NULL, NULL));
  NULLS(lt_context_set_num_threads(NULL, 1));
  NULLS(lt_context_synchronize(NULL));
  NULLS(lt_context_clear_cache(NULL));
  NULLS(lt_device_count(NULL));
  NULLS(lt_device_string(0, LT_DEVICE_NAME, NULL));
  NULLS(lt_device_int(0, LT_DEVICE_FP64, NULL));
  NULLS(lt_tensor_empty(NULL, LT_F32, 2, shape, &o));
  NULLS(lt_tensor_empty(ctx, LT_F32, 2, shape, NULL));
  NULLS(lt_tensor_zeros(NULL, LT_F32, 2, shape, &o));
  NULLS(lt_tensor_full(ctx, LT_F32, 2, shape, 1.0, NULL));
  NULLS(lt_tensor_from_host(NULL, LT_F32, 2, shape, NULL, &v, &o));
  NULLS(lt_tensor_from_host(ctx, LT_F32, 2, shape, NULL, &v, NULL));
  NULLS(lt_tensor_wrap_host(NULL, LT_F32, 2, shape, NULL, &v, NULL, NULL, &o));
  NULLS(lt_tensor_wrap_host(ctx, LT_F32, 2, shape, NULL, &v, NULL, NULL, NULL));
  NULLS(lt_tensor_to_host(NULL, &v, 8));
  NULLS(lt_tensor_get(NULL, idx, &v));
  NULLS(lt_tensor_set(NULL, idx, 1.0));
  NULLS(lt_tensor_host_pointer(NULL, &p));
  NULLS(lt_tensor_host_pointer(t, NULL));
  NULLS(lt_view_reshape(NULL, 2, shape, &o));
  NULLS(lt_view_reshape(t, 2, shape, NULL));
  NULLS(lt_view_reshape(t, 2, NULL, &o));
  NULLS(lt_view_permute(NULL, axes, &o));
  NULLS(lt_view_permute(t, NULL, &o));
  NULLS(lt_view_permute(t, axes, NULL));
  NULLS(lt_view_transpose(NULL, 0, 1, &o));
  NULLS(lt_view_transpose(t, 0, 1, NULL));
  NULLS(lt_view_slice(NULL, 0, 0, 1, 1, &o));
  NULLS(lt_view_slice(t, 0, 0, 1, 1, NULL));
  NULLS(lt_view_select(NULL, 0, 0, &o));
  NULLS(lt_view_select(t, 0, 0, NULL));
  NULLS(lt_view_broadcast_to(NULL, 2, shape, &o));
  NULLS(lt_view_broadcast_to(t, 2, NULL, &o));
  NULLS(lt_view_broadcast_to(t, 2, shape, NULL));
  NULLS(lt_view_unsqueeze(NULL, 0, &o));
  NULLS(lt_view_unsqueeze(t, 0, NULL));
  NULLS(lt_view_squeeze(NULL, LT_ALL_AXES, &o));
  NULLS(lt_view_squeeze(t, LT_ALL_AXES, NULL));
  NULLS(lt_view_flip(NULL, 0, &o));
  NULLS(lt_view_flip(t, 0, NULL));
  NULLS(lt_view_diagonal(NULL, 0, 0, 1, &o));
  NULLS(lt_view_diagonal(t, 0, 0, 1, NULL));
  NULLS(lt_view_as_strided(NULL, 2, shape, shape, 0, &o));
  NULLS(lt_view_as_strided(t, 2, NULL, shape, 0, &o));
  NULLS(lt_view_as_strided(t, 2, shape, NULL, 0, &o));
  NULLS(lt_view_as_strided(t, 2, shape, shape, 0, NULL));
  NULLS(lt_tensor_contiguous(NULL, LT_F32, &o));
  NULLS(lt_tensor_contiguous(t, LT_F32, NULL));
  NULLS(lt_tensor_reshape(NULL, 2, shape, &o));
  NULLS(lt_tensor_reshape(t, 2, shape, NULL));
  NULLS(lt_tensor_copy_into(NULL, t));
  NULLS(lt_tensor_copy_into(t, NULL));
  NULLS(lt_tensor_to_context(NULL, ctx, &o));
  NULLS(lt_tensor_to_context(t, NULL, &o));
  NULLS(lt_tensor_to_context(t, ctx, NULL));
#undef NULLS
  assert_null(o);
  /* Destroying NULL is a no-op. */
  lt_tensor_destroy(NULL);
  lt_context_destroy(NULL);
  assert_int_equal(lt_context_num_threads(NULL), 0);
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
}

/* ---- status codes and messages ---- */

static void *error_in_thread(void *arg) {
  lt_dtype d;
  lt_dtype_from_name("thread-dtype", &d);
  snprintf(arg, 256, "%s", lt_last_error());
  return NULL;
}

static void test_status_and_errors(void **state) {
#define CHECK_NAME(name, value, text)                                                              \
  assert_int_equal(name, value);                                                                   \
  assert_string_equal(lt_status_string(name), #name);
  LT_STATUS_TABLE(CHECK_NAME)
#undef CHECK_NAME
  assert_string_equal(lt_status_string((lt_status)12345), "LT_UNKNOWN_STATUS");
  assert_string_equal(lt_status_string((lt_status)-21), "LT_UNKNOWN_STATUS");
  assert_int_equal(lt_version_number(),
                   LT_VERSION_MAJOR * 10000 + LT_VERSION_MINOR * 100 + LT_VERSION_PATCH);
  char v[32];
  snprintf(v, sizeof v, "%d.%d.%d", LT_VERSION_MAJOR, LT_VERSION_MINOR, LT_VERSION_PATCH);
  assert_string_equal(lt_version(), v);

  /* Messages name the operand, the axis and the extents. */
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t shape[2] = {3, 4};
  lt_tensor *t = NULL, *o = NULL;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 2, shape, 1.0, &t));
  LT_CHECK_FAILS(lt_view_select(t, 1, 7, &o), LT_ERR_OUT_OF_RANGE);
  assert_string_equal(lt_last_error(),
                      "lt_view_select: index 7 is out of range for axis 1 of extent 4");
  LT_CHECK_FAILS(lt_view_transpose(t, 0, 2, &o), LT_ERR_OUT_OF_RANGE);
  assert_string_equal(lt_last_error(),
                      "lt_view_transpose: axis 2 is out of range for a rank-2 tensor");
  /* ... and the call, also where the check is shared (lt__tensor_new, element offsets) */
  int64_t bad_shape[2] = {3, -4}, idx[2] = {0, 9};
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F32, 2, bad_shape, &o), LT_ERR_INVALID_ARGUMENT);
  assert_string_equal(lt_last_error(), "lt_tensor_empty: extent -4 of axis 1 is negative");
  LT_CHECK_FAILS(lt_tensor_zeros(ctx, LT_F32, 65, shape, &o), LT_ERR_INVALID_ARGUMENT);
  assert_string_equal(lt_last_error(), "lt_tensor_full: rank 65 is outside [0, 64]");
  LT_CHECK_FAILS(lt_tensor_from_host(ctx, (lt_dtype)99, 2, shape, NULL, shape, &o), LT_ERR_DTYPE);
  assert_string_equal(lt_last_error(), "lt_tensor_from_host: invalid dtype 99");
  float host[12] = {0};
  LT_CHECK_FAILS(lt_tensor_wrap_host(ctx, LT_F32, 2, bad_shape, NULL, host, NULL, NULL, &o),
                 LT_ERR_INVALID_ARGUMENT);
  assert_string_equal(lt_last_error(), "lt_tensor_wrap_host: extent -4 of axis 1 is negative");
  double got;
  LT_CHECK_FAILS(lt_tensor_get(t, idx, &got), LT_ERR_OUT_OF_RANGE);
  assert_string_equal(lt_last_error(),
                      "lt_tensor_get: index 9 is out of range for axis 1 of extent 4");
  LT_CHECK_FAILS(lt_tensor_set(t, idx, 1.0), LT_ERR_OUT_OF_RANGE);
  assert_non_null(strstr(lt_last_error(), "lt_tensor_set: index 9"));
  assert_null(o);
  lt_clear_error();
  assert_string_equal(lt_last_error(), "");
  /* A success does not clear the last message... */
  LT_CHECK_FAILS(lt_view_flip(t, 5, &o), LT_ERR_OUT_OF_RANGE);
  LT_CHECK(lt_view_flip(t, 1, &o));
  assert_non_null(strstr(lt_last_error(), "lt_view_flip"));
  lt_tensor_destroy(o);
  /* ...and messages are per thread. */
  char other[256] = "";
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, error_in_thread, other), 0);
  pthread_join(th, NULL);
  assert_non_null(strstr(other, "thread-dtype"));
  assert_non_null(strstr(lt_last_error(), "lt_view_flip"));
  /* Unknown devices and bad allocator pairs. */
  lt_context *bad = (lt_context *)&bad;
  LT_CHECK_FAILS(lt_context_create("tpu", &bad), LT_ERR_NO_DEVICE);
  assert_null(bad);
  assert_non_null(strstr(lt_last_error(), "tpu"));
  LT_CHECK_FAILS(lt_context_create_with_allocator("cpu", lt_test_alloc_fn, NULL, NULL, &bad),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_context_set_num_threads(ctx, -2), LT_ERR_INVALID_ARGUMENT);
  /* Unset, the count is the resolved default (LT_NUM_THREADS or the online cores). */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const char *env = getenv("LT_NUM_THREADS");
  assert_int_equal(lt_context_num_threads(ctx), env && *env ? atoi(env) : (int)cores);
  LT_CHECK(lt_context_set_num_threads(ctx, 3));
  assert_int_equal(lt_context_num_threads(ctx), 3);
  LT_CHECK(lt_context_synchronize(ctx));
  LT_CHECK(lt_context_clear_cache(ctx));
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
}

static void test_devices(void **state) {
  int count = 0;
  LT_CHECK(lt_device_count(&count));
  assert_true(count >= 1);
  for (int i = 0; i < count; i++) {
    const char *s = NULL;
    int64_t v = -1;
    LT_CHECK(lt_device_string(i, LT_DEVICE_ID, &s));
    lt_context *ctx = NULL;
    LT_CHECK(lt_context_create(s, &ctx));
    assert_string_equal(lt_context_device(ctx), s);
    lt_context_destroy(ctx);
    LT_CHECK(lt_device_string(i, LT_DEVICE_NAME, &s));
    assert_true(s[0] != '\0');
    LT_CHECK(lt_device_string(i, LT_DEVICE_TYPE, &s));
    LT_CHECK(lt_device_int(i, LT_DEVICE_GLOBAL_MEMORY, &v));
    assert_true(v > 0);
    LT_CHECK(lt_device_int(i, LT_DEVICE_COMPUTE_UNITS, &v));
    assert_true(v >= 1);
    LT_CHECK_FAILS(lt_device_int(i, LT_DEVICE_NAME, &v), LT_ERR_INVALID_ARGUMENT);
    LT_CHECK_FAILS(lt_device_string(i, LT_DEVICE_FP64, &s), LT_ERR_INVALID_ARGUMENT);
  }
  const char *s;
  int64_t v;
  LT_CHECK_FAILS(lt_device_string(count, LT_DEVICE_NAME, &s), LT_ERR_OUT_OF_RANGE);
  LT_CHECK_FAILS(lt_device_int(-1, LT_DEVICE_FP64, &v), LT_ERR_OUT_OF_RANGE);
}

/* A freed large CPU block is reused by the next tensor of the same size (it skips the page
 * zeroing a fresh block costs): lt_tensor_empty finds the old values there (the block is over
 * glibc's largest mmap threshold, so without the cache it would come back as fresh zero pages),
 * lt_tensor_zeros still zeroes it, a block of another size is not handed out, the cached
 * block is not counted as in use, and lt_context_clear_cache gives it back. */
/* A context made with LT_BLOCK_CACHE=0 hands out fresh blocks: 33 MiB freed full of 7.0 does
 * not come back with its contents (glibc maps blocks this size anew, zeroed). */
static void block_cache_off(void) {
  setenv("LT_BLOCK_CACHE", "0", 1);
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  unsetenv("LT_BLOCK_CACHE");
  int64_t n = (int64_t)33 << 18;
  lt_tensor *a;
  void *pa;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 1, &n, 7.0, &a));
  lt_tensor_destroy(a);
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 1, &n, &a));
  LT_CHECK(lt_tensor_host_pointer(a, &pa));
  int sevens = 0;
  for (int64_t i = 0; i < n; i += n / 7)
    sevens += ((const float *)pa)[i] == 7.0f;
  assert_true(sevens < 7);
  lt_tensor_destroy(a);
  lt_context_destroy(ctx);
}

static void test_block_reuse(void **state) {
  (void)state;
  /* The checkers run without the cache (it would hide a use after free): see context.c. */
  const char *env = getenv("LT_BLOCK_CACHE");
  if (lt_test_instrumented() || (env && strcmp(env, "0") == 0)) skip();
#if defined(__SANITIZE_ADDRESS__)
  skip();
#endif
  block_cache_off();
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t n = (int64_t)33 << 18, other = n + 16; /* 33 MiB of f32, and a little more */
  int64_t base, used;
  LT_CHECK(lt_context_memory(ctx, &base, NULL));
  lt_tensor *a, *b, *c;
  void *pa, *pb, *pc;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 1, &n, 7.0, &a));
  lt_tensor_destroy(a);
  /* (the fill may leave a small cached plan behind; the block must not count) */
  LT_CHECK(lt_context_memory(ctx, &used, NULL));
  assert_true(used - base < (1 << 20));
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 1, &other, &c));
  LT_CHECK(lt_tensor_host_pointer(c, &pc));
  assert_true(((const float *)pc)[0] != 7.0f || ((const float *)pc)[n - 1] != 7.0f);
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 1, &n, &a));
  LT_CHECK(lt_tensor_host_pointer(a, &pa));
  for (int64_t i = 0; i < n; i += n / 7)
    assert_true(((const float *)pa)[i] == 7.0f);
  lt_tensor_destroy(a);
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 1, &n, &b));
  LT_CHECK(lt_tensor_host_pointer(b, &pb));
  assert_ptr_equal(pb, pa);
  for (int64_t i = 0; i < n; i += 1021)
    if (((const float *)pb)[i] != 0.0f) fail_msg("element %lld of a reused block", (long long)i);
  lt_tensor_destroy(b);
  lt_tensor_destroy(c);
  LT_CHECK(lt_context_clear_cache(ctx));
  LT_CHECK(lt_context_memory(ctx, &used, NULL));
  assert_true(used - base < (1 << 20));
  lt_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_f16_exhaustive),
      cmocka_unit_test(test_bf16_rounding),
      cmocka_unit_test(test_dtype_names),
      cmocka_unit_test(test_create),
      cmocka_unit_test(test_from_host),
      cmocka_unit_test(test_wrap_host),
      cmocka_unit_test(test_creation_allocation_failures),
      cmocka_unit_test(test_get_set),
      cmocka_unit_test(test_full_set_integer_range),
      cmocka_unit_test(test_properties),
      cmocka_unit_test(test_contiguous_conversions),
      cmocka_unit_test(test_f64_to_half_rounds_once),
      cmocka_unit_test(test_i64_copies_exact),
      cmocka_unit_test(test_copy_into_broadcast),
      cmocka_unit_test(test_copy_into_overlap),
      cmocka_unit_test(test_copy_into_errors),
      cmocka_unit_test(test_reshape_or_copy),
      cmocka_unit_test(test_to_host_and_context),
      cmocka_unit_test(test_size_checks),
      cmocka_unit_test(test_rank_64),
      cmocka_unit_test(test_null_arguments),
      cmocka_unit_test(test_status_and_errors),
      cmocka_unit_test(test_devices),
      cmocka_unit_test(test_block_reuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
