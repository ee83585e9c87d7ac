/* SPDX-License-Identifier: MIT */
/* Exact comparisons of u64 with signed integers (compare_mixed.c). */
#ifndef LT_OPS_COMPARE_MIXED_H
#define LT_OPS_COMPARE_MIXED_H

#include "tensor.h"

#include <stdbool.h>

/* True for a comparison (EQ .. GE) of u64 with a signed integer dtype, in either order. */
bool lt__compare_is_mixed_sign(lt_binary_op op, lt_dtype a, lt_dtype b);
/* lt_binary(op, a, b) for such a pair, exactly (the f64 compute rounds past 2^53). The
 * operands are checked and broadcast by the caller. */
lt_status lt__compare_mixed_sign(lt_binary_op op, const lt_tensor *a, const lt_tensor *b,
                                 lt_tensor **out);

#endif
