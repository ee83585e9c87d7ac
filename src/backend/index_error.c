/* SPDX-License-Identifier: MIT */
/* Range errors of the index steps, shared by the backends (backend/index_error.h). */
#include "backend/index_error.h"

#include "core/error.h"

#include <stdio.h>

int64_t lt__index_offset(int rank, const int64_t *shape, const lt__operand *index, int64_t pos) {
  int64_t off = index->offset;
  for (int d = rank - 1; d >= 0; d--) {
    off += (pos % shape[d]) * index->strides[d];
    pos /= shape[d];
  }
  return off;
}

lt_status lt__index_range_error(int rank, const int64_t *shape, int64_t pos, int64_t value,
                                int64_t extent) {
  char where[256] = "";
  int64_t idx[LT_MAX_RANK];
  for (int d = rank - 1; d >= 0; d--) {
    idx[d] = pos % shape[d];
    pos /= shape[d];
  }
  size_t len = 0;
  for (int d = 0; d < rank && len + 24 < sizeof where; d++)
    len += (size_t)snprintf(where + len, sizeof where - len, "%s%lld", d ? ", " : "",
                            (long long)idx[d]);
  return lt__error(LT_ERR_OUT_OF_RANGE,
                   "index %lld at position (%s) is out of range for an axis of extent %lld",
                   (long long)value, where, (long long)extent);
}
