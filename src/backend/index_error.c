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

lt_status lt__index_range_error(int rank, const int64_t *shape, int64_t pos, uint64_t bits,
                                lt_dtype dtype, int64_t extent) {
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
  char value[32]; /* a u64 index past INT64_MAX is printed as the caller wrote it */
  if (dtype == LT_U64)
    snprintf(value, sizeof value, "%llu", (unsigned long long)bits);
  else
    snprintf(value, sizeof value, "%lld", (long long)(int64_t)bits);
  return lt__error(LT_ERR_OUT_OF_RANGE,
                   "index %s at position (%s) is out of range for an axis of extent %lld", value,
                   where, (long long)extent);
}
