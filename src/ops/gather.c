/* SPDX-License-Identifier: MIT */
/* Gather and scatter-add plans (np.take, np.take_along_axis, torch index_add / scatter_add)
 * and their one-shot calls. Each lowers to one backend step over an iteration space in which
 * the indexed axis of the data operand has stride 0 and is reached through the index. */
#include "core/dtype.h"
#include "core/error.h"
#include "ops/index_plan.h"
#include "ops/modes.h"

#include <stdio.h>
#include <string.h>

/* Common checks of a gather/scatter constructor. */
static lt_status check_common(const char *call, const lt_tensor *data, const char *data_name,
                              const lt_tensor *index, const lt_tensor *d, lt_plan **out,
                              const lt_plan_options *opts, int axis, int *ax) {
  LT_CHECK_ARG_NULL(out, call, "the plan pointer (out)");
  *out = NULL;
  char name[96];
  snprintf(name, sizeof name, "%s: %s", call, data_name);
  LT_TRY(lt__check_tensor(data, name));
  LT_TRY(lt__check_index_tensor(index, call, "INDEX"));
  snprintf(name, sizeof name, "%s: D", call);
  LT_TRY(lt__check_tensor(d, name));
  const lt_tensor *all[3] = {d, data, index};
  const char *names[3] = {"D", data_name, "INDEX"};
  LT_TRY(lt__same_context(call, 3, all, names));
  LT_TRY(lt__check_options(opts, call));
  LT_RETURN_IF(data->rank == 0, LT_ERR_OUT_OF_RANGE, "%s: operand %s has rank 0: no axis %d", call,
               data_name, axis);
  snprintf(name, sizeof name, "%s: axis", call);
  LT_TRY(lt__normalize_axis(axis, data->rank, name, ax));
  LT_RETURN_IF(d->dtype != data->dtype, LT_ERR_DTYPE, "%s: D has dtype %s but %s has %s", call,
               lt_dtype_name(d->dtype), data_name, lt_dtype_name(data->dtype));
  LT_RETURN_IF(lt__tensor_self_overlaps(d), LT_ERR_ALIASING,
               "%s: output D has elements that overlap each other (zero or clashing strides)",
               call);
  return lt__index_backend_check(d->storage->ctx, LT__PLAN_GATHER, call);
}

static lt_status check_extent(const char *call, const lt_tensor *d, int k, int64_t want,
                              const char *why) {
  LT_RETURN_IF(d->shape[k] != want, LT_ERR_SHAPE_MISMATCH,
               "%s: D has extent %lld on axis %d but %s gives %lld", call, (long long)d->shape[k],
               k, why, (long long)want);
  return LT_OK;
}

/* A rank-0 iteration space becomes one element of rank 1 (the kernels walk a last dim). */
static void pad_rank(lt__gather_step *g) {
  if (g->rank > 0) return;
  g->rank = 1;
  g->shape[0] = 1;
  g->in.strides[0] = g->index.strides[0] = g->out.strides[0] = 0;
}

static lt_status finish_gather(lt__index_impl *impl, const lt_tensor *a, const lt_tensor *index,
                               const lt_tensor *d, int ax, lt_plan **out) {
  lt__gather_step *g = &impl->step.g;
  g->in.dtype = a->dtype;
  g->index.dtype = index->dtype;
  g->out.dtype = d->dtype;
  g->axis_extent = a->shape[ax];
  g->axis_stride = a->strides[ax];
  pad_rank(g);
  const lt_tensor *ins[2] = {a, index};
  char text[160];
  snprintf(text, sizeof text, "%s: rank-%d %s along axis %d by %s indices -> rank-%d output",
           impl->call, a->rank, lt_dtype_name(a->dtype), ax, lt_dtype_name(index->dtype), d->rank);
  return lt__index_plan_make(impl, 2, ins, d, text, out);
}

/* A gather plan's implementation for `call`, its step sized to D's rank. */
static lt__gather_step *gather_impl(const char *call, int axis, const lt_tensor *d,
                                    lt__index_impl *impl) {
  static const lt__index_impl zero;
  *impl = zero;
  impl->kind = LT__PLAN_GATHER;
  impl->call = call;
  impl->axis = axis;
  impl->step.g.rank = d->rank;
  return &impl->step.g;
}

lt_status lt_plan_take(const lt_tensor *a, int axis, const lt_tensor *index, const lt_tensor *d,
                       const lt_plan_options *opts, lt_plan **out) {
  const char *call = "lt_plan_take";
  int ax;
  LT_TRY(check_common(call, a, "A", index, d, out, opts, axis, &ax));
  int ri = index->rank;
  LT_RETURN_IF(d->rank != a->rank - 1 + ri, LT_ERR_SHAPE_MISMATCH,
               "%s: D has rank %d but A (rank %d) indexed on axis %d by a rank-%d INDEX gives %d",
               call, d->rank, a->rank, ax, ri, a->rank - 1 + ri);
  lt__index_impl impl;
  lt__gather_step *g = gather_impl(call, axis, d, &impl);
  for (int k = 0; k < d->rank; k++) {
    g->shape[k] = d->shape[k];
    g->out.strides[k] = d->strides[k];
    if (k < ax) {
      LT_TRY(check_extent(call, d, k, a->shape[k], "A"));
      g->in.strides[k] = a->strides[k];
    } else if (k < ax + ri) {
      LT_TRY(check_extent(call, d, k, index->shape[k - ax], "INDEX"));
      g->index.strides[k] = index->strides[k - ax];
    } else {
      LT_TRY(check_extent(call, d, k, a->shape[k - ri + 1], "A"));
      g->in.strides[k] = a->strides[k - ri + 1];
    }
  }
  return finish_gather(&impl, a, index, d, ax, out);
}

lt_status lt_plan_take_along_axis(const lt_tensor *a, int axis, const lt_tensor *index,
                                  const lt_tensor *d, const lt_plan_options *opts, lt_plan **out) {
  const char *call = "lt_plan_take_along_axis";
  int ax;
  LT_TRY(check_common(call, a, "A", index, d, out, opts, axis, &ax));
  LT_RETURN_IF(index->rank != a->rank || d->rank != a->rank, LT_ERR_SHAPE_MISMATCH,
               "%s: INDEX (rank %d) and D (rank %d) must have A's rank %d", call, index->rank,
               d->rank, a->rank);
  lt__index_impl impl;
  lt__gather_step *g = gather_impl(call, axis, d, &impl);
  for (int k = 0; k < d->rank; k++) {
    int64_t ea = a->shape[k], ei = index->shape[k];
    LT_RETURN_IF(k != ax && ea != ei && ea != 1 && ei != 1, LT_ERR_SHAPE_MISMATCH,
                 "%s: A (extent %lld) and INDEX (extent %lld) do not broadcast on axis %d", call,
                 (long long)ea, (long long)ei, k);
    int64_t want = k == ax ? ei : (ea == 1 ? ei : ea);
    LT_TRY(check_extent(call, d, k, want, k == ax ? "INDEX" : "broadcasting A with INDEX"));
    g->shape[k] = d->shape[k];
    g->out.strides[k] = d->strides[k];
    g->in.strides[k] = (k == ax || ea == 1) ? 0 : a->strides[k];
    g->index.strides[k] = ei == 1 ? 0 : index->strides[k];
  }
  return finish_gather(&impl, a, index, d, ax, out);
}

lt_status lt_plan_scatter_add(const lt_tensor *src, int axis, const lt_tensor *index,
                              const lt_tensor *d, const lt_plan_options *opts, lt_plan **out) {
  const char *call = "lt_plan_scatter_add";
  int ax;
  LT_TRY(check_common(call, src, "SRC", index, d, out, opts, axis, &ax));
  LT_RETURN_IF(!lt__dtype_is_float(d->dtype) && !lt__dtype_is_int(d->dtype), LT_ERR_DTYPE,
               "%s: D has dtype %s; scatter-add adds numbers (not bool)", call,
               lt_dtype_name(d->dtype));
  LT_RETURN_IF(d->rank != src->rank, LT_ERR_SHAPE_MISMATCH, "%s: D has rank %d but SRC has rank %d",
               call, d->rank, src->rank);
  bool full = index->rank == src->rank && !(index->rank == 1);
  LT_RETURN_IF(!full && index->rank != 1, LT_ERR_SHAPE_MISMATCH,
               "%s: INDEX has rank %d; it must be 1-D or have SRC's rank %d", call, index->rank,
               src->rank);
  static lt__index_impl impl_zero;
  lt__index_impl impl = impl_zero;
  impl.kind = LT__PLAN_SCATTER;
  impl.call = call;
  impl.axis = axis;
  lt__scatter_step *s = &impl.step.s;
  s->rank = src->rank;
  s->axis = ax;
  for (int k = 0; k < src->rank; k++) {
    LT_RETURN_IF(k != ax && d->shape[k] != src->shape[k], LT_ERR_SHAPE_MISMATCH,
                 "%s: D has extent %lld on axis %d but SRC has %lld", call, (long long)d->shape[k],
                 k, (long long)src->shape[k]);
    int64_t ei = full ? index->shape[k] : (k == ax ? index->shape[0] : src->shape[k]);
    LT_RETURN_IF(ei != src->shape[k], LT_ERR_SHAPE_MISMATCH,
                 "%s: INDEX has extent %lld on axis %d but SRC has %lld", call, (long long)ei,
                 full ? k : 0, (long long)src->shape[k]);
    s->shape[k] = src->shape[k];
    s->src.strides[k] = src->strides[k];
    s->out.strides[k] = k == ax ? 0 : d->strides[k];
    s->index.strides[k] = full ? index->strides[k] : (k == ax ? index->strides[0] : 0);
  }
  s->src.dtype = src->dtype;
  s->index.dtype = index->dtype;
  s->out.dtype = d->dtype;
  s->out_axis_extent = d->shape[ax];
  s->out_axis_stride = d->strides[ax];
  LT_TRY(lt__index_backend_check(d->storage->ctx, LT__PLAN_SCATTER, call));
  const lt_tensor *ins[2] = {src, index};
  char text[160];
  snprintf(text, sizeof text, "%s: rank-%d %s into axis %d by %s indices", call, src->rank,
           lt_dtype_name(src->dtype), ax, lt_dtype_name(index->dtype));
  return lt__index_plan_make(&impl, 2, ins, d, text, out);
}

/* ---- one-shot calls ---- */

/* Runs a gather plan made by `make` into a new C-contiguous tensor of `shape`. */
static lt_status gather_once(lt_status (*make)(const lt_tensor *, int, const lt_tensor *,
                                               const lt_tensor *, const lt_plan_options *,
                                               lt_plan **),
                             const char *call, const lt_tensor *a, int axis, const lt_tensor *index,
                             int rank, const int64_t *shape, lt_tensor **out) {
  lt_tensor *d = NULL;
  LT_TRY(lt__tensor_new(a->storage->ctx, a->dtype, rank, shape, &d));
  lt_plan *plan = NULL;
  lt_status st = make(a, axis, index, d, NULL, &plan);
  if (st == LT_OK) {
    const lt_tensor *ins[2] = {a, index};
    st = lt__index_run_once(plan, 2, ins, d);
  }
  if (st != LT_OK) {
    /* The plan constructor's name would mislead: the user called the one-shot. */
    lt__error_prefix(call);
    lt_tensor_destroy(d);
    return st;
  }
  *out = d;
  return LT_OK;
}

/* The shared checks of the one-shots: tensors live, axis valid; *ax normalised. */
static lt_status check_once(const char *call, const lt_tensor *a, const lt_tensor *index, int axis,
                            lt_tensor **out, int *ax) {
  LT_CHECK_ARG_NULL(out, call, "out");
  *out = NULL;
  char name[64];
  snprintf(name, sizeof name, "%s: a", call);
  LT_TRY(lt__check_tensor(a, name));
  LT_TRY(lt__check_index_tensor(index, call, "index"));
  LT_RETURN_IF(a->rank == 0, LT_ERR_OUT_OF_RANGE, "%s: a has rank 0: no axis %d", call, axis);
  snprintf(name, sizeof name, "%s: axis", call);
  return lt__normalize_axis(axis, a->rank, name, ax);
}

lt_status lt_take(const lt_tensor *a, const lt_tensor *index, int axis, lt_tensor **out) {
  int ax;
  LT_TRY(check_once("lt_take", a, index, axis, out, &ax));
  int rank = a->rank - 1 + index->rank;
  LT_RETURN_IF(rank > LT_MAX_RANK, LT_ERR_INVALID_ARGUMENT,
               "lt_take: the result would have rank %d (at most %d)", rank, LT_MAX_RANK);
  int64_t shape[LT_MAX_RANK];
  for (int k = 0; k < rank; k++)
    shape[k] = k < ax                 ? a->shape[k]
               : k < ax + index->rank ? index->shape[k - ax]
                                      : a->shape[k - index->rank + 1];
  return gather_once(lt_plan_take, "lt_take", a, axis, index, rank, shape, out);
}

lt_status lt_index_select(const lt_tensor *a, int axis, const lt_tensor *index, lt_tensor **out) {
  int ax;
  LT_TRY(check_once("lt_index_select", a, index, axis, out, &ax));
  LT_RETURN_IF(index->rank > 1, LT_ERR_SHAPE_MISMATCH,
               "lt_index_select: index has rank %d; it must be 1-D", index->rank);
  lt_tensor *flat = NULL;
  int64_t n = index->numel;
  LT_TRY(lt_view_reshape(index, 1, &n, &flat));
  lt_status st = lt_take(a, flat, axis, out);
  lt_tensor_destroy(flat);
  return st;
}

lt_status lt_take_along_axis(const lt_tensor *a, const lt_tensor *index, int axis,
                             lt_tensor **out) {
  int ax;
  LT_TRY(check_once("lt_take_along_axis", a, index, axis, out, &ax));
  LT_RETURN_IF(index->rank != a->rank, LT_ERR_SHAPE_MISMATCH,
               "lt_take_along_axis: index has rank %d but a has rank %d", index->rank, a->rank);
  int64_t shape[LT_MAX_RANK];
  for (int k = 0; k < a->rank; k++)
    shape[k] = (k == ax || a->shape[k] == 1) ? index->shape[k] : a->shape[k];
  return gather_once(lt_plan_take_along_axis, "lt_take_along_axis", a, axis, index, a->rank, shape,
                     out);
}

lt_status lt_scatter_add(lt_tensor *d, int axis, const lt_tensor *index, const lt_tensor *src) {
  lt_plan *plan = NULL;
  lt_status st = lt_plan_scatter_add(src, axis, index, d, NULL, &plan);
  if (st == LT_OK) {
    const lt_tensor *ins[2] = {src, index};
    st = lt__index_run_once(plan, 2, ins, d);
  }
  if (st != LT_OK) lt__error_prefix("lt_scatter_add");
  return st;
}
