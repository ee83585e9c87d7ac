/* SPDX-License-Identifier: MIT */
/* Loop-nest normalisation shared by the backends (see nest.h). */
#include "backend/common/nest.h"

#include <stdbool.h>

static void copy_dim(int64_t *shape, int n_ops, int64_t (*strides)[LT_MAX_RANK], int to, int from) {
  shape[to] = shape[from];
  for (int k = 0; k < n_ops; k++)
    strides[k][to] = strides[k][from];
}

int lt__nest_squeeze(int rank, int64_t *shape, int n_ops, int64_t (*strides)[LT_MAX_RANK]) {
  int r = 0;
  for (int d = 0; d < rank; d++)
    if (shape[d] != 1) copy_dim(shape, n_ops, strides, r++, d);
  return r;
}

void lt__nest_move(int64_t *shape, int n_ops, int64_t (*strides)[LT_MAX_RANK], int from, int to) {
  int64_t extent = shape[from], moved[LT_MAX_RANK];
  for (int k = 0; k < n_ops; k++)
    moved[k] = strides[k][from];
  if (from < to)
    for (int d = from; d < to; d++)
      copy_dim(shape, n_ops, strides, d, d + 1);
  else
    for (int d = from; d > to; d--)
      copy_dim(shape, n_ops, strides, d, d - 1);
  shape[to] = extent;
  for (int k = 0; k < n_ops; k++)
    strides[k][to] = moved[k];
}

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

/* True if dim a should come after (be more inner than) dim b. */
static bool more_inner(int n_ops, int64_t (*strides)[LT_MAX_RANK], int key, int a, int b) {
  int64_t sa = abs64(strides[key][a]), sb = abs64(strides[key][b]);
  if (sa != sb) return sa < sb;
  for (int k = 0; k < n_ops; k++) {
    sa = abs64(strides[k][a]);
    sb = abs64(strides[k][b]);
    if (sa != sb) return sa < sb;
  }
  return false;
}

void lt__nest_sort(int n_dims, int64_t *shape, int n_ops, int64_t (*strides)[LT_MAX_RANK],
                   int key) {
  /* Insertion sort: ranks are small and the order is stable. */
  for (int i = 1; i < n_dims; i++)
    for (int j = i; j > 0 && more_inner(n_ops, strides, key, j - 1, j); j--)
      lt__nest_move(shape, n_ops, strides, j, j - 1);
}

int lt__nest_fuse(int rank, int64_t *shape, int n_ops, int64_t (*strides)[LT_MAX_RANK]) {
  if (rank == 0) return 0;
  int r = 0; /* dims [0, r] are the fused result so far */
  for (int d = 1; d < rank; d++) {
    bool fusable = true;
    for (int k = 0; k < n_ops && fusable; k++)
      fusable = strides[k][r] == strides[k][d] * shape[d];
    if (fusable) {
      shape[r] *= shape[d];
      for (int k = 0; k < n_ops; k++)
        strides[k][r] = strides[k][d];
    } else {
      copy_dim(shape, n_ops, strides, ++r, d);
    }
  }
  return r + 1;
}
