/* SPDX-License-Identifier: MIT */
/* Joining and splitting along an axis: np.concatenate (a view when the pieces already sit side
 * by side in one storage, else copies into slices of a new tensor), np.stack (concatenate of
 * size-1 axes) and np.split with split points (views). */
#include "core/error.h"
#include "core/object.h"

#include <stdio.h>
#include <string.h>

/* True when the non-empty pieces sit one after the other along ax in one storage, with equal
 * strides elsewhere (what lt_split hands out comes back free): *offset and strides then
 * describe the joined view. Empty pieces add nothing (their offsets and strides are
 * arbitrary), and the axis stride of an extent-1 piece is implied by its neighbour's offset. */
static bool adjacent(int n, const lt_tensor *const *ts, int ax, int64_t *offset, int64_t *strides) {
  const lt_tensor *first = NULL, *prev = NULL;
  int64_t step = 0;
  bool known = false;
  for (int i = 0; i < n; i++) {
    const lt_tensor *t = ts[i];
    if (t->numel == 0) continue;
    if (first == NULL) first = t;
    if (t->storage != first->storage || t->dtype != first->dtype) return false;
    for (int k = 0; k < t->rank; k++)
      if (k != ax && t->shape[k] > 1 && t->strides[k] != first->strides[k]) return false;
    if (t->shape[ax] > 1) {
      if (known && t->strides[ax] != step) return false;
      step = t->strides[ax];
      known = true;
    }
    if (prev != NULL) {
      int64_t diff = t->offset - prev->offset;
      if (!known && prev->shape[ax] == 1) {
        step = diff;
        known = true;
      }
      if (diff != prev->shape[ax] * step) return false;
    }
    prev = t;
  }
  /* Pieces over the same elements (stack(a, a)) would alias each other in the result. */
  if (first == NULL || (known && step == 0)) return false;
  memcpy(strides, first->strides, sizeof(int64_t) * (size_t)first->rank);
  strides[ax] = known ? step : first->strides[ax];
  *offset = first->offset;
  return true;
}

static lt_status check_inputs(const char *call, int n, const lt_tensor *const *ts, int axis,
                              int extra_rank, int *ax) {
  LT_RETURN_IF(n <= 0, LT_ERR_INVALID_ARGUMENT, "%s: needs at least one tensor, got %d", call, n);
  LT_CHECK_ARG_NULL(ts, call, "tensors");
  char name[64];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "%s: tensor %d", call, i);
    LT_TRY(lt__check_tensor(ts[i], name));
  }
  const lt_tensor *t0 = ts[0];
  int rank = t0->rank + extra_rank;
  LT_RETURN_IF(rank == 0, LT_ERR_SHAPE_MISMATCH, "%s: rank-0 tensors cannot be concatenated", call);
  snprintf(name, sizeof name, "%s: axis", call);
  LT_TRY(lt__normalize_axis(axis, rank, name, ax));
  for (int i = 1; i < n; i++) {
    const lt_tensor *t = ts[i];
    if (t->storage->ctx != t0->storage->ctx) {
      snprintf(name, sizeof name, "tensor %d", i);
      return lt__context_mismatch(call, name, t->storage->ctx, "tensor 0", t0->storage->ctx);
    }
    LT_RETURN_IF(t->dtype != t0->dtype, LT_ERR_DTYPE, "%s: tensor %d has dtype %s, tensor 0 has %s",
                 call, i, lt_dtype_name(t->dtype), lt_dtype_name(t0->dtype));
    LT_RETURN_IF(t->rank != t0->rank, LT_ERR_SHAPE_MISMATCH,
                 "%s: tensor %d has rank %d, tensor 0 has rank %d", call, i, t->rank, t0->rank);
    for (int k = 0; k < t->rank; k++)
      LT_RETURN_IF((extra_rank || k != *ax) && t->shape[k] != t0->shape[k], LT_ERR_SHAPE_MISMATCH,
                   "%s: tensor %d has extent %lld on axis %d, tensor 0 has %lld", call, i,
                   (long long)t->shape[k], k, (long long)t0->shape[k]);
  }
  return LT_OK;
}

static lt_status concat_checked(const char *call, int n, const lt_tensor *const *ts, int ax,
                                lt_tensor **out) {
  const lt_tensor *t0 = ts[0];
  int64_t shape[LT_MAX_RANK];
  memcpy(shape, t0->shape, sizeof(int64_t) * (size_t)t0->rank);
  shape[ax] = 0;
  for (int i = 0; i < n; i++) {
    LT_RETURN_IF(shape[ax] > INT64_MAX - ts[i]->shape[ax], LT_ERR_OVERFLOW,
                 "%s: the joined extent overflows", call);
    shape[ax] += ts[i]->shape[ax];
  }
  int64_t offset, strides[LT_MAX_RANK];
  if (adjacent(n, ts, ax, &offset, strides)) {
    const lt_tensor *any = ts[0];
    for (int i = 0; i < n; i++)
      if (ts[i]->numel > 0) any = ts[i];
    return lt__tensor_wrap_storage(any->storage, t0->dtype, t0->rank, shape, strides, offset, out);
  }
  lt_tensor *d = NULL;
  LT_TRY(lt__tensor_new(t0->storage->ctx, t0->dtype, t0->rank, shape, &d));
  lt_status st = LT_OK;
  int64_t at = 0;
  for (int i = 0; i < n && st == LT_OK; i++) {
    int64_t e = ts[i]->shape[ax];
    lt_tensor *piece = NULL;
    st = lt_view_slice(d, ax, at, at + e, 1, &piece);
    if (st == LT_OK && piece->numel > 0) st = lt_tensor_copy_into(piece, ts[i]);
    lt_tensor_destroy(piece);
    at += e;
  }
  if (st != LT_OK) {
    lt__error_prefix(call);
    lt_tensor_destroy(d);
    return st;
  }
  *out = d;
  return LT_OK;
}

lt_status lt_concatenate(int n, const lt_tensor *const *tensors, int axis, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  int ax;
  LT_TRY(check_inputs("lt_concatenate", n, tensors, axis, 0, &ax));
  return concat_checked("lt_concatenate", n, tensors, ax, out);
}

lt_status lt_stack(int n, const lt_tensor *const *tensors, int axis, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  int ax;
  LT_TRY(check_inputs("lt_stack", n, tensors, axis, 1, &ax));
  LT_RETURN_IF(n > 4096 && (size_t)n > SIZE_MAX / sizeof(lt_tensor *), LT_ERR_OVERFLOW,
               "lt_stack: too many tensors");
  lt_context *ctx = tensors[0]->storage->ctx;
  lt_tensor **views = lt__host_calloc(ctx, (size_t)n, sizeof *views);
  LT_RETURN_IF(views == NULL, LT_ERR_OUT_OF_MEMORY, "lt_stack: out of memory");
  lt_status st = LT_OK;
  for (int i = 0; i < n && st == LT_OK; i++)
    st = lt_view_unsqueeze(tensors[i], ax, &views[i]);
  if (st == LT_OK) st = concat_checked("lt_stack", n, (const lt_tensor *const *)views, ax, out);
  for (int i = 0; i < n; i++)
    lt_tensor_destroy(views[i]);
  lt__host_free(ctx, views, (size_t)n * sizeof *views);
  return st;
}

lt_status lt_split(const lt_tensor *a, int axis, int n_points, const int64_t *points,
                   lt_tensor **outs) {
  LT_CHECK_NULL(outs, "outs");
  LT_RETURN_IF(n_points < 0, LT_ERR_INVALID_ARGUMENT, "lt_split: n_points is %d", n_points);
  for (int i = 0; i <= n_points; i++)
    outs[i] = NULL;
  LT_TRY(lt__check_tensor(a, "lt_split: a"));
  LT_RETURN_IF(n_points > 0 && points == NULL, LT_ERR_NULL_POINTER, "lt_split: points is NULL");
  LT_RETURN_IF(a->rank == 0, LT_ERR_OUT_OF_RANGE, "lt_split: a has rank 0: no axis %d", axis);
  int ax;
  LT_TRY(lt__normalize_axis(axis, a->rank, "lt_split: axis", &ax));
  int64_t ext = a->shape[ax], start = 0;
  lt_status st = LT_OK;
  for (int i = 0; i <= n_points && st == LT_OK; i++) {
    /* Python slicing of a[start:p]: negative counts from the end, both ends clamp. */
    int64_t p = i < n_points ? points[i] : ext;
    if (p < 0) p = p + ext < 0 ? 0 : p + ext;
    if (p > ext) p = ext;
    st = lt_view_slice(a, ax, start, p > start ? p : start, 1, &outs[i]);
    start = p;
  }
  if (st != LT_OK) {
    lt__error_prefix("lt_split");
    for (int i = 0; i <= n_points; i++) {
      lt_tensor_destroy(outs[i]);
      outs[i] = NULL;
    }
  }
  return st;
}
