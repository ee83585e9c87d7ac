/* SPDX-License-Identifier: MIT */
/* NumPy-style one-shot forms of the row plans (ops/rows.c): positional axes, a new
 * C-contiguous output, the plan built, run once and destroyed. */
#include "core/error.h"
#include "ops/plan.h"

#include <stdio.h>
#include <string.h>

/* Marks the axes named by (n_axes, axes) of a rank-`rank` tensor; n_axes -1 means all. */
static lt_status mark_axes(const char *fn, int rank, int n_axes, const int *axes, bool *marked,
                           int *order, int *count) {
  memset(marked, 0, sizeof(bool) * LT_MAX_RANK);
  *count = 0;
  if (n_axes == -1) {
    for (int i = 0; i < rank; i++) {
      marked[i] = true;
      order[(*count)++] = i;
    }
    return LT_OK;
  }
  LT_RETURN_IF(n_axes < 0 || n_axes > rank, LT_ERR_INVALID_ARGUMENT,
               "%s: %d axes requested for a rank-%d tensor", fn, n_axes, rank);
  LT_RETURN_IF(n_axes > 0 && axes == NULL, LT_ERR_NULL_POINTER, "%s: axes is NULL", fn);
  for (int i = 0; i < n_axes; i++) {
    int ax;
    LT_TRY(lt__normalize_axis(axes[i], rank, fn, &ax));
    LT_RETURN_IF(marked[ax], LT_ERR_INVALID_ARGUMENT, "%s: axis %d is repeated", fn, axes[i]);
    marked[ax] = true;
    order[(*count)++] = ax;
  }
  return LT_OK;
}

/* Floats keep their dtype; integers and bools give f64, or for scans i64 (u64 for unsigned
 * inputs: NumPy's cumsum of uint8 is uint64, of int8 and bool int64). */
static lt_dtype result_dtype(lt_dtype a, bool scan) {
  if (a == LT_F16 || a == LT_BF16 || a == LT_F32 || a == LT_F64) return a;
  if (!scan) return LT_F64;
  return a == LT_U8 || a == LT_U16 || a == LT_U32 || a == LT_U64 ? LT_U64 : LT_I64;
}

/* Runs plan on a into o; on success *out = o, else o is destroyed. */
static lt_status finish(lt_status st, lt_plan *plan, const lt_tensor *a, lt_tensor *run_on,
                        lt_tensor *o, lt_tensor **out) {
  if (st == LT_OK) st = lt_plan_execute(plan, &a, 1, NULL, 0, run_on);
  lt_plan_destroy(plan);
  if (run_on != o) lt_tensor_destroy(run_on);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  *out = o;
  return LT_OK;
}

/* The checks every one-shot row op starts with: out, a, and the axes marked. */
static lt_status check_rows(const char *fn, const lt_tensor *a, int n_axes, const int *axes,
                            lt_tensor **out, bool *marked, int *order, int *count) {
  LT_RETURN_IF(out == NULL, LT_ERR_NULL_POINTER, "%s: out is NULL", fn);
  *out = NULL;
  char what[48];
  snprintf(what, sizeof what, "%s: a", fn);
  LT_TRY(lt__check_tensor(a, what));
  return mark_axes(fn, a->rank, n_axes, axes, marked, order, count);
}

/* softmax / log_softmax / cumsum / cumprod: the output has a's shape. */
static lt_status whole(const char *fn, lt__row_op op, const lt_tensor *a, int n_axes,
                       const int *axes, lt_tensor **out) {
  bool marked[LT_MAX_RANK];
  int order[LT_MAX_RANK], count;
  LT_TRY(check_rows(fn, a, n_axes, axes, out, marked, order, &count));
  int32_t modes[LT_MAX_RANK], row[LT_MAX_RANK];
  for (int i = 0; i < a->rank; i++)
    modes[i] = i;
  for (int r = 0; r < count; r++)
    row[r] = order[r];
  bool scan = op == LT__ROW_CUMSUM || op == LT__ROW_CUMPROD;
  lt_tensor *o;
  LT_TRY(lt__tensor_new(a->storage->ctx, result_dtype(a->dtype, scan), a->rank, a->shape, &o));
  lt_plan *plan = NULL;
  lt_status st;
  if (scan)
    st = lt_plan_scan(a, modes, row[0], op == LT__ROW_CUMSUM ? LT_SCAN_SUM : LT_SCAN_PROD, o, modes,
                      NULL, &plan);
  else
    st = lt_plan_softmax(a, modes, count, row, op == LT__ROW_LOG_SOFTMAX, o, modes, NULL, &plan);
  return finish(st, plan, a, o, o, out);
}

/* logsumexp / var / std: the marked axes are reduced (kept as extent 1 with keepdims). */
static lt_status reducing(const char *fn, lt__row_op op, const lt_tensor *a, int n_axes,
                          const int *axes, double ddof, bool keepdims, lt_tensor **out) {
  bool marked[LT_MAX_RANK];
  int order[LT_MAX_RANK], count;
  LT_TRY(check_rows(fn, a, n_axes, axes, out, marked, order, &count));
  int32_t ma[LT_MAX_RANK], md[LT_MAX_RANK];
  int64_t kept_shape[LT_MAX_RANK], full_shape[LT_MAX_RANK];
  int kept = 0;
  for (int i = 0; i < a->rank; i++) {
    ma[i] = i;
    full_shape[i] = marked[i] ? 1 : a->shape[i];
    if (!marked[i]) {
      md[kept] = i;
      kept_shape[kept++] = a->shape[i];
    }
  }
  lt_tensor *o, *view;
  LT_TRY(lt__tensor_new(a->storage->ctx, result_dtype(a->dtype, false), keepdims ? a->rank : kept,
                        keepdims ? full_shape : kept_shape, &o));
  lt_status st = lt_view_reshape(o, kept, kept_shape, &view);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  lt_plan *plan = NULL;
  if (op == LT__ROW_LOGSUMEXP)
    st = lt_plan_logsumexp(a, ma, view, md, NULL, &plan);
  else
    st = lt_plan_variance(a, ma, view, md, ddof, op == LT__ROW_STD, NULL, &plan);
  return finish(st, plan, a, view, o, out);
}

lt_status lt_softmax(const lt_tensor *a, int n_axes, const int *axes, lt_tensor **out) {
  return whole("lt_softmax", LT__ROW_SOFTMAX, a, n_axes, axes, out);
}
lt_status lt_log_softmax(const lt_tensor *a, int n_axes, const int *axes, lt_tensor **out) {
  return whole("lt_log_softmax", LT__ROW_LOG_SOFTMAX, a, n_axes, axes, out);
}
lt_status lt_cumsum(const lt_tensor *a, int axis, lt_tensor **out) {
  return whole("lt_cumsum", LT__ROW_CUMSUM, a, 1, &axis, out);
}
lt_status lt_cumprod(const lt_tensor *a, int axis, lt_tensor **out) {
  return whole("lt_cumprod", LT__ROW_CUMPROD, a, 1, &axis, out);
}
lt_status lt_logsumexp(const lt_tensor *a, int n_axes, const int *axes, bool keepdims,
                       lt_tensor **out) {
  return reducing("lt_logsumexp", LT__ROW_LOGSUMEXP, a, n_axes, axes, 0, keepdims, out);
}
lt_status lt_var(const lt_tensor *a, int n_axes, const int *axes, double ddof, bool keepdims,
                 lt_tensor **out) {
  return reducing("lt_var", LT__ROW_VAR, a, n_axes, axes, ddof, keepdims, out);
}
lt_status lt_std(const lt_tensor *a, int n_axes, const int *axes, double ddof, bool keepdims,
                 lt_tensor **out) {
  return reducing("lt_std", LT__ROW_STD, a, n_axes, axes, ddof, keepdims, out);
}
