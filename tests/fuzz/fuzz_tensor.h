/* SPDX-License-Identifier: MIT */
/* Builds fuzzed operands in the layout families the tests use, filled with given values. */
#ifndef LT_FUZZ_TENSOR_H
#define LT_FUZZ_TENSOR_H

#include <stdbool.h>
#include <stdlib.h>

#include "tensor.h"

/* A tensor of `shape` in layout family `layout` (0 contiguous, 1 transposed, 2 stepped,
 * 3 negative strides, 4 broadcast over the `collapsed` axes) holding `vals`, given in C order
 * over the base shape (extent 1 on collapsed axes). Aborts if the library cannot build it. */
static inline lt_tensor *fuzz_make_tensor(lt_context *ctx, lt_dtype dtype, int rank,
                                          const int64_t *shape, const bool *collapsed,
                                          const double *vals, int layout) {
  int64_t base_shape[LT_MAX_RANK];
  for (int d = 0; d < rank; d++)
    base_shape[d] = collapsed[d] ? 1 : shape[d];
  lt_tensor *src = NULL, *view = NULL, *store = NULL, *tmp = NULL;
  if (lt_tensor_from_host(ctx, LT_F64, rank, base_shape, NULL, vals, &src) != LT_OK) abort();
  if (layout == 4) { /* broadcast: zero strides over collapsed axes */
    lt_tensor *typed = NULL;
    if (lt_tensor_contiguous(src, dtype, &typed) != LT_OK) abort();
    if (lt_view_broadcast_to(typed, rank, shape, &view) != LT_OK) abort();
    lt_tensor_destroy(typed);
    lt_tensor_destroy(src);
    return view;
  }
  int64_t sshape[LT_MAX_RANK];
  int axes[LT_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    sshape[d] = layout == 1 ? shape[rank - 1 - d] : layout == 2 ? 2 * shape[d] + 1 : shape[d];
    axes[d] = rank - 1 - d;
  }
  if (lt_tensor_full(ctx, dtype, rank, sshape, 1e300, &store) != LT_OK) abort();
  if (layout == 1) {
    if (lt_view_permute(store, axes, &view) != LT_OK) abort();
  } else {
    view = store;
    for (int d = 0; d < rank && layout != 0; d++) {
      lt_status st = layout == 2 ? lt_view_slice(view, d, 1, 1 + 2 * shape[d], 2, &tmp)
                                 : lt_view_flip(view, d, &tmp);
      if (st != LT_OK) abort();
      if (view != store) lt_tensor_destroy(view);
      view = tmp;
    }
    if (view == store && lt_view_reshape(store, rank, shape, &view) != LT_OK) abort();
  }
  if (lt_tensor_copy_into(view, src) != LT_OK) abort();
  lt_tensor_destroy(store);
  lt_tensor_destroy(src);
  return view;
}

#endif
