/* SPDX-License-Identifier: MIT */
/* Memory-overlap analysis, so that no operation silently reads what it already overwrote. */
#include "core/object.h"

#include <stdlib.h>
#include <string.h>

/* Bytes [lo, hi] that t can touch, from `base` (its storage's address, or 0). */
static void byte_range(const lt_tensor *t, int64_t base, int64_t *lo, int64_t *hi) {
  int64_t l, h;
  lt__layout_extent(t->rank, t->shape, t->strides, &l, &h);
  int64_t es = (int64_t)lt_dtype_size(t->dtype);
  *lo = base + (t->offset + l) * es;
  *hi = base + (t->offset + h) * es + es - 1;
}

static bool same_layout(const lt_tensor *a, int64_t abase, const lt_tensor *b, int64_t bbase) {
  int64_t es = (int64_t)lt_dtype_size(a->dtype);
  if (a->dtype != b->dtype || abase + a->offset * es != bbase + b->offset * es ||
      a->rank != b->rank)
    return false;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->strides[i] != b->strides[i]))
      return false;
  return true;
}

/* Host memory: two storages there may wrap the same bytes (lt_tensor_wrap_host twice), so
 * their addresses are compared. Device buffers of different storages never share bytes. */
static bool host_memory(const lt__storage *s) { return s->ctx->backend->caps.host_memory; }

/* The storage addresses to compare a and b in one space (0, 0 within one storage); false when
 * they cannot share bytes. */
static bool common_space(const lt_tensor *a, const lt_tensor *b, int64_t *abase, int64_t *bbase) {
  *abase = *bbase = 0;
  if (a->storage == b->storage) return true;
  if (!host_memory(a->storage) || !host_memory(b->storage)) return false;
  *abase = (int64_t)(intptr_t)a->storage->mem;
  *bbase = (int64_t)(intptr_t)b->storage->mem;
  return true;
}

bool lt__tensor_same_start(const lt_tensor *a, const lt_tensor *b) {
  int64_t abase, bbase;
  return common_space(a, b, &abase, &bbase) &&
         abase + a->offset * (int64_t)lt_dtype_size(a->dtype) ==
             bbase + b->offset * (int64_t)lt_dtype_size(b->dtype);
}

lt__overlap lt__tensor_overlap(const lt_tensor *a, const lt_tensor *b) {
  if (a->numel == 0 || b->numel == 0) return LT__OVERLAP_NONE;
  int64_t abase, bbase;
  if (!common_space(a, b, &abase, &bbase)) return LT__OVERLAP_NONE;
  if (same_layout(a, abase, b, bbase)) return LT__OVERLAP_SAME;
  int64_t alo, ahi, blo, bhi;
  byte_range(a, abase, &alo, &ahi);
  byte_range(b, bbase, &blo, &bhi);
  if (ahi < blo || bhi < alo) return LT__OVERLAP_NONE;
  return LT__OVERLAP_PARTIAL;
}

static int compare_abs(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

bool lt__tensor_self_overlaps(const lt_tensor *t) {
  if (t->numel <= 1) return false;
  /* Sufficient condition for injectivity: sorted by |stride|, each stride exceeds the span of
   * all smaller ones. Layouts failing it are treated as overlapping (conservative). */
  int64_t dims[LT_MAX_RANK][2];
  int n = 0;
  for (int i = 0; i < t->rank; i++)
    if (t->shape[i] > 1) {
      dims[n][0] = t->shape[i];
      dims[n][1] = t->strides[i] < 0 ? -t->strides[i] : t->strides[i];
      n++;
    }
  qsort(dims, (size_t)n, sizeof dims[0], compare_abs);
  int64_t span = 0;
  for (int i = 0; i < n; i++) {
    if (dims[i][1] <= span) return true;
    span += (dims[i][0] - 1) * dims[i][1];
  }
  return false;
}
