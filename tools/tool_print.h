/* SPDX-License-Identifier: MIT */
/* NumPy-like printing of tensors for the `tensor` tool's verbs. */
#ifndef LT_TOOL_PRINT_H
#define LT_TOOL_PRINT_H

#include "tensor.h"

#include <stdio.h>

/* Prints `t` (any device, layout and dtype) the way print(numpy_array) does: nested brackets,
 * one common element width, rows wrapped at 75 columns, and "..." summarising every axis longer
 * than 6 when the tensor has more than 1000 elements. */
lt_status tool_print_tensor(FILE *f, const lt_tensor *t);

#endif
