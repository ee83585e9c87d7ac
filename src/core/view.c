/* SPDX-License-Identifier: MIT */
/* Layout algebra: every view is O(rank) metadata over shared storage, never a copy. */
#include "core/checked.h"
#include "core/error.h"
#include "core/object.h"

#include <string.h>

/* Makes the output handle for a view of t with a new layout. */
static lt_status view_make(const lt_tensor *t, int rank, const int64_t *shape,
                           const int64_t *strides, int64_t offset, lt_tensor **out) {
  return lt__tensor_wrap_storage(t->storage, t->dtype, rank, shape, strides, offset, out);
}

#define VIEW_BEGIN(fn)                                                                             \
  LT_CHECK_NULL(out, "out");                                                                       \
  *out = NULL;                                                                                     \
  LT_TRY(lt__check_tensor(t, fn ": tensor"))

/* Computes strides for viewing t as `shape` (NumPy's attempt_nocopy_reshape): groups of input
 * axes must map onto groups of output axes that are contiguous among themselves. */
static bool reshape_strides(const lt_tensor *t, int rank, const int64_t *shape, int64_t *strides) {
  int64_t oshape[LT_MAX_RANK], ostrides[LT_MAX_RANK];
  int orank = 0;
  for (int i = 0; i < t->rank; i++)
    if (t->shape[i] != 1) {
      oshape[orank] = t->shape[i];
      ostrides[orank++] = t->strides[i];
    }
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < rank && oi < orank) {
    int64_t np = shape[ni], op = oshape[oi];
    while (np != op) {
      if (np < op)
        np *= shape[nj++];
      else
        op *= oshape[oj++];
    }
    for (int k = oi; k < oj - 1; k++)
      if (ostrides[k] != oshape[k + 1] * ostrides[k + 1]) return false;
    strides[nj - 1] = ostrides[oj - 1];
    for (int k = nj - 1; k > ni; k--)
      strides[k - 1] = strides[k] * shape[k];
    ni = nj++;
    oi = oj++;
  }
  /* Trailing size-1 axes of the result. */
  int64_t last = ni > 0 ? strides[ni - 1] : 1;
  for (int k = ni; k < rank; k++)
    strides[k] = last;
  return true;
}

lt_status lt_view_reshape(const lt_tensor *t, int rank, const int64_t *shape, lt_tensor **out) {
  VIEW_BEGIN("lt_view_reshape");
  LT_RETURN_IF(rank < 0 || rank > LT_MAX_RANK, LT_ERR_INVALID_ARGUMENT,
               "lt_view_reshape: rank %d is outside [0, %d]", rank, LT_MAX_RANK);
  LT_RETURN_IF(rank > 0 && shape == NULL, LT_ERR_NULL_POINTER, "lt_view_reshape: shape is NULL");
  int64_t full[LT_MAX_RANK];
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < rank; i++) {
    full[i] = shape[i];
    if (shape[i] == -1) {
      LT_RETURN_IF(infer >= 0, LT_ERR_INVALID_ARGUMENT,
                   "lt_view_reshape: more than one -1 extent (axes %d and %d)", infer, i);
      infer = i;
      continue;
    }
    LT_RETURN_IF(shape[i] < 0, LT_ERR_INVALID_ARGUMENT,
                 "lt_view_reshape: extent %lld of axis %d is negative", (long long)shape[i], i);
    LT_RETURN_IF(lt__mul_overflow(known, shape[i], &known), LT_ERR_OVERFLOW,
                 "lt_view_reshape: the requested shape overflows");
  }
  if (infer >= 0) {
    LT_RETURN_IF(known == 0, LT_ERR_SHAPE_MISMATCH,
                 "lt_view_reshape: cannot infer axis %d: the other extents multiply to 0, so any "
                 "extent fits",
                 infer);
    LT_RETURN_IF(t->numel % known != 0, LT_ERR_SHAPE_MISMATCH,
                 "lt_view_reshape: cannot infer axis %d: %lld elements are not divisible by %lld",
                 infer, (long long)t->numel, (long long)known);
    full[infer] = t->numel / known;
    known = t->numel;
  }
  LT_RETURN_IF(known != t->numel, LT_ERR_SHAPE_MISMATCH,
               "lt_view_reshape: cannot reshape %lld elements into a shape of %lld elements",
               (long long)t->numel, (long long)known);
  int64_t strides[LT_MAX_RANK];
  if (t->numel == 0) {
    lt__contiguous_strides(rank, full, strides);
  } else if (!reshape_strides(t, rank, full, strides)) {
    return lt__error(LT_ERR_NOT_VIEWABLE,
                     "lt_view_reshape: the strides of this tensor do not allow the new shape "
                     "without a copy (use lt_tensor_reshape to copy when needed)");
  }
  return view_make(t, rank, full, strides, t->offset, out);
}

lt_status lt_view_permute(const lt_tensor *t, const int *axes, lt_tensor **out) {
  VIEW_BEGIN("lt_view_permute");
  LT_RETURN_IF(t->rank > 0 && axes == NULL, LT_ERR_NULL_POINTER, "lt_view_permute: axes is NULL");
  int64_t shape[LT_MAX_RANK], strides[LT_MAX_RANK];
  bool seen[LT_MAX_RANK] = {false};
  for (int i = 0; i < t->rank; i++) {
    int a;
    LT_TRY(lt__normalize_axis(axes[i], t->rank, "lt_view_permute", &a));
    LT_RETURN_IF(seen[a], LT_ERR_INVALID_ARGUMENT,
                 "lt_view_permute: axis %d appears twice in the permutation", a);
    seen[a] = true;
    shape[i] = t->shape[a];
    strides[i] = t->strides[a];
  }
  return view_make(t, t->rank, shape, strides, t->offset, out);
}

lt_status lt_view_transpose(const lt_tensor *t, int axis0, int axis1, lt_tensor **out) {
  VIEW_BEGIN("lt_view_transpose");
  int a, b;
  LT_TRY(lt__normalize_axis(axis0, t->rank, "lt_view_transpose", &a));
  LT_TRY(lt__normalize_axis(axis1, t->rank, "lt_view_transpose", &b));
  int axes[LT_MAX_RANK];
  for (int i = 0; i < t->rank; i++)
    axes[i] = i;
  axes[a] = b;
  axes[b] = a;
  return lt_view_permute(t, axes, out);
}

lt_status lt_view_slice(const lt_tensor *t, int axis, int64_t start, int64_t stop, int64_t step,
                        lt_tensor **out) {
  VIEW_BEGIN("lt_view_slice");
  int a;
  LT_TRY(lt__normalize_axis(axis, t->rank, "lt_view_slice", &a));
  LT_RETURN_IF(step == 0, LT_ERR_INVALID_ARGUMENT, "lt_view_slice: step must not be zero");
  LT_RETURN_IF(step == INT64_MIN, LT_ERR_OVERFLOW, "lt_view_slice: step %lld overflows",
               (long long)step);
  int64_t n = t->shape[a];
  if (start == LT_SLICE_DEFAULT) start = step > 0 ? 0 : n - 1;
  if (stop == LT_SLICE_DEFAULT) stop = step > 0 ? n : -1;
  if (step > 0) {
    LT_RETURN_IF(start < 0 || start > n, LT_ERR_OUT_OF_RANGE,
                 "lt_view_slice: start %lld is outside [0, %lld] for axis %d", (long long)start,
                 (long long)n, a);
    LT_RETURN_IF(stop < 0 || stop > n, LT_ERR_OUT_OF_RANGE,
                 "lt_view_slice: stop %lld is outside [0, %lld] for axis %d", (long long)stop,
                 (long long)n, a);
  } else {
    LT_RETURN_IF(start < -1 || start > n - 1, LT_ERR_OUT_OF_RANGE,
                 "lt_view_slice: start %lld is outside [-1, %lld] for axis %d with a negative "
                 "step",
                 (long long)start, (long long)(n - 1), a);
    LT_RETURN_IF(stop < -1 || stop > n - 1, LT_ERR_OUT_OF_RANGE,
                 "lt_view_slice: stop %lld is outside [-1, %lld] for axis %d with a negative step",
                 (long long)stop, (long long)(n - 1), a);
  }
  int64_t count = 0;
  if (step > 0 && stop > start) count = (stop - start - 1) / step + 1;
  if (step < 0 && stop < start) count = (start - stop - 1) / (-step) + 1;
  int64_t shape[LT_MAX_RANK], strides[LT_MAX_RANK];
  memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->rank);
  memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->rank);
  int64_t offset = t->offset;
  if (count > 0 && t->numel > 0) offset += start * t->strides[a];
  shape[a] = count;
  /* The stride is never used with at most one element left (x[0:1:2**62] is valid), nor in an
   * empty tensor, whose strides are arbitrary and may be as wide as INT64_MIN, which flip could
   * not negate. With elements present and two kept, |stride * step| lies inside the old span. */
  if (count > 1 && t->numel > 0)
    LT_RETURN_IF(lt__mul_overflow(t->strides[a], step, &strides[a]), LT_ERR_OVERFLOW,
                 "lt_view_slice: stride %lld times step %lld overflows", (long long)t->strides[a],
                 (long long)step);
  return view_make(t, t->rank, shape, strides, offset, out);
}

lt_status lt_view_select(const lt_tensor *t, int axis, int64_t index, lt_tensor **out) {
  VIEW_BEGIN("lt_view_select");
  int a;
  LT_TRY(lt__normalize_axis(axis, t->rank, "lt_view_select", &a));
  int64_t n = t->shape[a];
  int64_t k = index < 0 ? index + n : index;
  LT_RETURN_IF(k < 0 || k >= n, LT_ERR_OUT_OF_RANGE,
               "lt_view_select: index %lld is out of range for axis %d of extent %lld",
               (long long)index, a, (long long)n);
  int64_t shape[LT_MAX_RANK], strides[LT_MAX_RANK];
  int r = 0;
  for (int i = 0; i < t->rank; i++)
    if (i != a) {
      shape[r] = t->shape[i];
      strides[r++] = t->strides[i];
    }
  /* An empty tensor's strides may be arbitrary: its offset is never used, so keep it. */
  int64_t offset = t->numel > 0 ? t->offset + k * t->strides[a] : t->offset;
  return view_make(t, r, shape, strides, offset, out);
}

lt_status lt_view_broadcast_to(const lt_tensor *t, int rank, const int64_t *shape,
                               lt_tensor **out) {
  VIEW_BEGIN("lt_view_broadcast_to");
  LT_RETURN_IF(rank < t->rank || rank > LT_MAX_RANK, LT_ERR_SHAPE_MISMATCH,
               "lt_view_broadcast_to: cannot broadcast rank %d to rank %d", t->rank, rank);
  LT_RETURN_IF(rank > 0 && shape == NULL, LT_ERR_NULL_POINTER,
               "lt_view_broadcast_to: shape is NULL");
  LT_TRY_PREFIXED(lt__check_shape(rank, shape, t->dtype, NULL), "lt_view_broadcast_to");
  int64_t strides[LT_MAX_RANK];
  int lead = rank - t->rank;
  for (int i = 0; i < rank; i++) {
    if (i < lead) {
      strides[i] = 0;
      continue;
    }
    int64_t e = t->shape[i - lead];
    if (e == shape[i])
      strides[i] = t->strides[i - lead];
    else if (e == 1)
      strides[i] = 0;
    else
      return lt__error(LT_ERR_SHAPE_MISMATCH,
                       "lt_view_broadcast_to: axis %d has extent %lld, which cannot broadcast to "
                       "%lld",
                       i - lead, (long long)e, (long long)shape[i]);
  }
  return view_make(t, rank, shape, strides, t->offset, out);
}

lt_status lt_view_unsqueeze(const lt_tensor *t, int axis, lt_tensor **out) {
  VIEW_BEGIN("lt_view_unsqueeze");
  LT_RETURN_IF(t->rank >= LT_MAX_RANK, LT_ERR_INVALID_ARGUMENT,
               "lt_view_unsqueeze: rank %d is already the maximum", t->rank);
  int a;
  LT_TRY(lt__normalize_axis(axis, t->rank + 1, "lt_view_unsqueeze", &a));
  int64_t shape[LT_MAX_RANK], strides[LT_MAX_RANK];
  for (int i = 0, j = 0; i <= t->rank; i++) {
    if (i == a) {
      shape[i] = 1;
      /* The stride of a size-1 axis is never used; pick the C-contiguous one when it fits. */
      if (j >= t->rank || lt__mul_overflow(t->strides[j], t->shape[j], &strides[i])) strides[i] = 1;
      continue;
    }
    shape[i] = t->shape[j];
    strides[i] = t->strides[j++];
  }
  return view_make(t, t->rank + 1, shape, strides, t->offset, out);
}

lt_status lt_view_squeeze(const lt_tensor *t, int axis, lt_tensor **out) {
  VIEW_BEGIN("lt_view_squeeze");
  int a = -1;
  if (axis != LT_ALL_AXES) {
    LT_TRY(lt__normalize_axis(axis, t->rank, "lt_view_squeeze", &a));
    LT_RETURN_IF(t->shape[a] != 1, LT_ERR_INVALID_ARGUMENT,
                 "lt_view_squeeze: axis %d has extent %lld, not 1", a, (long long)t->shape[a]);
  }
  int64_t shape[LT_MAX_RANK], strides[LT_MAX_RANK];
  int r = 0;
  for (int i = 0; i < t->rank; i++) {
    bool drop = (a < 0) ? t->shape[i] == 1 : i == a;
    if (drop) continue;
    shape[r] = t->shape[i];
    strides[r++] = t->strides[i];
  }
  return view_make(t, r, shape, strides, t->offset, out);
}

lt_status lt_view_flip(const lt_tensor *t, int axis, lt_tensor **out) {
  VIEW_BEGIN("lt_view_flip");
  int a;
  LT_TRY(lt__normalize_axis(axis, t->rank, "lt_view_flip", &a));
  return lt_view_slice(t, a, LT_SLICE_DEFAULT, LT_SLICE_DEFAULT, -1, out);
}

lt_status lt_view_diagonal(const lt_tensor *t, int64_t offset, int axis1, int axis2,
                           lt_tensor **out) {
  VIEW_BEGIN("lt_view_diagonal");
  int a, b;
  LT_TRY(lt__normalize_axis(axis1, t->rank, "lt_view_diagonal", &a));
  LT_TRY(lt__normalize_axis(axis2, t->rank, "lt_view_diagonal", &b));
  LT_RETURN_IF(a == b, LT_ERR_INVALID_ARGUMENT,
               "lt_view_diagonal: axis1 and axis2 are the same axis (%d)", a);
  LT_RETURN_IF(offset == INT64_MIN, LT_ERR_OVERFLOW, "lt_view_diagonal: offset overflows");
  int64_t n1 = t->shape[a], n2 = t->shape[b];
  int64_t start = t->offset, len;
  /* With elements present, the first diagonal element lies inside the layout: no overflow. */
  if (offset >= 0) {
    len = n2 - offset < n1 ? n2 - offset : n1;
    if (len > 0 && t->numel > 0) start += offset * t->strides[b];
  } else {
    len = n1 + offset < n2 ? n1 + offset : n2;
    if (len > 0 && t->numel > 0) start += -offset * t->strides[a];
  }
  if (len < 0) len = 0;
  if (t->numel == 0) start = t->offset;
  int64_t shape[LT_MAX_RANK], strides[LT_MAX_RANK];
  int r = 0;
  for (int i = 0; i < t->rank; i++)
    if (i != a && i != b) {
      shape[r] = t->shape[i];
      strides[r++] = t->strides[i];
    }
  shape[r] = len;
  /* Overflow is only possible for len <= 1 (the layout span is bounded), where the stride is
   * never used. */
  if (lt__add_overflow(t->strides[a], t->strides[b], &strides[r])) strides[r] = 1;
  r++;
  return view_make(t, r, shape, strides, len > 0 ? start : t->offset, out);
}

lt_status lt_view_as_strided(const lt_tensor *t, int rank, const int64_t *shape,
                             const int64_t *strides, int64_t offset, lt_tensor **out) {
  VIEW_BEGIN("lt_view_as_strided");
  int64_t numel;
  LT_TRY_PREFIXED(lt__check_shape(rank, shape, t->dtype, &numel), "lt_view_as_strided");
  LT_RETURN_IF(rank > 0 && strides == NULL, LT_ERR_NULL_POINTER,
               "lt_view_as_strided: strides is NULL");
  int64_t capacity = (int64_t)(t->storage->nbytes / lt_dtype_size(t->dtype));
  int64_t lo, hi;
  LT_TRY(lt__check_layout_span("lt_view_as_strided", rank, shape, strides, offset, &lo, &hi));
  if (numel > 0) {
    LT_RETURN_IF(lo < 0 || hi >= capacity, LT_ERR_OUT_OF_RANGE,
                 "lt_view_as_strided: the layout reaches elements [%lld, %lld] but the storage "
                 "holds [0, %lld)",
                 (long long)lo, (long long)hi, (long long)capacity);
  } else {
    LT_RETURN_IF(offset < 0 || offset > capacity, LT_ERR_OUT_OF_RANGE,
                 "lt_view_as_strided: offset %lld is outside the storage [0, %lld]",
                 (long long)offset, (long long)capacity);
  }
  return view_make(t, rank, shape, strides, offset, out);
}
