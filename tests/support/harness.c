/* SPDX-License-Identifier: MIT */
/* Shared test harness implementation (see harness.h). */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool lt_test_instrumented(void) {
  const char *v = getenv("LT_TEST_INSTRUMENTED");
  return v && strcmp(v, "1") == 0;
}

lt_context *lt_test_cpu_context_with(const char *var, const char *value) {
  if (value)
    setenv(var, value, 1);
  else
    unsetenv(var);
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  unsetenv(var);
  return ctx;
}

lt_context *lt_test_cpu_context_with_engine(const char *engine) {
  return lt_test_cpu_context_with("LT_GEMM_ENGINE", engine);
}

bool lt_test_has_x86_gemm_kernels(void) {
  const char *isa = getenv("LT_CPU_ISA");
  if (isa && strcmp(isa, "baseline") == 0) return false;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

int lt_test_devices(const char *out[8]) {
  static char list[256];
  const char *env = getenv("LT_TEST_DEVICES");
  int n = 0;
  if (env && *env) {
    snprintf(list, sizeof list, "%s", env);
    for (char *tok = strtok(list, ","); tok && n < 8; tok = strtok(NULL, ","))
      out[n++] = tok;
    return n;
  }
  out[n++] = "cpu";
  lt_context *ctx = NULL;
  if (lt_context_create("opencl", &ctx) == LT_OK) out[n++] = "opencl";
  lt_context_destroy(ctx);
  lt_clear_error();
  return n;
}

void lt_test_on_each_device(void (*fn)(lt_context *ctx)) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed());
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    fn(ctx);
    lt_context_destroy(ctx);
  }
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

uint64_t lt_test_seed(void) {
  static uint64_t seed = 0;
  static int printed = 0;
  if (!printed) {
    const char *env = getenv("LT_TEST_SEED");
    seed = env ? strtoull(env, NULL, 0) : 20261129ull;
    fprintf(stderr, "[harness] LT_TEST_SEED=%llu\n", (unsigned long long)seed);
    printed = 1;
  }
  return seed;
}

void lt_test_rng_reset(uint64_t seed) { rng_state = seed * 0x9E3779B97F4A7C15ull + 1; }

uint64_t lt_test_rand_u64(void) {
  /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int64_t lt_test_rand_int(int64_t lo, int64_t hi) {
  return lo + (int64_t)(lt_test_rand_u64() % (uint64_t)(hi - lo + 1));
}

double lt_test_rand_double(double lo, double hi) {
  return lo + (hi - lo) * ((double)(lt_test_rand_u64() >> 11) * (1.0 / 9007199254740992.0));
}

const char *lt_test_layout_name(lt_test_layout layout) {
  static const char *names[] = {"contiguous", "transposed", "stepped", "negative", "broadcast"};
  return layout < LT_LAYOUT_COUNT ? names[layout] : "?";
}

int64_t lt_test_numel(int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= shape[i];
  return n;
}

void lt_test_unravel(int64_t linear, int rank, const int64_t *shape, int64_t *index) {
  for (int d = rank - 1; d >= 0; d--) {
    index[d] = shape[d] ? linear % shape[d] : 0;
    linear = shape[d] ? linear / shape[d] : 0;
  }
}

static double fill_lo = -1.0, fill_hi = 1.0;

/* Fills t with random values through one host buffer and one copy (fast on every backend;
 * values are drawn in C order of t, so results do not depend on the layout family). */
static void fill_random(lt_tensor *t) {
  int64_t n = lt_tensor_numel(t);
  lt_dtype dt = lt_tensor_dtype(t);
  bool is_unsigned = dt == LT_U8 || dt == LT_U16 || dt == LT_U32 || dt == LT_U64;
  double *host = malloc(sizeof(double) * (size_t)(n ? n : 1));
  assert_non_null(host);
  for (int64_t i = 0; i < n; i++) {
    double v = lt_test_rand_double(fill_lo, fill_hi);
    if (v == 0.0) v = 0.5 * (fill_lo + fill_hi) + 0.25;
    host[i] = is_unsigned ? fabs(v) : v; /* float -> integer copies refuse what does not fit */
  }
  lt_tensor *src = NULL;
  LT_CHECK(lt_tensor_from_host(lt_tensor_context(t), LT_F64, lt_tensor_rank(t), lt_tensor_shape(t),
                               NULL, host, &src));
  LT_CHECK(lt_tensor_copy_into(t, src));
  lt_tensor_destroy(src);
  free(host);
}

/* Builds a view of `layout` family over a freshly allocated base buffer. */
static lt_tensor *make_layout(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                              lt_test_layout layout, lt_tensor **base_out, double poison,
                              bool random) {
  int64_t bshape[LT_MAX_RANK] = {0};
  lt_tensor *base = NULL, *view = NULL, *tmp = NULL;
  /* Integer dtypes refuse NaN (lt_tensor_full checks the value): poison them with 77. */
  bool float_dtype = dtype == LT_F16 || dtype == LT_BF16 || dtype == LT_F32 || dtype == LT_F64;
  if (!float_dtype && isnan(poison)) poison = dtype == LT_BOOL ? 1.0 : 77.0;
  switch (layout) {
  case LT_LAYOUT_TRANSPOSED: {
    /* Base holds the axes reversed; the view permutes them back. */
    for (int i = 0; i < rank; i++)
      bshape[i] = shape[rank - 1 - i];
    LT_CHECK(lt_tensor_full(ctx, dtype, rank, bshape, poison, &base));
    int axes[LT_MAX_RANK];
    for (int i = 0; i < rank; i++)
      axes[i] = rank - 1 - i;
    LT_CHECK(lt_view_permute(base, axes, &view));
    break;
  }
  case LT_LAYOUT_STEPPED: {
    /* Each axis takes every second element, starting at 1, of an axis 2n+2 long. */
    for (int i = 0; i < rank; i++)
      bshape[i] = 2 * shape[i] + 2;
    LT_CHECK(lt_tensor_full(ctx, dtype, rank, bshape, poison, &base));
    view = base;
    for (int i = 0; i < rank; i++) {
      LT_CHECK(lt_view_slice(view, i, 1, 1 + 2 * shape[i], 2, &tmp));
      if (view != base) lt_tensor_destroy(view);
      view = tmp;
    }
    if (view == base) LT_CHECK(lt_view_reshape(base, 0, NULL, &view));
    break;
  }
  case LT_LAYOUT_NEGATIVE: {
    LT_CHECK(lt_tensor_full(ctx, dtype, rank, shape, poison, &base));
    view = base;
    for (int i = 0; i < rank; i++) {
      LT_CHECK(lt_view_flip(view, i, &tmp));
      if (view != base) lt_tensor_destroy(view);
      view = tmp;
    }
    if (view == base) LT_CHECK(lt_view_reshape(base, 0, NULL, &view));
    break;
  }
  case LT_LAYOUT_BROADCAST: {
    /* Axes with odd index collapse to extent 1 and are broadcast back. */
    for (int i = 0; i < rank; i++)
      bshape[i] = (i % 2 == 1) ? 1 : shape[i];
    LT_CHECK(lt_tensor_full(ctx, dtype, rank, bshape, poison, &base));
    if (random) fill_random(base);
    LT_CHECK(lt_view_broadcast_to(base, rank, shape, &view));
    *base_out = base;
    return view;
  }
  default: {
    LT_CHECK(lt_tensor_full(ctx, dtype, rank, shape, poison, &base));
    LT_CHECK(lt_view_reshape(base, rank, shape, &view));
    break;
  }
  }
  if (random) fill_random(view);
  *base_out = base;
  return view;
}

lt_tensor *lt_test_random_tensor(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                                 lt_test_layout layout) {
  lt_tensor *base = NULL;
  lt_tensor *view = make_layout(ctx, dtype, rank, shape, layout, &base, 0.0, true);
  lt_tensor_destroy(base); /* the view keeps the storage alive */
  return view;
}

lt_tensor *lt_test_random_tensor_range(lt_context *ctx, lt_dtype dtype, int rank,
                                       const int64_t *shape, lt_test_layout layout, double lo,
                                       double hi) {
  fill_lo = lo;
  fill_hi = hi;
  lt_tensor *t = lt_test_random_tensor(ctx, dtype, rank, shape, layout);
  fill_lo = -1.0;
  fill_hi = 1.0;
  return t;
}

lt_tensor *lt_test_bits_tensor(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                               lt_test_layout layout, uint64_t (*bits)(void)) {
  lt_tensor *t = lt_test_random_tensor(ctx, dtype, rank, shape, layout);
  int64_t n = lt_test_numel(rank, shape), idx[LT_MAX_RANK];
  if (layout == LT_LAYOUT_BROADCAST) { /* aliased elements: set one by one */
    for (int64_t i = 0; i < n; i++) {
      lt_test_unravel(i, rank, shape, idx);
      uint64_t v = bits();
      LT_CHECK(lt_tensor_set_u64(t, idx, dtype == LT_BOOL ? v & 1 : v));
    }
    return t;
  }
  size_t es = lt_dtype_size(dtype);
  unsigned char *raw = malloc((size_t)n * es + 1);
  assert_non_null(raw);
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = bits();
    if (dtype == LT_BOOL) v &= 1;
    memcpy(raw + (size_t)i * es, &v, es); /* little-endian host: the low bytes */
  }
  lt_tensor *src;
  LT_CHECK(lt_tensor_from_host(ctx, dtype, rank, shape, NULL, raw, &src));
  LT_CHECK(lt_tensor_copy_into(t, src));
  lt_tensor_destroy(src);
  free(raw);
  return t;
}

double *lt_test_read_all(const lt_tensor *t) {
  int64_t n = lt_tensor_numel(t);
  double *out = malloc(sizeof(double) * (size_t)(n ? n : 1));
  assert_non_null(out);
  lt_tensor *c = NULL;
  LT_CHECK(lt_tensor_contiguous(t, LT_F64, &c));
  LT_CHECK(lt_tensor_to_host(c, out, sizeof(double) * (size_t)n));
  lt_tensor_destroy(c);
  return out;
}

double *lt_test_snapshot(const lt_tensor *t) { return lt_test_read_all(t); }

void lt_test_check_unchanged(const lt_tensor *t, const double *snapshot) {
  double *now = lt_test_read_all(t);
  int64_t n = lt_tensor_numel(t);
  for (int64_t i = 0; i < n; i++)
    if (memcmp(&now[i], &snapshot[i], sizeof(double)) != 0)
      fail_msg("input element %lld changed: %.17g -> %.17g", (long long)i, snapshot[i], now[i]);
  free(now);
}

void lt_test_output_make(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                         lt_test_layout layout, lt_test_output *out) {
  if (layout == LT_LAYOUT_BROADCAST) layout = LT_LAYOUT_STEPPED;
  out->view = make_layout(ctx, dtype, rank, shape, layout, &out->base, NAN, false);
  out->base_before = lt_test_read_all(out->base);
}

void lt_test_output_check_guard(const lt_test_output *out) {
  /* Every base element the view does not cover must still hold its poison. Mark the covered
   * ones by writing a sentinel through a copy of the view, then compare. */
  int64_t n = lt_tensor_numel(out->base);
  double *now = lt_test_read_all(out->base);
  if (lt_tensor_numel(out->view) == 0) {
    /* An empty view covers nothing (and its offset may lie past an empty base). */
    for (int64_t i = 0; i < n; i++)
      if (memcmp(&now[i], &out->base_before[i], sizeof(double)) != 0)
        fail_msg("element %lld outside the empty output view was written", (long long)i);
    free(now);
    return;
  }
  lt_tensor *probe_base = NULL, *probe_view = NULL;
  LT_CHECK(lt_tensor_full(lt_tensor_context(out->base), LT_F64, lt_tensor_rank(out->base),
                          lt_tensor_shape(out->base), 0.0, &probe_base));
  LT_CHECK(lt_view_as_strided(probe_base, lt_tensor_rank(out->view), lt_tensor_shape(out->view),
                              lt_tensor_strides(out->view), lt_tensor_offset(out->view),
                              &probe_view));
  lt_tensor *one = NULL;
  LT_CHECK(lt_tensor_full(lt_tensor_context(out->base), LT_F64, 0, NULL, 1.0, &one));
  LT_CHECK(lt_tensor_copy_into(probe_view, one));
  double *covered = lt_test_read_all(probe_base);
  for (int64_t i = 0; i < n; i++)
    if (covered[i] == 0.0 && memcmp(&now[i], &out->base_before[i], sizeof(double)) != 0)
      fail_msg("element %lld outside the output view was written (%.17g)", (long long)i, now[i]);
  free(covered);
  free(now);
  lt_tensor_destroy(one);
  lt_tensor_destroy(probe_view);
  lt_tensor_destroy(probe_base);
}

void lt_test_output_free(lt_test_output *out) {
  lt_tensor_destroy(out->view);
  lt_tensor_destroy(out->base);
  free(out->base_before);
  memset(out, 0, sizeof *out);
}

double lt_test_tolerance(lt_dtype dtype, int64_t terms) {
  double eps;
  switch (dtype) {
  case LT_F16: eps = 9.8e-4; break;
  case LT_BF16: eps = 7.9e-3; break;
  case LT_F32: eps = 1.2e-7; break;
  default: eps = 2.3e-16; break;
  }
  double t = terms > 1 ? (double)terms : 1.0;
  return 8.0 * eps * (1.0 + sqrt(t)) + (dtype == LT_F64 ? 1e-14 : 0.0);
}

void lt_test_assert_close(const double *got, const double *want, int64_t n, double rtol,
                          const char *what) {
  for (int64_t i = 0; i < n; i++) {
    double g = got[i], w = want[i];
    if (isnan(w) && isnan(g)) continue;
    if (isinf(w) && g == w) continue;
    double err = fabs(g - w);
    if (!(err <= rtol * (1.0 + fabs(w))))
      fail_msg("%s: element %lld is %.10g, expected %.10g (|err| %.3g > rtol %.3g)", what,
               (long long)i, g, w, err, rtol);
  }
}

void *lt_test_alloc_fn(size_t bytes, size_t align, void *user) {
  lt_test_alloc *a = user;
  a->calls++;
  if (a->budget == 0) return NULL;
  if (a->budget > 0) a->budget--;
  void *p = aligned_alloc(align, (bytes + align - 1) / align * align);
  if (p) a->live++;
  return p;
}

void lt_test_free_fn(void *ptr, size_t bytes, void *user) {
  ((lt_test_alloc *)user)->live--;
  free(ptr);
}

lt_test_npy_bytes lt_test_make_npy(int major, const char *dict, const void *data, size_t data_len,
                                   bool pad) {
  size_t len_bytes = major == 1 ? 2 : 4, pre = 8 + len_bytes, dlen = strlen(dict);
  size_t hlen = pad ? ((pre + dlen + 1 + 15) / 16 * 16 - pre) : dlen;
  lt_test_npy_bytes b = {malloc(pre + hlen + data_len + 1), pre + hlen + data_len};
  assert_non_null(b.data);
  memcpy(b.data, "\x93NUMPY", 6);
  b.data[6] = (unsigned char)major;
  b.data[7] = 0;
  for (size_t i = 0; i < len_bytes; i++)
    b.data[8 + i] = (unsigned char)(hlen >> (8 * i));
  memcpy(b.data + pre, dict, dlen);
  if (pad) {
    memset(b.data + pre + dlen, ' ', hlen - dlen);
    b.data[pre + hlen - 1] = '\n';
  }
  if (data_len) memcpy(b.data + pre + hlen, data, data_len);
  return b;
}

void lt_test_temp_path(char buf[64]) {
  const char *dir = getenv("TMPDIR");
  snprintf(buf, 64, "%s/lt_test_XXXXXX", dir && *dir && strlen(dir) < 40 ? dir : "/tmp");
  int fd = mkstemp(buf);
  if (fd < 0) fail_msg("cannot create a temporary file %s", buf);
  close(fd);
}

int64_t lt_test_mode_index(int rank_t, const int64_t *shape_t, const int32_t *modes_t, int rank_d,
                           const int32_t *modes_d, const int64_t *index_d) {
  int64_t lin = 0;
  for (int i = 0; i < rank_t; i++) {
    int64_t idx = 0;
    for (int k = 0; k < rank_d; k++)
      if (modes_d[k] == modes_t[i] && shape_t[i] != 1) idx = index_d[k];
    lin = lin * shape_t[i] + idx;
  }
  return lin;
}

double lt_test_unary_ref(lt_unary_op op, double x) {
  switch (op) {
  case LT_UNARY_IDENTITY: return x;
  case LT_UNARY_NEG: return -x;
  case LT_UNARY_ABS: return fabs(x);
  case LT_UNARY_SQRT: return sqrt(x);
  case LT_UNARY_EXP: return exp(x);
  case LT_UNARY_LOG: return log(x);
  case LT_UNARY_SIN: return sin(x);
  case LT_UNARY_COS: return cos(x);
  case LT_UNARY_TANH: return tanh(x);
  case LT_UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
  case LT_UNARY_RELU: return isnan(x) ? x : (x > 0 ? x : 0.0);
  case LT_UNARY_RECIPROCAL: return 1.0 / x;
  case LT_UNARY_SQUARE: return x * x;
  case LT_UNARY_LOG1P: return log1p(x);
  case LT_UNARY_EXPM1: return expm1(x);
  case LT_UNARY_FLOOR: return floor(x);
  case LT_UNARY_CEIL: return ceil(x);
  case LT_UNARY_ROUND: { /* half to even, written out */
    double f = floor(x), d = x - f;
    return d > 0.5 ? f + 1 : d < 0.5 ? f : (fmod(f, 2.0) == 0 ? f : f + 1);
  }
  case LT_UNARY_TRUNC: return x < 0 ? ceil(x) : floor(x);
  case LT_UNARY_SIGN: return isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : x;
  case LT_UNARY_ERF: return erf(x);
  case LT_UNARY_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
  case LT_UNARY_SILU: return x * (1.0 / (1.0 + exp(-x)));
  case LT_UNARY_SOFTPLUS: return x > 30 ? x : log(1.0 + exp(x));
  case LT_UNARY_RSQRT: return 1.0 / sqrt(x);
  case LT_UNARY_NOT: return x == 0;
  case LT_UNARY_INVERT: return -x - 1; /* integers */
  case LT_UNARY_ISNAN: return isnan(x);
  case LT_UNARY_ISINF: return isinf(x);
  case LT_UNARY_ISFINITE: return isfinite(x);
  case LT_UNARY_TAN: return sin(x) / cos(x);
  case LT_UNARY_ASIN: return atan2(x, sqrt((1 - x) * (1 + x)));
  case LT_UNARY_ACOS: return atan2(sqrt((1 - x) * (1 + x)), x);
  case LT_UNARY_ATAN: return atan2(x, 1.0);
  case LT_UNARY_SINH: return (expm1(x) - expm1(-x)) / 2;
  case LT_UNARY_COSH: return (exp(x) + exp(-x)) / 2;
  case LT_UNARY_ASINH: /* odd; log1p keeps small |x| exact */
    return isinf(x) ? x : copysign(log1p(fabs(x) + x * x / (1 + sqrt(x * x + 1))), x);
  case LT_UNARY_ACOSH: return log(x + sqrt(x * x - 1));
  case LT_UNARY_ATANH: return 0.5 * log1p(2 * x / (1 - x));
  case LT_UNARY_LOG2: return log(x) / log(2.0);
  case LT_UNARY_LOG10: return log(x) / log(10.0);
  case LT_UNARY_SIGNBIT: return isnan(x) ? signbit(x) != 0 : (x < 0 || 1 / x < 0);
  }
  fail_msg("unknown unary op %d", (int)op);
  return 0;
}

double lt_test_binary_ref(lt_binary_op op, double a, double b) {
  switch (op) {
  case LT_BINARY_ADD: return a + b;
  case LT_BINARY_MUL: return a * b;
  case LT_BINARY_MIN: return (isnan(a) || isnan(b)) ? NAN : fmin(a, b);
  case LT_BINARY_MAX: return (isnan(a) || isnan(b)) ? NAN : fmax(a, b);
  case LT_BINARY_SUB: return a - b;
  case LT_BINARY_DIV: return a / b;
  case LT_BINARY_POW: return pow(a, b);
  case LT_BINARY_EQ: return a == b;
  case LT_BINARY_NE: return a != b;
  case LT_BINARY_LT: return a < b;
  case LT_BINARY_LE: return a <= b;
  case LT_BINARY_GT: return a > b;
  case LT_BINARY_GE: return a >= b;
  case LT_BINARY_LOGICAL_AND: return a != 0 && b != 0;
  case LT_BINARY_LOGICAL_OR: return a != 0 || b != 0;
  case LT_BINARY_LOGICAL_XOR: return (a != 0) != (b != 0);
  case LT_BINARY_FLOOR_DIVIDE: return isinf(a) ? NAN : floor(a / b); /* NumPy: inf // b is nan */
  case LT_BINARY_REMAINDER: {
    double r = fmod(a, b);
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
  }
  case LT_BINARY_FMOD: return fmod(a, b);
  case LT_BINARY_ATAN2: return atan2(a, b);
  case LT_BINARY_HYPOT: return sqrt(a * a + b * b);
  case LT_BINARY_COPYSIGN: return (signbit(b) ? -1.0 : 1.0) * fabs(a);
  case LT_BINARY_LOGADDEXP: /* the larger plus log(1 + e^(smaller - larger)), in long double */
    if (isnan(a) || isnan(b)) return NAN;
    if (a == b) return a + log(2.0);
    return (double)(fmaxl(a, b) + log1pl(expl(-fabsl((long double)a - b))));
  case LT_BINARY_BITWISE_AND:
  case LT_BINARY_BITWISE_OR:
  case LT_BINARY_BITWISE_XOR:
  case LT_BINARY_SHIFT_LEFT:
  case LT_BINARY_SHIFT_RIGHT:
  case LT_BINARY_WHERE: break; /* integers: test_dtypes.c has exact references */
  }
  fail_msg("unknown binary op %d", (int)op);
  return 0;
}

double lt_test_round_to(lt_dtype dtype, double v) {
  switch (dtype) {
  case LT_F16: return lt_f16_to_f32(lt_f32_to_f16((float)v));
  case LT_BF16: return lt_bf16_to_f32(lt_f32_to_bf16((float)v));
  case LT_F32: return (float)v;
  default: return v;
  }
}

void lt_test_shuffle(int32_t *v, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)lt_test_rand_int(0, i);
    int32_t t = v[i];
    v[i] = v[j];
    v[j] = t;
  }
}
