/* SPDX-License-Identifier: MIT */
/* Differentiable statistics: softmax, log_softmax, logsumexp, var/std and the cumulative sum and
 * product. Every rule runs on the device with library ops and saves one tensor at most:
 * softmax and log_softmax their output, logsumexp/var/std/cumprod their input (the rest is
 * recomputed in backward, cheaper than keeping a second tensor alive), cumsum nothing. */
#include "autograd/autograd.h"

#include <stdlib.h>
#include <string.h>

#define ID LT_UNARY_IDENTITY

enum { ST_SOFTMAX, ST_LOG_SOFTMAX, ST_LOGSUMEXP, ST_VAR, ST_STD, ST_CUMSUM, ST_CUMPROD };

/* Node layout: iparam {kind, axis mask (or the scan axis), keepdims}; dparam[0] ddof. */

/* The node's reduced axes as a list, and g reshaped to keepdims form (the input's rank). */
static lt_status axes_of(const lt__ad_node *n, const lt_tensor *g, int *n_axes, int *axes,
                         int64_t *count, lt_tensor **gk) {
  const lt__ad_meta *in = &n->in[0];
  uint64_t mask = (uint64_t)n->iparam[1];
  int64_t kshape[LT_MAX_RANK];
  *n_axes = 0;
  *count = 1;
  for (int i = 0; i < in->rank; i++) {
    kshape[i] = (mask >> i & 1) ? 1 : in->shape[i];
    if (mask >> i & 1) axes[(*n_axes)++] = i, *count *= in->shape[i];
  }
  return gk ? lt_tensor_reshape(g, in->rank, kshape, gk) : LT_OK;
}

/* softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g). */
static lt_status softmax_grad(const lt__ad_node *n, const lt_tensor *g, lt_tensor **out) {
  const lt_tensor *y = n->saved[0];
  int axes[LT_MAX_RANK], na;
  int64_t count;
  LT_TRY(axes_of(n, g, &na, axes, &count, NULL));
  lt_tensor *gy = NULL, *s = NULL;
  lt_status st = LT_OK;
  bool log = n->iparam[0] == ST_LOG_SOFTMAX;
  if (!log) st = lt__ad_ew(LT_BINARY_MUL, 0, g, ID, y, ID, NULL, ID, NULL, &gy);
  if (st == LT_OK) st = lt_reduce(LT_REDUCE_SUM, log ? g : gy, na, axes, true, &s);
  double k[3] = {-1, 1, 1};
  if (st == LT_OK && log)
    st = lt__ad_ew(LT_BINARY_MUL, LT_BINARY_ADD, y, LT_UNARY_EXP, s, ID, g, ID, k, out);
  else if (st == LT_OK)
    st = lt__ad_ew(LT_BINARY_SUB, LT_BINARY_MUL, g, ID, s, ID, y, ID, NULL, out);
  lt_tensor_destroy(gy);
  lt_tensor_destroy(s);
  return st;
}

/* logsumexp: g softmax(x); var: g 2 (x - mean) / (n - ddof); std: the var rule on g / (2 y). */
static lt_status reduction_grad(const lt__ad_node *n, const lt_tensor *g, lt_tensor **out) {
  const lt_tensor *x = n->saved[0];
  int axes[LT_MAX_RANK], na;
  int64_t count;
  lt_tensor *gk = NULL, *t = NULL, *m = NULL, *gs = NULL;
  LT_TRY(axes_of(n, g, &na, axes, &count, &gk));
  int kind = (int)n->iparam[0];
  lt_status st = LT_OK;
  if (kind == ST_LOGSUMEXP) {
    st = lt_softmax(x, na, axes, &t);
    if (st == LT_OK) st = lt__ad_ew(LT_BINARY_MUL, 0, t, ID, gk, ID, NULL, ID, NULL, out);
  } else {
    if (kind == ST_STD) {
      double h[3] = {0.5, 1, 1};
      st = lt_std(x, na, axes, n->dparam[0], true, &t);
      if (st == LT_OK) st = lt__ad_ew(LT_BINARY_DIV, 0, gk, ID, t, ID, NULL, ID, h, &gs);
      /* a row of equal values (std 0) gets 0, as PyTorch masks it (g / 0 gave NaN) */
      lt_tensor *zero = NULL, *flat = NULL, *masked = NULL;
      if (st == LT_OK) st = lt_tensor_full(x->storage->ctx, t->dtype, 0, NULL, 0.0, &zero);
      if (st == LT_OK) st = lt_binary(LT_BINARY_EQ, t, zero, &flat);
      if (st == LT_OK) st = lt_where(flat, zero, gs, &masked);
      if (st == LT_OK) {
        lt_tensor_destroy(gs);
        gs = masked;
      }
      lt_tensor_destroy(zero);
      lt_tensor_destroy(flat);
    }
    double c = 2.0 / ((double)count - n->dparam[0]);
    double k[3] = {c, c, 1};
    if (st == LT_OK) st = lt_reduce(LT_REDUCE_MEAN, x, na, axes, true, &m);
    if (st == LT_OK)
      st = lt__ad_ew(LT_BINARY_SUB, LT_BINARY_MUL, x, ID, m, ID, gs ? gs : gk, ID, k, out);
  }
  lt_tensor *all[] = {gk, t, m, gs};
  for (int i = 0; i < 4; i++)
    lt_tensor_destroy(all[i]);
  return st;
}

/* Sum of t over positions >= i along axis (a reversed cumulative sum), as a new tensor. */
static lt_status rev_cumsum(const lt_tensor *t, int axis, lt_tensor **out) {
  lt_tensor *f = NULL, *c = NULL;
  LT_TRY(lt_view_flip(t, axis, &f));
  lt_status st = lt_cumsum(f, axis, &c);
  lt_tensor_destroy(f);
  if (st == LT_OK) st = lt_view_flip(c, axis, out);
  lt_tensor_destroy(c);
  return st;
}

/* cumprod, exact with zeros: with nz = (x == 0), xr = x + nz (zeros read as 1), y' = cumprod(xr)
 * and cz = cumsum(nz), d y_j / d x_i (j >= i) is y'_j / xr_i when the zeros up to j are exactly
 * x_i's own (cz_j == nz_i). So grad = (nz ? B : A) / xr with A = revcumsum(g y'[cz == 0]) =
 * revcumsum(g y) and B = revcumsum(g y' [cz == 1]). */
static lt_status cumprod_grad(const lt__ad_node *n, const lt_tensor *g, lt_tensor **out) {
  const lt_tensor *x = n->saved[0];
  int axis = (int)n->iparam[1];
  lt_tensor *zero = NULL, *one = NULL, *nz = NULL, *xr = NULL, *yp = NULL, *cz = NULL;
  lt_tensor *y = NULL, *ta = NULL, *tb = NULL, *a = NULL, *b = NULL, *d = NULL, *e1 = NULL;
  lt_status st = lt_tensor_full(x->storage->ctx, x->dtype, 0, NULL, 0.0, &zero);
  if (st == LT_OK) st = lt_tensor_full(x->storage->ctx, x->dtype, 0, NULL, 1.0, &one);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_EQ, 0, x, ID, zero, ID, NULL, ID, NULL, &nz);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_ADD, 0, x, ID, nz, ID, NULL, ID, NULL, &xr);
  if (st == LT_OK) st = lt_cumprod(xr, axis, &yp);
  if (st == LT_OK) st = lt_cumsum(nz, axis, &cz);
  if (st == LT_OK) st = lt_cumprod(x, axis, &y);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_MUL, 0, g, ID, y, ID, NULL, ID, NULL, &ta);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_EQ, LT_BINARY_MUL, cz, ID, one, ID, yp, ID, NULL, &e1);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_MUL, 0, e1, ID, g, ID, NULL, ID, NULL, &tb);
  if (st == LT_OK) st = rev_cumsum(ta, axis, &a);
  if (st == LT_OK) st = rev_cumsum(tb, axis, &b);
  double k[3] = {1, -1, 1};
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_ADD, LT_BINARY_MUL, b, ID, a, ID, nz, ID, k, &d);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_ADD, LT_BINARY_DIV, a, ID, d, ID, xr, ID, NULL, out);
  lt_tensor *all[] = {zero, one, nz, xr, yp, cz, y, ta, tb, a, b, d, e1};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    lt_tensor_destroy(all[i]);
  return st;
}

static lt_status stats_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  switch ((int)n->iparam[0]) {
  case ST_SOFTMAX:
  case ST_LOG_SOFTMAX: return softmax_grad(n, g, &grads[0]);
  case ST_LOGSUMEXP:
  case ST_VAR:
  case ST_STD: return reduction_grad(n, g, &grads[0]);
  case ST_CUMSUM: return rev_cumsum(g, (int)n->iparam[1], &grads[0]);
  case ST_CUMPROD: return cumprod_grad(n, g, &grads[0]);
  }
  return lt__error(LT_ERR_INTERNAL, "autograd: unknown statistics rule %d", (int)n->iparam[0]);
}

static const lt__ad_rule rules[] = {
    {"softmax", stats_backward}, {"log_softmax", stats_backward}, {"logsumexp", stats_backward},
    {"var", stats_backward},     {"std", stats_backward},         {"cumsum", stats_backward},
    {"cumprod", stats_backward},
};

/* The axis set of a validated call as a mask (n_axes -1: all). */
static uint64_t mask_of(int rank, int n_axes, const int *axes) {
  if (n_axes < 0) return rank >= 64 ? ~0ull : (1ull << rank) - 1;
  uint64_t m = 0;
  for (int i = 0; i < n_axes; i++)
    m |= 1ull << (axes[i] < 0 ? axes[i] + rank : axes[i]);
  return m;
}

/* Records *out = kind(a); saves a (save == 1) or *out (save == 2). On failure destroys *out. */
static lt_status record(lt_tape *tape, int kind, const lt_tensor *a, uint64_t mask, bool keep,
                        double ddof, int save, lt_tensor **out) {
  if (!lt__ad_should_record(tape, 1, &a, *out)) return LT_OK;
  lt__ad_node *n;
  lt_status st = lt__ad_record(tape, &rules[kind], 1, &a, *out, &n);
  if (st == LT_OK) {
    n->iparam[0] = kind;
    n->iparam[1] = (int64_t)mask;
    n->iparam[2] = keep;
    n->dparam[0] = ddof;
    if (save) st = lt__ad_save(n, 0, save == 1 ? a : *out, save == 1 ? "input" : "output");
    if (st != LT_OK) lt__ad_unrecord_last(tape);
  }
  if (st != LT_OK) {
    lt_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

lt_status lt_ad_softmax(lt_tape *tape, const lt_tensor *a, int n_axes, const int *axes,
                        lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_softmax"));
  LT_TRY(lt_softmax(a, n_axes, axes, out));
  return record(tape, ST_SOFTMAX, a, mask_of(a->rank, n_axes, axes), true, 0, 2, out);
}
lt_status lt_ad_log_softmax(lt_tape *tape, const lt_tensor *a, int n_axes, const int *axes,
                            lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_log_softmax"));
  LT_TRY(lt_log_softmax(a, n_axes, axes, out));
  return record(tape, ST_LOG_SOFTMAX, a, mask_of(a->rank, n_axes, axes), true, 0, 2, out);
}
lt_status lt_ad_logsumexp(lt_tape *tape, const lt_tensor *a, int n_axes, const int *axes,
                          bool keepdims, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_logsumexp"));
  LT_TRY(lt_logsumexp(a, n_axes, axes, keepdims, out));
  return record(tape, ST_LOGSUMEXP, a, mask_of(a->rank, n_axes, axes), keepdims, 0, 1, out);
}
lt_status lt_ad_var(lt_tape *tape, const lt_tensor *a, int n_axes, const int *axes, double ddof,
                    bool keepdims, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_var"));
  LT_TRY(lt_var(a, n_axes, axes, ddof, keepdims, out));
  return record(tape, ST_VAR, a, mask_of(a->rank, n_axes, axes), keepdims, ddof, 1, out);
}
lt_status lt_ad_std(lt_tape *tape, const lt_tensor *a, int n_axes, const int *axes, double ddof,
                    bool keepdims, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_std"));
  LT_TRY(lt_std(a, n_axes, axes, ddof, keepdims, out));
  return record(tape, ST_STD, a, mask_of(a->rank, n_axes, axes), keepdims, ddof, 1, out);
}
lt_status lt_ad_cumsum(lt_tape *tape, const lt_tensor *a, int axis, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_cumsum"));
  LT_TRY(lt_cumsum(a, axis, out));
  int ax = axis < 0 ? axis + a->rank : axis;
  return record(tape, ST_CUMSUM, a, (uint64_t)ax, false, 0, 0, out);
}
lt_status lt_ad_cumprod(lt_tape *tape, const lt_tensor *a, int axis, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_cumprod"));
  LT_TRY(lt_cumprod(a, axis, out));
  int ax = axis < 0 ? axis + a->rank : axis;
  return record(tape, ST_CUMPROD, a, (uint64_t)ax, false, 0, 1, out);
}
