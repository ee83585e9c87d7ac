/* SPDX-License-Identifier: MIT */
/* Differentiable reductions. SUM and MEAN broadcast the gradient back; SUMSQ scales by 2x.
 * PROD, MIN, MAX and MAXABS need per-slice facts (products of the others, which elements tie for
 * the extreme): those come from comparisons, a second reduction and fused elementwise passes on
 * the device. ARGMAX/ARGMIN results stop gradients. */
#include "autograd/autograd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ID LT_UNARY_IDENTITY

/* A rank-0 constant of x's dtype on x's context. */
static lt_status scalar_like(const lt_tensor *x, double v, lt_tensor **out) {
  return lt_tensor_full(x->storage->ctx, x->dtype, 0, NULL, v, out);
}

/* min/max/maxabs: g where |x| (or x) equals the slice's extreme, divided by the number of such
 * ties (PyTorch's amax/amin split), times sign(x) for maxabs. On the device: the extreme is
 * reduced again (cheaper than saving it), ties are an EQ pass and a count. */
static lt_status extreme_grad(lt_reduce_op op, const lt_tensor *x, int n_axes, const int *axes,
                              const lt_tensor *gk, lt_tensor **out) {
  bool absolute = op == LT_REDUCE_MAXABS;
  lt_tensor *m = NULL, *eq = NULL, *cnt = NULL, *w = NULL;
  lt_status st = lt_reduce(op, x, n_axes, axes, true, &m);
  if (st == LT_OK)
    st = lt__ad_ew(LT_BINARY_EQ, 0, x, absolute ? LT_UNARY_ABS : ID, m, ID, NULL, ID, NULL, &eq);
  if (st == LT_OK) st = lt_reduce(LT_REDUCE_SUM, eq, n_axes, axes, true, &cnt);
  if (st == LT_OK && absolute)
    st = lt__ad_ew(LT_BINARY_MUL, LT_BINARY_MUL, eq, ID, x, LT_UNARY_SIGN, gk, ID, NULL, &w);
  else if (st == LT_OK)
    st = lt__ad_ew(LT_BINARY_MUL, 0, eq, ID, gk, ID, NULL, ID, NULL, &w);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_DIV, 0, w, ID, cnt, ID, NULL, ID, NULL, out);
  lt_tensor *all[] = {m, eq, cnt, w};
  for (int i = 0; i < 4; i++)
    lt_tensor_destroy(all[i]);
  return st;
}

/* prod: d/dx_i = product of the others, exact with zeros and without a host pass. With z zeros
 * in the slice and P the product of its nonzero elements: z = 0 gives P / x_i, z = 1 gives P at
 * the zero and 0 elsewhere, z > 1 gives 0. */
static lt_status prod_grad(const lt_tensor *x, int n_axes, const int *axes, const lt_tensor *gk,
                           lt_tensor **out) {
  lt_tensor *zero = NULL, *one = NULL, *nz = NULL, *xr = NULL, *p = NULL, *z = NULL;
  lt_tensor *c0 = NULL, *c1 = NULL, *t1 = NULL, *t2 = NULL;
  lt_status st = scalar_like(x, 0.0, &zero);
  if (st == LT_OK) st = scalar_like(x, 1.0, &one);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_EQ, 0, x, ID, zero, ID, NULL, ID, NULL, &nz);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_ADD, 0, x, ID, nz, ID, NULL, ID, NULL, &xr);
  if (st == LT_OK) st = lt_reduce(LT_REDUCE_PROD, xr, n_axes, axes, true, &p);
  if (st == LT_OK) st = lt_reduce(LT_REDUCE_SUM, nz, n_axes, axes, true, &z);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_EQ, 0, z, ID, zero, ID, NULL, ID, NULL, &c0);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_EQ, 0, z, ID, one, ID, NULL, ID, NULL, &c1);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_DIV, 0, c0, ID, xr, ID, NULL, ID, NULL, &t1);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_MUL, LT_BINARY_ADD, c1, ID, nz, ID, t1, ID, NULL, &t2);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_MUL, LT_BINARY_MUL, t2, ID, p, ID, gk, ID, NULL, out);
  lt_tensor *all[] = {zero, one, nz, xr, p, z, c0, c1, t1, t2};
  for (int i = 0; i < 10; i++)
    lt_tensor_destroy(all[i]);
  return st;
}

/* Node layout: iparam {op, keepdims, axis mask}; saved[0] = input when the rule reads it. */
static lt_status reduce_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  lt_reduce_op op = (lt_reduce_op)n->iparam[0];
  uint64_t mask = (uint64_t)n->iparam[2];
  const lt__ad_meta *in = &n->in[0];
  int64_t kshape[LT_MAX_RANK], count = 1;
  int axes[LT_MAX_RANK], n_axes = 0;
  for (int i = 0; i < in->rank; i++) {
    kshape[i] = (mask >> i & 1) ? 1 : in->shape[i];
    if (mask >> i & 1) count *= in->shape[i], axes[n_axes++] = i;
  }
  lt_tensor *gk;
  LT_TRY(lt_tensor_reshape(g, in->rank, kshape, &gk));
  lt_status st = LT_OK;
  lt_tensor *w = NULL;
  const lt_tensor *x = n->saved[0];
  double k[3] = {1, 1, 1};
  switch (op) {
  case LT_REDUCE_SUM: st = lt_view_broadcast_to(gk, in->rank, in->shape, &grads[0]); break;
  case LT_REDUCE_MEAN:
    k[0] = 1.0 / (double)count;
    st = lt__ad_ew(LT_BINARY_MUL, 0, gk, LT_UNARY_IDENTITY, NULL, LT_UNARY_IDENTITY, NULL,
                   LT_UNARY_IDENTITY, k, &w);
    if (st == LT_OK) st = lt_view_broadcast_to(w, in->rank, in->shape, &grads[0]);
    break;
  case LT_REDUCE_SUMSQ:
    k[0] = 2;
    st = lt__ad_ew(LT_BINARY_MUL, 0, x, LT_UNARY_IDENTITY, gk, LT_UNARY_IDENTITY, NULL,
                   LT_UNARY_IDENTITY, k, &grads[0]);
    break;
  case LT_REDUCE_PROD: st = prod_grad(x, n_axes, axes, gk, &grads[0]); break;
  case LT_REDUCE_MIN:
  case LT_REDUCE_MAX:
  case LT_REDUCE_MAXABS: st = extreme_grad(op, x, n_axes, axes, gk, &grads[0]); break;
  default: st = lt__error(LT_ERR_INTERNAL, "autograd: reduction %d has no rule", (int)op);
  }
  lt_tensor_destroy(w);
  lt_tensor_destroy(gk);
  return st;
}

const lt__ad_rule lt__ad_rule_reduce = {"reduce", reduce_backward};
const lt__ad_rule lt__ad_rule_stop = {"argmax/argmin", NULL};

lt_status lt_ad_reduce(lt_tape *tape, lt_reduce_op op, const lt_tensor *a, int n_axes,
                       const int *axes, bool keepdims, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_reduce"));
  LT_TRY(lt_reduce(op, a, n_axes, axes, keepdims, out));
  if (!lt__ad_should_record(tape, 1, &a, *out)) return LT_OK;
  uint64_t mask = 0;
  if (n_axes < 0) {
    mask = a->rank == 64 ? ~0ull : (1ull << a->rank) - 1;
  } else {
    for (int i = 0; i < n_axes; i++)
      mask |= 1ull << (axes[i] < 0 ? axes[i] + a->rank : axes[i]);
  }
  bool arg = op == LT_REDUCE_ARGMAX || op == LT_REDUCE_ARGMIN;
  lt__ad_node *n;
  lt_status st =
      lt__ad_record(tape, arg ? &lt__ad_rule_stop : &lt__ad_rule_reduce, 1, &a, *out, &n);
  if (st == LT_OK) {
    n->iparam[0] = op;
    n->iparam[1] = keepdims;
    n->iparam[2] = (int64_t)mask;
    if (!arg && op != LT_REDUCE_SUM && op != LT_REDUCE_MEAN) st = lt__ad_save(n, 0, a, "input");
    if (st != LT_OK) lt__ad_unrecord_last(tape);
  }
  if (st != LT_OK) {
    lt_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}
