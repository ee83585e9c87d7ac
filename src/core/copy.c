/* SPDX-License-Identifier: MIT */
/* Materialisation and transfers: contiguous copies, copy with broadcasting, host and
 * cross-context copies. Every copy is one map step of the backend. */
#include "core/checked.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/object.h"

#include <math.h>
#include <string.h>

/* dst = src elementwise (same shape), converting dtype on the backend of dst. */
static lt_status copy_map(lt_tensor *dst, const lt_tensor *src) {
  if (dst->numel == 0) return LT_OK;
  lt__map_step step;
  memset(&step, 0, sizeof step);
  step.rank = dst->rank;
  memcpy(step.shape, dst->shape, sizeof(int64_t) * (size_t)dst->rank);
  step.n_in = 1;
  lt__operand_from_tensor(src, &step.in[0]);
  lt__operand_from_tensor(dst, &step.out);
  step.unary[0] = LT_UNARY_IDENTITY;
  step.scalars[0] = 1.0;
  /* Integers keep every bit through the integer compute types (and convert to floats with
   * one rounding); floats go through the wider float. */
  if (lt__dtype_is_exact(src->dtype))
    step.compute = src->dtype == LT_U64 ? LT_U64 : LT_I64;
  else
    step.compute = src->dtype == LT_F64 || dst->dtype == LT_F64 || lt__dtype_is_exact(dst->dtype)
                       ? LT_F64
                       : LT_F32;
  lt_context *ctx = dst->storage->ctx;
  return ctx->backend->map(ctx, &step);
}

/* min or max (op) of every element of t, as a double, on t's backend. */
static lt_status extreme(const lt_tensor *t, lt_reduce_op op, double *out) {
  lt_context *ctx = t->storage->ctx;
  lt_tensor *r;
  LT_TRY(lt__tensor_new(ctx, LT_F64, 0, NULL, &r));
  lt__reduce_step step;
  memset(&step, 0, sizeof step);
  step.red_rank = t->rank;
  memcpy(step.red_shape, t->shape, sizeof(int64_t) * (size_t)t->rank);
  memcpy(step.in_red_strides, t->strides, sizeof(int64_t) * (size_t)t->rank);
  step.in.mem = t->storage->mem;
  step.in.offset = t->offset;
  step.in.dtype = t->dtype;
  lt__operand_from_tensor(r, &step.out);
  step.unary = LT_UNARY_IDENTITY;
  step.op = op;
  step.alpha = 1.0;
  step.compute = LT_F64;
  lt_status st = ctx->backend->reduce(ctx, &step);
  if (st == LT_OK) st = ctx->backend->mem_read(ctx, r->storage->mem, 0, out, sizeof *out);
  lt_tensor_destroy(r);
  return st;
}

/* Float to integer conversion is checked (issue 18 A): NaN, Inf and values whose truncation
 * the integer dtype cannot hold are refused rather than saturated or wrapped. */
static lt_status check_float_to_int(const lt_tensor *t, lt_dtype dtype, const char *fn) {
  if (!lt__dtype_is_float(t->dtype) || !lt__dtype_is_int(dtype) || t->numel == 0) return LT_OK;
  double lo, hi, min, max;
  LT_TRY(extreme(t, LT_REDUCE_MIN, &min));
  LT_TRY(extreme(t, LT_REDUCE_MAX, &max));
  lt__int_range(dtype, &lo, &hi);
  LT_RETURN_IF(min != min, LT_ERR_OUT_OF_RANGE, "%s: cannot convert NaN in the %s tensor to %s", fn,
               lt_dtype_name(t->dtype), lt_dtype_name(dtype));
  LT_RETURN_IF(trunc(min) < lo || trunc(max) >= hi, LT_ERR_OUT_OF_RANGE,
               /* half-open: hi - 1 rounds back to hi for the 64-bit types */
               "%s: the %s tensor holds %.17g, outside the range of %s [%.17g, %.17g)", fn,
               lt_dtype_name(t->dtype), trunc(min) < lo ? min : max, lt_dtype_name(dtype), lo, hi);
  return LT_OK;
}

lt_status lt_tensor_contiguous(const lt_tensor *t, lt_dtype dtype, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(t, "lt_tensor_contiguous: tensor"));
  if (dtype == LT_DTYPE_INVALID) dtype = t->dtype;
  LT_RETURN_IF(!lt__dtype_valid(dtype), LT_ERR_DTYPE, "lt_tensor_contiguous: invalid dtype %d",
               (int)dtype);
  LT_TRY(check_float_to_int(t, dtype, "lt_tensor_contiguous"));
  LT_TRY(lt__tensor_new(t->storage->ctx, dtype, t->rank, t->shape, out));
  lt_status st = copy_map(*out, t);
  if (st != LT_OK) {
    lt_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

lt_status lt_tensor_reshape(const lt_tensor *t, int rank, const int64_t *shape, lt_tensor **out) {
  /* The view's own checks would name lt_view_reshape, which the caller never called. */
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(t, "lt_tensor_reshape: t"));
  LT_RETURN_IF(rank > 0 && shape == NULL, LT_ERR_NULL_POINTER, "lt_tensor_reshape: shape is NULL");
  lt_status st = lt_view_reshape(t, rank, shape, out);
  if (st != LT_ERR_NOT_VIEWABLE) return st;
  lt_tensor *tmp;
  LT_TRY(lt_tensor_contiguous(t, LT_DTYPE_INVALID, &tmp));
  st = lt_view_reshape(tmp, rank, shape, out);
  lt_tensor_destroy(tmp);
  return st;
}

lt_status lt_tensor_copy_into(lt_tensor *dst, const lt_tensor *src) {
  LT_TRY(lt__check_tensor(dst, "lt_tensor_copy_into: dst"));
  LT_TRY(lt__check_tensor(src, "lt_tensor_copy_into: src"));
  if (dst->storage->ctx != src->storage->ctx) /* lt_tensor_to_context moves between them */
    return lt__context_mismatch("lt_tensor_copy_into", "dst", dst->storage->ctx, "src",
                                src->storage->ctx);
  LT_RETURN_IF(lt__tensor_self_overlaps(dst), LT_ERR_ALIASING,
               "lt_tensor_copy_into: dst has overlapping elements (zero or clashing strides)");
  lt_tensor *view;
  lt_status st = lt_view_broadcast_to(src, dst->rank, dst->shape, &view);
  if (st != LT_OK) {
    lt__error_prefix("lt_tensor_copy_into: src does not broadcast to dst");
    return st;
  }
  st = check_float_to_int(src, dst->dtype, "lt_tensor_copy_into"); /* before dst changes */
  if (st != LT_OK) {
    lt_tensor_destroy(view);
    return st;
  }
  lt__storage_touch(dst->storage);
  if (lt__tensor_overlap(dst, view) == LT__OVERLAP_PARTIAL) {
    /* Reading and writing the same memory in different arrangements: go through a temporary. */
    lt_tensor *tmp;
    st = lt_tensor_contiguous(view, LT_DTYPE_INVALID, &tmp);
    if (st == LT_OK) st = copy_map(dst, tmp);
    lt_tensor_destroy(tmp);
  } else {
    st = copy_map(dst, view);
  }
  lt_tensor_destroy(view);
  return st;
}

/* True if t occupies exactly numel consecutive elements in C order from its offset. */
static bool dense_c_order(const lt_tensor *t) { return lt_tensor_is_contiguous(t); }

lt_status lt_tensor_to_host(const lt_tensor *t, void *dst, size_t dst_bytes) {
  LT_TRY(lt__check_tensor(t, "lt_tensor_to_host: tensor"));
  size_t need = lt_tensor_nbytes(t);
  LT_RETURN_IF(dst == NULL && need > 0, LT_ERR_NULL_POINTER, "lt_tensor_to_host: dst is NULL");
  LT_RETURN_IF(dst_bytes < need, LT_ERR_INVALID_ARGUMENT,
               "lt_tensor_to_host: destination holds %zu bytes but the tensor needs %zu", dst_bytes,
               need);
  if (need == 0) return LT_OK;
  lt_context *ctx = t->storage->ctx;
  size_t es = lt_dtype_size(t->dtype);
  if (dense_c_order(t))
    return ctx->backend->mem_read(ctx, t->storage->mem, (size_t)t->offset * es, dst, need);
  lt_tensor *tmp;
  LT_TRY(lt_tensor_contiguous(t, LT_DTYPE_INVALID, &tmp));
  lt_status st = ctx->backend->mem_read(ctx, tmp->storage->mem, 0, dst, need);
  lt_tensor_destroy(tmp);
  return st;
}

/* Gathers a strided host layout into a C-contiguous host buffer. */
static void host_gather(const void *src, int rank, const int64_t *shape, const int64_t *strides,
                        size_t es, int64_t numel, void *dst) {
  int64_t idx[LT_MAX_RANK] = {0};
  int64_t off = 0;
  for (int64_t n = 0; n < numel; n++) {
    memcpy((char *)dst + n * (int64_t)es, (const char *)src + off * (int64_t)es, es);
    for (int d = rank - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= (shape[d] - 1) * strides[d];
      idx[d] = 0;
    }
  }
}

lt_status lt_tensor_from_host(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                              const int64_t *strides, const void *data, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_context(ctx, "lt_tensor_from_host", "ctx"));
  if (strides != NULL) {
    /* The gather below walks the caller's layout: its offsets must fit in int64. */
    int64_t lo, hi;
    LT_TRY_PREFIXED(lt__check_shape(rank, shape, dtype, NULL), "lt_tensor_from_host");
    LT_TRY(lt__check_layout_span("lt_tensor_from_host", rank, shape, strides, 0, &lo, &hi));
    int64_t es = (int64_t)lt_dtype_size(dtype), bytes;
    LT_RETURN_IF(lt__mul_overflow(lo, es, &bytes) || lt__mul_overflow(hi, es, &bytes),
                 LT_ERR_OVERFLOW, "lt_tensor_from_host: the layout spans more than 2^63 bytes");
  }
  LT_TRY_PREFIXED(lt__tensor_new(ctx, dtype, rank, shape, out), "lt_tensor_from_host");
  lt_tensor *t = *out;
  size_t bytes = lt_tensor_nbytes(t);
  lt_status st = LT_OK;
  if (bytes > 0 && data == NULL) {
    st = lt__error(LT_ERR_NULL_POINTER, "lt_tensor_from_host: data is NULL");
  } else if (bytes > 0) {
    bool contiguous = strides == NULL;
    if (!contiguous) {
      lt_tensor probe = *t;
      memcpy(probe.strides, strides, sizeof(int64_t) * (size_t)rank);
      contiguous = lt_tensor_is_contiguous(&probe);
    }
    if (contiguous) {
      st = ctx->backend->mem_write(ctx, t->storage->mem, 0, data, bytes);
    } else {
      void *buf = lt__host_alloc(ctx, bytes);
      if (buf == NULL) {
        st = lt__error(LT_ERR_OUT_OF_MEMORY, "lt_tensor_from_host: out of memory (%zu bytes)",
                       bytes);
      } else {
        host_gather(data, rank, shape, strides, lt_dtype_size(dtype), t->numel, buf);
        st = ctx->backend->mem_write(ctx, t->storage->mem, 0, buf, bytes);
        lt__host_free(ctx, buf, bytes);
      }
    }
  }
  if (st != LT_OK) {
    lt_tensor_destroy(t);
    *out = NULL;
  }
  return st;
}

lt_status lt_tensor_to_context(const lt_tensor *t, lt_context *ctx, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(t, "lt_tensor_to_context: tensor"));
  LT_TRY(lt__check_context(ctx, "lt_tensor_to_context", "ctx"));
  if (t->storage->ctx == ctx) return lt_tensor_contiguous(t, LT_DTYPE_INVALID, out);
  size_t bytes = lt_tensor_nbytes(t);
  void *buf = lt__host_alloc(ctx, bytes);
  LT_RETURN_IF(buf == NULL, LT_ERR_OUT_OF_MEMORY, "lt_tensor_to_context: out of memory (%zu bytes)",
               bytes);
  lt_status st = lt_tensor_to_host(t, buf, bytes);
  if (st == LT_OK) st = lt_tensor_from_host(ctx, t->dtype, t->rank, t->shape, NULL, buf, out);
  lt__host_free(ctx, buf, bytes);
  return st;
}
