/* SPDX-License-Identifier: MIT */
/* lt_plan_contraction: D = alpha*opA(A).opB(B) + beta*C over mode labels, lowered once into
 * backend steps by lt__lower_pair (lower/pair.c). */
#include "core/dtype.h"
#include "core/error.h"
#include "lower/pair.h"
#include "ops/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODES (4 * LT_MAX_RANK)

typedef struct contraction_impl {
  lt__program prog;
  int64_t extent[MAX_MODES];
} contraction_impl;

/* Dense id of label `m` in the table, adding it (with its extent) if new. */
static int mode_id(int32_t *labels, int64_t *extent, int *n, int32_t m, int64_t e) {
  for (int i = 0; i < *n; i++)
    if (labels[i] == m) return i;
  labels[*n] = m;
  extent[*n] = e;
  return (*n)++;
}

static const char *const operand_names[4] = {"A", "B", "C", "D"};

/* Records t's axes as modes, checking repeats and extents against earlier operands. */
static lt_status add_operand(const lt_tensor *t, const int32_t *modes, int which, int32_t *labels,
                             int64_t *extent, int *n, int *first_seen, lt__mview *v,
                             lt__bufref buf) {
  LT_RETURN_IF(t->rank > 0 && modes == NULL, LT_ERR_NULL_POINTER,
               "lt_plan_contraction: modes of %s is NULL", operand_names[which]);
  LT_RETURN_IF(!lt__dtype_is_float(t->dtype) && !lt__dtype_is_exact(t->dtype), LT_ERR_DTYPE,
               "lt_plan_contraction: %s has an invalid dtype", operand_names[which]);
  memset(v, 0, sizeof *v);
  v->buf = buf;
  v->dtype = t->dtype;
  v->rank = t->rank;
  for (int i = 0; i < t->rank; i++) {
    for (int j = 0; j < i; j++)
      LT_RETURN_IF(modes[j] == modes[i], LT_ERR_INVALID_ARGUMENT,
                   "lt_plan_contraction: mode %d appears twice in %s (axes %d and %d); take a "
                   "diagonal view or use einsum",
                   (int)modes[i], operand_names[which], j, i);
    int before = *n;
    int id = mode_id(labels, extent, n, modes[i], t->shape[i]);
    if (id == before) first_seen[id] = which;
    LT_RETURN_IF(extent[id] != t->shape[i], LT_ERR_SHAPE_MISMATCH,
                 "lt_plan_contraction: mode %d has extent %lld in %s but %lld in %s", (int)modes[i],
                 (long long)extent[id], operand_names[first_seen[id]], (long long)t->shape[i],
                 operand_names[which]);
    v->mode[i] = id;
    v->stride[i] = t->strides[i];
  }
  return LT_OK;
}

static lt_status check_c_modes(const lt__mview *c, const lt__mview *d, const int32_t *labels) {
  LT_RETURN_IF(c->rank != d->rank, LT_ERR_SHAPE_MISMATCH,
               "lt_plan_contraction: C has rank %d but D has rank %d", c->rank, d->rank);
  for (int i = 0; i < c->rank; i++)
    LT_RETURN_IF(!lt__mview_has(d, c->mode[i]), LT_ERR_INVALID_ARGUMENT,
                 "lt_plan_contraction: mode %d of C is not a mode of D", (int)labels[c->mode[i]]);
  return LT_OK;
}

/* C's strides reordered to follow D's modes. */
static void align_to_d(lt__mview *c, const lt__mview *d) {
  lt__mview aligned = *c;
  for (int i = 0; i < d->rank; i++) {
    aligned.mode[i] = d->mode[i];
    aligned.stride[i] = lt__mview_stride(c, d->mode[i]);
  }
  *c = aligned;
}

/* D may not share memory with A or B (they are read after D is written); C may be D itself,
 * element for element (accumulation in place), but may not overlap it otherwise. */
static lt_status check_aliasing(const lt_tensor *const *inputs, int n_inputs, const lt_tensor *d) {
  for (int i = 0; i < 2; i++)
    LT_RETURN_IF(lt__tensor_overlap(d, inputs[i]) != LT__OVERLAP_NONE, LT_ERR_ALIASING,
                 "lt_plan_execute: the output D overlaps input %s of the contraction",
                 i ? "B" : "A");
  LT_RETURN_IF(n_inputs > 2 && lt__tensor_overlap(d, inputs[2]) == LT__OVERLAP_PARTIAL,
               LT_ERR_ALIASING,
               "lt_plan_execute: the output D overlaps C in a different arrangement (C may be D "
               "itself)");
  return LT_OK;
}

static lt_status contraction_run(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                                 const double *scalars, lt_tensor *d) {
  LT_TRY(check_aliasing(inputs, n_inputs, d));
  contraction_impl *impl = plan->impl;
  return lt__program_run(&impl->prog, plan->ctx, inputs, scalars, d);
}

static void contraction_destroy(void *p) {
  contraction_impl *impl = p;
  if (impl == NULL) return;
  lt_context *ctx = impl->prog.ctx;
  lt__program_free(&impl->prog);
  lt__host_free(ctx, impl, sizeof *impl);
}

static lt_status describe(lt_plan *plan, const lt__pair *p, lt__how how) {
  char text[256];
  snprintf(text, sizeof text, "contraction: %s, compute %s, %d step(s), workspace %zu bytes",
           lt__how_name(how), lt_dtype_name(p->compute),
           ((const contraction_impl *)plan->impl)->prog.n_steps, plan->workspace_bytes);
  lt__pair_describe_gemm(p, how, text, sizeof text);
  return lt__plan_set_description(plan, text);
}

static lt_status build(lt_plan *plan, const lt_tensor *a, const int32_t *modes_a,
                       const lt_tensor *b, const int32_t *modes_b, const lt_tensor *c,
                       const int32_t *modes_c, const lt_tensor *d, const int32_t *modes_d,
                       const lt_plan_options *opts) {
  contraction_impl *impl = lt__host_calloc(plan->ctx, 1, sizeof *impl);
  LT_RETURN_IF(impl == NULL, LT_ERR_OUT_OF_MEMORY, "lt_plan_contraction: out of memory");
  plan->impl = impl;
  plan->destroy_impl = contraction_destroy;
  lt__program_init(&impl->prog, plan->ctx);
  int32_t labels[MAX_MODES];
  int first_seen[MAX_MODES];
  int n = 0;
  lt__pair p;
  memset(&p, 0, sizeof p);
  p.extent = impl->extent;
  LT_TRY(add_operand(a, modes_a, 0, labels, impl->extent, &n, first_seen, &p.a,
                     (lt__bufref){LT__BUF_INPUT, 0}));
  LT_TRY(add_operand(b, modes_b, 1, labels, impl->extent, &n, first_seen, &p.b,
                     (lt__bufref){LT__BUF_INPUT, 1}));
  LT_TRY(add_operand(d, modes_d, 3, labels, impl->extent, &n, first_seen, &p.d,
                     (lt__bufref){LT__BUF_OUTPUT, 0}));
  for (int i = 0; i < p.d.rank; i++)
    LT_RETURN_IF(!lt__mview_has(&p.a, p.d.mode[i]) && !lt__mview_has(&p.b, p.d.mode[i]),
                 LT_ERR_INVALID_ARGUMENT,
                 "lt_plan_contraction: mode %d of D appears in neither A nor B",
                 (int)labels[p.d.mode[i]]);
  if (c) {
    LT_TRY(add_operand(c, modes_c, 2, labels, impl->extent, &n, first_seen, &p.c,
                       (lt__bufref){LT__BUF_INPUT, 2}));
    LT_TRY(check_c_modes(&p.c, &p.d, labels));
    align_to_d(&p.c, &p.d);
    p.has_c = true;
  }
  const lt_tensor *ins[3] = {a, b, c};
  LT_TRY(lt__plan_compute_dtype(opts, c ? 3 : 2, ins, &p.compute));
  LT_TRY(lt__plan_check_float_to_int("lt_plan_contraction", p.compute, d->dtype));
  memcpy(p.unary, opts->unary, sizeof p.unary);
  p.lowp_exact = opts->lowp == LT_LOWP_F32;
  p.alpha = LT__SCALAR_ALPHA;
  p.beta = LT__SCALAR_BETA;
  lt__how how;
  LT_TRY(lt__lower_pair(plan->ctx, &p, &impl->prog, &how));
  plan->workspace_bytes = impl->prog.ws_bytes;
  return describe(plan, &p, how);
}

lt_status lt_plan_contraction(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *b,
                              const int32_t *modes_b, const lt_tensor *c, const int32_t *modes_c,
                              const lt_tensor *d, const int32_t *modes_d,
                              const lt_plan_options *opts, lt_plan **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_plan_contraction: A"));
  LT_TRY(lt__check_tensor(b, "lt_plan_contraction: B"));
  LT_TRY(lt__check_tensor(d, "lt_plan_contraction: D"));
  if (c) LT_TRY(lt__check_tensor(c, "lt_plan_contraction: C"));
  lt_context *ctx = d->storage->ctx;
  LT_RETURN_IF(a->storage->ctx != ctx || b->storage->ctx != ctx || (c && c->storage->ctx != ctx),
               LT_ERR_CONTEXT_MISMATCH,
               "lt_plan_contraction: A, B, C and D must live on the same context");
  LT_RETURN_IF(!lt__dtype_is_float(d->dtype) && !lt__dtype_is_exact(d->dtype), LT_ERR_DTYPE,
               "lt_plan_contraction: D has an invalid dtype");
  LT_RETURN_IF(lt__tensor_self_overlaps(d), LT_ERR_ALIASING,
               "lt_plan_contraction: D has overlapping elements (zero or clashing strides)");
  LT_TRY(lt__check_options(opts, "lt_plan_contraction"));
  if (opts == NULL) opts = lt__plan_options_default();
  lt_plan *plan;
  LT_TRY(lt__plan_alloc(ctx, LT__PLAN_CONTRACTION, c ? 3 : 2, &plan));
  lt_status st = build(plan, a, modes_a, b, modes_b, c, modes_c, d, modes_d, opts);
  if (st != LT_OK) {
    lt_plan_destroy(plan);
    return st;
  }
  plan->n_inputs_min = plan->n_inputs_max = c ? 3 : 2;
  lt__layout_from_tensor(a, &plan->inputs[0]);
  lt__layout_from_tensor(b, &plan->inputs[1]);
  if (c) lt__layout_from_tensor(c, &plan->inputs[2]);
  lt__layout_from_tensor(d, &plan->output);
  plan->n_scalars = 2;
  plan->default_scalars[0] = 1.0;
  plan->default_scalars[1] = 0.0;
  plan->run = contraction_run;
  *out = plan;
  return LT_OK;
}
