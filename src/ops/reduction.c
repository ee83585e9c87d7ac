/* SPDX-License-Identifier: MIT */
/* Reduction plans over mode labels: D = alpha * reduce(opA(A)) + beta * C over the modes of A
 * that D lacks, lowered once to a program of one backend reduce step. ARGMAX/ARGMIN reduce exactly
 * one mode into an I64 output. Aliasing (checked at execution): D may not overlap A at all; C may
 * be D itself (same layout), but no other overlap of C and D is accepted. */
#include "core/dtype.h"
#include "core/error.h"
#include "lower/program.h"
#include "ops/modes.h"
#include "ops/plan.h"

#include <stdio.h>
#include <string.h>

typedef struct reduce_impl {
  lt_context *ctx;      /* for freeing; the plan holds the reference */
  lt__reduce_step step; /* being built; then the program's one step */
  lt__program prog;
  bool c_in_place_ok; /* C walks exactly like D */
} reduce_impl;

static void reduce_impl_destroy(void *impl) {
  reduce_impl *r = impl;
  lt__program_free(&r->prog);
  lt__host_free(r->ctx, r, sizeof *r);
}

/* The program of one reduce step: A, D and C (when planned) patched in, alpha and beta. */
static lt_status emit_reduce(reduce_impl *r) {
  lt__step *s = lt__program_add(&r->prog, LT__STEP_REDUCE);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  s->u.reduce = r->step;
  s->buf[0] = (lt__bufref){LT__BUF_INPUT, 0};
  s->buf[1] = (lt__bufref){LT__BUF_OUTPUT, 0};
  if (r->step.has_c) s->buf[2] = (lt__bufref){LT__BUF_INPUT, 1};
  s->scalar[0] = LT__SCALAR_ALPHA;
  s->scalar[1] = LT__SCALAR_BETA;
  return LT_OK;
}

static lt_status run_reduce(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                            const double *scalars, lt_tensor *d) {
  const reduce_impl *r = plan->impl;
  LT_RETURN_IF(lt__tensor_overlap(d, inputs[0]) != LT__OVERLAP_NONE, LT_ERR_ALIASING,
               "lt_plan_execute: the output D overlaps the reduced input A");
  if (n_inputs > 1) {
    lt__overlap ov = lt__tensor_overlap(d, inputs[1]);
    LT_RETURN_IF(ov == LT__OVERLAP_PARTIAL || (ov == LT__OVERLAP_SAME && !r->c_in_place_ok),
                 LT_ERR_ALIASING,
                 "lt_plan_execute: the output D overlaps C in a different arrangement");
  }
  if (d->numel == 0) return LT_OK;
  return lt__program_run((lt__program *)&r->prog, plan->ctx, inputs, scalars, d);
}

/* Fills the kept and reduced dims of the step from A's and D's modes. */
static lt_status lower_modes(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *d,
                             const int32_t *modes_d, lt__reduce_step *s) {
  for (int k = 0; k < d->rank; k++) {
    int at = lt__modes_find(modes_a, a->rank, modes_d[k]);
    LT_RETURN_IF(at < 0, LT_ERR_SHAPE_MISMATCH, "mode %d of D (axis %d) does not appear in A",
                 (int)modes_d[k], k);
    LT_RETURN_IF(a->shape[at] != d->shape[k], LT_ERR_SHAPE_MISMATCH,
                 "mode %d has extent %lld in A but %lld in D", (int)modes_d[k],
                 (long long)a->shape[at], (long long)d->shape[k]);
    s->in.strides[k] = a->strides[at];
  }
  s->rank = d->rank;
  memcpy(s->shape, d->shape, sizeof(int64_t) * (size_t)d->rank);
  memcpy(s->out.strides, d->strides, sizeof(int64_t) * (size_t)d->rank);
  s->red_rank = 0;
  for (int i = 0; i < a->rank; i++) {
    if (lt__modes_find(modes_d, d->rank, modes_a[i]) >= 0) continue;
    s->red_shape[s->red_rank] = a->shape[i];
    s->in_red_strides[s->red_rank++] = a->strides[i];
  }
  return LT_OK;
}

static lt_status check_arg_op(const lt_tensor *a, const lt_tensor *c, const lt_tensor *d,
                              const lt__reduce_step *s) {
  const char *name = s->op == LT_REDUCE_ARGMAX ? "argmax" : "argmin";
  LT_RETURN_IF(s->red_rank != 1, LT_ERR_INVALID_ARGUMENT,
               "%s reduces exactly one mode, but A has %d modes absent from D", name, s->red_rank);
  LT_RETURN_IF(d->dtype != LT_I64, LT_ERR_DTYPE, "%s writes indices: D must be i64, not %s", name,
               lt_dtype_name(d->dtype));
  LT_RETURN_IF(c != NULL, LT_ERR_INVALID_ARGUMENT, "%s takes no C operand", name);
  LT_RETURN_IF(s->red_shape[0] == 0 && d->numel > 0, LT_ERR_INVALID_ARGUMENT,
               "%s of an empty mode (extent 0 in A) has no answer", name);
  (void)a;
  return LT_OK;
}

lt_status lt_plan_reduction(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *c,
                            const int32_t *modes_c, lt_reduce_op op, const lt_tensor *d,
                            const int32_t *modes_d, const lt_plan_options *opts, lt_plan **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY_PREFIXED(lt__modes_check(a, modes_a, "A"), "lt_plan_reduction");
  if (c) LT_TRY_PREFIXED(lt__modes_check(c, modes_c, "C"), "lt_plan_reduction");
  LT_TRY_PREFIXED(lt__modes_check(d, modes_d, "D"), "lt_plan_reduction");
  const lt_tensor *all[3] = {d, a, c};
  const char *names[3] = {"D", "A", "C"};
  LT_TRY(lt__same_context("lt_plan_reduction", 3, all, names));
  LT_RETURN_IF((int)op < LT_REDUCE_SUM || (int)op > LT_REDUCE_ARGMIN, LT_ERR_INVALID_ARGUMENT,
               "unknown reduce op code %d", (int)op);
  LT_RETURN_IF(lt__tensor_self_overlaps(d), LT_ERR_ALIASING,
               "output D has elements that overlap each other (zero or clashing strides)");
  LT_TRY(lt__check_options(opts, "lt_plan_reduction"));
  if (opts == NULL) opts = lt__plan_options_default();
  lt_context *ctx = d->storage->ctx;
  reduce_impl *r = lt__host_alloc(ctx, sizeof *r);
  LT_RETURN_IF(r == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory building a plan");
  memset(r, 0, sizeof *r);
  r->ctx = ctx;
  lt__program_init(&r->prog, ctx);
  lt__reduce_step *s = &r->step;
  s->op = op;
  s->unary = opts->unary[0];
  s->in.dtype = a->dtype;
  s->out.dtype = d->dtype;
  s->alpha = 1.0;
  lt_status st = lower_modes(a, modes_a, d, modes_d, s);
  if (st == LT_OK && (op == LT_REDUCE_ARGMAX || op == LT_REDUCE_ARGMIN))
    st = check_arg_op(a, c, d, s);
  if (st == LT_OK && c) {
    s->has_c = true;
    s->c.dtype = c->dtype;
    for (int k = 0; k < d->rank && st == LT_OK; k++)
      st = lt__modes_find(modes_c, c->rank, modes_d[k]) >= 0 || d->shape[k] == 1
               ? LT_OK
               : lt__error(LT_ERR_SHAPE_MISMATCH, "mode %d of D (axis %d) does not appear in C",
                           (int)modes_d[k], k);
    if (st == LT_OK) st = lt__modes_align(c, modes_c, "C", d, modes_d, "D", s->c.strides);
    r->c_in_place_ok = lt__aligned_like(c, s->c.strides, d);
  }
  const lt_tensor *ins[2] = {a, c};
  if (st == LT_OK) {
    s->compute = lt__plan_map_compute(opts, c ? 2 : 1, ins,
                                      lt__unary_is_float_op(s->unary) || op == LT_REDUCE_MEAN);
    bool int_compute = s->compute == LT_I64 || s->compute == LT_U64;
    st =
        int_compute && op == LT_REDUCE_MEAN
            ? lt__error(LT_ERR_DTYPE, "mean computes in f32 or f64, not %s",
                        lt_dtype_name(s->compute))
        : int_compute && lt__unary_is_float_op(s->unary)
            ? lt__error(LT_ERR_DTYPE, "%s of A is a float function: compute dtype %s cannot run it",
                        lt__unary_name(s->unary), lt_dtype_name(s->compute))
        : !int_compute && lt__unary_is_int_op(s->unary)
            ? lt__error(LT_ERR_DTYPE, "%s needs an integer or bool A, not %s",
                        lt__unary_name(s->unary), lt_dtype_name(a->dtype))
            : LT_OK;
    if (s->unary == LT_UNARY_INVERT && a->dtype == LT_BOOL) s->unary = LT_UNARY_NOT;
  }
  lt_plan *p = NULL;
  if (st == LT_OK) st = emit_reduce(r);
  if (st == LT_OK) st = lt__plan_alloc(ctx, LT__PLAN_REDUCTION, c ? 2 : 1, &p);
  if (st != LT_OK) {
    reduce_impl_destroy(r);
    return st;
  }
  p->impl = r;
  p->destroy_impl = reduce_impl_destroy;
  p->run = run_reduce;
  p->n_inputs_min = p->n_inputs_max = c ? 2 : 1;
  p->n_scalars = 2;
  p->default_scalars[0] = 1.0;
  p->default_scalars[1] = 0.0;
  lt__layout_from_tensor(a, &p->inputs[0]);
  if (c) lt__layout_from_tensor(c, &p->inputs[1]);
  lt__layout_from_tensor(d, &p->output);
  char text[160];
  snprintf(text, sizeof text, "reduction op %d: rank-%d A -> rank-%d D over %d mode(s), in %s",
           (int)op, a->rank, d->rank, s->red_rank, lt_dtype_name(s->compute));
  st = lt__plan_set_description(p, text);
  if (st != LT_OK) {
    lt_plan_destroy(p);
    return st;
  }
  *out = p;
  return LT_OK;
}
