/* SPDX-License-Identifier: MIT */
/* Three-operand one-shot calls (issue 18 A): where (a select) and clip (a max then a min), each
 * one trinary map plan over NumPy-broadcast operands. */
#include "core/dtype.h"
#include "core/error.h"
#include "ops/plan.h"

#include <stdio.h>
#include <string.h>

/* D = (x0 op_ab x1) op_abc x2 into a new tensor of `dtype`, broadcast by trailing alignment;
 * `labels` name the operands in messages. */
static lt_status trinary_once(const char *api, const lt_tensor *const *x, const char *const *labels,
                              lt_binary_op op_ab, lt_binary_op op_abc, lt_dtype dtype,
                              lt_tensor **out) {
  int rank = 0;
  for (int k = 0; k < 3; k++)
    rank = x[k]->rank > rank ? x[k]->rank : rank;
  int64_t shape[LT_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    shape[i] = 1;
    for (int k = 0; k < 3; k++) {
      int ik = i - (rank - x[k]->rank);
      int64_t e = ik >= 0 ? x[k]->shape[ik] : 1;
      LT_RETURN_IF(e != 1 && shape[i] != 1 && e != shape[i], LT_ERR_SHAPE_MISMATCH,
                   "%s: %s does not broadcast: axis %d (aligned from the right) has extent %lld "
                   "there but %lld in the operands before it",
                   api, labels[k], i, (long long)e, (long long)shape[i]);
      if (e != 1) shape[i] = e;
    }
  }
  for (int k = 1; k < 3; k++)
    if (x[k]->storage->ctx != x[0]->storage->ctx)
      return lt__context_mismatch(api, labels[0], x[0]->storage->ctx, labels[k],
                                  x[k]->storage->ctx);
  int32_t md[LT_MAX_RANK], m[3][LT_MAX_RANK];
  for (int i = 0; i < rank; i++)
    md[i] = i;
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < x[k]->rank; i++)
      m[k][i] = (int32_t)(rank - x[k]->rank + i);
  lt_tensor *o;
  LT_TRY(lt__tensor_new(x[0]->storage->ctx, dtype, rank, shape, &o));
  lt_plan *plan;
  lt_status st =
      lt_plan_trinary(x[0], m[0], x[1], m[1], x[2], m[2], op_ab, op_abc, o, md, NULL, &plan);
  if (st == LT_OK) {
    st = lt_plan_execute(plan, x, 3, NULL, 0, o);
    lt_plan_destroy(plan);
  }
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  *out = o;
  return LT_OK;
}

lt_status lt_where(const lt_tensor *cond, const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(cond, "lt_where: cond"));
  LT_TRY(lt__check_tensor(a, "lt_where: a"));
  LT_TRY(lt__check_tensor(b, "lt_where: b"));
  LT_RETURN_IF(cond->dtype != LT_BOOL, LT_ERR_DTYPE, "lt_where: cond must be bool, not %s",
               lt_dtype_name(cond->dtype));
  const lt_tensor *x[3] = {cond, a, b};
  static const char *const labels[3] = {"cond", "a", "b"};
  return trinary_once("lt_where", x, labels, LT_BINARY_WHERE, LT_BINARY_WHERE,
                      lt__dtype_promote(a->dtype, b->dtype), out);
}

lt_status lt_clip(const lt_tensor *a, const lt_tensor *lo, const lt_tensor *hi, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_clip: a"));
  LT_TRY(lt__check_tensor(lo, "lt_clip: lo"));
  LT_TRY(lt__check_tensor(hi, "lt_clip: hi"));
  const lt_tensor *x[3] = {a, lo, hi};
  static const char *const labels[3] = {"a", "lo", "hi"};
  lt_dtype dtype = lt__dtype_promote(lt__dtype_promote(a->dtype, lo->dtype), hi->dtype);
  return trinary_once("lt_clip", x, labels, LT_BINARY_MAX, LT_BINARY_MIN, dtype, out);
}
