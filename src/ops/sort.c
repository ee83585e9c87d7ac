/* SPDX-License-Identifier: MIT */
/* Sort plans (the first k of each row along an axis, as values or positions) and the
 * one-shots np.sort, np.argsort (stable) and torch.topk built on them. */
#include "core/dtype.h"
#include "core/error.h"
#include "ops/index_plan.h"

#include <stdio.h>
#include <string.h>

lt_status lt_plan_sort(const lt_tensor *a, int axis, int64_t k, int flags, const lt_tensor *d,
                       const lt_plan_options *opts, lt_plan **out) {
  const char *call = "lt_plan_sort";
  LT_CHECK_ARG_NULL(out, call, "the plan pointer (out)");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_plan_sort: A"));
  LT_TRY(lt__check_tensor(d, "lt_plan_sort: D"));
  LT_RETURN_IF(a->storage->ctx != d->storage->ctx, LT_ERR_CONTEXT_MISMATCH,
               "%s: A and D belong to different contexts", call);
  LT_TRY(lt__check_options(opts, call));
  LT_RETURN_IF((flags & ~(LT_SORT_DESCENDING | LT_SORT_INDICES)) != 0, LT_ERR_INVALID_ARGUMENT,
               "%s: unknown flags 0x%x", call, (unsigned)flags);
  LT_RETURN_IF(a->rank == 0, LT_ERR_OUT_OF_RANGE, "%s: A has rank 0: no axis %d", call, axis);
  int ax;
  LT_TRY(lt__normalize_axis(axis, a->rank, "lt_plan_sort: axis", &ax));
  bool indices = (flags & LT_SORT_INDICES) != 0;
  lt_dtype want = indices ? LT_I64 : a->dtype;
  LT_RETURN_IF(d->dtype != want, LT_ERR_DTYPE, "%s: D has dtype %s, expected %s", call,
               lt_dtype_name(d->dtype), lt_dtype_name(want));
  LT_RETURN_IF(k < 0 || k > a->shape[ax], LT_ERR_OUT_OF_RANGE,
               "%s: k = %lld is outside [0, %lld] (A's extent on axis %d)", call, (long long)k,
               (long long)a->shape[ax], ax);
  LT_RETURN_IF(d->rank != a->rank, LT_ERR_SHAPE_MISMATCH, "%s: D has rank %d but A has rank %d",
               call, d->rank, a->rank);
  for (int i = 0; i < a->rank; i++) {
    int64_t e = i == ax ? k : a->shape[i];
    LT_RETURN_IF(d->shape[i] != e, LT_ERR_SHAPE_MISMATCH,
                 "%s: D has extent %lld on axis %d, expected %lld", call, (long long)d->shape[i], i,
                 (long long)e);
  }
  LT_RETURN_IF(lt__tensor_self_overlaps(d), LT_ERR_ALIASING,
               "%s: output D has elements that overlap each other (zero or clashing strides)",
               call);
  LT_TRY(lt__index_backend_check(d->storage->ctx, LT__PLAN_SORT, call));
  static lt__index_impl impl_zero;
  lt__index_impl impl = impl_zero;
  impl.kind = LT__PLAN_SORT;
  impl.call = call;
  impl.axis = axis;
  lt__sort_step *o = &impl.step.o;
  for (int i = 0; i < a->rank; i++) {
    if (i == ax) continue;
    o->shape[o->rank] = a->shape[i];
    o->in.strides[o->rank] = a->strides[i];
    o->out.strides[o->rank] = d->strides[i];
    o->rank++;
  }
  o->n = a->shape[ax];
  o->k = k;
  o->in.dtype = a->dtype;
  o->out.dtype = d->dtype;
  o->in_axis_stride = a->strides[ax];
  o->out_axis_stride = d->strides[ax];
  o->descending = (flags & LT_SORT_DESCENDING) != 0;
  o->indices = indices;
  const lt_tensor *ins[1] = {a};
  char text[160];
  snprintf(text, sizeof text, "%s: first %lld of %lld along axis %d, %s, as %s", call, (long long)k,
           (long long)o->n, ax, o->descending ? "descending" : "ascending",
           indices ? "positions" : "values");
  return lt__index_plan_make(&impl, 1, ins, d, text, out);
}

/* The first k sorted along `axis` into a new tensor. */
static lt_status sort_once(const char *call, const lt_tensor *a, int axis, int64_t k, int flags,
                           lt_tensor **out) {
  LT_CHECK_ARG_NULL(out, call, "out");
  *out = NULL;
  char name[64];
  snprintf(name, sizeof name, "%s: a", call);
  LT_TRY(lt__check_tensor(a, name));
  LT_RETURN_IF(a->rank == 0, LT_ERR_OUT_OF_RANGE, "%s: a has rank 0: no axis %d", call, axis);
  int ax;
  snprintf(name, sizeof name, "%s: axis", call);
  LT_TRY(lt__normalize_axis(axis, a->rank, name, &ax));
  if (k < 0) k = a->shape[ax];
  LT_RETURN_IF(k > a->shape[ax], LT_ERR_OUT_OF_RANGE,
               "%s: k = %lld exceeds the extent %lld of axis %d", call, (long long)k,
               (long long)a->shape[ax], ax);
  int64_t shape[LT_MAX_RANK];
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)a->rank);
  shape[ax] = k;
  lt_tensor *d = NULL;
  LT_TRY(lt__tensor_new(a->storage->ctx, (flags & LT_SORT_INDICES) ? LT_I64 : a->dtype, a->rank,
                        shape, &d));
  lt_plan *plan = NULL;
  lt_status st = lt_plan_sort(a, axis, k, flags, d, NULL, &plan);
  if (st == LT_OK) st = lt__index_run_once(plan, 1, &a, d);
  if (st != LT_OK) {
    lt__error_prefix(call);
    lt_tensor_destroy(d);
    return st;
  }
  *out = d;
  return LT_OK;
}

lt_status lt_sort(const lt_tensor *a, int axis, bool descending, lt_tensor **out) {
  return sort_once("lt_sort", a, axis, -1, descending ? LT_SORT_DESCENDING : 0, out);
}

lt_status lt_argsort(const lt_tensor *a, int axis, bool descending, lt_tensor **out) {
  return sort_once("lt_argsort", a, axis, -1,
                   LT_SORT_INDICES | (descending ? LT_SORT_DESCENDING : 0), out);
}

lt_status lt_topk(const lt_tensor *a, int64_t k, int axis, bool largest, lt_tensor **values,
                  lt_tensor **indices) {
  LT_RETURN_IF(values == NULL && indices == NULL, LT_ERR_NULL_POINTER,
               "lt_topk: values and indices are both NULL");
  /* one slot for both results would lose (leak) the values tensor */
  LT_RETURN_IF(values == indices, LT_ERR_INVALID_ARGUMENT,
               "lt_topk: values and indices point at the same place; pass two out pointers");
  if (values) *values = NULL;
  if (indices) *indices = NULL;
  LT_RETURN_IF(k < 0, LT_ERR_OUT_OF_RANGE, "lt_topk: k = %lld is negative", (long long)k);
  int flags = largest ? LT_SORT_DESCENDING : 0;
  lt_tensor *idx = NULL;
  LT_TRY(sort_once("lt_topk", a, axis, k, flags | LT_SORT_INDICES, &idx));
  if (values) {
    /* The values follow from the positions exactly (a gather of raw bits), not from a second
     * sort, so the two outputs always agree. */
    lt_status st = lt_take_along_axis(a, idx, axis, values);
    if (st != LT_OK) {
      lt_tensor_destroy(idx);
      return st;
    }
  }
  if (indices)
    *indices = idx;
  else
    lt_tensor_destroy(idx);
  return LT_OK;
}
