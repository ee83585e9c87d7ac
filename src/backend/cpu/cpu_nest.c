/* SPDX-License-Identifier: MIT */
/* The CPU's loop nests (see cpu_nest.h): normalisation through backend/common/nest.h, plus the
 * odometer. */
#include "backend/cpu/cpu_nest.h"
#include "backend/common/nest.h"

#include <string.h>

void lt__cpu_nest_init(lt__cpu_nest *nest, int rank, const int64_t *shape, int n_ops) {
  memset(nest, 0, sizeof *nest);
  nest->rank = rank;
  nest->n_ops = n_ops;
  if (rank > 0) memcpy(nest->shape, shape, sizeof(int64_t) * (size_t)rank);
}

int64_t lt__cpu_nest_count(const lt__cpu_nest *nest, int n_dims) {
  int64_t n = 1;
  for (int d = 0; d < n_dims; d++)
    n *= nest->shape[d];
  return n;
}

int64_t lt__cpu_nest_numel(const lt__cpu_nest *nest) {
  return lt__cpu_nest_count(nest, nest->rank);
}

void lt__cpu_nest_squeeze(lt__cpu_nest *nest) {
  nest->rank = lt__nest_squeeze(nest->rank, nest->shape, nest->n_ops, nest->strides);
}

void lt__cpu_nest_flip_negative(lt__cpu_nest *nest, int key) {
  for (int d = 0; d < nest->rank; d++) {
    if (nest->strides[key][d] >= 0) continue;
    for (int k = 0; k < nest->n_ops; k++) {
      nest->offset[k] += (nest->shape[d] - 1) * nest->strides[k][d];
      nest->strides[k][d] = -nest->strides[k][d];
    }
  }
}

void lt__cpu_nest_sort(lt__cpu_nest *nest, int key) {
  lt__cpu_nest_sort_outer(nest, key, nest->rank);
}

void lt__cpu_nest_sort_outer(lt__cpu_nest *nest, int key, int n_dims) {
  lt__nest_sort(n_dims, nest->shape, nest->n_ops, nest->strides, key);
}

void lt__cpu_nest_move(lt__cpu_nest *nest, int from, int to) {
  lt__nest_move(nest->shape, nest->n_ops, nest->strides, from, to);
}

void lt__cpu_nest_fuse(lt__cpu_nest *nest) {
  nest->rank = lt__nest_fuse(nest->rank, nest->shape, nest->n_ops, nest->strides);
}

void lt__cpu_odometer_seek(lt__cpu_odometer *it, const lt__cpu_nest *nest, int n_dims,
                           int64_t linear) {
  it->nest = nest;
  it->n_dims = n_dims;
  for (int k = 0; k < nest->n_ops; k++)
    it->off[k] = nest->offset[k];
  for (int d = n_dims - 1; d >= 0; d--) {
    int64_t i = linear % nest->shape[d];
    linear /= nest->shape[d];
    it->index[d] = i;
    for (int k = 0; k < nest->n_ops; k++)
      it->off[k] += i * nest->strides[k][d];
  }
}

void lt__cpu_odometer_next(lt__cpu_odometer *it) {
  const lt__cpu_nest *nest = it->nest;
  for (int d = it->n_dims - 1; d >= 0; d--) {
    if (++it->index[d] < nest->shape[d]) {
      for (int k = 0; k < nest->n_ops; k++)
        it->off[k] += nest->strides[k][d];
      return;
    }
    it->index[d] = 0;
    for (int k = 0; k < nest->n_ops; k++)
      it->off[k] -= (nest->shape[d] - 1) * nest->strides[k][d];
  }
}
