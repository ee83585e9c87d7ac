/* SPDX-License-Identifier: MIT */
/* Running a sliced einsum plan: the program computes one slice (sliced labels at one value);
 * every run moves the operands' and the output's offsets to its slice. Slices of a label the
 * output keeps fill disjoint parts of the output; slices of a summed label add up, so only
 * the first of them applies the caller's beta and the rest accumulate with beta = 1.
 * lt_plan_execute_slices runs a range of them (the slices of one worker of a distributed run:
 * branch mpi's lt_dist_einsum_sliced, branch dask's workers). */
#include "core/error.h"
#include "einsum/einsum.h"
#include "ops/plan.h"

#include <string.h>

lt_status lt__einsum_run_slices(const lt__einsum_impl *impl, lt_context *ctx,
                                const lt_tensor *const *inputs, const double *scalars, lt_tensor *d,
                                int64_t first, int64_t count, bool beta_once) {
  lt__program *prog = (lt__program *)&impl->prog;
  if (count == 0) return LT_OK;
  if (impl->n_sliced == 0) return lt__program_run(prog, ctx, inputs, scalars, d);
  int n = impl->n_inputs, ns = impl->n_sliced;
  /* shallow copies whose offsets move; memory and layouts stay the caller's */
  size_t bytes = sizeof(lt_tensor) * (size_t)(n + 1) + sizeof(lt_tensor *) * (size_t)n +
                 sizeof(int64_t) * (size_t)ns;
  /* Few operands (the usual case) keep their copies on the stack, outside the memory figures. */
  _Alignas(64) char local[16 * 1024];
  char *mem = bytes <= sizeof local ? local : lt__host_alloc(ctx, bytes);
  LT_RETURN_IF(mem == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory running %d operands", n);
  lt_tensor *copy = (lt_tensor *)mem;
  const lt_tensor **ptrs = (const lt_tensor **)(mem + sizeof(lt_tensor) * (size_t)(n + 1));
  int64_t *idx =
      (int64_t *)(mem + sizeof(lt_tensor) * (size_t)(n + 1) + sizeof(lt_tensor *) * (size_t)n);
  for (int k = 0; k < n; k++) {
    copy[k] = *inputs[k];
    ptrs[k] = &copy[k];
  }
  lt_tensor *dc = &copy[n];
  *dc = *d;
  /* slice number `first` as digits, the first sliced label fastest */
  for (int j = 0; j < ns; j++) {
    idx[j] = first % impl->slice_ext[j];
    first /= impl->slice_ext[j];
  }
  lt_status st = LT_OK;
  for (int64_t run = 0; run < count; run++) {
    bool apply_beta = beta_once; /* the first slice over the summed labels for this output part */
    for (int j = 0; j < ns; j++)
      if (!impl->slice_in_out[j] && idx[j] != 0) apply_beta = false;
    for (int k = 0; k < n; k++) {
      int64_t off = inputs[k]->offset;
      for (int j = 0; j < ns; j++)
        off += idx[j] * impl->in_stride[(size_t)j * (size_t)n + (size_t)k];
      copy[k].offset = off;
    }
    int64_t doff = d->offset;
    for (int j = 0; j < ns; j++)
      doff += idx[j] * impl->out_stride[j];
    dc->offset = doff;
    double sc[2] = {scalars[0], apply_beta ? scalars[1] : 1.0};
    st = lt__program_run(prog, ctx, ptrs, sc, dc);
    if (st != LT_OK) break;
    int j = 0;
    while (j < ns && ++idx[j] == impl->slice_ext[j])
      idx[j++] = 0;
  }
  if (mem != local) lt__host_free(ctx, mem, bytes);
  return st;
}

/* D = beta * D over every element, through an elementwise plan whose output is its input
 * (allowed in place); beta = 0 does not read D, so NaN or Inf there become 0. */
static lt_status scale_output(lt_tensor *d, double beta) {
  int32_t modes[LT_MAX_RANK];
  for (int i = 0; i < d->rank; i++)
    modes[i] = i;
  lt_plan *scale = NULL;
  LT_TRY(lt_plan_binary(d, modes, d, modes, LT_BINARY_ADD, d, modes, NULL, &scale));
  const lt_tensor *in[2] = {d, d};
  double sc[2] = {beta, 0.0};
  lt_status st = lt_plan_execute(scale, in, 2, sc, 2, d);
  lt_plan_destroy(scale);
  return st;
}

lt_status lt_plan_execute_slices(const lt_plan *plan, int64_t first, int64_t count,
                                 const lt_tensor *const *inputs, int n_inputs,
                                 const double *scalars, int n_scalars, lt_tensor *d) {
  LT_TRY(lt__handle_check(plan, LT__HANDLE_PLAN, "lt_plan_execute_slices", "plan"));
  LT_RETURN_IF(plan->kind != LT__PLAN_EINSUM, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_execute_slices: the plan is not an einsum plan");
  const lt__einsum_impl *impl = plan->impl;
  int64_t total = 1;
  for (int j = 0; j < impl->n_sliced; j++)
    total *= impl->slice_ext[j]; /* no overflow: the extents multiply to a tensor's size */
  LT_RETURN_IF(first < 0 || count < 0 || first > total || count > total - first,
               LT_ERR_INVALID_ARGUMENT,
               "lt_plan_execute_slices: slices [%lld, %lld + %lld) are outside the plan's %lld",
               (long long)first, (long long)first, (long long)count, (long long)total);
  LT_TRY(lt__plan_check_call(plan, inputs, n_inputs, scalars, n_scalars, d));
  for (int i = 0; i < n_inputs; i++)
    LT_RETURN_IF(lt__tensor_overlap(d, inputs[i]) != LT__OVERLAP_NONE, LT_ERR_ALIASING,
                 "lt_plan_execute_slices: the output overlaps input %d", i);
  const double *sc = scalars ? scalars : plan->default_scalars;
  lt__storage_touch(d->storage); /* written in place, as lt_plan_execute */
  if (first == 0 && count == total)
    return lt__einsum_run_slices(impl, plan->ctx, inputs, sc, d, 0, total, true);
  /* A part of the slices: beta applies to all of D, also where no slice of the range writes,
   * so that ranges run by several workers (beta = 0 on each) add up to the whole result. */
  if (sc[1] != 1.0) LT_TRY(scale_output(d, sc[1]));
  return lt__einsum_run_slices(impl, plan->ctx, inputs, sc, d, first, count, false);
}
