/* SPDX-License-Identifier: MIT */
/* Differentiable elementwise ops: unary, and binary/trinary with alpha/beta/gamma. Each saves
 * only what its derivative reads (exp keeps its output, log its input, add nothing), so a chain
 * of unary ops holds one tensor per op. */
#include "autograd/autograd.h"

#include <math.h>

#define ID LT_UNARY_IDENTITY

/* Whether a unary op's derivative is written in its output y (else in its input x; NEG and
 * IDENTITY need neither). */
static int unary_needs(lt_unary_op op) {
  switch (op) {
  case LT_UNARY_IDENTITY:
  case LT_UNARY_NEG: return 0;
  case LT_UNARY_SQRT:
  case LT_UNARY_EXP:
  case LT_UNARY_TANH:
  case LT_UNARY_SIGMOID:
  case LT_UNARY_RECIPROCAL: return 2;
  default: return 1;
  }
}

static double relu_grad(double x, double y, double g) {
  (void)y;
  return x > 0 ? g : 0.0;
}
static double abs_grad(double x, double y, double g) {
  (void)y;
  return x > 0 ? g : x < 0 ? -g : 0.0;
}

static lt_status unary_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  lt_unary_op op = (lt_unary_op)n->iparam[0];
  const lt_tensor *s = n->n_saved ? n->saved[0] : NULL; /* x or y as unary_needs says */
  double k[3] = {1, 1, 1};
  switch (op) {
  case LT_UNARY_IDENTITY: return lt__ad_alias(g, &grads[0]);
  case LT_UNARY_NEG: return lt__ad_scale(g, -1.0, &grads[0]);
  case LT_UNARY_ABS: return lt__ad_host_pointwise(s, NULL, g, abs_grad, &grads[0]);
  case LT_UNARY_RELU: return lt__ad_host_pointwise(s, NULL, g, relu_grad, &grads[0]);
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
  default: break; /* ops added after the rule table (issue 18): no rule yet */
  }
  return lt__error(LT_ERR_UNSUPPORTED, "autograd: unary op %d has no backward rule yet", (int)op);
}

const lt__ad_rule lt__ad_rule_unary = {"unary", unary_backward};

lt_status lt_ad_unary(lt_tape *tape, lt_unary_op op, const lt_tensor *a, lt_tensor **out) {
  LT_TRY(lt_unary(op, a, out));
  if (!lt__ad_should_record(tape, 1, &a)) return LT_OK;
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

static double max_grad_p(double p, double q, double g) {
  return (p > q || isnan(p)) ? g : p == q ? 0.5 * g : 0.0;
}
static double min_grad_p(double p, double q, double g) {
  return (p < q || isnan(p)) ? g : p == q ? 0.5 * g : 0.0;
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
    return st;
  }
  case LT_BINARY_MIN:
  case LT_BINARY_MAX: {
    lt__ad_pointwise_fn f = op == LT_BINARY_MAX ? max_grad_p : min_grad_p;
    lt_tensor *pb = NULL, *qb = NULL, *gb = NULL;
    /* ties split evenly, as PyTorch's maximum/minimum: each side gets half */
    int rank = g->rank;
    st = lt_view_broadcast_to(p, rank, g->shape, &pb);
    if (st == LT_OK) st = lt_view_broadcast_to(q, rank, g->shape, &qb);
    if (st == LT_OK) st = lt__ad_alias(g, &gb);
    if (st == LT_OK && want_p) st = lt__ad_host_pointwise(pb, qb, gb, f, gp);
    if (st == LT_OK && want_q) st = lt__ad_host_pointwise(qb, pb, gb, f, gq);
    lt_tensor_destroy(pb);
    lt_tensor_destroy(qb);
    lt_tensor_destroy(gb);
    return st;
  }
  default: break;
  }
  return lt__error(LT_ERR_UNSUPPORTED, "autograd: binary op %d has no backward rule yet", (int)op);
}

/* Whether op's derivative reads its operands (p, q). */
static bool op_reads(lt_binary_op op) { return op != LT_BINARY_ADD && op != LT_BINARY_SUB; }

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
  bool need_ab = n->needs[0] || n->needs[1];
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
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_ad_trinary: a"));
  LT_TRY(lt__check_tensor(b, "lt_ad_trinary: b"));
  if (c) LT_TRY(lt__check_tensor(c, "lt_ad_trinary: c"));
  LT_RETURN_IF((unsigned)op_ab > LT_BINARY_POW || (unsigned)op_abc > LT_BINARY_POW,
               LT_ERR_UNSUPPORTED,
               "lt_ad_trinary: binary op %d has no backward rule (ADD..POW have)",
               (unsigned)op_ab > LT_BINARY_POW ? (int)op_ab : (int)op_abc);
  double s[3] = {1, 1, 1};
  if (scalars) {
    s[0] = scalars[0];
    s[1] = scalars[1];
    if (c) s[2] = scalars[2];
  }
  LT_TRY(lt__ad_ew(op_ab, op_abc, a, ID, b, ID, c, ID, s, out));
  const lt_tensor *ins[3] = {a, b, c};
  int ni = c ? 3 : 2;
  if (!lt__ad_should_record(tape, ni, ins)) return LT_OK;
  lt__ad_node *n;
  lt_status st = lt__ad_record(tape, &lt__ad_rule_ew, ni, ins, *out, &n);
  if (st == LT_OK) {
    n->iparam[0] = op_ab;
    n->iparam[1] = op_abc;
    n->iparam[2] = ni;
    for (int k = 0; k < 3; k++)
      n->dparam[k] = s[k];
    /* what the derivatives read: MUL's gradient to a reads b and the other way round */
    bool keep[3] = {false, false, false};
    if (op_ab == LT_BINARY_MUL) {
      keep[0] = n->needs[1];
      keep[1] = n->needs[0];
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
  return lt_ad_trinary(tape, op, LT_BINARY_ADD, a, b, NULL, NULL, out);
}
