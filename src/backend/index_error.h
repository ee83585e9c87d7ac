/* SPDX-License-Identifier: MIT */
/* The message both backends give for an index out of range in a gather or scatter step. */
#ifndef LT_BACKEND_INDEX_ERROR_H
#define LT_BACKEND_INDEX_ERROR_H

#include "backend/backend.h"

/* Element offset (index->offset included) of C-order position `pos` of shape in `index`. */
int64_t lt__index_offset(int rank, const int64_t *shape, const lt__operand *index, int64_t pos);
/* LT_ERR_OUT_OF_RANGE: "index V at position (i, j, ...) is out of range for an axis of extent
 * E", the position being `pos` (C order) of the step's iteration space and V the index as
 * lt__load_bits reads it from an index of `dtype` (unsigned for LT_U64, else signed). */
lt_status lt__index_range_error(int rank, const int64_t *shape, int64_t pos, uint64_t bits,
                                lt_dtype dtype, int64_t extent);

#endif
