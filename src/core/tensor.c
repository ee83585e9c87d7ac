/* SPDX-License-Identifier: MIT */
/* Tensors and their reference-counted storage: creation, wrapping, properties, elements. */
#include "core/checked.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/object.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

lt_status lt__check_tensor(const lt_tensor *t, const char *what) {
  LT_RETURN_IF(t == NULL, LT_ERR_NULL_POINTER, "%s is NULL", what);
  if (t->tag == LT__HANDLE_TENSOR) return LT_OK;
  return lt__handle_check(t, LT__HANDLE_TENSOR, "", what);
}

/* For the accessors that return a value, not a status: false (with the message set) for
 * anything but a live tensor. */
static bool live(const lt_tensor *t, const char *fn) {
  return lt__handle_live(t, LT__HANDLE_TENSOR) ||
         (lt__handle_check(t, LT__HANDLE_TENSOR, fn, "tensor"), false);
}

lt_status lt__normalize_axis(int axis, int rank, const char *what, int *out) {
  LT_RETURN_IF(axis < -rank || axis >= rank, LT_ERR_OUT_OF_RANGE,
               "%s: axis %d is out of range for a rank-%d tensor", what, axis, rank);
  *out = axis < 0 ? axis + rank : axis;
  return LT_OK;
}

lt_status lt__check_shape(int rank, const int64_t *shape, lt_dtype dtype, int64_t *numel) {
  LT_RETURN_IF(rank < 0 || rank > LT_MAX_RANK, LT_ERR_INVALID_ARGUMENT,
               "rank %d is outside [0, %d]", rank, LT_MAX_RANK);
  LT_RETURN_IF(rank > 0 && shape == NULL, LT_ERR_NULL_POINTER, "shape is NULL for rank %d", rank);
  LT_RETURN_IF(!lt__dtype_valid(dtype), LT_ERR_DTYPE, "invalid dtype %d", (int)dtype);
  int64_t n = 1;
  bool empty = false;
  for (int i = 0; i < rank; i++) {
    LT_RETURN_IF(shape[i] < 0, LT_ERR_INVALID_ARGUMENT, "extent %lld of axis %d is negative",
                 (long long)shape[i], i);
    if (shape[i] == 0) empty = true;
  }
  /* An empty shape has 0 elements even if the other extents multiply past 2^63; still refuse
   * extents whose product overflows, since strides of such a shape overflow too. */
  for (int i = 0; i < rank; i++) {
    int64_t e = shape[i] == 0 ? 1 : shape[i];
    LT_RETURN_IF(lt__mul_overflow(n, e, &n), LT_ERR_OVERFLOW,
                 "shape overflows: the product of extents exceeds 2^63 at axis %d", i);
  }
  int64_t bytes;
  bool too_big = lt__mul_overflow(n, (int64_t)lt_dtype_size(dtype), &bytes);
  LT_RETURN_IF(too_big && empty, LT_ERR_OVERFLOW,
               "shape overflows: the tensor is empty, but the strides of a contiguous %s layout "
               "would exceed 2^63 bytes (product of the nonzero extents: %lld)",
               lt_dtype_name(dtype), (long long)n);
  LT_RETURN_IF(too_big, LT_ERR_OVERFLOW, "shape overflows: %lld elements of %s exceed 2^63 bytes",
               (long long)n, lt_dtype_name(dtype));
  if (numel) *numel = empty ? 0 : n;
  return LT_OK;
}

void lt__contiguous_strides(int rank, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
}

void lt__layout_extent(int rank, const int64_t *shape, const int64_t *strides, int64_t *lo,
                       int64_t *hi) {
  int64_t l = 0, h = 0;
  for (int i = 0; i < rank; i++) {
    if (shape[i] == 0) {
      *lo = 0;
      *hi = -1; /* empty */
      return;
    }
    int64_t span = (shape[i] - 1) * strides[i];
    if (span < 0)
      l += span;
    else
      h += span;
  }
  *lo = l;
  *hi = h;
}

lt_status lt__check_layout_span(const char *fn, int rank, const int64_t *shape,
                                const int64_t *strides, int64_t offset, int64_t *lo, int64_t *hi) {
  int64_t l = offset, h = offset;
  for (int i = 0; i < rank; i++) {
    if (shape[i] == 0) continue;
    int64_t span;
    LT_RETURN_IF(lt__mul_overflow(shape[i] - 1, strides[i], &span), LT_ERR_OVERFLOW,
                 "%s: extent %lld times stride %lld of axis %d overflows", fn, (long long)shape[i],
                 (long long)strides[i], i);
    LT_RETURN_IF(lt__add_overflow(span < 0 ? l : h, span, span < 0 ? &l : &h), LT_ERR_OVERFLOW,
                 "%s: the layout's span overflows at axis %d", fn, i);
  }
  *lo = l;
  *hi = h;
  return LT_OK;
}

lt_status lt__storage_create(lt_context *ctx, size_t bytes, lt__storage **out) {
  lt__storage *s = lt__host_alloc(ctx, sizeof *s);
  LT_RETURN_IF(s == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory allocating a storage header");
  memset(s, 0, sizeof *s);
  lt_status st = lt__device_alloc(ctx, bytes, &s->mem);
  if (st != LT_OK) {
    lt__host_free(ctx, s, sizeof *s);
    return st;
  }
  atomic_init(&s->refcount, 1);
  s->ctx = ctx;
  s->nbytes = bytes;
  s->owned = true;
  lt__context_retain(ctx);
  *out = s;
  return LT_OK;
}

void lt__storage_release(lt__storage *s) {
  if (s == NULL || atomic_fetch_sub(&s->refcount, 1) != 1) return;
  lt_context *ctx = s->ctx;
  if (s->owned) lt__device_free(ctx, s->mem, s->nbytes);
  if (s->release) s->release(s->release_data, s->release_user);
  lt__host_free(ctx, s, sizeof *s);
  lt__context_release(ctx);
}

lt_status lt__tensor_wrap_storage(lt__storage *storage, lt_dtype dtype, int rank,
                                  const int64_t *shape, const int64_t *strides, int64_t offset,
                                  lt_tensor **out) {
  lt_tensor *t = lt__host_alloc(storage->ctx, sizeof *t);
  LT_RETURN_IF(t == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory allocating a tensor handle");
  memset(t, 0, sizeof *t);
  static atomic_uint_fast64_t next_serial = 1;
  t->tag = LT__HANDLE_TENSOR;
  t->serial = atomic_fetch_add(&next_serial, 1);
  t->storage = storage;
  atomic_fetch_add(&storage->refcount, 1);
  t->dtype = dtype;
  t->rank = rank;
  t->offset = offset;
  t->numel = 1;
  for (int i = 0; i < rank; i++) {
    t->shape[i] = shape[i];
    t->strides[i] = strides[i];
    t->numel *= shape[i];
  }
  *out = t;
  return LT_OK;
}

lt_status lt__tensor_new(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                         lt_tensor **out) {
  LT_CHECK_ARG_NULL(out, "", "the output pointer (out)");
  *out = NULL;
  LT_CHECK_ARG_NULL(ctx, "", "ctx");
  int64_t numel;
  LT_TRY(lt__check_shape(rank, shape, dtype, &numel));
  size_t bytes = (size_t)numel * lt_dtype_size(dtype);
  lt__storage *s;
  LT_TRY(lt__storage_create(ctx, bytes, &s));
  int64_t strides[LT_MAX_RANK];
  lt__contiguous_strides(rank, shape, strides);
  lt_status st = lt__tensor_wrap_storage(s, dtype, rank, shape, strides, 0, out);
  lt__storage_release(s); /* the tensor holds the only reference now (or none on failure) */
  return st;
}

lt_status lt_tensor_empty(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                          lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, "lt_tensor_empty", "ctx"));
  LT_TRY_PREFIXED(lt__tensor_new(ctx, dtype, rank, shape, out), "lt_tensor_empty");
  return LT_OK;
}

/* A double stored into an integer tensor is checked as lt_tensor_contiguous checks float to
 * integer conversion (issue 18 A): NaN, and values whose truncation the dtype cannot hold, are
 * refused instead of saturated or wrapped (NumPy 2 refuses np.full(3, 300, np.int8) too). */
lt_status lt__check_int_value(const char *api, lt_dtype dtype, double value) {
  if (!lt__dtype_is_int(dtype)) return LT_OK;
  LT_RETURN_IF(value != value, LT_ERR_OUT_OF_RANGE, "%s: cannot store NaN in a tensor of dtype %s",
               api, lt_dtype_name(dtype));
  double lo, hi;
  lt__int_range(dtype, &lo, &hi);
  LT_RETURN_IF(trunc(value) < lo || trunc(value) >= hi, LT_ERR_OUT_OF_RANGE,
               "%s: %g is outside the range of %s [%.17g, %.17g]", api, value, lt_dtype_name(dtype),
               lo, hi - 1);
  return LT_OK;
}

lt_status lt_tensor_full(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                         double value, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, "lt_tensor_full", "ctx"));
  if (lt__dtype_valid(dtype)) LT_TRY(lt__check_int_value("lt_tensor_full", dtype, value));
  LT_TRY_PREFIXED(lt__tensor_new(ctx, dtype, rank, shape, out), "lt_tensor_full");
  lt__map_step step;
  memset(&step, 0, sizeof step);
  step.rank = rank;
  memcpy(step.shape, (*out)->shape, sizeof(int64_t) * (size_t)rank);
  step.n_in = 0;
  lt__operand_from_tensor(*out, &step.out);
  step.scalars[0] = value;
  step.compute = LT_F64;
  lt_status st = (*out)->numel ? ctx->backend->map(ctx, &step) : LT_OK;
  if (st != LT_OK) {
    lt_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

lt_status lt_tensor_zeros(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                          lt_tensor **out) {
  return lt_tensor_full(ctx, dtype, rank, shape, 0.0, out);
}

void lt_tensor_destroy(lt_tensor *t) {
  if (!lt__handle_may_destroy(t, LT__HANDLE_TENSOR, "lt_tensor_destroy")) return;
  lt__storage *s = t->storage;
  lt__handle_kill(t, LT__HANDLE_TENSOR);
  lt__handle_free(s->ctx, t, sizeof *t);
  lt__storage_release(s);
}

lt_status lt_tensor_wrap_host(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                              const int64_t *strides, void *data, lt_release_fn release, void *user,
                              lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, "lt_tensor_wrap_host", "ctx"));
  LT_RETURN_IF(!ctx->backend->caps.host_memory, LT_ERR_UNSUPPORTED,
               "lt_tensor_wrap_host: context '%s' is not a CPU context; use lt_tensor_from_host",
               ctx->device);
  int64_t numel;
  LT_TRY_PREFIXED(lt__check_shape(rank, shape, dtype, &numel), "lt_tensor_wrap_host");
  LT_RETURN_IF(data == NULL && numel > 0, LT_ERR_NULL_POINTER, "lt_tensor_wrap_host: data is NULL");
  /* The kernels load whole elements: a misaligned one is undefined behaviour in C. */
  size_t align = lt_dtype_size(dtype);
  LT_RETURN_IF(numel > 0 && (uintptr_t)data % align != 0, LT_ERR_INVALID_ARGUMENT,
               "lt_tensor_wrap_host: data %p is not aligned to %zu bytes (one %s element); "
               "lt_tensor_from_host copies from any address",
               data, align, lt_dtype_name(dtype));
  int64_t cstrides[LT_MAX_RANK];
  if (strides == NULL) {
    lt__contiguous_strides(rank, shape, cstrides);
    strides = cstrides;
  }
  /* The storage spans exactly the reachable elements; overflow in that span is refused. */
  int64_t lo = 0, hi = 0, extent = 0, span_bytes = 0;
  LT_TRY(lt__check_layout_span("lt_tensor_wrap_host", rank, shape, strides, 0, &lo, &hi));
  size_t esize = lt_dtype_size(dtype);
  if (numel > 0)
    LT_RETURN_IF(lt__sub_overflow(hi, lo, &extent) || extent == INT64_MAX ||
                     lt__mul_overflow(extent + 1, (int64_t)esize, &span_bytes),
                 LT_ERR_OVERFLOW, "lt_tensor_wrap_host: the layout spans more than 2^63 bytes");
  lt__storage *s = lt__host_alloc(ctx, sizeof *s);
  LT_RETURN_IF(s == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory allocating a storage header");
  memset(s, 0, sizeof *s);
  atomic_init(&s->refcount, 1);
  s->ctx = ctx;
  s->mem = numel > 0 ? (char *)data + lo * (int64_t)esize : data;
  s->nbytes = (size_t)span_bytes;
  s->owned = false;
  lt__context_retain(ctx);
  lt_status st = lt__tensor_wrap_storage(s, dtype, rank, shape, strides, numel > 0 ? -lo : 0, out);
  if (st != LT_OK) {
    lt__host_free(ctx, s, sizeof *s);
    lt__context_release(ctx);
    return st;
  }
  /* Only now does the library own the release duty: on failure it is never called. */
  s->release = release;
  s->release_data = data;
  s->release_user = user;
  lt__storage_release(s);
  return LT_OK;
}

void lt__operand_from_tensor(const lt_tensor *t, lt__operand *op) {
  op->mem = t->storage->mem;
  op->offset = t->offset;
  op->dtype = t->dtype;
  for (int i = 0; i < t->rank; i++)
    op->strides[i] = t->strides[i];
}

static lt_status element_offset(const lt_tensor *t, const int64_t *index, int64_t *off) {
  LT_RETURN_IF(t->rank > 0 && index == NULL, LT_ERR_NULL_POINTER, "index is NULL");
  int64_t o = t->offset;
  for (int i = 0; i < t->rank; i++) {
    int64_t k = index[i] < 0 ? index[i] + t->shape[i] : index[i];
    LT_RETURN_IF(k < 0 || k >= t->shape[i], LT_ERR_OUT_OF_RANGE,
                 "index %lld is out of range for axis %d of extent %lld", (long long)index[i], i,
                 (long long)t->shape[i]);
    o += k * t->strides[i];
  }
  *off = o;
  return LT_OK;
}

/* The raw bytes of the element at `index` (bounds checked) read into or written from buf. */
static lt_status read_element(const lt_tensor *t, const int64_t *index, unsigned char buf[8]) {
  int64_t off;
  LT_TRY(element_offset(t, index, &off));
  size_t es = lt_dtype_size(t->dtype);
  lt_context *ctx = t->storage->ctx;
  return ctx->backend->mem_read(ctx, t->storage->mem, (size_t)off * es, buf, es);
}

static lt_status write_element(lt_tensor *t, const int64_t *index, const unsigned char buf[8]) {
  int64_t off;
  LT_TRY(element_offset(t, index, &off));
  size_t es = lt_dtype_size(t->dtype);
  lt_context *ctx = t->storage->ctx;
  lt__storage_touch(t->storage);
  return ctx->backend->mem_write(ctx, t->storage->mem, (size_t)off * es, buf, es);
}

lt_status lt_tensor_get(const lt_tensor *t, const int64_t *index, double *value) {
  LT_TRY(lt__check_tensor(t, "lt_tensor_get: tensor"));
  LT_CHECK_NULL(value, "value");
  unsigned char buf[8];
  LT_TRY_PREFIXED(read_element(t, index, buf), "lt_tensor_get");
  *value = lt__load_f64(buf, t->dtype, 0);
  return LT_OK;
}

lt_status lt_tensor_set(lt_tensor *t, const int64_t *index, double value) {
  LT_TRY(lt__check_tensor(t, "lt_tensor_set: tensor"));
  LT_TRY(lt__check_int_value("lt_tensor_set", t->dtype, value));
  unsigned char buf[8];
  lt__store_f64(buf, t->dtype, 0, value);
  LT_TRY_PREFIXED(write_element(t, index, buf), "lt_tensor_set");
  return LT_OK;
}

/* Integer and bool tensors only: their values do not all fit a double. */
static lt_status check_exact(const lt_tensor *t, const char *api, const char *instead) {
  LT_TRY(lt__check_tensor(t, api));
  LT_RETURN_IF(!lt__dtype_is_exact(t->dtype), LT_ERR_DTYPE,
               "%s: the tensor is %s, not an integer or bool (use %s)", api,
               lt_dtype_name(t->dtype), instead);
  return LT_OK;
}

/* Reads the raw element at `index` of an integer or bool tensor as 64 bits. */
static lt_status get_bits(const lt_tensor *t, const int64_t *index, const char *api,
                          uint64_t *bits) {
  LT_TRY(check_exact(t, api, "lt_tensor_get"));
  unsigned char buf[8];
  LT_TRY_PREFIXED(read_element(t, index, buf), api);
  *bits = lt__load_bits(buf, t->dtype, 0);
  return LT_OK;
}

static lt_status set_bits(lt_tensor *t, const int64_t *index, const char *api, uint64_t bits) {
  LT_TRY(check_exact(t, api, "lt_tensor_set"));
  unsigned char buf[8];
  lt__store_bits(buf, t->dtype, 0, bits);
  LT_TRY_PREFIXED(write_element(t, index, buf), api);
  return LT_OK;
}

lt_status lt_tensor_get_i64(const lt_tensor *t, const int64_t *index, int64_t *value) {
  LT_CHECK_NULL(value, "value");
  uint64_t bits = 0;
  LT_TRY(get_bits(t, index, "lt_tensor_get_i64", &bits));
  LT_RETURN_IF(t->dtype == LT_U64 && bits > (uint64_t)INT64_MAX, LT_ERR_DTYPE,
               "lt_tensor_get_i64: the u64 value %llu does not fit in int64 (use "
               "lt_tensor_get_u64)",
               (unsigned long long)bits);
  *value = (int64_t)bits;
  return LT_OK;
}

lt_status lt_tensor_get_u64(const lt_tensor *t, const int64_t *index, uint64_t *value) {
  LT_CHECK_NULL(value, "value");
  uint64_t bits = 0;
  LT_TRY(get_bits(t, index, "lt_tensor_get_u64", &bits));
  LT_RETURN_IF(lt__dtype_is_signed_int(t->dtype) && (int64_t)bits < 0, LT_ERR_DTYPE,
               "lt_tensor_get_u64: the %s value %lld is negative (use lt_tensor_get_i64)",
               lt_dtype_name(t->dtype), (long long)(int64_t)bits);
  *value = bits;
  return LT_OK;
}

lt_status lt_tensor_set_i64(lt_tensor *t, const int64_t *index, int64_t value) {
  return set_bits(t, index, "lt_tensor_set_i64", (uint64_t)value);
}

lt_status lt_tensor_set_u64(lt_tensor *t, const int64_t *index, uint64_t value) {
  return set_bits(t, index, "lt_tensor_set_u64", value);
}

lt_status lt_tensor_host_pointer(const lt_tensor *t, void **out) {
  LT_TRY(lt__check_tensor(t, "lt_tensor_host_pointer: tensor"));
  LT_CHECK_NULL(out, "out");
  LT_RETURN_IF(!t->storage->ctx->backend->caps.host_memory, LT_ERR_UNSUPPORTED,
               "lt_tensor_host_pointer: tensor lives on '%s', not the host",
               t->storage->ctx->device);
  *out = (char *)t->storage->mem + t->offset * (int64_t)lt_dtype_size(t->dtype);
  return LT_OK;
}

lt_dtype lt_tensor_dtype(const lt_tensor *t) {
  return live(t, "lt_tensor_dtype") ? t->dtype : LT_DTYPE_INVALID;
}
int lt_tensor_rank(const lt_tensor *t) { return live(t, "lt_tensor_rank") ? t->rank : 0; }
const int64_t *lt_tensor_shape(const lt_tensor *t) {
  return live(t, "lt_tensor_shape") ? t->shape : NULL;
}
const int64_t *lt_tensor_strides(const lt_tensor *t) {
  return live(t, "lt_tensor_strides") ? t->strides : NULL;
}
int64_t lt_tensor_offset(const lt_tensor *t) { return live(t, "lt_tensor_offset") ? t->offset : 0; }
int64_t lt_tensor_numel(const lt_tensor *t) { return live(t, "lt_tensor_numel") ? t->numel : 0; }
size_t lt_tensor_nbytes(const lt_tensor *t) {
  return live(t, "lt_tensor_nbytes") ? (size_t)t->numel * lt_dtype_size(t->dtype) : 0;
}
lt_context *lt_tensor_context(const lt_tensor *t) {
  return live(t, "lt_tensor_context") ? t->storage->ctx : NULL;
}

bool lt_tensor_is_contiguous(const lt_tensor *t) {
  if (!live(t, "lt_tensor_is_contiguous")) return false;
  if (t->numel == 0) return true;
  int64_t expect = 1;
  for (int i = t->rank - 1; i >= 0; i--) {
    if (t->shape[i] == 1) continue;
    if (t->strides[i] != expect) return false;
    expect *= t->shape[i];
  }
  return true;
}

bool lt_tensor_shares_storage(const lt_tensor *a, const lt_tensor *b) {
  return live(a, "lt_tensor_shares_storage") && live(b, "lt_tensor_shares_storage") &&
         a->storage == b->storage;
}
