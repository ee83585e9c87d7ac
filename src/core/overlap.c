/* Memory-overlap analysis, so that no operation silently reads what it already overwrote. */
#include "core/object.h"

#include <stdlib.h>
#include <string.h>

static void byte_range(const lt_tensor *t, int64_t *lo, int64_t *hi) {
  int64_t l, h;
  lt__layout_extent(t->rank, t->shape, t->strides, &l, &h);
  int64_t es = (int64_t)lt_dtype_size(t->dtype);
  *lo = (t->offset + l) * es;
  *hi = (t->offset + h) * es + es - 1;
}

static bool same_layout(const lt_tensor *a, const lt_tensor *b) {
  if (a->dtype != b->dtype || a->offset != b->offset || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->strides[i] != b->strides[i]))
      return false;
  return true;
}

lt__overlap lt__tensor_overlap(const lt_tensor *a, const lt_tensor *b) {
  if (a->storage != b->storage || a->numel == 0 || b->numel == 0) return LT__OVERLAP_NONE;
  if (same_layout(a, b)) return LT__OVERLAP_SAME;
  int64_t alo, ahi, blo, bhi;
  byte_range(a, &alo, &ahi);
  byte_range(b, &blo, &bhi);
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
