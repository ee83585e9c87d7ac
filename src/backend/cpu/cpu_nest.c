/* Loop-nest normalisation shared by the map and reduce kernels (see cpu_nest.h). */
#include "backend/cpu/cpu_nest.h"

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

static void copy_dim(lt__cpu_nest *nest, int to, int from) {
  nest->shape[to] = nest->shape[from];
  for (int k = 0; k < nest->n_ops; k++)
    nest->strides[k][to] = nest->strides[k][from];
}

void lt__cpu_nest_squeeze(lt__cpu_nest *nest) {
  int r = 0;
  for (int d = 0; d < nest->rank; d++)
    if (nest->shape[d] != 1) copy_dim(nest, r++, d);
  nest->rank = r;
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

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

/* True if dim a should come after (be more inner than) dim b. */
static bool more_inner(const lt__cpu_nest *nest, int key, int a, int b) {
  int64_t sa = abs64(nest->strides[key][a]), sb = abs64(nest->strides[key][b]);
  if (sa != sb) return sa < sb;
  for (int k = 0; k < nest->n_ops; k++) {
    sa = abs64(nest->strides[k][a]);
    sb = abs64(nest->strides[k][b]);
    if (sa != sb) return sa < sb;
  }
  return false;
}

void lt__cpu_nest_sort(lt__cpu_nest *nest, int key) {
  lt__cpu_nest_sort_outer(nest, key, nest->rank);
}

void lt__cpu_nest_sort_outer(lt__cpu_nest *nest, int key, int n_dims) {
  /* Insertion sort: ranks are small and the order is stable. */
  for (int i = 1; i < n_dims; i++)
    for (int j = i; j > 0 && more_inner(nest, key, j - 1, j); j--) {
      lt__cpu_nest_move(nest, j, j - 1);
    }
}

void lt__cpu_nest_move(lt__cpu_nest *nest, int from, int to) {
  int64_t shape = nest->shape[from], strides[LT__NEST_OPS];
  for (int k = 0; k < nest->n_ops; k++)
    strides[k] = nest->strides[k][from];
  if (from < to)
    for (int d = from; d < to; d++)
      copy_dim(nest, d, d + 1);
  else
    for (int d = from; d > to; d--)
      copy_dim(nest, d, d - 1);
  nest->shape[to] = shape;
  for (int k = 0; k < nest->n_ops; k++)
    nest->strides[k][to] = strides[k];
}

void lt__cpu_nest_fuse(lt__cpu_nest *nest) {
  if (nest->rank == 0) return;
  int r = 0; /* dims [0, r] are the fused result so far */
  for (int d = 1; d < nest->rank; d++) {
    bool fusable = true;
    for (int k = 0; k < nest->n_ops && fusable; k++)
      fusable = nest->strides[k][r] == nest->strides[k][d] * nest->shape[d];
    if (fusable) {
      nest->shape[r] *= nest->shape[d];
      for (int k = 0; k < nest->n_ops; k++)
        nest->strides[k][r] = nest->strides[k][d];
    } else {
      copy_dim(nest, ++r, d);
    }
  }
  nest->rank = r + 1;
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
