/* SPDX-License-Identifier: MIT */
/* Mode labels: validation and alignment of a tensor's axes with another tensor's by label. */
#ifndef LT_OPS_MODES_H
#define LT_OPS_MODES_H

#include "core/object.h"

/* Checks that t is a tensor with `rank` labels (modes may be NULL only for rank 0) and that no
 * label repeats; `name` names the operand in messages ("A", "B", ...). */
lt_status lt__modes_check(const lt_tensor *t, const int32_t *modes, const char *name);
/* Axis of t carrying `mode`, or -1. */
int lt__modes_find(const int32_t *modes, int rank, int32_t mode);
/* Strides of t over the axes of `d` (matched by label): every mode of t must be a mode of d
 * with the same extent, or have extent 1 (then it is dropped); d's modes that t lacks or where
 * t has extent 1 get stride 0 (broadcast). */
lt_status lt__modes_align(const lt_tensor *t, const int32_t *modes, const char *name,
                          const lt_tensor *d, const int32_t *modes_d, const char *dname,
                          int64_t *strides);
/* True if t, read with `strides` aligned to d's axes, visits the same elements in the same
 * order as d (same dtype; strides equal wherever d's extent exceeds 1): safe in place. */
bool lt__aligned_like(const lt_tensor *t, const int64_t *strides, const lt_tensor *d);
/* Checks that every tensor lives on the context of the first. */
lt_status lt__same_context(const char *call, int n, const lt_tensor *const *ts,
                           const char *const *names);

#endif
