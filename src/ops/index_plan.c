/* SPDX-License-Identifier: MIT */
/* The plan shell shared by gather, scatter-add and sort plans: validation at execution
 * (aliasing), patching memory into the step, and naming the operand and axis when the backend
 * meets an index out of range. */
#include "ops/index_plan.h"

#include "core/error.h"

#include <stdio.h>
#include <string.h>

static void impl_destroy(void *p) {
  lt__index_impl *impl = p;
  lt__program_free(&impl->prog);
  lt__host_free(impl->ctx, impl, sizeof *impl);
}

/* The program of the impl's one step: inputs then the output in the step's buffer slots. */
static lt_status emit_index(lt__index_impl *impl, int n_in) {
  static const lt__step_kind kinds[] = {[LT__PLAN_GATHER] = LT__STEP_GATHER,
                                        [LT__PLAN_SCATTER] = LT__STEP_SCATTER,
                                        [LT__PLAN_SORT] = LT__STEP_SORT};
  lt__step *s = lt__program_add(&impl->prog, kinds[impl->kind]);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  if (impl->kind == LT__PLAN_GATHER) s->u.gather = impl->step.g;
  if (impl->kind == LT__PLAN_SCATTER) s->u.scatter = impl->step.s;
  if (impl->kind == LT__PLAN_SORT) s->u.sort = impl->step.o;
  for (int k = 0; k < n_in; k++)
    s->buf[k] = (lt__bufref){LT__BUF_INPUT, k};
  s->buf[n_in] = (lt__bufref){LT__BUF_OUTPUT, 0};
  return LT_OK;
}

static const char *const input_names[2][2] = {{"A", "INDEX"}, {"SRC", "INDEX"}};

static lt_status run_index(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                           const double *scalars, lt_tensor *d) {
  const lt__index_impl *impl = plan->impl;
  for (int k = 0; k < n_inputs; k++)
    LT_RETURN_IF(lt__tensor_overlap(d, inputs[k]) != LT__OVERLAP_NONE, LT_ERR_ALIASING,
                 "lt_plan_execute (%s): the output D overlaps input %s", impl->call,
                 input_names[impl->kind == LT__PLAN_SCATTER][k]);
  /* Nothing to do: no output element (gather, sort) or no source element (scatter-add). */
  if ((impl->kind == LT__PLAN_SCATTER ? inputs[0]->numel : d->numel) == 0) return LT_OK;
  lt_status st = lt__program_run((lt__program *)&impl->prog, plan->ctx, inputs, scalars, d);
  if (st == LT_ERR_OUT_OF_RANGE) {
    char prefix[96];
    snprintf(prefix, sizeof prefix, "%s: operand INDEX, axis %d", impl->call, impl->axis);
    lt__error_prefix(prefix);
  }
  return st;
}

lt_status lt__index_backend_check(const lt_context *ctx, lt__plan_kind kind, const char *call) {
  const lt__index_ops *ops = ctx->backend->index;
  bool has = ops != NULL && (kind == LT__PLAN_GATHER    ? ops->gather != NULL
                             : kind == LT__PLAN_SCATTER ? ops->scatter_add != NULL
                                                        : ops->sort != NULL);
  LT_RETURN_IF(!has, LT_ERR_UNSUPPORTED, "%s: the '%s' backend has no such kernel", call,
               ctx->backend->name);
  return LT_OK;
}

lt_status lt__index_plan_make(const lt__index_impl *tmpl, int n_in, const lt_tensor *const *ins,
                              const lt_tensor *d, const char *description, lt_plan **out) {
  lt_context *ctx = d->storage->ctx;
  lt__index_impl *impl = lt__host_alloc(ctx, sizeof *impl);
  LT_RETURN_IF(impl == NULL, LT_ERR_OUT_OF_MEMORY, "%s: out of memory building a plan", tmpl->call);
  *impl = *tmpl;
  impl->ctx = ctx;
  lt__program_init(&impl->prog, ctx);
  lt_plan *p = NULL;
  lt_status st = emit_index(impl, n_in);
  if (st == LT_OK) st = lt__plan_alloc(ctx, tmpl->kind, n_in, &p);
  if (st != LT_OK) {
    impl_destroy(impl);
    return st;
  }
  p->impl = impl;
  p->destroy_impl = impl_destroy;
  p->run = run_index;
  p->n_inputs_min = p->n_inputs_max = n_in;
  for (int k = 0; k < n_in; k++)
    lt__layout_from_tensor(ins[k], &p->inputs[k]);
  lt__layout_from_tensor(d, &p->output);
  st = lt__plan_set_description(p, description);
  if (st != LT_OK) {
    lt_plan_destroy(p);
    return st;
  }
  *out = p;
  return LT_OK;
}

lt_status lt__index_run_once(lt_plan *plan, int n_in, const lt_tensor *const *ins, lt_tensor *d) {
  lt_status st = lt_plan_execute(plan, ins, n_in, NULL, 0, d);
  lt_plan_destroy(plan);
  return st;
}

lt_status lt__check_index_tensor(const lt_tensor *t, const char *call, const char *what) {
  char name[96];
  snprintf(name, sizeof name, "%s: %s", call, what);
  LT_TRY(lt__check_tensor(t, name));
  LT_RETURN_IF(!lt__index_dtype(t->dtype), LT_ERR_DTYPE,
               "%s: operand %s has dtype %s; indices must be integers", call, what,
               lt_dtype_name(t->dtype));
  return LT_OK;
}
