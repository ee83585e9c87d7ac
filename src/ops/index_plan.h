/* SPDX-License-Identifier: MIT */
/* Plans of the index family (gather, scatter-add, sort): one backend step built at creation,
 * run as a program of that step (ops/index_plan.c). */
#ifndef LT_OPS_INDEX_PLAN_H
#define LT_OPS_INDEX_PLAN_H

#include "lower/program.h"
#include "ops/plan.h"

typedef struct lt__index_impl {
  lt_context *ctx;
  lt__plan_kind kind; /* LT__PLAN_GATHER, LT__PLAN_SCATTER or LT__PLAN_SORT */
  const char *call;   /* the public constructor, for messages */
  int axis;           /* the user's axis, for messages */
  union {
    lt__gather_step g;
    lt__scatter_step s;
    lt__sort_step o;
  } step;
  lt__program prog; /* made by lt__index_plan_make from step */
} lt__index_impl;

/* Checks that ctx's backend has the index primitive the plan kind needs. */
lt_status lt__index_backend_check(const lt_context *ctx, lt__plan_kind kind, const char *call);
/* Wraps a filled impl (copied) into a plan with inputs ins[0..n_in) and output d. */
lt_status lt__index_plan_make(const lt__index_impl *impl, int n_in, const lt_tensor *const *ins,
                              const lt_tensor *d, const char *description, lt_plan **out);
/* Creates d's C-contiguous output for `plan`, runs it on ins, and destroys the plan (one-shot
 * helper; the plan is destroyed also on failure, *out stays NULL then). */
lt_status lt__index_run_once(lt_plan *plan, int n_in, const lt_tensor *const *ins, lt_tensor *d);
/* LT_OK if t is a live tensor holding indices; names `call` and `what` otherwise. */
lt_status lt__check_index_tensor(const lt_tensor *t, const char *call, const char *what);

#endif
