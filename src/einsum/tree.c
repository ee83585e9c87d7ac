/* SPDX-License-Identifier: MIT */
/* The einsum tree through the C API: a plan's steps and slicing, and paths found without a
 * plan (lt_einsum_find_path, as np.einsum_path). */
#include "core/error.h"
#include "einsum/einsum.h"

#include <string.h>

static lt_status einsum_impl_of(const lt_plan *plan, const char *fn, const lt__einsum_impl **impl) {
  LT_TRY(lt__handle_check(plan, LT__HANDLE_PLAN, fn, "plan"));
  LT_RETURN_IF(plan->kind != LT__PLAN_EINSUM, LT_ERR_INVALID_ARGUMENT,
               "%s: the plan is not an einsum plan", fn);
  *impl = plan->impl;
  return LT_OK;
}

lt_status lt_plan_einsum_n_steps(const lt_plan *plan, int64_t *n_steps) {
  LT_CHECK_NULL(n_steps, "n_steps");
  const lt__einsum_impl *impl = NULL;
  LT_TRY(einsum_impl_of(plan, "lt_plan_einsum_n_steps", &impl));
  *n_steps = impl->n_steps;
  return LT_OK;
}

lt_status lt_plan_einsum_step(const lt_plan *plan, int64_t step, int64_t *pair, int64_t *ssa,
                              double *cost, double *size) {
  const lt__einsum_impl *impl = NULL;
  LT_TRY(einsum_impl_of(plan, "lt_plan_einsum_step", &impl));
  LT_RETURN_IF(step < 0 || step >= impl->n_steps, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_einsum_step: step %lld is outside [0, %lld)", (long long)step,
               (long long)impl->n_steps);
  if (pair) pair[0] = impl->pos[step][0], pair[1] = impl->pos[step][1];
  if (ssa) ssa[0] = impl->ssa[step][0], ssa[1] = impl->ssa[step][1];
  if (cost) *cost = impl->step_cost[step];
  if (size) *size = impl->step_size[step];
  return LT_OK;
}

lt_status lt_plan_einsum_slicing(const lt_plan *plan, int *n_sliced, int32_t *labels, int cap,
                                 double *n_slices, double *overhead) {
  const lt__einsum_impl *impl = NULL;
  LT_TRY(einsum_impl_of(plan, "lt_plan_einsum_slicing", &impl));
  LT_RETURN_IF(cap > 0 && labels == NULL, LT_ERR_NULL_POINTER,
               "lt_plan_einsum_slicing: labels is NULL with cap %d", cap);
  if (n_sliced) *n_sliced = impl->n_sliced;
  for (int j = 0; j < impl->n_sliced && j < cap; j++)
    labels[j] = impl->sliced_label[j];
  if (n_slices) *n_slices = impl->n_steps ? impl->slices : 1;
  if (overhead) *overhead = impl->n_steps ? impl->overhead : 1;
  return LT_OK;
}

/* ---- paths without a plan ---- */

typedef struct find_state {
  lt__einsum_expr expr;
  lt__einsum_canon canon;
  lt__path path;
} find_state;

static lt_status find_canon(int n, const int64_t *const *shapes, lt__einsum_canon *c,
                            const lt__einsum_expr *e) {
  int cap = e->rank_out + 1;
  for (int k = 0; k < n; k++)
    cap += e->rank[k];
  c->n_inputs = n;
  c->cap_labels = cap;
  c->label_of = lt__host_alloc(NULL, sizeof(int32_t) * (size_t)cap);
  c->extent = lt__host_alloc(NULL, sizeof(int64_t) * (size_t)cap);
  c->in = lt__host_calloc(NULL, (size_t)n + 1, sizeof(lt__mview));
  LT_RETURN_IF(!c->label_of || !c->extent || !c->in, LT_ERR_OUT_OF_MEMORY,
               "lt_einsum_find_path: out of memory for %d operands", n);
  /* sorting would be faster; label counts here are what a plan sees, so a scan will do */
  for (int k = 0; k <= n; k++) {
    int rank = k < n ? e->rank[k] : e->rank_out;
    const int32_t *labels = k < n ? e->labels[k] : e->labels_out;
    lt__mview *v = k < n ? &c->in[k] : &c->out;
    v->rank = 0;
    for (int a = 0; a < rank; a++) {
      int id = -1;
      for (int i = 0; i < c->n_labels && id < 0; i++)
        if (c->label_of[i] == labels[a]) id = i;
      if (k < n) {
        int64_t ext = shapes[k][a];
        LT_RETURN_IF(ext < 0, LT_ERR_INVALID_ARGUMENT,
                     "lt_einsum_find_path: operand %d axis %d has extent %lld", k, a,
                     (long long)ext);
        /* extent 1 broadcasts against any other, as lt_einsum and NumPy take it */
        if (id >= 0 && c->extent[id] != ext && c->extent[id] != 1 && ext != 1)
          return lt__error(LT_ERR_SHAPE_MISMATCH,
                           "lt_einsum_find_path: label %d has extents %lld and %lld",
                           (int)labels[a], (long long)c->extent[id], (long long)ext);
        if (id >= 0 && c->extent[id] == 1) c->extent[id] = ext;
      }
      if (id < 0) {
        id = c->n_labels++;
        c->label_of[id] = labels[a];
        c->extent[id] = shapes[k][a];
      }
      if (!lt__mview_has(v, id)) v->mode[v->rank++] = id;
    }
  }
  return LT_OK;
}

lt_status lt_einsum_find_path(int n_inputs, const int *ranks, const int64_t *const *shapes,
                              const int32_t *const *modes, int rank_out, const int32_t *modes_out,
                              const lt_plan_options *opts, int64_t (*pairs)[2], double *cost,
                              double *largest) {
  LT_RETURN_IF(n_inputs < 1, LT_ERR_INVALID_ARGUMENT,
               "lt_einsum_find_path: %d inputs (at least 1 needed)", n_inputs);
  LT_CHECK_NULL(ranks, "ranks");
  LT_CHECK_NULL(shapes, "shapes");
  LT_CHECK_NULL(modes, "modes");
  LT_RETURN_IF(n_inputs > 1 && pairs == NULL, LT_ERR_NULL_POINTER,
               "lt_einsum_find_path: pairs is NULL");
  LT_TRY(lt__check_options(opts, "lt_einsum_find_path"));
  if (opts == NULL) opts = lt__plan_options_default();
  for (int k = 0; k < n_inputs; k++) {
    LT_RETURN_IF(ranks[k] < 0 || ranks[k] > LT_MAX_RANK, LT_ERR_INVALID_ARGUMENT,
                 "lt_einsum_find_path: operand %d has rank %d, outside [0, %d]", k, ranks[k],
                 LT_MAX_RANK);
    LT_RETURN_IF(ranks[k] > 0 && shapes[k] == NULL, LT_ERR_NULL_POINTER,
                 "lt_einsum_find_path: shape of operand %d is NULL", k);
  }
  find_state *f = lt__host_calloc(NULL, 1, sizeof *f);
  LT_RETURN_IF(f == NULL, LT_ERR_OUT_OF_MEMORY, "lt_einsum_find_path: out of memory");
  lt_status st = lt__einsum_from_modes(n_inputs, ranks, modes, rank_out, modes_out, &f->expr);
  if (st == LT_OK) st = find_canon(n_inputs, shapes, &f->canon, &f->expr);
  if (st == LT_OK) st = lt__einsum_path(NULL, &f->canon, opts, sizeof(double), &f->path);
  if (st == LT_OK) {
    for (int s = 0; s < n_inputs - 1; s++)
      pairs[s][0] = f->path.pos[s][0], pairs[s][1] = f->path.pos[s][1];
    if (cost) *cost = f->path.cost;
    if (largest) *largest = f->path.largest;
  }
  lt__path_free(&f->path);
  lt__einsum_canon_free(&f->canon);
  lt__einsum_expr_free(&f->expr);
  lt__host_free(NULL, f, sizeof *f);
  return st;
}
