/* Running a sliced einsum plan: the program computes one slice (sliced labels at one value);
 * every run moves the operands' and the output's offsets to its slice. Slices of a label the
 * output keeps fill disjoint parts of the output; slices of a summed label add up, so only
 * the first of them in the range run applies the caller's beta and the rest accumulate with
 * beta = 1. A range of slices (lt_plan_execute_slices) lets workers share one plan's slices. */
#include "core/error.h"
#include "einsum/einsum.h"

#include <string.h>

lt_status lt__einsum_check_alias(const lt_tensor *const *inputs, int n_inputs, const lt_tensor *d) {
  for (int i = 0; i < n_inputs; i++)
    LT_RETURN_IF(lt__tensor_overlap(d, inputs[i]) != LT__OVERLAP_NONE, LT_ERR_ALIASING,
                 "einsum: the output overlaps input %d", i);
  return LT_OK;
}

lt_status lt__einsum_slice_count(const lt__einsum_impl *impl, int64_t *count) {
  int64_t n = 1;
  for (int j = 0; j < impl->n_sliced; j++) {
    LT_RETURN_IF(impl->slice_ext[j] > 0 && n > INT64_MAX / impl->slice_ext[j],
                 LT_ERR_INVALID_ARGUMENT, "einsum: the plan's slice count overflows int64");
    n *= impl->slice_ext[j];
  }
  *count = n;
  return LT_OK;
}

/* Whether slice `s` (digits idx) is the first in [first, s] to write its part of the output:
 * the previous slice with the same kept-label digits decrements the summed-label digits as
 * one mixed-radix counter; s is first when there is none or it lies before the range. */
static bool first_in_range(const lt__einsum_impl *impl, const int64_t *idx, int64_t s,
                           int64_t first) {
  int64_t weight = 1, back = 0;
  for (int j = 0; j < impl->n_sliced; j++) {
    if (!impl->slice_in_out[j]) {
      if (idx[j] > 0) return s - weight + back < first;
      back += (impl->slice_ext[j] - 1) * weight;
    }
    weight *= impl->slice_ext[j];
  }
  return true;
}

lt_status lt__einsum_run_slice_range(const lt__einsum_impl *impl, lt_context *ctx,
                                     const lt_tensor *const *inputs, const double *scalars,
                                     int64_t first, int64_t count, lt_tensor *d) {
  lt__program *prog = (lt__program *)&impl->prog;
  if (count <= 0) return LT_OK;
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
  int64_t rest = first;
  for (int j = 0; j < ns; j++) {
    idx[j] = rest % impl->slice_ext[j];
    rest /= impl->slice_ext[j];
  }
  lt_status st = LT_OK;
  for (int64_t s = first; s < first + count; s++) {
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
    double sc[2] = {scalars[0], first_in_range(impl, idx, s, first) ? scalars[1] : 1.0};
    st = lt__program_run(prog, ctx, ptrs, sc, dc);
    if (st != LT_OK) break;
    for (int j = 0; j < ns && ++idx[j] == impl->slice_ext[j]; j++)
      idx[j] = 0;
  }
  if (mem != local) lt__host_free(ctx, mem, bytes);
  return st;
}

lt_status lt__einsum_run_slices(const lt__einsum_impl *impl, lt_context *ctx,
                                const lt_tensor *const *inputs, const double *scalars,
                                lt_tensor *d) {
  int64_t count = 0;
  LT_TRY(lt__einsum_slice_count(impl, &count));
  return lt__einsum_run_slice_range(impl, ctx, inputs, scalars, 0, count, d);
}

lt_status lt_plan_execute_slices(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                                 const double *scalars, int n_scalars, int64_t first, int64_t count,
                                 lt_tensor *d) {
  LT_TRY(lt__plan_check_execute(plan, inputs, n_inputs, scalars, n_scalars, d));
  LT_RETURN_IF(plan->kind != LT__PLAN_EINSUM, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_execute_slices: the plan is not an einsum plan");
  const lt__einsum_impl *impl = plan->impl;
  int64_t total = 0;
  LT_TRY(lt__einsum_slice_count(impl, &total));
  LT_RETURN_IF(first < 0 || count < 0 || first > total || count > total - first,
               LT_ERR_INVALID_ARGUMENT,
               "lt_plan_execute_slices: slices [%lld, %lld + %lld) are outside the plan's [0, "
               "%lld)",
               (long long)first, (long long)first, (long long)count, (long long)total);
  LT_TRY(lt__einsum_check_alias(inputs, n_inputs, d));
  return lt__einsum_run_slice_range(impl, plan->ctx, inputs,
                                    scalars ? scalars : plan->default_scalars, first, count, d);
}
