/* SPDX-License-Identifier: MIT */
/* Running a sliced einsum plan: the program computes one slice (sliced labels at one value);
 * every run moves the operands' and the output's offsets to its slice. Slices of a label the
 * output keeps fill disjoint parts of the output; slices of a summed label add up, so only
 * the first of them applies the caller's beta and the rest accumulate with beta = 1. */
#include "core/error.h"
#include "einsum/einsum.h"

#include <string.h>

lt_status lt__einsum_run_slices(const lt__einsum_impl *impl, lt_context *ctx,
                                const lt_tensor *const *inputs, const double *scalars,
                                lt_tensor *d) {
  lt__program *prog = (lt__program *)&impl->prog;
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
  memset(idx, 0, sizeof(int64_t) * (size_t)ns);
  lt_status st = LT_OK;
  for (;;) {
    bool first = true; /* the first slice over the summed labels for this output part */
    for (int j = 0; j < ns; j++)
      if (!impl->slice_in_out[j] && idx[j] != 0) first = false;
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
    double sc[2] = {scalars[0], first ? scalars[1] : 1.0};
    st = lt__program_run(prog, ctx, ptrs, sc, dc);
    if (st != LT_OK) break;
    int j = 0;
    while (j < ns && ++idx[j] == impl->slice_ext[j])
      idx[j++] = 0;
    if (j == ns) break;
  }
  if (mem != local) lt__host_free(ctx, mem, bytes);
  return st;
}
