/* SPDX-License-Identifier: MIT */
/* Creation functions with NumPy's semantics: arange (NumPy's length rule and fill), linspace
 * (endpoint), eye, ones and the *_like family. Sequences are computed on the host in double
 * (integer aranges of whole numbers in 64-bit integers), converted once to the dtype and copied
 * to the context's device; an integer dtype that cannot hold them is refused. */
#include "core/dtype.h"
#include "core/error.h"
#include "core/object.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A 1-D or 2-D tensor whose element i is value(i), built on the host. */
typedef double (*value_fn)(const double *params, int64_t i);

/* Checks the arguments every creation function takes and allocates a host buffer for the
 * elements (*numel of them). */
static lt_status host_buffer(const char *call, lt_context *ctx, lt_dtype dtype, int rank,
                             const int64_t *shape, lt_tensor **out, int64_t *numel, void **buf) {
  LT_CHECK_ARG_NULL(out, call, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, call, "ctx"));
  LT_RETURN_IF(!lt__dtype_valid(dtype), LT_ERR_DTYPE, "%s: invalid dtype %d", call, (int)dtype);
  LT_TRY_PREFIXED(lt__check_shape(rank, shape, dtype, numel), call);
  size_t bytes = (size_t)*numel * lt_dtype_size(dtype);
  *buf = lt__host_alloc(ctx, bytes ? bytes : 1);
  LT_RETURN_IF(*buf == NULL, LT_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld elements", call,
               (long long)*numel);
  return LT_OK;
}

/* The tensor of the filled host buffer; frees the buffer. */
static lt_status from_buffer(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                             int64_t numel, void *buf, lt_tensor **out) {
  lt_status st = lt_tensor_from_host(ctx, dtype, rank, shape, NULL, buf, out);
  size_t bytes = (size_t)numel * lt_dtype_size(dtype);
  lt__host_free(ctx, buf, bytes ? bytes : 1);
  return st;
}

static lt_status from_values(const char *call, lt_context *ctx, lt_dtype dtype, int rank,
                             const int64_t *shape, value_fn fn, const double *params,
                             lt_tensor **out) {
  int64_t numel;
  void *buf;
  LT_TRY(host_buffer(call, ctx, dtype, rank, shape, out, &numel, &buf));
  for (int64_t i = 0; i < numel; i++)
    lt__store_f64(buf, dtype, i, fn(params, i));
  return from_buffer(ctx, dtype, rank, shape, numel, buf, out);
}

/* NumPy's fill: the first two values, then first + i * (second - first). */
static double arange_value(const double *p, int64_t i) {
  if (i == 0) return p[0];
  if (i == 1) return p[0] + p[1];
  return p[0] + (double)i * ((p[0] + p[1]) - p[0]);
}

/* A whole number as the bits of the 64-bit integer it is (two's complement below 0). */
static uint64_t whole_bits(double v) {
  return v >= 9.2233720368547758e18 ? (uint64_t)v : (uint64_t)(int64_t)v;
}

/* An integer arange with whole start and step: start + i * step in 64-bit integers, exact
 * where doubles are not (above 2^53), as NumPy fills integer dtypes. The ends were checked to
 * fit the dtype, so arithmetic modulo 2^64 gives every value. */
static lt_status int_arange(lt_context *ctx, lt_dtype dtype, int64_t n, double start, double step,
                            lt_tensor **out) {
  int64_t numel;
  void *buf;
  LT_TRY(host_buffer("lt_arange", ctx, dtype, 1, &n, out, &numel, &buf));
  uint64_t first = whole_bits(start), delta = whole_bits(step);
  for (int64_t i = 0; i < numel; i++)
    lt__store_bits(buf, dtype, i, first + (uint64_t)i * delta);
  return from_buffer(ctx, dtype, 1, &n, numel, buf, out);
}

/* An integer dtype must hold a sequence's first and last values (it is monotone): they are
 * refused as lt_tensor_full refuses them, not wrapped. */
static lt_status check_ends(const char *api, lt_dtype dtype, int64_t n, double first, double last) {
  if (n == 0 || !lt__dtype_valid(dtype)) return LT_OK;
  LT_TRY(lt__check_int_value(api, dtype, first));
  return lt__check_int_value(api, dtype, last);
}

lt_status lt_arange(lt_context *ctx, lt_dtype dtype, double start, double stop, double step,
                    lt_tensor **out) {
  LT_CHECK_ARG_NULL(out, "lt_arange", "out");
  *out = NULL;
  LT_RETURN_IF(!isfinite(start) || !isfinite(stop) || !isfinite(step), LT_ERR_INVALID_ARGUMENT,
               "lt_arange: start, stop and step must be finite (got %g, %g, %g)", start, stop,
               step);
  LT_RETURN_IF(step == 0, LT_ERR_INVALID_ARGUMENT, "lt_arange: step is 0");
  double len = ceil((stop - start) / step);
  LT_RETURN_IF(len > 9.0e18, LT_ERR_OVERFLOW, "lt_arange: %g elements are too many", len);
  int64_t n = len > 0 ? (int64_t)len : 0;
  double params[2] = {start, step};
  bool whole = lt__dtype_is_int(dtype) && start == trunc(start) && step == trunc(step) &&
               fabs(step) < 9.2233720368547758e18;
  double last = n ? (whole ? start + (double)(n - 1) * step : arange_value(params, n - 1)) : 0;
  LT_TRY(check_ends("lt_arange", dtype, n, start, last));
  if (whole) return int_arange(ctx, dtype, n, start, step, out);
  return from_values("lt_arange", ctx, dtype, 1, &n, arange_value, params, out);
}

/* params: start, step, stop, num, endpoint (as 0/1). */
static double linspace_value(const double *p, int64_t i) {
  if (p[4] != 0 && p[3] > 1 && (double)i == p[3] - 1) return p[2];
  return (double)i * p[1] + p[0];
}

/* Integer dtypes take the floor, as NumPy 2's linspace (truncation gave -2 for -2.5). */
static double linspace_floor(const double *p, int64_t i) { return floor(linspace_value(p, i)); }

lt_status lt_linspace(lt_context *ctx, lt_dtype dtype, double start, double stop, int64_t num,
                      bool endpoint, lt_tensor **out) {
  LT_CHECK_ARG_NULL(out, "lt_linspace", "out");
  *out = NULL;
  LT_RETURN_IF(num < 0, LT_ERR_INVALID_ARGUMENT, "lt_linspace: num is %lld (must be >= 0)",
               (long long)num);
  int64_t div = endpoint ? num - 1 : num;
  double step = div > 0 ? (stop - start) / (double)div : 0.0;
  double params[5] = {start, step, stop, (double)num, endpoint ? 1.0 : 0.0};
  value_fn fn = lt__dtype_is_exact(dtype) && dtype != LT_BOOL ? linspace_floor : linspace_value;
  LT_TRY(check_ends("lt_linspace", dtype, num, fn(params, 0), num ? fn(params, num - 1) : 0));
  return from_values("lt_linspace", ctx, dtype, 1, &num, fn, params, out);
}

/* params: columns, k. */
static double eye_value(const double *p, int64_t i) {
  int64_t m = (int64_t)p[0], r = i / m, c = i % m;
  return c - r == (int64_t)p[1] ? 1.0 : 0.0;
}

lt_status lt_eye(lt_context *ctx, lt_dtype dtype, int64_t n, int64_t m, int64_t k,
                 lt_tensor **out) {
  int64_t shape[2] = {n, m};
  double params[2] = {(double)m, (double)k};
  return from_values("lt_eye", ctx, dtype, 2, shape, eye_value, params, out);
}

lt_status lt_ones(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                  lt_tensor **out) {
  return lt_tensor_full(ctx, dtype, rank, shape, 1.0, out);
}

/* kind: 0 full, 1 zeros, 2 empty. */
static lt_status like(const char *call, const lt_tensor *t, lt_dtype dtype, int kind, double value,
                      lt_tensor **out) {
  LT_CHECK_ARG_NULL(out, call, "out");
  *out = NULL;
  char name[64];
  snprintf(name, sizeof name, "%s: t", call);
  LT_TRY(lt__check_tensor(t, name));
  if (dtype == LT_DTYPE_INVALID) dtype = t->dtype;
  lt_context *ctx = t->storage->ctx;
  if (kind == 0) return lt_tensor_full(ctx, dtype, t->rank, t->shape, value, out);
  if (kind == 1) return lt_tensor_zeros(ctx, dtype, t->rank, t->shape, out);
  return lt_tensor_empty(ctx, dtype, t->rank, t->shape, out);
}

lt_status lt_full_like(const lt_tensor *t, lt_dtype dtype, double value, lt_tensor **out) {
  return like("lt_full_like", t, dtype, 0, value, out);
}
lt_status lt_ones_like(const lt_tensor *t, lt_dtype dtype, lt_tensor **out) {
  return like("lt_ones_like", t, dtype, 0, 1.0, out);
}
lt_status lt_zeros_like(const lt_tensor *t, lt_dtype dtype, lt_tensor **out) {
  return like("lt_zeros_like", t, dtype, 1, 0.0, out);
}
lt_status lt_empty_like(const lt_tensor *t, lt_dtype dtype, lt_tensor **out) {
  return like("lt_empty_like", t, dtype, 2, 0.0, out);
}
