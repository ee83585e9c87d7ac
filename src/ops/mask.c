/* SPDX-License-Identifier: MIT */
/* Boolean-mask selection (a[mask]) and np.argwhere. The result's size depends on the data, so
 * the mask is read on the host (as NumPy and PyTorch synchronise too); the selection itself is
 * a gather along the flattened masked axes, on the tensor's device. A mask element counts as
 * true when it is nonzero (NaN is true, -0.0 false, as NumPy's bool()). */
#include "core/dtype.h"
#include "core/error.h"
#include "core/object.h"

#include <stdio.h>
#include <string.h>

/* The mask's elements on the host, C order, in its own dtype (caller frees with host_free). */
static lt_status read_host(const char *call, const lt_tensor *m, void **buf, size_t *bytes) {
  lt_context *ctx = m->storage->ctx;
  *bytes = (size_t)m->numel * lt_dtype_size(m->dtype);
  *buf = lt__host_alloc(ctx, *bytes ? *bytes : 1);
  LT_RETURN_IF(*buf == NULL, LT_ERR_OUT_OF_MEMORY, "%s: out of memory reading the mask", call);
  lt_tensor *c = NULL;
  lt_status st = lt_tensor_contiguous(m, LT_DTYPE_INVALID, &c);
  if (st == LT_OK) st = lt_tensor_to_host(c, *buf, *bytes);
  lt_tensor_destroy(c);
  if (st != LT_OK) {
    lt__host_free(ctx, *buf, *bytes ? *bytes : 1);
    lt__error_prefix(call);
  }
  return st;
}

/* Positions (C-order linear) of the true elements of a host buffer: count, and the positions
 * in a new host block of max(count, 1) int64 (caller frees). */
static lt_status true_positions(const char *call, lt_context *ctx, const void *buf, lt_dtype dtype,
                                int64_t n, int64_t **pos, int64_t *count) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++)
    c += lt__load_f64(buf, dtype, i) != 0.0;
  *pos = lt__host_calloc(ctx, (size_t)(c ? c : 1), sizeof(int64_t));
  LT_RETURN_IF(*pos == NULL, LT_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld positions", call,
               (long long)c);
  for (int64_t i = 0, j = 0; i < n; i++)
    if (lt__load_f64(buf, dtype, i) != 0.0) (*pos)[j++] = i;
  *count = c;
  return LT_OK;
}

/* The C-order positions of t's nonzero elements, read on the host (freed by the caller with
 * lt__host_free, max(count, 1) longs). */
static lt_status nonzero_positions(const char *call, const lt_tensor *t, int64_t **pos,
                                   int64_t *count) {
  lt_context *ctx = t->storage->ctx;
  void *buf = NULL;
  size_t bytes = 0;
  LT_TRY(read_host(call, t, &buf, &bytes));
  lt_status st = true_positions(call, ctx, buf, t->dtype, t->numel, pos, count);
  lt__host_free(ctx, buf, bytes ? bytes : 1);
  return st;
}

lt_status lt_mask_select(const lt_tensor *a, const lt_tensor *mask, lt_tensor **out) {
  const char *call = "lt_mask_select";
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_mask_select: a"));
  LT_TRY(lt__check_tensor(mask, "lt_mask_select: mask"));
  if (mask->storage->ctx != a->storage->ctx)
    return lt__context_mismatch(call, "mask", mask->storage->ctx, "a", a->storage->ctx);
  LT_RETURN_IF(mask->rank > a->rank, LT_ERR_SHAPE_MISMATCH,
               "%s: mask has rank %d but a has only %d axes", call, mask->rank, a->rank);
  for (int k = 0; k < mask->rank; k++)
    LT_RETURN_IF(mask->shape[k] != a->shape[k], LT_ERR_SHAPE_MISMATCH,
                 "%s: mask has extent %lld on axis %d but a has %lld", call,
                 (long long)mask->shape[k], k, (long long)a->shape[k]);
  lt_context *ctx = a->storage->ctx;
  int64_t *pos = NULL, count = 0;
  LT_TRY(nonzero_positions(call, mask, &pos, &count));
  lt_tensor *index = NULL, *flat = NULL;
  lt_status st = lt_tensor_from_host(ctx, LT_I64, 1, &count, NULL, pos, &index);
  lt__host_free(ctx, pos, (size_t)(count ? count : 1) * sizeof(int64_t));
  int rank = 1 + a->rank - mask->rank;
  int64_t shape[LT_MAX_RANK];
  shape[0] = mask->numel;
  for (int k = mask->rank; k < a->rank; k++)
    shape[1 + k - mask->rank] = a->shape[k];
  if (st == LT_OK) st = lt_tensor_reshape(a, rank, shape, &flat);
  if (st == LT_OK) st = lt_take(flat, index, 0, out);
  lt_tensor_destroy(flat);
  lt_tensor_destroy(index);
  if (st != LT_OK) lt__error_prefix(call);
  return st;
}

lt_status lt_argwhere(const lt_tensor *a, lt_tensor **out) {
  const char *call = "lt_argwhere";
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_argwhere: a"));
  lt_context *ctx = a->storage->ctx;
  int64_t *pos = NULL, count = 0;
  LT_TRY(nonzero_positions(call, a, &pos, &count));
  int64_t shape[2] = {count, a->rank};
  int64_t cells = count * a->rank;
  size_t nbytes = (size_t)(cells > 0 ? cells : 1) * sizeof(int64_t);
  int64_t *coords = lt__host_alloc(ctx, nbytes);
  if (coords == NULL) {
    lt__host_free(ctx, pos, (size_t)(count ? count : 1) * sizeof(int64_t));
    return lt__error(LT_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
  }
  for (int64_t j = 0; j < count; j++) {
    int64_t p = pos[j];
    for (int k = a->rank - 1; k >= 0; k--) {
      coords[j * a->rank + k] = p % a->shape[k];
      p /= a->shape[k];
    }
  }
  lt__host_free(ctx, pos, (size_t)(count ? count : 1) * sizeof(int64_t));
  lt_status st = lt_tensor_from_host(ctx, LT_I64, 2, shape, NULL, coords, out);
  lt__host_free(ctx, coords, nbytes);
  return st;
}
