/* NumPy-style one-shot operations: positional axes, broadcasting by trailing alignment, a new
 * output tensor. Each builds a mode-label plan, runs it once and destroys it. */
#include "core/dtype.h"
#include "core/error.h"
#include "ops/plan.h"

#include <stdio.h>
#include <string.h>

/* Result dtype of a binary op: the shared dtype, else F64 if either is F64, else F32. */
static lt_dtype binary_result_dtype(lt_dtype a, lt_dtype b) {
  if (a == b) return a;
  return (a == LT_F64 || b == LT_F64) ? LT_F64 : LT_F32;
}

/* Modes 0..rank-1 for the output, and trailing-aligned modes for an input of rank r. */
static void trailing_modes(int out_rank, int rank, int32_t *modes) {
  for (int i = 0; i < rank; i++)
    modes[i] = (int32_t)(out_rank - rank + i);
}

/* Runs a one-input or two-input plan into a fresh output, destroying the output on failure. */
static lt_status run_once(lt_plan *plan, const lt_tensor *const *ins, int n, lt_tensor *o,
                          lt_tensor **out) {
  lt_status st = lt_plan_execute(plan, ins, n, NULL, 0, o);
  lt_plan_destroy(plan);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  *out = o;
  return LT_OK;
}

lt_status lt_binary(lt_binary_op op, const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_binary: a"));
  LT_TRY(lt__check_tensor(b, "lt_binary: b"));
  int rank = a->rank > b->rank ? a->rank : b->rank;
  int64_t shape[LT_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int64_t ea = ia >= 0 ? a->shape[ia] : 1, eb = ib >= 0 ? b->shape[ib] : 1;
    LT_RETURN_IF(ea != eb && ea != 1 && eb != 1, LT_ERR_SHAPE_MISMATCH,
                 "lt_binary: operands do not broadcast: axis %d has extent %lld in a but %lld "
                 "in b (aligned from the right)",
                 i, (long long)ea, (long long)eb);
    shape[i] = ea == 1 ? eb : ea;
  }
  int32_t md[LT_MAX_RANK], ma[LT_MAX_RANK], mb[LT_MAX_RANK];
  trailing_modes(rank, rank, md);
  trailing_modes(rank, a->rank, ma);
  trailing_modes(rank, b->rank, mb);
  lt_tensor *o;
  if (a->storage->ctx != b->storage->ctx)
    return lt__context_mismatch("lt_binary", "a", a->storage->ctx, "b", b->storage->ctx);
  LT_TRY(lt__tensor_new(a->storage->ctx, binary_result_dtype(a->dtype, b->dtype), rank, shape, &o));
  lt_plan *plan;
  lt_status st = lt_plan_binary(a, ma, b, mb, op, o, md, NULL, &plan);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  const lt_tensor *ins[2] = {a, b};
  return run_once(plan, ins, 2, o, out);
}

lt_status lt_add(const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  return lt_binary(LT_BINARY_ADD, a, b, out);
}
lt_status lt_sub(const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  return lt_binary(LT_BINARY_SUB, a, b, out);
}
lt_status lt_mul(const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  return lt_binary(LT_BINARY_MUL, a, b, out);
}
lt_status lt_div(const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  return lt_binary(LT_BINARY_DIV, a, b, out);
}

/* Floats keep their dtype; integers become F64 (as NumPy does for float functions). */
static lt_dtype float_result_dtype(lt_dtype d) { return d == LT_I64 ? LT_F64 : d; }

lt_status lt_unary(lt_unary_op op, const lt_tensor *a, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_unary: a"));
  lt_plan_options opts = *lt__plan_options_default();
  LT_TRY(lt_plan_options_set_unary(&opts, 0, op));
  int32_t modes[LT_MAX_RANK];
  trailing_modes(a->rank, a->rank, modes);
  lt_tensor *o;
  LT_TRY(lt__tensor_new(a->storage->ctx, float_result_dtype(a->dtype), a->rank, a->shape, &o));
  lt_plan *plan;
  lt_status st = lt_plan_permutation(a, modes, o, modes, &opts, &plan);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  return run_once(plan, &a, 1, o, out);
}

/* Marks the reduced axes of a rank-`rank` tensor; -1 axes means all. */
static lt_status reduced_axes(const char *api, int rank, int n_axes, const int *axes,
                              bool *reduced) {
  memset(reduced, 0, sizeof(bool) * LT_MAX_RANK);
  if (n_axes == -1) {
    for (int i = 0; i < rank; i++)
      reduced[i] = true;
    return LT_OK;
  }
  LT_RETURN_IF(n_axes < 0 || n_axes > rank, LT_ERR_INVALID_ARGUMENT,
               "%s: %d axes requested for a rank-%d tensor", api, n_axes, rank);
  LT_RETURN_IF(n_axes > 0 && axes == NULL, LT_ERR_NULL_POINTER, "%s: axes is NULL", api);
  for (int i = 0; i < n_axes; i++) {
    int ax;
    LT_TRY(lt__normalize_axis(axes[i], rank, api, &ax));
    LT_RETURN_IF(reduced[ax], LT_ERR_INVALID_ARGUMENT, "%s: axis %d is repeated", api, axes[i]);
    reduced[ax] = true;
  }
  return LT_OK;
}

/* lt_reduce and its argmax/argmin forms; `api` names the public function in messages. */
static lt_status reduce_axes(const char *api, lt_reduce_op op, const lt_tensor *a, int n_axes,
                             const int *axes, bool keepdims, lt_tensor **out) {
  LT_RETURN_IF(out == NULL, LT_ERR_NULL_POINTER, "%s: out is NULL", api);
  *out = NULL;
  char what[64];
  snprintf(what, sizeof what, "%s: a", api);
  LT_TRY(lt__check_tensor(a, what));
  bool reduced[LT_MAX_RANK];
  LT_TRY(reduced_axes(api, a->rank, n_axes, axes, reduced));
  bool arg = op == LT_REDUCE_ARGMAX || op == LT_REDUCE_ARGMIN;
  int n_reduced = 0;
  for (int i = 0; i < a->rank; i++)
    n_reduced += reduced[i];
  LT_RETURN_IF(arg && n_reduced != 1, LT_ERR_INVALID_ARGUMENT,
               "%s: argmax and argmin take exactly one axis, not %d", api, n_reduced);
  int32_t ma[LT_MAX_RANK], md[LT_MAX_RANK];
  int64_t kept_shape[LT_MAX_RANK], full_shape[LT_MAX_RANK];
  int kept = 0;
  for (int i = 0; i < a->rank; i++) {
    ma[i] = i;
    full_shape[i] = reduced[i] ? 1 : a->shape[i];
    if (!reduced[i]) {
      md[kept] = i;
      kept_shape[kept++] = a->shape[i];
    }
  }
  lt_dtype dtype = arg ? LT_I64 : float_result_dtype(a->dtype);
  lt_tensor *o, *view;
  LT_TRY(lt__tensor_new(a->storage->ctx, dtype, keepdims ? a->rank : kept,
                        keepdims ? full_shape : kept_shape, &o));
  lt_status st = lt_view_reshape(o, kept, kept_shape, &view);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  lt_plan *plan;
  st = lt_plan_reduction(a, ma, NULL, NULL, op, view, md, NULL, &plan);
  if (st == LT_OK) {
    st = lt_plan_execute(plan, &a, 1, NULL, 0, view);
    lt_plan_destroy(plan);
  }
  lt_tensor_destroy(view);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  *out = o;
  return LT_OK;
}

lt_status lt_reduce(lt_reduce_op op, const lt_tensor *a, int n_axes, const int *axes, bool keepdims,
                    lt_tensor **out) {
  return reduce_axes("lt_reduce", op, a, n_axes, axes, keepdims, out);
}

lt_status lt_argmax(const lt_tensor *a, int axis, lt_tensor **out) {
  return reduce_axes("lt_argmax", LT_REDUCE_ARGMAX, a, 1, &axis, false, out);
}

lt_status lt_argmin(const lt_tensor *a, int axis, lt_tensor **out) {
  return reduce_axes("lt_argmin", LT_REDUCE_ARGMIN, a, 1, &axis, false, out);
}

lt_status lt_permute(const lt_tensor *a, const int *axes, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  lt_tensor *view;
  LT_TRY(lt_view_permute(a, axes, &view));
  lt_status st = lt_tensor_contiguous(view, LT_DTYPE_INVALID, out);
  lt_tensor_destroy(view);
  return st;
}
