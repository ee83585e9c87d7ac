/* SPDX-License-Identifier: MIT */
/* The distributed tensor object, its layouts, and the status agreement every collective call
 * runs before moving data (so a rank that failed never leaves the others blocked). */
#include "dist/dist.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t bytes_received;

uint64_t lt_dist_bytes_received(void) { return atomic_load(&bytes_received); }
void lt_dist_bytes_reset(void) { atomic_store(&bytes_received, 0); }
void lt__dist_count(uint64_t bytes) { atomic_fetch_add(&bytes_received, bytes); }

lt_status lt__dist_fail(lt_status status, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return lt_set_last_error(status, msg);
}

lt_status lt__dist_mpi(int rc, const char *call) {
  if (rc == MPI_SUCCESS) return LT_OK;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", rc);
  return lt__dist_fail(LT_ERR_DEVICE, "%s failed: %s", call, text);
}

lt_status lt__dist_agree(MPI_Comm comm, lt_status st) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  /* MINLOC over (status, rank): statuses are negative, so the lowest one of the lowest rank */
  int pair[2] = {(int)st, me}, low[2] = {0, 0};
  lt_status rc = lt__dist_mpi(MPI_Allreduce(pair, low, 1, MPI_2INT, MPI_MINLOC, comm),
                              "lt_dist: MPI_Allreduce of the ranks' statuses");
  if (rc != LT_OK) return rc;
  if (low[0] == LT_OK) return LT_OK;
  char msg[256] = {0};
  if (me == low[1]) snprintf(msg, sizeof msg, "%s", lt_last_error());
  rc = lt__dist_mpi(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, low[1], comm),
                    "lt_dist: MPI_Bcast of a failure");
  if (rc != LT_OK) return rc;
  if (st != LT_OK) return st;
  msg[sizeof msg - 1] = '\0';
  return lt__dist_fail((lt_status)low[0], "rank %d failed: %s", low[1], msg);
}

MPI_Datatype lt__dist_mpi_type(lt_dtype dtype) {
  switch (dtype) {
  case LT_F32: return MPI_FLOAT;
  case LT_F64: return MPI_DOUBLE;
  case LT_I8: return MPI_INT8_T;
  case LT_I16: return MPI_INT16_T;
  case LT_I32: return MPI_INT32_T;
  case LT_I64: return MPI_INT64_T;
  case LT_U8: return MPI_UINT8_T;
  case LT_U16: return MPI_UINT16_T;
  case LT_U32: return MPI_UINT32_T;
  case LT_U64: return MPI_UINT64_T;
  case LT_BOOL: return MPI_UINT8_T; /* one byte holding 0 or 1 */
  default: return MPI_DATATYPE_NULL;
  }
}

lt_status lt__dist_layout_init(lt__dist_layout *lay, int rank, const int64_t *shape,
                               const int *grid, const int64_t *block, int nproc, const char *fn) {
  memset(lay, 0, sizeof *lay);
  if (rank < 0 || rank > LT_MAX_RANK)
    return lt__dist_fail(LT_ERR_INVALID_ARGUMENT, "%s: rank %d is outside [0, %d]", fn, rank,
                         LT_MAX_RANK);
  if (rank > 0 && (shape == NULL || grid == NULL))
    return lt__dist_fail(LT_ERR_NULL_POINTER, "%s: %s is NULL", fn, shape ? "grid" : "shape");
  lay->rank = rank;
  int64_t procs = 1;
  for (int m = 0; m < rank; m++) {
    if (shape[m] < 0)
      return lt__dist_fail(LT_ERR_INVALID_ARGUMENT, "%s: mode %d has extent %lld", fn, m,
                           (long long)shape[m]);
    if (grid[m] < 1 || grid[m] > nproc)
      return lt__dist_fail(LT_ERR_INVALID_ARGUMENT,
                           "%s: grid[%d] = %d is outside [1, %d] (the communicator's size)", fn, m,
                           grid[m], nproc);
    procs *= grid[m];
    int64_t b = block ? block[m] : (shape[m] + grid[m] - 1) / grid[m];
    if (b < 1) b = block ? b : 1;
    if (b < 1 || (b < shape[m] && (shape[m] - 1) / b + 1 > grid[m]))
      return lt__dist_fail(LT_ERR_INVALID_ARGUMENT,
                           "%s: mode %d: %d blocks of %lld do not cover extent %lld", fn, m,
                           grid[m], (long long)b, (long long)shape[m]);
    /* a block past the extent holds the same as one of the extent (and keeps c * block and
     * block + start within int64 for any block the caller gives) */
    if (b > shape[m]) b = shape[m] > 0 ? shape[m] : 1;
    lay->shape[m] = shape[m];
    lay->grid[m] = grid[m];
    lay->block[m] = b;
  }
  if (procs != nproc)
    return lt__dist_fail(LT_ERR_INVALID_ARGUMENT,
                         "%s: the grid has %lld processes but the communicator %d", fn,
                         (long long)procs, nproc);
  int stride = 1;
  for (int m = rank - 1; m >= 0; m--) {
    lay->pstride[m] = stride;
    stride *= lay->grid[m];
  }
  return LT_OK;
}

void lt__dist_layout_whole(lt__dist_layout *lay, int rank, const int64_t *shape, int root) {
  memset(lay, 0, sizeof *lay);
  lay->rank = rank;
  lay->base = root;
  for (int m = 0; m < rank; m++) {
    lay->shape[m] = shape[m];
    lay->block[m] = shape[m] > 0 ? shape[m] : 1;
    lay->grid[m] = 1;
    lay->pstride[m] = 1;
  }
}

bool lt__dist_box(const lt__dist_layout *lay, int p, int64_t *lo, int64_t *hi) {
  int q = p - lay->base;
  if (q < 0) return false;
  int64_t back = 0;
  bool nonempty = true;
  for (int m = 0; m < lay->rank; m++) {
    int c = (q / lay->pstride[m]) % lay->grid[m];
    back += (int64_t)c * lay->pstride[m];
    int64_t a = (int64_t)c * lay->block[m], b = a + lay->block[m];
    if (a > lay->shape[m]) a = lay->shape[m];
    if (b > lay->shape[m]) b = lay->shape[m];
    lo[m] = a;
    hi[m] = b;
    if (a == b) nonempty = false;
  }
  /* a rank outside the grid holds nothing; an empty block is still this rank's (extent 0) */
  if (back != q) {
    for (int m = 0; m < lay->rank; m++)
      lo[m] = hi[m] = 0;
    return false;
  }
  return nonempty;
}

lt_status lt__dist_check(const lt_dist_tensor *t, const char *fn, const char *what) {
  if (t == NULL) return lt__dist_fail(LT_ERR_NULL_POINTER, "%s: %s is NULL", fn, what);
  return LT_OK;
}

lt_status lt__dist_new(MPI_Comm comm, lt_context *ctx, lt_dtype dtype, const lt__dist_layout *lay,
                       lt_dist_tensor **out) {
  *out = NULL;
  lt_dist_tensor *t = calloc(1, sizeof *t);
  if (t == NULL) return lt__dist_fail(LT_ERR_OUT_OF_MEMORY, "lt_dist: out of memory");
  t->comm = comm;
  MPI_Comm_size(comm, &t->nproc);
  MPI_Comm_rank(comm, &t->me);
  t->ctx = ctx;
  t->dtype = dtype;
  t->lay = *lay;
  int64_t lo[LT_MAX_RANK], hi[LT_MAX_RANK], ext[LT_MAX_RANK];
  lt__dist_box(lay, t->me, lo, hi);
  for (int m = 0; m < lay->rank; m++)
    ext[m] = hi[m] - lo[m];
  lt_status st = lt_tensor_zeros(ctx, dtype, lay->rank, ext, &t->local);
  if (st != LT_OK) {
    free(t);
    return st;
  }
  *out = t;
  return LT_OK;
}

lt_status lt_dist_tensor_create(MPI_Comm comm, lt_context *ctx, lt_dtype dtype, int rank,
                                const int64_t *shape, const int *grid, const int64_t *block,
                                lt_dist_tensor **out) {
  static const char fn[] = "lt_dist_tensor_create";
  lt_status st = LT_OK;
  lt_dist_tensor *t = NULL;
  int nproc = 0;
  if (out == NULL)
    st = lt__dist_fail(LT_ERR_NULL_POINTER, "%s: out is NULL", fn);
  else if (ctx == NULL)
    st = lt__dist_fail(LT_ERR_NULL_POINTER, "%s: ctx is NULL", fn);
  else if (lt_dtype_size(dtype) == 0)
    st = lt__dist_fail(LT_ERR_DTYPE, "%s: invalid dtype %d", fn, (int)dtype);
  if (st == LT_OK) st = lt__dist_mpi(MPI_Comm_size(comm, &nproc), "MPI_Comm_size");
  lt__dist_layout lay;
  if (st == LT_OK) st = lt__dist_layout_init(&lay, rank, shape, grid, block, nproc, fn);
  if (st == LT_OK) st = lt__dist_new(comm, ctx, dtype, &lay, &t);
  st = lt__dist_agree(comm, st);
  if (st != LT_OK) {
    lt_dist_tensor_destroy(t);
    if (out) *out = NULL;
    return st;
  }
  *out = t;
  return LT_OK;
}

void lt_dist_tensor_destroy(lt_dist_tensor *t) {
  if (t == NULL) return;
  lt_tensor_destroy(t->local);
  free(t);
}

lt_tensor *lt_dist_tensor_local(const lt_dist_tensor *t) { return t ? t->local : NULL; }

lt_status lt_dist_tensor_info(const lt_dist_tensor *t, int *rank, int64_t *shape, int *grid,
                              int64_t *block) {
  if (t == NULL) return lt__dist_fail(LT_ERR_NULL_POINTER, "lt_dist_tensor_info: t is NULL");
  if (rank) *rank = t->lay.rank;
  for (int m = 0; m < t->lay.rank; m++) {
    if (shape) shape[m] = t->lay.shape[m];
    if (grid) grid[m] = t->lay.grid[m];
    if (block) block[m] = t->lay.block[m];
  }
  return LT_OK;
}

lt_status lt_dist_tensor_local_range(const lt_dist_tensor *t, int64_t *start, int64_t *stop) {
  if (t == NULL) return lt__dist_fail(LT_ERR_NULL_POINTER, "lt_dist_tensor_local_range: t is NULL");
  if (t->lay.rank > 0 && (start == NULL || stop == NULL))
    return lt__dist_fail(LT_ERR_NULL_POINTER, "lt_dist_tensor_local_range: %s is NULL",
                         start ? "stop" : "start");
  lt__dist_box(&t->lay, t->me, start, stop);
  return LT_OK;
}
