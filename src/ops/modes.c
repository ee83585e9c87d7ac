/* SPDX-License-Identifier: MIT */
/* Mode-label validation and alignment shared by every mode-based operation. */
#include "ops/modes.h"
#include "core/error.h"

#include <stdio.h>

lt_status lt__modes_check(const lt_tensor *t, const int32_t *modes, const char *name) {
  LT_RETURN_IF(t == NULL, LT_ERR_NULL_POINTER, "tensor %s is NULL", name);
  if (t->tag != LT__HANDLE_TENSOR) {
    char who[64];
    snprintf(who, sizeof who, "tensor %s", name);
    return lt__handle_check(t, LT__HANDLE_TENSOR, "", who);
  }
  LT_RETURN_IF(t->rank > 0 && modes == NULL, LT_ERR_NULL_POINTER,
               "modes of %s are NULL for a rank-%d tensor", name, t->rank);
  for (int i = 0; i < t->rank; i++)
    for (int j = 0; j < i; j++)
      LT_RETURN_IF(modes[i] == modes[j], LT_ERR_INVALID_ARGUMENT,
                   "mode %d appears twice in %s (axes %d and %d); repeated modes are not "
                   "allowed in this operation",
                   (int)modes[i], name, j, i);
  return LT_OK;
}

int lt__modes_find(const int32_t *modes, int rank, int32_t mode) {
  for (int i = 0; i < rank; i++)
    if (modes[i] == mode) return i;
  return -1;
}

lt_status lt__modes_align(const lt_tensor *t, const int32_t *modes, const char *name,
                          const lt_tensor *d, const int32_t *modes_d, const char *dname,
                          int64_t *strides) {
  for (int i = 0; i < t->rank; i++) {
    int at = lt__modes_find(modes_d, d->rank, modes[i]);
    LT_RETURN_IF(at < 0 && t->shape[i] != 1, LT_ERR_SHAPE_MISMATCH,
                 "mode %d of %s (axis %d, extent %lld) does not appear in %s", (int)modes[i], name,
                 i, (long long)t->shape[i], dname);
    LT_RETURN_IF(at >= 0 && t->shape[i] != 1 && t->shape[i] != d->shape[at], LT_ERR_SHAPE_MISMATCH,
                 "mode %d has extent %lld in %s but %lld in %s", (int)modes[i],
                 (long long)t->shape[i], name, (long long)d->shape[at], dname);
  }
  for (int k = 0; k < d->rank; k++) {
    int at = lt__modes_find(modes, t->rank, modes_d[k]);
    strides[k] = (at >= 0 && t->shape[at] != 1) ? t->strides[at] : 0;
  }
  return LT_OK;
}

bool lt__aligned_like(const lt_tensor *t, const int64_t *strides, const lt_tensor *d) {
  if (t->dtype != d->dtype) return false;
  for (int k = 0; k < d->rank; k++)
    if (d->shape[k] > 1 && strides[k] != d->strides[k]) return false;
  return true;
}

lt_status lt__same_context(const char *call, int n, const lt_tensor *const *ts,
                           const char *const *names) {
  for (int i = 1; i < n; i++)
    if (ts[i] && ts[i]->storage->ctx != ts[0]->storage->ctx)
      return lt__context_mismatch(call, names[i], ts[i]->storage->ctx, names[0],
                                  ts[0]->storage->ctx);
  return LT_OK;
}
