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
  lt__host_free(impl->ctx, impl, sizeof *impl);
}

static void patch(lt__operand *op, const lt_tensor *t) {
  op->mem = t->storage->mem;
  op->offset = t->offset;
}

static const char *const input_names[2][2] = {{"A", "INDEX"}, {"SRC", "INDEX"}};

static lt_status run_index(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                           const double *scalars, lt_tensor *d) {
  (void)scalars;
  const lt__index_impl *impl = plan->impl;
  for (int k = 0; k < n_inputs; k++)
    LT_RETURN_IF(lt__tensor_overlap(d, inputs[k]) != LT__OVERLAP_NONE, LT_ERR_ALIASING,
                 "lt_plan_execute (%s): the output D overlaps input %s", impl->call,
                 input_names[impl->kind == LT__PLAN_SCATTER][k]);
  lt_context *ctx = plan->ctx;
  const lt__index_ops *ops = ctx->backend->index;
  lt_status st = LT_OK;
  switch (impl->kind) {
  case LT__PLAN_GATHER: {
    lt__gather_step g = impl->step.g;
    patch(&g.in, inputs[0]);
    patch(&g.index, inputs[1]);
    patch(&g.out, d);
    if (d->numel > 0) st = ops->gather(ctx, &g);
    break;
  }
  case LT__PLAN_SCATTER: {
    lt__scatter_step s = impl->step.s;
    patch(&s.src, inputs[0]);
    patch(&s.index, inputs[1]);
    patch(&s.out, d);
    if (inputs[0]->numel > 0) st = ops->scatter_add(ctx, &s);
    break;
  }
  default: {
    lt__sort_step o = impl->step.o;
    patch(&o.in, inputs[0]);
    patch(&o.out, d);
    if (d->numel > 0) st = ops->sort(ctx, &o);
    break;
  }
  }
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
  lt_plan *p = NULL;
  lt_status st = lt__plan_alloc(ctx, tmpl->kind, n_in, &p);
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
