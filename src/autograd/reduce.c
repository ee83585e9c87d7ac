/* SPDX-License-Identifier: MIT */
/* Differentiable reductions. SUM and MEAN broadcast the gradient back; SUMSQ scales by 2x.
 * PROD, MIN, MAX and MAXABS need per-slice facts (exclusive products, which elements tie for
 * the extreme): those weights are computed per reduced slice in float64 on the host, exactly,
 * then multiplied by the broadcast gradient. ARGMAX/ARGMIN results stop gradients. */
#include "autograd/autograd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Weights of one reduced slice x[0..len), written over x. */
typedef void (*slice_fn)(double *x, int64_t len);

static void prod_weights(double *x, int64_t len) {
  /* d prod / d x_i = product of the others: prefix times suffix, exact with zeros */
  double suffix = 1.0;
  double *pre = malloc(sizeof(double) * (size_t)(len > 0 ? len : 1));
  if (pre == NULL) {
    for (int64_t i = 0; i < len; i++)
      x[i] = NAN;
    return;
  }
  double p = 1.0;
  for (int64_t i = 0; i < len; i++) {
    pre[i] = p;
    p *= x[i];
  }
  for (int64_t i = len - 1; i >= 0; i--) {
    double xi = x[i];
    x[i] = pre[i] * suffix;
    suffix *= xi;
  }
  free(pre);
}

/* Ties of the extreme share the gradient evenly (PyTorch's amax/amin); NaN is the extreme. */
static void extreme_weights(double *x, int64_t len, int sign, bool absolute) {
  double best = sign > 0 ? -INFINITY : INFINITY;
  bool nan = false;
  for (int64_t i = 0; i < len; i++) {
    double v = absolute ? fabs(x[i]) : x[i];
    if (isnan(v))
      nan = true;
    else if (sign > 0 ? v > best : v < best)
      best = v;
  }
  int64_t ties = 0;
  for (int64_t i = 0; i < len; i++) {
    double v = absolute ? fabs(x[i]) : x[i];
    ties += nan ? isnan(v) : v == best;
  }
  for (int64_t i = 0; i < len; i++) {
    double v = absolute ? fabs(x[i]) : x[i];
    bool hit = nan ? isnan(v) : v == best;
    double s = absolute ? (x[i] < 0 ? -1.0 : x[i] > 0 ? 1.0 : 0.0) : 1.0;
    x[i] = hit ? s / (double)ties : 0.0;
  }
}
static void max_weights(double *x, int64_t len) { extreme_weights(x, len, 1, false); }
static void min_weights(double *x, int64_t len) { extreme_weights(x, len, -1, false); }
static void maxabs_weights(double *x, int64_t len) { extreme_weights(x, len, 1, true); }

/* Weights of x over the axes in `mask`, as a tensor in x's shape and dtype. */
static lt_status slice_weights(const lt_tensor *x, uint64_t mask, slice_fn f, lt_tensor **out) {
  int perm[LT_MAX_RANK], inv[LT_MAX_RANK], k = 0;
  int64_t outer = 1, len = 1, pshape[LT_MAX_RANK];
  for (int i = 0; i < x->rank; i++)
    if (!(mask >> i & 1)) perm[k++] = i, outer *= x->shape[i];
  for (int i = 0; i < x->rank; i++)
    if (mask >> i & 1) perm[k++] = i, len *= x->shape[i];
  for (int i = 0; i < x->rank; i++)
    inv[perm[i]] = i, pshape[i] = x->shape[perm[i]];
  lt_tensor *pv, *c = NULL, *w = NULL, *wv = NULL;
  LT_TRY(lt_view_permute(x, perm, &pv));
  lt_status st = lt_tensor_contiguous(pv, LT_F64, &c);
  lt_tensor_destroy(pv);
  LT_TRY(st);
  size_t bytes = sizeof(double) * (size_t)(x->numel > 0 ? x->numel : 1);
  double *h = malloc(bytes);
  if (h == NULL) st = lt__error(LT_ERR_OUT_OF_MEMORY, "autograd: out of memory (reduction)");
  if (st == LT_OK) st = lt_tensor_to_host(c, h, bytes);
  if (st == LT_OK) {
    if (len > 0)
      for (int64_t o = 0; o < outer; o++)
        f(h + o * len, len);
    st = lt_tensor_from_host(x->storage->ctx, LT_F64, x->rank, pshape, NULL, h, &w);
  }
  if (st == LT_OK) st = lt_view_permute(w, inv, &wv);
  if (st == LT_OK) st = lt_tensor_contiguous(wv, x->dtype, out);
  free(h);
  lt_tensor_destroy(c);
  lt_tensor_destroy(w);
  lt_tensor_destroy(wv);
  return st;
}

/* Node layout: iparam {op, keepdims, axis mask}; saved[0] = input when the rule reads it. */
static lt_status reduce_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  lt_reduce_op op = (lt_reduce_op)n->iparam[0];
  uint64_t mask = (uint64_t)n->iparam[2];
  const lt__ad_meta *in = &n->in[0];
  int64_t kshape[LT_MAX_RANK], count = 1;
  for (int i = 0; i < in->rank; i++) {
    kshape[i] = (mask >> i & 1) ? 1 : in->shape[i];
    if (mask >> i & 1) count *= in->shape[i];
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
  case LT_REDUCE_PROD:
  case LT_REDUCE_MIN:
  case LT_REDUCE_MAX:
  case LT_REDUCE_MAXABS: {
    slice_fn f = op == LT_REDUCE_PROD  ? prod_weights
                 : op == LT_REDUCE_MIN ? min_weights
                 : op == LT_REDUCE_MAX ? max_weights
                                       : maxabs_weights;
    st = slice_weights(x, mask, f, &w);
    if (st == LT_OK)
      st = lt__ad_ew(LT_BINARY_MUL, 0, w, LT_UNARY_IDENTITY, gk, LT_UNARY_IDENTITY, NULL,
                     LT_UNARY_IDENTITY, k, &grads[0]);
    break;
  }
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
  LT_TRY(lt_reduce(op, a, n_axes, axes, keepdims, out));
  if (!lt__ad_should_record(tape, 1, &a)) return LT_OK;
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
