/* SPDX-License-Identifier: MIT */
/* Loop-nest normalisation shared by the backends' host code: an iteration space of `rank`
 * dims with one stride table per operand (strides[k][d]: operand k, dim d, in elements) is
 * brought to the fewest, best-ordered dims before a kernel walks it. The CPU's nests
 * (cpu_nest.h) and the OpenCL map and reduce launchers all use these. */
#ifndef LT_BACKEND_COMMON_NEST_H
#define LT_BACKEND_COMMON_NEST_H

#include "tensor.h"

/* Drops extent-1 dims; returns the new rank. */
int lt__nest_squeeze(int rank, int64_t *shape, int n_ops, int64_t (*strides)[LT_MAX_RANK]);
/* Moves dim `from` to position `to`, shifting the dims between. */
void lt__nest_move(int64_t *shape, int n_ops, int64_t (*strides)[LT_MAX_RANK], int from, int to);
/* Sorts dims [0, n_dims) by decreasing |stride| of operand `key`, ties by the operands' strides
 * in order (stable), so that `key` is walked in memory order with its smallest stride
 * innermost; elementwise work has no order of its own. */
void lt__nest_sort(int n_dims, int64_t *shape, int n_ops, int64_t (*strides)[LT_MAX_RANK], int key);
/* Merges dim d into d+1 wherever every operand has stride[d] == stride[d+1] * shape[d+1];
 * returns the new rank. */
int lt__nest_fuse(int rank, int64_t *shape, int n_ops, int64_t (*strides)[LT_MAX_RANK]);

#endif
