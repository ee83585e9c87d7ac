/* SPDX-License-Identifier: MIT */
/* Optimisers: SGD (momentum, dampening, Nesterov, weight decay) and Adam/AdamW, updating each
 * parameter in place through elementwise plans built once per parameter (its layout and dtype
 * are fixed), with the step-dependent numbers passed as plan scalars. Formulas follow
 * torch.optim; Adam's bias corrections are folded into the step size and epsilon:
 * lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps) == (lr*sqrt(bc2)/bc1) * m / (sqrt(v) + eps*sqrt(bc2)).
 * Adam/AdamW run as one pass per parameter where the backend has the fused step and the
 * parameter is contiguous (the maps read and wrote the parameter-sized arrays 4-5 times; the
 * update was as costly as the forward GEMM of a 784-256-10 MLP step). */
#include "autograd/autograd.h"
#include "backend/backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_DECAY, P_ACCUM, P_ACCUM_SQ, P_DENOM, P_UPDATE, P_ADAM_UPDATE, P_COUNT };

typedef struct param_state {
  lt_tensor *p;         /* the caller's parameter (our handle on it) */
  uint64_t serial;      /* the caller's handle, by which the tape knows the leaf */
  lt_tensor *tmp, *den; /* contiguous scratch */
  lt_tensor *one;       /* rank-0 1.0 of the parameter's dtype: epsilon's operand (an f64 one
                         * would make the f32 denominator pass compute in f64) */
  lt_tensor *m, *v;     /* momentum / first and second moments; NULL until the first step */
  lt_plan *plan[P_COUNT];
  bool started;
  /* Adam's step count for this parameter: steps in which it had a gradient, as torch.optim
   * counts per parameter (one count for all biased a parameter that joined late). */
  int64_t steps;
} param_state;

struct lt_optimizer {
  uint32_t tag; /* LT__HANDLE_OPTIMIZER */
  lt_tape *tape;
  lt_optim_kind kind;
  double hp[8];
  int n;
  param_state *ps;
};

static lt_status check_opt(const lt_optimizer *o, const char *fn) {
  return lt__handle_check(o, LT__HANDLE_OPTIMIZER, fn, "optimizer");
}

lt_status lt_optim_create(lt_tape *tape, lt_optim_kind kind, int n_params, lt_tensor *const *params,
                          lt_optimizer **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__handle_check(tape, LT__HANDLE_TAPE, "lt_optim_create", "tape"));
  LT_RETURN_IF(kind < LT_OPTIM_SGD || kind > LT_OPTIM_ADAMW, LT_ERR_INVALID_ARGUMENT,
               "lt_optim_create: unknown optimiser kind %d", (int)kind);
  LT_RETURN_IF(n_params < 0, LT_ERR_INVALID_ARGUMENT, "lt_optim_create: n_params is negative");
  LT_RETURN_IF(n_params > 0 && params == NULL, LT_ERR_NULL_POINTER,
               "lt_optim_create: params is NULL");
  for (int i = 0; i < n_params; i++) {
    char what[48];
    snprintf(what, sizeof what, "lt_optim_create: params[%d]", i);
    LT_TRY(lt__check_tensor(params[i], what));
    lt_dtype d = params[i]->dtype;
    LT_RETURN_IF(d != LT_F32 && d != LT_F64, LT_ERR_DTYPE,
                 "lt_optim_create: params[%d] is %s; optimisers update f32 or f64 tensors", i,
                 lt_dtype_name(d));
    if (params[i]->storage->ctx != tape->ctx)
      return lt__context_mismatch("lt_optim_create", what, params[i]->storage->ctx, "the tape",
                                  tape->ctx);
    /* a parameter listed twice (or two views of one memory) would be updated twice per step */
    for (int j = 0; j < i; j++)
      LT_RETURN_IF(params[j]->storage == params[i]->storage &&
                       lt__tensor_overlap(params[i], params[j]) != LT__OVERLAP_NONE,
                   LT_ERR_INVALID_ARGUMENT,
                   "lt_optim_create: params[%d] and params[%d] share memory; a step would update "
                   "it twice",
                   j, i);
  }
  lt_optimizer *o = calloc(1, sizeof *o);
  param_state *ps = calloc((size_t)(n_params > 0 ? n_params : 1), sizeof *ps);
  lt_status st =
      (o && ps) ? LT_OK : lt__error(LT_ERR_OUT_OF_MEMORY, "lt_optim_create: out of memory");
  for (int i = 0; i < n_params && st == LT_OK; i++) {
    st = lt__ad_alias(params[i], &ps[i].p);
    ps[i].serial = params[i]->serial;
  }
  if (st != LT_OK) {
    for (int i = 0; ps && i < n_params; i++)
      lt_tensor_destroy(ps[i].p);
    free(ps);
    free(o);
    return st;
  }
  o->tag = LT__HANDLE_OPTIMIZER;
  o->tape = tape;
  o->kind = kind;
  o->n = n_params;
  o->ps = ps;
  o->hp[LT_OPTIM_LR] = 1e-3;
  o->hp[LT_OPTIM_BETA1] = 0.9;
  o->hp[LT_OPTIM_BETA2] = 0.999;
  o->hp[LT_OPTIM_EPS] = 1e-8;
  o->hp[LT_OPTIM_WEIGHT_DECAY] = kind == LT_OPTIM_ADAMW ? 1e-2 : 0.0;
  *out = o;
  return LT_OK;
}

void lt_optim_destroy(lt_optimizer *o) {
  if (!lt__handle_may_destroy(o, LT__HANDLE_OPTIMIZER, "lt_optim_destroy")) return;
  for (int i = 0; i < o->n; i++) {
    param_state *s = &o->ps[i];
    lt_tensor *ts[] = {s->p, s->tmp, s->den, s->one, s->m, s->v};
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
      lt_tensor_destroy(ts[k]);
    for (int k = 0; k < P_COUNT; k++)
      lt_plan_destroy(s->plan[k]);
  }
  free(o->ps);
  lt__handle_kill(o, LT__HANDLE_OPTIMIZER);
  lt__handle_retire(o); /* quarantined: a second destroy is refused, not a crash */
}

lt_status lt_optim_set(lt_optimizer *o, lt_optim_param which, double value) {
  LT_TRY(check_opt(o, "lt_optim_set"));
  LT_RETURN_IF(which < LT_OPTIM_LR || which > LT_OPTIM_EPS, LT_ERR_INVALID_ARGUMENT,
               "lt_optim_set: unknown parameter %d", (int)which);
  bool sgd_only =
      which == LT_OPTIM_MOMENTUM || which == LT_OPTIM_DAMPENING || which == LT_OPTIM_NESTEROV;
  bool adam_only = which == LT_OPTIM_BETA1 || which == LT_OPTIM_BETA2 || which == LT_OPTIM_EPS;
  LT_RETURN_IF((sgd_only && o->kind != LT_OPTIM_SGD) || (adam_only && o->kind == LT_OPTIM_SGD),
               LT_ERR_INVALID_ARGUMENT, "lt_optim_set: this optimiser has no parameter %d",
               (int)which);
  LT_RETURN_IF(!isfinite(value) || value < 0, LT_ERR_INVALID_ARGUMENT,
               "lt_optim_set: value %g is not a finite non-negative number", value);
  LT_RETURN_IF((which == LT_OPTIM_BETA1 || which == LT_OPTIM_BETA2) && value >= 1.0,
               LT_ERR_INVALID_ARGUMENT, "lt_optim_set: beta %g is not in [0, 1)", value);
  LT_RETURN_IF(which == LT_OPTIM_NESTEROV && value != 0.0 && value != 1.0, LT_ERR_INVALID_ARGUMENT,
               "lt_optim_set: nesterov is 0 or 1, not %g", value);
  o->hp[which] = value;
  return LT_OK;
}

lt_status lt_optim_get(const lt_optimizer *o, lt_optim_param which, double *value) {
  LT_TRY(check_opt(o, "lt_optim_get"));
  LT_CHECK_NULL(value, "value");
  LT_RETURN_IF(which < LT_OPTIM_LR || which > LT_OPTIM_EPS, LT_ERR_INVALID_ARGUMENT,
               "lt_optim_get: unknown parameter %d", (int)which);
  *value = o->hp[which];
  return LT_OK;
}

static const int32_t modes[LT_MAX_RANK] = {
    0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
    44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

/* z = x + y elementwise (ua, ub read-time unary ops; c, when given, makes it (x op y) + c). */
static lt_status plan_ew(const lt_tensor *x, lt_unary_op ua, const lt_tensor *y, lt_unary_op ub,
                         lt_binary_op op, const lt_tensor *c, const lt_tensor *z, lt_plan **out) {
  lt_plan_options *opts;
  LT_TRY(lt_plan_options_create(&opts));
  lt_status st = lt_plan_options_set_unary(opts, 0, ua);
  if (st == LT_OK) st = lt_plan_options_set_unary(opts, 1, ub);
  if (st == LT_OK && c == NULL) st = lt_plan_binary(x, modes, y, modes, op, z, modes, opts, out);
  if (st == LT_OK && c != NULL)
    st = lt_plan_trinary(x, modes, y, modes, c, modes, op, LT_BINARY_ADD, z, modes, opts, out);
  lt_plan_options_destroy(opts);
  return st;
}

/* The moment buffers (zeros), the same for the fused and the multi-pass update. */
static lt_status moments(const lt_optimizer *o, param_state *s) {
  lt_context *ctx = s->p->storage->ctx;
  if (s->m == NULL) LT_TRY(lt_tensor_zeros(ctx, s->p->dtype, s->p->rank, s->p->shape, &s->m));
  if (s->v == NULL && o->kind != LT_OPTIM_SGD)
    LT_TRY(lt_tensor_zeros(ctx, s->p->dtype, s->p->rank, s->p->shape, &s->v));
  return LT_OK;
}

static lt_status prepare(lt_optimizer *o, param_state *s, const lt_tensor *g) {
  if (s->plan[P_UPDATE]) return LT_OK;
  lt_context *ctx = s->p->storage->ctx;
  lt_dtype dt = s->p->dtype;
  int r = s->p->rank;
  const int64_t *sh = s->p->shape;
  const lt_unary_op I = LT_UNARY_IDENTITY;
  LT_TRY(moments(o, s));
  LT_TRY(lt_tensor_empty(ctx, dt, r, sh, &s->tmp));
  LT_TRY(plan_ew(g, I, s->p, I, LT_BINARY_ADD, NULL, s->tmp, &s->plan[P_DECAY]));
  LT_TRY(plan_ew(s->m, I, s->tmp, I, LT_BINARY_ADD, NULL, s->m, &s->plan[P_ACCUM]));
  LT_TRY(plan_ew(s->p, I, s->tmp, I, LT_BINARY_ADD, NULL, s->p, &s->plan[P_UPDATE]));
  if (o->kind == LT_OPTIM_SGD) return LT_OK;
  LT_TRY(lt_tensor_empty(ctx, dt, r, sh, &s->den));
  LT_TRY(lt_tensor_full(ctx, dt, 0, NULL, 1.0, &s->one));
  LT_TRY(
      plan_ew(s->v, I, s->tmp, LT_UNARY_SQUARE, LT_BINARY_ADD, NULL, s->v, &s->plan[P_ACCUM_SQ]));
  const int32_t no_modes[1] = {0};
  lt_plan_options *opts;
  LT_TRY(lt_plan_options_create(&opts));
  lt_status st = lt_plan_options_set_unary(opts, 0, LT_UNARY_SQRT);
  if (st == LT_OK)
    st = lt_plan_binary(s->v, modes, s->one, no_modes, LT_BINARY_ADD, s->den, modes, opts,
                        &s->plan[P_DENOM]);
  lt_plan_options_destroy(opts);
  LT_TRY(st);
  return plan_ew(s->m, I, s->den, I, LT_BINARY_DIV, s->p, s->p, &s->plan[P_ADAM_UPDATE]);
}

#define RUN(P, n, ...)                                                                             \
  do {                                                                                             \
    const lt_tensor *ins_[] = {__VA_ARGS__};                                                       \
    LT_TRY(lt_plan_execute(P, ins_, n, sc, n, out_));                                              \
  } while (0)

/* The backend's one-pass Adam, when it has one and p and g are contiguous arrays of their own
 * (m and v are ours: contiguous and apart). Returns false (nothing done) otherwise. */
static bool adam_fused(lt_optimizer *o, param_state *s, const lt_tensor *g, double bc1, double bc2,
                       lt_status *st) {
  const lt__backend *be = s->p->storage->ctx->backend;
  if (be->adam == NULL || !lt_tensor_is_contiguous(s->p) || !lt_tensor_is_contiguous(g) ||
      g->dtype != s->p->dtype || g->numel != s->p->numel || g->storage == s->p->storage)
    return false;
  *st = moments(o, s);
  if (*st != LT_OK) return true;
  const double *h = o->hp;
  double lr = h[LT_OPTIM_LR], wd = h[LT_OPTIM_WEIGHT_DECAY], b1 = h[LT_OPTIM_BETA1],
         b2 = h[LT_OPTIM_BETA2];
  bool adamw = o->kind == LT_OPTIM_ADAMW;
  lt__adam_step a = {
      .n = s->p->numel,
      .dtype = s->p->dtype,
      .p = s->p->storage->mem,
      .g = g->storage->mem,
      .m = s->m->storage->mem,
      .v = s->v->storage->mem,
      .p_off = s->p->offset,
      .g_off = g->offset,
      .m_off = s->m->offset,
      .v_off = s->v->offset,
      .l2 = adamw ? 0.0 : wd,
      .b1 = b1,
      .c1 = 1.0 - b1,
      .b2 = b2,
      .c2 = 1.0 - b2,
      .decay = adamw ? 1.0 - lr * wd : 1.0,
      .step = lr * sqrt(bc2) / bc1,
      .eps = h[LT_OPTIM_EPS] * sqrt(bc2),
  };
  *st = a.n > 0 ? be->adam(s->p->storage->ctx, &a) : LT_OK;
  /* written in place, as a plan's output: a tensor saved for backward on p now fails there */
  lt__storage_touch(s->p->storage);
  lt__storage_touch(s->m->storage);
  lt__storage_touch(s->v->storage);
  return true;
}

/* Whether a and b have one layout (a plan built for one runs on the other). */
static bool same_layout(const lt_tensor *a, const lt_tensor *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->strides[i] != b->strides[i]))
      return false;
  return true;
}

static lt_status sgd_step(lt_optimizer *o, param_state *s, const lt_tensor *g) {
  const double *h = o->hp;
  double lr = h[LT_OPTIM_LR], wd = h[LT_OPTIM_WEIGHT_DECAY];
  double sc[3];
  lt_tensor *out_;
  sc[0] = 1.0; /* tmp = g + wd p (L2) */
  sc[1] = wd;
  out_ = s->tmp;
  RUN(s->plan[P_DECAY], 2, g, s->p);
  double mom = h[LT_OPTIM_MOMENTUM], damp = h[LT_OPTIM_DAMPENING];
  const lt_tensor *upd = s->tmp;
  if (mom != 0.0) {
    sc[0] = s->started ? mom : 0.0; /* the first step copies: buf = tmp */
    sc[1] = s->started ? 1.0 - damp : 1.0;
    out_ = s->m;
    RUN(s->plan[P_ACCUM], 2, s->m, s->tmp);
    upd = s->m;
    if (h[LT_OPTIM_NESTEROV] != 0.0) { /* tmp = tmp + mom*buf, via the update plan shape */
      sc[0] = mom;
      sc[1] = 1.0;
      out_ = s->tmp;
      RUN(s->plan[P_ACCUM], 2, s->m, s->tmp);
      upd = s->tmp;
    }
  }
  s->started = true;
  sc[0] = 1.0;
  sc[1] = -lr;
  out_ = s->p;
  RUN(s->plan[P_UPDATE], 2, s->p, upd);
  return LT_OK;
}

/* Adam/AdamW as maps (backends without the fused step, strided parameters). */
static lt_status adam_passes(lt_optimizer *o, param_state *s, const lt_tensor *g, double bc1,
                             double bc2) {
  const double *h = o->hp;
  double lr = h[LT_OPTIM_LR], wd = h[LT_OPTIM_WEIGHT_DECAY];
  double b1 = h[LT_OPTIM_BETA1], b2 = h[LT_OPTIM_BETA2];
  bool adamw = o->kind == LT_OPTIM_ADAMW;
  double sc[3];
  lt_tensor *out_;
  if (adamw && wd != 0.0) { /* p *= 1 - lr*wd, decoupled */
    sc[0] = 1.0 - lr * wd;
    sc[1] = 0.0;
    out_ = s->p;
    RUN(s->plan[P_UPDATE], 2, s->p, s->tmp);
  }
  /* the moments read g itself unless an L2 term is added first (tmp = g + wd p) */
  const lt_tensor *d = g;
  if ((!adamw && wd != 0.0) || !same_layout(g, s->tmp)) {
    sc[0] = 1.0;
    sc[1] = adamw ? 0.0 : wd;
    out_ = s->tmp;
    RUN(s->plan[P_DECAY], 2, g, s->p);
    d = s->tmp;
  }
  sc[0] = b1;
  sc[1] = 1.0 - b1;
  out_ = s->m;
  RUN(s->plan[P_ACCUM], 2, s->m, d);
  sc[0] = b2;
  sc[1] = 1.0 - b2;
  out_ = s->v;
  RUN(s->plan[P_ACCUM_SQ], 2, s->v, d);
  sc[0] = 1.0;
  sc[1] = h[LT_OPTIM_EPS] * sqrt(bc2);
  out_ = s->den;
  RUN(s->plan[P_DENOM], 2, s->v, s->one);
  sc[0] = -lr * sqrt(bc2) / bc1;
  sc[1] = 1.0;
  sc[2] = 1.0;
  out_ = s->p;
  RUN(s->plan[P_ADAM_UPDATE], 3, s->m, s->den, s->p);
  return LT_OK;
}

static lt_status step_one(lt_optimizer *o, param_state *s, const lt_tensor *g) {
  if (o->kind == LT_OPTIM_SGD) {
    LT_TRY(prepare(o, s, g));
    return sgd_step(o, s, g);
  }
  double t = (double)++s->steps;
  double bc1 = 1.0 - pow(o->hp[LT_OPTIM_BETA1], t), bc2 = 1.0 - pow(o->hp[LT_OPTIM_BETA2], t);
  lt_status st;
  if (adam_fused(o, s, g, bc1, bc2, &st)) return st;
  LT_TRY(prepare(o, s, g));
  return adam_passes(o, s, g, bc1, bc2);
}

lt_status lt_optim_step(lt_optimizer *o) {
  LT_TRY(check_opt(o, "lt_optim_step"));
  LT_TRY(lt__handle_check(o->tape, LT__HANDLE_TAPE, "lt_optim_step", "the optimiser's tape"));
  /* the hyper-parameters are set one at a time, so their combination is checked here */
  LT_RETURN_IF(o->kind == LT_OPTIM_SGD && o->hp[LT_OPTIM_NESTEROV] != 0.0 &&
                   (o->hp[LT_OPTIM_MOMENTUM] <= 0.0 || o->hp[LT_OPTIM_DAMPENING] != 0.0),
               LT_ERR_INVALID_ARGUMENT,
               "lt_optim_step: Nesterov momentum needs momentum > 0 and dampening 0 (momentum "
               "%g, dampening %g), as PyTorch",
               o->hp[LT_OPTIM_MOMENTUM], o->hp[LT_OPTIM_DAMPENING]);
  for (int i = 0; i < o->n; i++) {
    lt__ad_var *var = lt__ad_leaf_by_serial(o->tape, o->ps[i].serial);
    if (var == NULL || var->grad == NULL) continue;
    LT_TRY(step_one(o, &o->ps[i], var->grad));
  }
  return LT_OK;
}

lt_status lt_optim_zero_grad(lt_optimizer *o) {
  LT_TRY(check_opt(o, "lt_optim_zero_grad"));
  LT_TRY(lt__handle_check(o->tape, LT__HANDLE_TAPE, "lt_optim_zero_grad", "the optimiser's tape"));
  for (int i = 0; i < o->n; i++) {
    lt__ad_var *var = lt__ad_leaf_by_serial(o->tape, o->ps[i].serial);
    if (var == NULL) continue;
    lt_tensor_destroy(var->grad);
    var->grad = NULL;
  }
  return LT_OK;
}
