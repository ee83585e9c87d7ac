/* SPDX-License-Identifier: MIT */
/* Differentiable elementwise ops: unary, and binary/trinary with alpha/beta/gamma. Each saves
 * only what its derivative reads (exp keeps its output, log its input, add nothing), so a chain
 * of unary ops holds one tensor per op. */
#include "autograd/autograd.h"

#include <math.h>

#define ID LT_UNARY_IDENTITY

/* Whether a unary op's derivative is written in its output y (2), in its input x (1) or in
 * neither (0: NEG and IDENTITY, and the step functions, whose derivative is zero). */
static int unary_needs(lt_unary_op op) {
  switch (op) {
  case LT_UNARY_IDENTITY:
  case LT_UNARY_NEG:
  case LT_UNARY_FLOOR:
  case LT_UNARY_CEIL:
  case LT_UNARY_ROUND:
  case LT_UNARY_TRUNC:
  case LT_UNARY_SIGN: return 0;
  case LT_UNARY_SQRT:
  case LT_UNARY_EXP:
  case LT_UNARY_TANH:
  case LT_UNARY_SIGMOID:
  case LT_UNARY_RECIPROCAL:
  case LT_UNARY_RELU:
  case LT_UNARY_EXPM1:
  case LT_UNARY_RSQRT:
  case LT_UNARY_TAN: return 2;
  default: return 1;
  }
}

/* Ops whose result is a truth value or a bit pattern: it carries no gradient, so it is not
 * recorded at all (as PyTorch: the result does not require a gradient). */
static bool unary_stops(lt_unary_op op) {
  return op == LT_UNARY_NOT || op == LT_UNARY_INVERT || op == LT_UNARY_ISNAN ||
         op == LT_UNARY_ISINF || op == LT_UNARY_ISFINITE;
}

/* The derivatives of the erf family, in a few fused passes. */
static lt_status erf_family_grad(lt_unary_op op, const lt_tensor *x, const lt_tensor *g,
                                 lt_tensor **out) {
  static const double pi = 3.14159265358979323846;
  lt_tensor *u = NULL, *e = NULL, *q = NULL, *d = NULL, *one = NULL;
  double k[3] = {1, 1, 1};
  lt_status st;
  if (op == LT_UNARY_ERF) { /* 2/sqrt(pi) exp(-x^2) g */
    k[0] = -1;
    st = lt__ad_ew(0, 0, x, LT_UNARY_SQUARE, NULL, ID, NULL, ID, k, &u);
    k[0] = 2 / sqrt(pi);
    if (st == LT_OK) st = lt__ad_ew(LT_BINARY_MUL, 0, u, LT_UNARY_EXP, g, ID, NULL, ID, k, out);
    lt_tensor_destroy(u);
    return st;
  }
  /* GELU: Phi(x) + x phi(x), Phi(x) = (1 + erf(x/sqrt2))/2, phi(x) = exp(-x^2/2)/sqrt(2 pi) */
  st = lt__ad_scale(x, 1 / sqrt(2.0), &u);
  if (st == LT_OK) st = lt__ad_ew(0, 0, u, LT_UNARY_ERF, NULL, ID, NULL, ID, NULL, &e);
  k[0] = -1;
  lt_tensor *m = NULL;
  if (st == LT_OK) st = lt__ad_ew(0, 0, u, LT_UNARY_SQUARE, NULL, ID, NULL, ID, k, &m);
  k[0] = 1 / sqrt(2 * pi);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_MUL, 0, m, LT_UNARY_EXP, x, ID, NULL, ID, k, &q);
  k[0] = 0.5;
  k[1] = 1;
  k[2] = 0.5;
  if (st == LT_OK) st = lt_tensor_full(x->storage->ctx, x->dtype, 0, NULL, 1.0, &one);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_ADD, LT_BINARY_ADD, e, ID, q, ID, one, ID, k, &d);
  if (st == LT_OK) st = lt__ad_ew(LT_BINARY_MUL, 0, d, ID, g, ID, NULL, ID, NULL, out);
  lt_tensor *all[] = {u, e, m, q, d, one};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    lt_tensor_destroy(all[i]);
  return st;
}

/* g * f'(x) for the ops whose derivative needs more than one fused pass. */
static lt_status multi_pass_grad(lt_unary_op op, const lt_tensor *s, const lt_tensor *g,
                                 lt_tensor **out) {
  lt_tensor *one = NULL, *t = NULL, *a = NULL;
  double k[3] = {1, 1, 1};
  lt_status st = LT_OK;
  switch (op) {
  case LT_UNARY_LOG1P: /* g / (1 + x) */
    st = lt_tensor_full(s->storage->ctx, s->dtype, 0, NULL, 1.0, &one);
    if (st == LT_OK) st = lt__ad_ew(LT_BINARY_ADD, 0, s, ID, one, ID, NULL, ID, k, &t);
    if (st == LT_OK) st = lt__ad_ew(LT_BINARY_DIV, 0, g, ID, t, ID, NULL, ID, k, out);
    break;
  case LT_UNARY_SILU: /* (sig + x (sig - sig^2)) g */
    st = lt__ad_ew(0, 0, s, LT_UNARY_SIGMOID, NULL, ID, NULL, ID, NULL, &t);
    if (st == LT_OK)
      st = lt__ad_ew(LT_BINARY_SUB, LT_BINARY_MUL, t, ID, t, LT_UNARY_SQUARE, s, ID, k, &a);
    if (st == LT_OK) st = lt__ad_ew(LT_BINARY_ADD, LT_BINARY_MUL, t, ID, a, ID, g, ID, k, out);
    break;
  default: st = erf_family_grad(op, s, g, out);
  }
  lt_tensor_destroy(one);
  lt_tensor_destroy(t);
  lt_tensor_destroy(a);
  return st;
}

/* The inverse trigonometric and hyperbolic functions: g times a function of 1 +- x^2, in two
 * passes (t, then g with t). */
static lt_status inverse_grad(lt_unary_op op, const lt_tensor *x, const lt_tensor *g,
                              lt_tensor **out) {
  lt_tensor *one = NULL, *t = NULL;
  double k[3] = {1, 1, 1};
  lt_status st = lt_tensor_full(x->storage->ctx, x->dtype, 0, NULL, 1.0, &one);
  if (st != LT_OK) return st;
  switch (op) {
  case LT_UNARY_ATAN:  /* g / (1 + x^2) */
  case LT_UNARY_ASINH: /* g / sqrt(1 + x^2) */
    st = lt__ad_ew(LT_BINARY_ADD, 0, one, ID, x, LT_UNARY_SQUARE, NULL, ID, k, &t);
    break;
  case LT_UNARY_ACOSH: /* g / sqrt(x^2 - 1) */
    st = lt__ad_ew(LT_BINARY_SUB, 0, x, LT_UNARY_SQUARE, one, ID, NULL, ID, k, &t);
    break;
  default: /* ASIN, ACOS: g / +-sqrt(1 - x^2); ATANH: g / (1 - x^2) */
    st = lt__ad_ew(LT_BINARY_SUB, 0, one, ID, x, LT_UNARY_SQUARE, NULL, ID, k, &t);
  }
  if (op == LT_UNARY_ACOS) k[0] = -1;
  bool root =
      op == LT_UNARY_ASIN || op == LT_UNARY_ACOS || op == LT_UNARY_ASINH || op == LT_UNARY_ACOSH;
  if (st == LT_OK)
    st = root ? lt__ad_ew(LT_BINARY_MUL, 0, g, ID, t, LT_UNARY_RSQRT, NULL, ID, k, out)
              : lt__ad_ew(LT_BINARY_DIV, 0, g, ID, t, ID, NULL, ID, k, out);
  lt_tensor_destroy(one);
  lt_tensor_destroy(t);
  return st;
}

/* A zero gradient of g's shape and dtype (the step functions). */
static lt_status zero_grad_like(const lt_tensor *g, lt_tensor **out) {
  return lt_tensor_zeros(g->storage->ctx, g->dtype, g->rank, g->shape, out);
}

static lt_status unary_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  lt_unary_op op = (lt_unary_op)n->iparam[0];
  const lt_tensor *s = n->n_saved ? n->saved[0] : NULL; /* x or y as unary_needs says */
  double k[3] = {1, 1, 1};
  lt_tensor *one = NULL;
  lt_status st;
  switch (op) {
  case LT_UNARY_IDENTITY: return lt__ad_alias(g, &grads[0]);
  case LT_UNARY_NEG: return lt__ad_scale(g, -1.0, &grads[0]);
  case LT_UNARY_ABS: /* g sign(x): 0 at 0, as PyTorch */
    return lt__ad_ew(LT_BINARY_MUL, 0, g, ID, s, LT_UNARY_SIGN, NULL, ID, k, &grads[0]);
  case LT_UNARY_RELU: /* g where y > 0 (y = relu(x): NaN and 0 give 0, as PyTorch) */
    st = lt_tensor_full(s->storage->ctx, s->dtype, 0, NULL, 0.0, &one);
    if (st == LT_OK)
      st = lt__ad_ew(LT_BINARY_GT, LT_BINARY_MUL, s, ID, one, ID, g, ID, k, &grads[0]);
    lt_tensor_destroy(one);
    return st;
  case LT_UNARY_SQRT: /* g / (2 y) */
    k[0] = 0.5;
    return lt__ad_ew(LT_BINARY_DIV, 0, g, ID, s, ID, NULL, ID, k, &grads[0]);
  case LT_UNARY_EXP: return lt__ad_ew(LT_BINARY_MUL, 0, g, ID, s, ID, NULL, ID, k, &grads[0]);
  case LT_UNARY_LOG: return lt__ad_ew(LT_BINARY_DIV, 0, g, ID, s, ID, NULL, ID, k, &grads[0]);
  case LT_UNARY_SIN:
    return lt__ad_ew(LT_BINARY_MUL, 0, g, ID, s, LT_UNARY_COS, NULL, ID, k, &grads[0]);
  case LT_UNARY_COS:
    k[0] = -1;
    return lt__ad_ew(LT_BINARY_MUL, 0, g, ID, s, LT_UNARY_SIN, NULL, ID, k, &grads[0]);
  case LT_UNARY_TANH: /* g - g y^2 */
    k[0] = -1;
    return lt__ad_ew(LT_BINARY_MUL, LT_BINARY_ADD, g, ID, s, LT_UNARY_SQUARE, g, ID, k, &grads[0]);
  case LT_UNARY_SIGMOID: /* (y - y^2) g */
    return lt__ad_ew(LT_BINARY_SUB, LT_BINARY_MUL, s, ID, s, LT_UNARY_SQUARE, g, ID, k, &grads[0]);
  case LT_UNARY_RECIPROCAL: /* -g y^2 */
    k[0] = -1;
    return lt__ad_ew(LT_BINARY_MUL, 0, g, ID, s, LT_UNARY_SQUARE, NULL, ID, k, &grads[0]);
  case LT_UNARY_SQUARE:
    k[0] = 2;
    return lt__ad_ew(LT_BINARY_MUL, 0, g, ID, s, ID, NULL, ID, k, &grads[0]);
  case LT_UNARY_EXPM1: /* g (y + 1) */
    st = lt_tensor_full(s->storage->ctx, s->dtype, 0, NULL, 1.0, &one);
    if (st == LT_OK)
      st = lt__ad_ew(LT_BINARY_ADD, LT_BINARY_MUL, s, ID, one, ID, g, ID, k, &grads[0]);
    lt_tensor_destroy(one);
    return st;
  case LT_UNARY_SOFTPLUS: /* g sigmoid(x) */
    return lt__ad_ew(LT_BINARY_MUL, 0, g, ID, s, LT_UNARY_SIGMOID, NULL, ID, k, &grads[0]);
  case LT_UNARY_RSQRT: /* -g y^3 / 2 */
    k[0] = -0.5;
    return lt__ad_ew(LT_BINARY_MUL, LT_BINARY_MUL, g, ID, s, LT_UNARY_SQUARE, s, ID, k, &grads[0]);
  case LT_UNARY_FLOOR:
  case LT_UNARY_CEIL:
  case LT_UNARY_ROUND:
  case LT_UNARY_TRUNC:
  case LT_UNARY_SIGN: return zero_grad_like(g, &grads[0]);
  case LT_UNARY_LOG1P:
  case LT_UNARY_SILU:
  case LT_UNARY_ERF:
  case LT_UNARY_GELU: return multi_pass_grad(op, s, g, &grads[0]);
  case LT_UNARY_TAN: /* g + g y^2 */
    return lt__ad_ew(LT_BINARY_MUL, LT_BINARY_ADD, g, ID, s, LT_UNARY_SQUARE, g, ID, k, &grads[0]);
  case LT_UNARY_SINH: /* g cosh(x) */
    return lt__ad_ew(LT_BINARY_MUL, 0, g, ID, s, LT_UNARY_COSH, NULL, ID, k, &grads[0]);
  case LT_UNARY_COSH: /* g sinh(x) */
    return lt__ad_ew(LT_BINARY_MUL, 0, g, ID, s, LT_UNARY_SINH, NULL, ID, k, &grads[0]);
  case LT_UNARY_LOG2:  /* g / (x ln 2) */
  case LT_UNARY_LOG10: /* g / (x ln 10) */
    k[0] = 1.0 / log(op == LT_UNARY_LOG2 ? 2.0 : 10.0);
    return lt__ad_ew(LT_BINARY_DIV, 0, g, ID, s, ID, NULL, ID, k, &grads[0]);
  case LT_UNARY_ASIN:
  case LT_UNARY_ACOS:
  case LT_UNARY_ATAN:
  case LT_UNARY_ASINH:
  case LT_UNARY_ACOSH:
  case LT_UNARY_ATANH: return inverse_grad(op, s, g, &grads[0]);
  default: break;
  }
  return lt__error(LT_ERR_INTERNAL, "autograd: unary op %d has no backward rule", (int)op);
}

const lt__ad_rule lt__ad_rule_unary = {"unary", unary_backward};

lt_status lt_ad_unary(lt_tape *tape, lt_unary_op op, const lt_tensor *a, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_unary"));
  LT_TRY(lt_unary(op, a, out));
  if (unary_stops(op) || !lt__ad_should_record(tape, 1, &a, *out)) return LT_OK;
  lt__ad_node *n;
  lt_status st = lt__ad_record(tape, &lt__ad_rule_unary, 1, &a, *out, &n);
  if (st == LT_OK) {
    n->iparam[0] = op;
    int w = unary_needs(op);
    if (w) st = lt__ad_save(n, 0, w == 1 ? a : *out, w == 1 ? "input" : "output");
    if (st != LT_OK) lt__ad_unrecord_last(tape);
  }
  if (st != LT_OK) {
    lt_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

/* ---- binary and trinary ---- */

/* d max(p, q)/dp = (1 + sign(p - q))/2 and d/dq = (1 - sign(p - q))/2 (min: signs swapped):
 * ties split evenly, as PyTorch's maximum/minimum; each is one fused pass after p - q. */
static lt_status extreme_grads(lt_binary_op op, const lt_tensor *p, const lt_tensor *q,
                               const lt_tensor *g, bool want_p, bool want_q, lt_tensor **gp,
                               lt_tensor **gq) {
  lt_tensor *d = NULL, *half = NULL;
  double k[3] = {1, -1, 1};
  lt_status st = lt__ad_ew(LT_BINARY_ADD, 0, p, ID, q, ID, NULL, ID, k, &d);
  if (st == LT_OK) st = lt_tensor_full(g->storage->ctx, d->dtype, 0, NULL, 0.5, &half);
  double sgn = op == LT_BINARY_MAX ? 0.5 : -0.5;
  for (int side = 0; side < 2 && st == LT_OK; side++) {
    if (!(side == 0 ? want_p : want_q)) continue;
    double ks[3] = {side == 0 ? sgn : -sgn, 1, 1};
    st = lt__ad_ew(LT_BINARY_ADD, LT_BINARY_MUL, d, LT_UNARY_SIGN, half, ID, g, ID, ks,
                   side == 0 ? gp : gq);
  }
  lt_tensor_destroy(d);
  lt_tensor_destroy(half);
  return st;
}

/* Binary ops whose result carries no gradient (truth values, bits): not recorded at all. */
static bool binary_stops(lt_binary_op op) {
  return (op >= LT_BINARY_EQ && op <= LT_BINARY_SHIFT_RIGHT) || op == LT_BINARY_WHERE;
}

/* z = p - f(p / q) q (fmod: f = trunc, remainder: floor): dz/dp = 1, dz/dq = -f(p / q); the
 * step function's own derivative is zero. floor_divide: both zero. */
static lt_status mod_grads(lt_binary_op op, const lt_tensor *p, const lt_tensor *q,
                           const lt_tensor *g, bool want_p, bool want_q, lt_tensor **gp,
                           lt_tensor **gq) {
  lt_status st = LT_OK;
  if (op == LT_BINARY_FLOOR_DIVIDE) {
    if (want_p) st = zero_grad_like(g, gp);
    if (st == LT_OK && want_q) st = zero_grad_like(g, gq);
    return st;
  }
  if (want_p) st = lt__ad_alias(g, gp);
  if (st == LT_OK && want_q) {
    lt_tensor *t = NULL;
    double k[3] = {-1, 1, 1};
    st = lt__ad_ew(LT_BINARY_DIV, 0, p, ID, q, ID, NULL, ID, NULL, &t);
    lt_unary_op f = op == LT_BINARY_FMOD ? LT_UNARY_TRUNC : LT_UNARY_FLOOR;
    if (st == LT_OK) st = lt__ad_ew(LT_BINARY_MUL, 0, t, f, g, ID, NULL, ID, k, gq);
    lt_tensor_destroy(t);
  }
  return st;
}

/* atan2(p, q): g q / (p^2 + q^2) and -g p / (p^2 + q^2); hypot(p, q) = z: g p / z, g q / z. */
static lt_status angle_grads(lt_binary_op op, const lt_tensor *p, const lt_tensor *q,
                             const lt_tensor *g, bool want_p, bool want_q, lt_tensor **gp,
                             lt_tensor **gq) {
  lt_tensor *r = NULL;
  lt_status st =
      op == LT_BINARY_ATAN2
          ? lt__ad_ew(LT_BINARY_ADD, 0, p, LT_UNARY_SQUARE, q, LT_UNARY_SQUARE, NULL, ID, NULL, &r)
          : lt__ad_ew(LT_BINARY_HYPOT, 0, p, ID, q, ID, NULL, ID, NULL, &r);
  bool atan = op == LT_BINARY_ATAN2;
  double kp[3] = {1, 1, 1}, kq[3] = {atan ? -1 : 1, 1, 1};
  if (st == LT_OK && want_p)
    st = lt__ad_ew(LT_BINARY_MUL, LT_BINARY_DIV, g, ID, atan ? q : p, ID, r, ID, kp, gp);
  if (st == LT_OK && want_q)
    st = lt__ad_ew(LT_BINARY_MUL, LT_BINARY_DIV, g, ID, atan ? p : q, ID, r, ID, kq, gq);
  lt_tensor_destroy(r);
  return st;
}

/* copysign(p, q): g sign(p) copysign(1, q) (0 at p = 0, as PyTorch) and 0; logaddexp(p, q) = z:
 * g exp(p - z) and g exp(q - z). */
static lt_status sign_exp_grads(lt_binary_op op, const lt_tensor *p, const lt_tensor *q,
                                const lt_tensor *z, const lt_tensor *g, bool want_p, bool want_q,
                                lt_tensor **gp, lt_tensor **gq) {
  lt_tensor *t = NULL, *zz = NULL;
  lt_status st = LT_OK;
  if (op == LT_BINARY_COPYSIGN) {
    lt_tensor *one = NULL;
    if (want_p) st = lt_tensor_full(p->storage->ctx, p->dtype, 0, NULL, 1.0, &one);
    if (st == LT_OK && want_p)
      st = lt__ad_ew(LT_BINARY_COPYSIGN, 0, one, ID, q, ID, NULL, ID, NULL, &t);
    if (st == LT_OK && want_p)
      st = lt__ad_ew(LT_BINARY_MUL, LT_BINARY_MUL, g, ID, p, LT_UNARY_SIGN, t, ID, NULL, gp);
    if (st == LT_OK && want_q) st = zero_grad_like(g, gq);
    lt_tensor_destroy(one);
    lt_tensor_destroy(t);
    return st;
  }
  if (z == NULL) st = lt__ad_ew(LT_BINARY_LOGADDEXP, 0, p, ID, q, ID, NULL, ID, NULL, &zz);
  const lt_tensor *both[2] = {p, q};
  lt_tensor **outs[2] = {gp, gq};
  bool want[2] = {want_p, want_q};
  for (int i = 0; i < 2 && st == LT_OK; i++) {
    if (!want[i]) continue;
    st = lt__ad_ew(LT_BINARY_SUB, 0, both[i], ID, z ? z : zz, ID, NULL, ID, NULL, &t);
    if (st == LT_OK)
      st = lt__ad_ew(LT_BINARY_MUL, 0, g, ID, t, LT_UNARY_EXP, NULL, ID, NULL, outs[i]);
    lt_tensor_destroy(t);
    t = NULL;
  }
  lt_tensor_destroy(zz);
  return st;
}

/* pow's gradients at zero as PyTorch defines them: d/dp is 0 where q == 0 (q p^(q-1) read
 * 0 * inf = NaN at p = 0), d/dq is 0 where p == 0 and q >= 0 (z log p read 0 * -inf). */
static lt_status pow_zero_masks(const lt_tensor *p, const lt_tensor *q, lt_tensor **gp,
                                lt_tensor **gq) {
  lt_tensor *zero = NULL, *cp = NULL, *cq = NULL, *c = NULL, *masked = NULL;
  lt_status st = lt_tensor_full(p->storage->ctx, p->dtype, 0, NULL, 0.0, &zero);
  for (int i = 0; i < 2 && st == LT_OK; i++) {
    lt_tensor **g = i == 0 ? gp : gq;
    if (g == NULL || *g == NULL) continue;
    if (i == 0) {
      st = lt_binary(LT_BINARY_EQ, q, zero, &c);
    } else {
      st = lt_binary(LT_BINARY_EQ, p, zero, &cp);
      if (st == LT_OK) st = lt_binary(LT_BINARY_GE, q, zero, &cq);
      if (st == LT_OK) st = lt_binary(LT_BINARY_LOGICAL_AND, cp, cq, &c);
    }
    if (st == LT_OK) st = lt_where(c, zero, *g, &masked);
    if (st == LT_OK) {
      lt_tensor_destroy(*g);
      *g = masked;
      masked = NULL;
    }
    lt_tensor_destroy(c);
    c = NULL;
  }
  lt_tensor_destroy(zero);
  lt_tensor_destroy(cp);
  lt_tensor_destroy(cq);
  return st;
}

/* Gradients gp, gq of z = p op q from the output gradient g (z given when known, else NULL). */
static lt_status op_grads(lt_binary_op op, const lt_tensor *p, const lt_tensor *q,
                          const lt_tensor *z, const lt_tensor *g, bool want_p, bool want_q,
                          lt_tensor **gp, lt_tensor **gq) {
  double k[3] = {1, 1, 1}, m[3] = {-1, 1, 1};
  lt_status st = LT_OK;
  switch (op) {
  case LT_BINARY_ADD:
  case LT_BINARY_SUB:
    if (want_p) st = lt__ad_alias(g, gp);
    if (st == LT_OK && want_q)
      st = op == LT_BINARY_ADD ? lt__ad_alias(g, gq) : lt__ad_scale(g, -1.0, gq);
    return st;
  case LT_BINARY_MUL:
    if (want_p) st = lt__ad_ew(LT_BINARY_MUL, 0, g, ID, q, ID, NULL, ID, k, gp);
    if (st == LT_OK && want_q) st = lt__ad_ew(LT_BINARY_MUL, 0, g, ID, p, ID, NULL, ID, k, gq);
    return st;
  case LT_BINARY_DIV: /* g/q and -g p / q^2 */
    if (want_p) st = lt__ad_ew(LT_BINARY_DIV, 0, g, ID, q, ID, NULL, ID, k, gp);
    if (st == LT_OK && want_q)
      st = lt__ad_ew(LT_BINARY_MUL, LT_BINARY_DIV, g, ID, p, ID, q, LT_UNARY_SQUARE, m, gq);
    return st;
  case LT_BINARY_POW: { /* g q p^(q-1) and g z log p */
    lt_tensor *one = NULL, *pm = NULL, *zz = NULL;
    if (want_p) {
      st = lt_tensor_full(p->storage->ctx, q->dtype, 0, NULL, 1.0, &one);
      if (st == LT_OK) st = lt__ad_ew(LT_BINARY_SUB, 0, q, ID, one, ID, NULL, ID, k, &pm);
      lt_tensor *pw = NULL;
      if (st == LT_OK) st = lt__ad_ew(LT_BINARY_POW, 0, p, ID, pm, ID, NULL, ID, k, &pw);
      if (st == LT_OK) st = lt__ad_ew(LT_BINARY_MUL, LT_BINARY_MUL, g, ID, q, ID, pw, ID, k, gp);
      lt_tensor_destroy(pw);
    }
    if (st == LT_OK && want_q) {
      if (z == NULL) st = lt__ad_ew(LT_BINARY_POW, 0, p, ID, q, ID, NULL, ID, k, &zz);
      if (st == LT_OK)
        st = lt__ad_ew(LT_BINARY_MUL, LT_BINARY_MUL, g, ID, z ? z : zz, ID, p, LT_UNARY_LOG, k, gq);
    }
    lt_tensor_destroy(one);
    lt_tensor_destroy(pm);
    lt_tensor_destroy(zz);
    if (st == LT_OK) st = pow_zero_masks(p, q, want_p ? gp : NULL, want_q ? gq : NULL);
    return st;
  }
  case LT_BINARY_MIN:
  case LT_BINARY_MAX: return extreme_grads(op, p, q, g, want_p, want_q, gp, gq);
  case LT_BINARY_FLOOR_DIVIDE:
  case LT_BINARY_REMAINDER:
  case LT_BINARY_FMOD: return mod_grads(op, p, q, g, want_p, want_q, gp, gq);
  case LT_BINARY_ATAN2:
  case LT_BINARY_HYPOT: return angle_grads(op, p, q, g, want_p, want_q, gp, gq);
  case LT_BINARY_COPYSIGN:
  case LT_BINARY_LOGADDEXP: return sign_exp_grads(op, p, q, z, g, want_p, want_q, gp, gq);
  default: break;
  }
  return lt__error(LT_ERR_UNSUPPORTED, "autograd: binary op %d has no backward rule yet", (int)op);
}

/* Whether op's derivative reads its operands (p, q). */
static bool op_reads(lt_binary_op op) {
  return op != LT_BINARY_ADD && op != LT_BINARY_SUB && op != LT_BINARY_FLOOR_DIVIDE;
}

/* s*t, or an alias when s == 1. */
static lt_status scaled(const lt_tensor *t, double s, lt_tensor **out) {
  return s == 1.0 ? lt__ad_alias(t, out) : lt__ad_scale(t, s, out);
}

/* Node layout: iparam {op_ab, op_abc, n}; dparam the scalars; saved[k] = input k when read. */
static lt_status ew_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  lt_binary_op op_ab = (lt_binary_op)n->iparam[0], op_abc = (lt_binary_op)n->iparam[1];
  int ni = (int)n->iparam[2];
  const double *s = n->dparam;
  lt_tensor *u = NULL, *v = NULL, *w = NULL, *t = NULL, *gt = NULL, *gw = NULL;
  lt_tensor *gu = NULL, *gv = NULL;
  bool need_ab = (n->needs[0] || n->needs[1]) && !binary_stops(op_ab);
  lt_status st = LT_OK;
  /* the operands as the op saw them: s_k * input_k */
  if (n->saved[0]) st = scaled(n->saved[0], s[0], &u);
  if (st == LT_OK && n->saved[1]) st = scaled(n->saved[1], s[1], &v);
  if (ni == 3) {
    if (st == LT_OK && n->saved[2]) st = scaled(n->saved[2], s[2], &w);
    if (st == LT_OK && op_reads(op_abc)) st = lt__ad_ew(op_ab, 0, u, ID, v, ID, NULL, ID, NULL, &t);
    if (st == LT_OK)
      st = op_grads(op_abc, t, w, NULL, g, need_ab, n->needs[2] && s[2] != 0.0, &gt, &gw);
    if (st == LT_OK && gw) st = scaled(gw, s[2], &grads[2]);
  } else {
    st = st == LT_OK ? lt__ad_alias(g, &gt) : st;
  }
  if (st == LT_OK && gt)
    st = op_grads(op_ab, u, v, NULL, gt, n->needs[0] && s[0] != 0.0, n->needs[1] && s[1] != 0.0,
                  &gu, &gv);
  if (st == LT_OK && gu) st = scaled(gu, s[0], &grads[0]);
  if (st == LT_OK && gv) st = scaled(gv, s[1], &grads[1]);
  lt_tensor *all[] = {u, v, w, t, gt, gw, gu, gv};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    lt_tensor_destroy(all[i]);
  return st;
}

const lt__ad_rule lt__ad_rule_ew = {"elementwise", ew_backward};

lt_status lt_ad_trinary(lt_tape *tape, lt_binary_op op_ab, lt_binary_op op_abc, const lt_tensor *a,
                        const lt_tensor *b, const lt_tensor *c, const double *scalars,
                        lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_trinary"));
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_ad_trinary: a"));
  LT_TRY(lt__check_tensor(b, "lt_ad_trinary: b"));
  if (c) LT_TRY(lt__check_tensor(c, "lt_ad_trinary: c"));
  LT_RETURN_IF((unsigned)op_ab > LT_BINARY_LOGADDEXP || (unsigned)op_abc > LT_BINARY_LOGADDEXP,
               LT_ERR_INVALID_ARGUMENT, "lt_ad_trinary: unknown binary op code %d",
               (unsigned)op_ab > LT_BINARY_LOGADDEXP ? (int)op_ab : (int)op_abc);
  double s[3] = {1, 1, 1};
  if (scalars) {
    s[0] = scalars[0];
    s[1] = scalars[1];
    if (c) s[2] = scalars[2];
  }
  LT_TRY(lt__ad_ew(op_ab, op_abc, a, ID, b, ID, c, ID, s, out));
  const lt_tensor *ins[3] = {a, b, c};
  int ni = c ? 3 : 2;
  if ((c ? binary_stops(op_abc) : binary_stops(op_ab)) ||
      !lt__ad_should_record(tape, ni, ins, *out))
    return LT_OK;
  lt__ad_node *n;
  lt_status st = lt__ad_record(tape, &lt__ad_rule_ew, ni, ins, *out, &n);
  if (st == LT_OK) {
    n->iparam[0] = op_ab;
    n->iparam[1] = op_abc;
    n->iparam[2] = ni;
    for (int k = 0; k < 3; k++)
      n->dparam[k] = s[k];
    /* what the derivatives read, so that a chain of ops with constants (x*c, x/c, fmod(x, c))
     * keeps one tensor per op: MUL's gradient to a reads b and the other way round; DIV's to a
     * reads b only; FMOD/REMAINDER's to a reads nothing */
    bool keep[3] = {false, false, false};
    if (op_ab == LT_BINARY_MUL) {
      keep[0] = n->needs[1];
      keep[1] = n->needs[0];
    } else if (op_ab == LT_BINARY_DIV) {
      keep[0] = n->needs[1];
      keep[1] = true;
    } else if (op_ab == LT_BINARY_FMOD || op_ab == LT_BINARY_REMAINDER) {
      keep[0] = keep[1] = n->needs[1];
    } else if (op_reads(op_ab)) {
      keep[0] = keep[1] = true;
    }
    if (ni == 3 && op_reads(op_abc)) keep[0] = keep[1] = keep[2] = true;
    static const char *what[3] = {"input a", "input b", "input c"};
    for (int k = 0; k < ni && st == LT_OK; k++)
      if (keep[k]) st = lt__ad_save(n, k, ins[k], what[k]);
    if (st != LT_OK) lt__ad_unrecord_last(tape);
  }
  if (st != LT_OK) {
    lt_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

lt_status lt_ad_binary(lt_tape *tape, lt_binary_op op, const lt_tensor *a, const lt_tensor *b,
                       lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_binary"));
  /* the plain call's bool result: not recorded (it carries no gradient) */
  if ((unsigned)op <= LT_BINARY_WHERE && binary_stops(op)) return lt_binary(op, a, b, out);
  return lt_ad_trinary(tape, op, LT_BINARY_ADD, a, b, NULL, NULL, out);
}
