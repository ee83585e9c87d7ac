/* SPDX-License-Identifier: MIT */
/* Three-operand one-shot calls (issue 18 A): where (a select) and clip (a max then a min), each
 * one trinary map plan over NumPy-broadcast operands. */
#include "core/dtype.h"
#include "core/error.h"
#include "ops/plan.h"

#include <stdio.h>
#include <string.h>

/* D = (x0 op_ab x1) op_abc x2 into `o`, every operand broadcast (trailing alignment) to o's
 * shape; `labels` name the operands in messages. Computed in the operands' promoted dtype and
 * converted on the store, so an `o` of another dtype gets what a copy of the result would. */
static lt_status trinary_into(const char *api, const lt_tensor *const *x, const char *const *labels,
                              lt_binary_op op_ab, lt_binary_op op_abc, lt_tensor *o) {
  for (int k = 0; k < 3; k++) {
    LT_RETURN_IF(x[k]->rank > o->rank, LT_ERR_SHAPE_MISMATCH,
                 "%s: %s has rank %d, more than out's %d", api, labels[k], x[k]->rank, o->rank);
    for (int i = 0; i < x[k]->rank; i++) {
      int64_t e = x[k]->shape[i], want = o->shape[o->rank - x[k]->rank + i];
      LT_RETURN_IF(e != 1 && e != want, LT_ERR_SHAPE_MISMATCH,
                   "%s: %s has extent %lld on axis %d, which does not broadcast to out's %lld", api,
                   labels[k], (long long)e, i, (long long)want);
    }
    if (x[k]->storage->ctx != o->storage->ctx)
      return lt__context_mismatch(api, labels[k], x[k]->storage->ctx, "out", o->storage->ctx);
  }
  int32_t md[LT_MAX_RANK], m[3][LT_MAX_RANK];
  for (int i = 0; i < o->rank; i++)
    md[i] = i;
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < x[k]->rank; i++)
      m[k][i] = (int32_t)(o->rank - x[k]->rank + i);
  lt_plan *plan;
  lt_status st =
      lt_plan_trinary(x[0], m[0], x[1], m[1], x[2], m[2], op_ab, op_abc, o, md, NULL, &plan);
  if (st == LT_OK) {
    st = lt_plan_execute(plan, x, 3, NULL, 0, o);
    lt_plan_destroy(plan);
  }
  if (st != LT_OK) lt__error_prefix(api);
  return st;
}

/* trinary_into a new C-contiguous tensor of `dtype` and the operands' broadcast shape. */
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
  lt_tensor *o;
  LT_TRY(lt__tensor_new(x[0]->storage->ctx, dtype, rank, shape, &o));
  lt_status st = trinary_into(api, x, labels, op_ab, op_abc, o);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  *out = o;
  return LT_OK;
}

/* Checks three operand handles, each named "<api>: <name>" in the message. */
static lt_status check_three(const char *api, const char *const names[3],
                             const lt_tensor *const tensors[3]) {
  char name[48];
  for (int i = 0; i < 3; i++) {
    snprintf(name, sizeof name, "%s: %s", api, names[i]);
    LT_TRY(lt__check_tensor(tensors[i], name));
  }
  return LT_OK;
}

/* The checks shared by lt_where and lt_where_into. */
static lt_status check_where(const char *api, const lt_tensor *cond, const lt_tensor *a,
                             const lt_tensor *b) {
  LT_TRY(check_three(api, (const char *const[3]){"cond", "a", "b"},
                     (const lt_tensor *const[3]){cond, a, b}));
  LT_RETURN_IF(cond->dtype != LT_BOOL, LT_ERR_DTYPE, "%s: cond must be bool, not %s", api,
               lt_dtype_name(cond->dtype));
  return LT_OK;
}

static lt_status check_clip(const char *api, const lt_tensor *a, const lt_tensor *lo,
                            const lt_tensor *hi) {
  return check_three(api, (const char *const[3]){"a", "lo", "hi"},
                     (const lt_tensor *const[3]){a, lo, hi});
}

static const char *const where_labels[3] = {"cond", "a", "b"};
static const char *const clip_labels[3] = {"a", "lo", "hi"};

lt_status lt_where(const lt_tensor *cond, const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(check_where("lt_where", cond, a, b));
  const lt_tensor *x[3] = {cond, a, b};
  return trinary_once("lt_where", x, where_labels, LT_BINARY_WHERE, LT_BINARY_WHERE,
                      lt__dtype_promote(a->dtype, b->dtype), out);
}

lt_status lt_where_into(const lt_tensor *cond, const lt_tensor *a, const lt_tensor *b,
                        lt_tensor *out) {
  LT_TRY(check_where("lt_where_into", cond, a, b));
  LT_TRY(lt__check_tensor(out, "lt_where_into: out"));
  const lt_tensor *x[3] = {cond, a, b};
  return trinary_into("lt_where_into", x, where_labels, LT_BINARY_WHERE, LT_BINARY_WHERE, out);
}

lt_status lt_clip(const lt_tensor *a, const lt_tensor *lo, const lt_tensor *hi, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(check_clip("lt_clip", a, lo, hi));
  const lt_tensor *x[3] = {a, lo, hi};
  lt_dtype dtype = lt__dtype_promote_many(3, (lt_dtype[3]){a->dtype, lo->dtype, hi->dtype});
  return trinary_once("lt_clip", x, clip_labels, LT_BINARY_MAX, LT_BINARY_MIN, dtype, out);
}

lt_status lt_clip_into(const lt_tensor *a, const lt_tensor *lo, const lt_tensor *hi,
                       lt_tensor *out) {
  LT_TRY(check_clip("lt_clip_into", a, lo, hi));
  LT_TRY(lt__check_tensor(out, "lt_clip_into: out"));
  const lt_tensor *x[3] = {a, lo, hi};
  return trinary_into("lt_clip_into", x, clip_labels, LT_BINARY_MAX, LT_BINARY_MIN, out);
}
