/* SPDX-License-Identifier: MIT */
/* Loop nests: the iteration space of a step with one stride per operand, normalised before a
 * kernel runs (size-1 dims dropped, dims sorted by one operand's strides, contiguous dims
 * fused), plus an odometer over the outer dims. */
#ifndef LT_BACKEND_CPU_NEST_H
#define LT_BACKEND_CPU_NEST_H

#include "tensor.h"

#define LT__NEST_OPS 5

typedef struct lt__cpu_nest {
  int rank, n_ops;
  int64_t shape[LT_MAX_RANK];
  int64_t strides[LT__NEST_OPS][LT_MAX_RANK];
  int64_t offset[LT__NEST_OPS];
} lt__cpu_nest;

/* Starts a nest of `rank` dims; strides of each operand are set by the caller afterwards. */
void lt__cpu_nest_init(lt__cpu_nest *nest, int rank, const int64_t *shape, int n_ops);
/* Number of elements (0 if any extent is 0). */
int64_t lt__cpu_nest_numel(const lt__cpu_nest *nest);
/* Drops extent-1 dims. */
void lt__cpu_nest_squeeze(lt__cpu_nest *nest);
/* Reverses dims where operand `key` has a negative stride (offsets adjusted for every operand),
 * so that its walk goes forward through memory. */
void lt__cpu_nest_flip_negative(lt__cpu_nest *nest, int key);
/* Sorts dims by decreasing |stride| of operand `key` (ties: the other operands' strides),
 * so that `key` is walked in memory order with its smallest stride innermost. */
void lt__cpu_nest_sort(lt__cpu_nest *nest, int key);
/* The same for dims [0, n_dims) only, the others staying where they are. */
void lt__cpu_nest_sort_outer(lt__cpu_nest *nest, int key, int n_dims);
/* Merges dim d into d+1 wherever every operand has stride[d] == stride[d+1] * shape[d+1]. */
void lt__cpu_nest_fuse(lt__cpu_nest *nest);
/* Moves dim `from` to position `to`, shifting the dims between. */
void lt__cpu_nest_move(lt__cpu_nest *nest, int from, int to);

/* Odometer over dims [0, n_dims) of a nest: off[k] is operand k's offset at the current
 * index. */
typedef struct lt__cpu_odometer {
  const lt__cpu_nest *nest;
  int n_dims;
  int64_t index[LT_MAX_RANK];
  int64_t off[LT__NEST_OPS];
} lt__cpu_odometer;

/* Positions the odometer at linear index `linear` (C order over the first n_dims dims). */
void lt__cpu_odometer_seek(lt__cpu_odometer *it, const lt__cpu_nest *nest, int n_dims,
                           int64_t linear);
/* Advances by one (wraps to the start after the last index). */
void lt__cpu_odometer_next(lt__cpu_odometer *it);
/* Product of the extents of dims [0, n_dims). */
int64_t lt__cpu_nest_count(const lt__cpu_nest *nest, int n_dims);

#endif
