/* SPDX-License-Identifier: MIT */
/* The few computations backward rules are written in: one fused elementwise call over plans
 * (scalars, read-time unary ops and comparisons included, so a rule like g*(1-y^2) or
 * g*(y > 0) is one pass on the device), and summing a gradient down to a broadcast input's
 * shape. */
#include "autograd/autograd.h"

#include <stdlib.h>
#include <string.h>

static lt_dtype promote(lt_dtype a, lt_dtype b) {
  if (a == b) return a;
  if (a == LT_F64 || b == LT_F64 || a == LT_I64 || b == LT_I64) return LT_F64;
  return LT_F32;
}

lt_status lt__ad_ew(lt_binary_op op_ab, lt_binary_op op_abc, const lt_tensor *a, lt_unary_op ua,
                    const lt_tensor *b, lt_unary_op ub, const lt_tensor *c, lt_unary_op uc,
                    const double *s, lt_tensor **out) {
  *out = NULL;
  const lt_tensor *ins[3] = {a, b, c};
  int n = c ? 3 : b ? 2 : 1;
  int rank = 0;
  lt_dtype dt = a->dtype;
  for (int k = 0; k < n; k++) {
    if (ins[k]->rank > rank) rank = ins[k]->rank;
    dt = promote(dt, ins[k]->dtype);
    if (ins[k]->storage->ctx != a->storage->ctx)
      return lt__context_mismatch("autograd", "an operand", ins[k]->storage->ctx, "another",
                                  a->storage->ctx);
  }
  int64_t shape[LT_MAX_RANK];
  int32_t md[LT_MAX_RANK], mk[3][LT_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    shape[i] = 1;
    md[i] = i;
    for (int k = 0; k < n; k++) {
      int j = i - (rank - ins[k]->rank);
      int64_t e = j >= 0 ? ins[k]->shape[j] : 1;
      LT_RETURN_IF(e != 1 && shape[i] != 1 && e != shape[i], LT_ERR_SHAPE_MISMATCH,
                   "operands do not broadcast: axis %d has extents %lld and %lld (aligned from "
                   "the right)",
                   i, (long long)shape[i], (long long)e);
      if (e != 1) shape[i] = e;
    }
  }
  for (int k = 0; k < n; k++)
    for (int j = 0; j < ins[k]->rank; j++)
      mk[k][j] = rank - ins[k]->rank + j;
  lt_plan_options *opts;
  LT_TRY(lt_plan_options_create(&opts));
  lt_unary_op un[3] = {ua, ub, uc};
  lt_status st = LT_OK;
  for (int k = 0; k < n && st == LT_OK; k++)
    st = lt_plan_options_set_unary(opts, k, un[k]);
  lt_tensor *o = NULL;
  lt_plan *plan = NULL;
  if (st == LT_OK) st = lt_tensor_empty(a->storage->ctx, dt, rank, shape, &o);
  if (st == LT_OK) {
    if (n == 1)
      st = lt_plan_permutation(a, mk[0], o, md, opts, &plan);
    else if (n == 2)
      st = lt_plan_binary(a, mk[0], b, mk[1], op_ab, o, md, opts, &plan);
    else
      st = lt_plan_trinary(a, mk[0], b, mk[1], c, mk[2], op_ab, op_abc, o, md, opts, &plan);
  }
  static const double ones[3] = {1, 1, 1};
  if (st == LT_OK) st = lt_plan_execute(plan, ins, n, s ? s : ones, n == 1 ? 1 : n, o);
  lt_plan_destroy(plan);
  lt_plan_options_destroy(opts);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  *out = o;
  return LT_OK;
}

lt_status lt__ad_scale(const lt_tensor *a, double s, lt_tensor **out) {
  return lt__ad_ew(LT_BINARY_ADD, LT_BINARY_ADD, a, LT_UNARY_IDENTITY, NULL, LT_UNARY_IDENTITY,
                   NULL, LT_UNARY_IDENTITY, &s, out);
}

static bool same_shape(const lt_tensor *t, const lt__ad_meta *m) {
  return t->rank == m->rank &&
         (m->rank == 0 || memcmp(t->shape, m->shape, sizeof(int64_t) * (size_t)m->rank) == 0);
}

lt_status lt__ad_sum_to(const lt_tensor *g, const lt__ad_meta *m, lt_tensor **out) {
  *out = NULL;
  if (same_shape(g, m)) {
    if (g->dtype == m->dtype) return lt__ad_alias(g, out);
    return lt_tensor_contiguous(g, m->dtype, out);
  }
  if (g->rank < m->rank) {
    lt_tensor *b;
    LT_TRY(lt_view_broadcast_to(g, m->rank, m->shape, &b));
    lt_status st = lt__ad_sum_to(b, m, out);
    lt_tensor_destroy(b);
    return st;
  }
  int axes[LT_MAX_RANK], n = 0, lead = g->rank - m->rank;
  for (int i = 0; i < g->rank; i++) {
    int j = i - lead;
    if (j < 0 || (m->shape[j] == 1 && g->shape[i] != 1))
      axes[n++] = i;
    else
      LT_RETURN_IF(m->shape[j] != g->shape[i], LT_ERR_INTERNAL,
                   "autograd: a gradient of extent %lld meets an input of extent %lld",
                   (long long)g->shape[i], (long long)m->shape[j]);
  }
  lt_tensor *r, *v;
  LT_TRY(lt_reduce(LT_REDUCE_SUM, g, n, axes, false, &r));
  lt_status st = lt_tensor_reshape(r, m->rank, m->shape, &v);
  lt_tensor_destroy(r);
  LT_TRY(st);
  if (v->dtype == m->dtype) {
    *out = v;
    return LT_OK;
  }
  st = lt_tensor_contiguous(v, m->dtype, out);
  lt_tensor_destroy(v);
  return st;
}

lt_status lt__ad_zeros(lt_context *ctx, const lt__ad_meta *m, lt_tensor **out) {
  return lt_tensor_zeros(ctx, m->dtype, m->rank, m->shape, out);
}
