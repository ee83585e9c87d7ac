/* SPDX-License-Identifier: MIT */
/* Distributed reductions: each rank reduces its block over the chosen axes (lt_reduce), writes
 * the result into its place of a buffer of the whole result filled with the operation's
 * identity, and one MPI_Allreduce with the same operation combines the ranks (blocks that
 * differ only along reduced axes meet in the same place). */
#include "dist/dist.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* MPI_MIN / MPI_MAX may drop a NaN (which operand wins is the implementation's): these
 * propagate it, as lt_reduce does on one rank. */
#define LT_DIST_NAN_EXTREME(name, type, pick)                                                      \
  static void name(void *in, void *inout, int *len, MPI_Datatype *dt) {                            \
    (void)dt;                                                                                      \
    const type *a = in;                                                                            \
    type *b = inout;                                                                               \
    for (int i = 0; i < *len; i++)                                                                 \
      if (!isnan(b[i])) b[i] = isnan(a[i]) || a[i] pick b[i] ? a[i] : b[i];                        \
  }
LT_DIST_NAN_EXTREME(nan_min_f32, float, <)
LT_DIST_NAN_EXTREME(nan_min_f64, double, <)
LT_DIST_NAN_EXTREME(nan_max_f32, float, >)
LT_DIST_NAN_EXTREME(nan_max_f64, double, >)

static MPI_User_function *nan_extreme(lt_reduce_op op, lt_dtype d) {
  if (op == LT_REDUCE_MIN) return d == LT_F32 ? nan_min_f32 : nan_min_f64;
  return d == LT_F32 ? nan_max_f32 : nan_max_f64;
}

lt_status lt_dist_reduce(const lt_dist_tensor *t, lt_reduce_op op, int n_axes, const int *axes,
                         lt_tensor **out) {
  static const char fn[] = "lt_dist_reduce";
  LT_TRY_DIST(lt__dist_check(t, fn, "t"));
  int rank = t->lay.rank;
  lt_status st = out ? LT_OK : lt__dist_fail(LT_ERR_NULL_POINTER, "%s: out is NULL", fn);
  if (out) *out = NULL;
  MPI_Op mop = MPI_OP_NULL;
  double identity = 0;
  switch (op) {
  case LT_REDUCE_SUM: mop = MPI_SUM, identity = 0; break;
  case LT_REDUCE_PROD: mop = MPI_PROD, identity = 1; break;
  case LT_REDUCE_MIN: mop = MPI_MIN, identity = INFINITY; break;
  case LT_REDUCE_MAX: mop = MPI_MAX, identity = -INFINITY; break;
  default:
    if (st == LT_OK)
      st = lt__dist_fail(LT_ERR_UNSUPPORTED, "%s: reduction %d is not SUM, PROD, MIN or MAX", fn,
                         (int)op);
  }
  bool reduced[LT_MAX_RANK] = {false};
  if (st == LT_OK && n_axes > 0 && axes == NULL)
    st = lt__dist_fail(LT_ERR_NULL_POINTER, "%s: axes is NULL", fn);
  if (st == LT_OK && (n_axes < -1 || n_axes > rank))
    st = lt__dist_fail(LT_ERR_INVALID_ARGUMENT, "%s: %d axes for rank %d", fn, n_axes, rank);
  for (int i = 0; st == LT_OK && i < (n_axes < 0 ? rank : n_axes); i++) {
    int a = n_axes < 0 ? i : axes[i];
    if (a < 0) a += rank;
    if (a < 0 || a >= rank || reduced[a])
      st = lt__dist_fail(LT_ERR_INVALID_ARGUMENT, "%s: axis %d is out of range or repeated", fn,
                         n_axes < 0 ? i : axes[i]);
    else
      reduced[a] = true;
  }
  int list[LT_MAX_RANK], n = 0;
  for (int m = 0; m < rank; m++)
    if (reduced[m]) list[n++] = m;
  /* the local part, kept dims so its place in the whole result is the block's */
  lt_tensor *part = NULL, *whole = NULL, *view = NULL;
  if (st == LT_OK) st = lt_reduce(op, t->local, n, list, true, &part);
  lt_dtype rd = part ? lt_tensor_dtype(part) : LT_F64;
  MPI_Datatype mt = lt__dist_mpi_type(rd);
  if (st == LT_OK && mt == MPI_DATATYPE_NULL)
    st = lt__dist_fail(LT_ERR_DTYPE, "%s: no MPI datatype for %s", fn, lt_dtype_name(rd));
  if (st == LT_OK && (rd != LT_F32 && rd != LT_F64) && (op == LT_REDUCE_MIN || op == LT_REDUCE_MAX))
    st = lt__dist_fail(LT_ERR_UNSUPPORTED, "%s: MIN/MAX across ranks of %s (float dtypes only)", fn,
                       lt_dtype_name(rd));
  int64_t shape[LT_MAX_RANK], lo[LT_MAX_RANK], hi[LT_MAX_RANK];
  /* Only a rank that holds elements contributes: a rank-0 tensor's other ranks have a local
   * tensor of one element that is not theirs (they gave 0 to PROD and MIN). */
  bool empty = !lt__dist_box(&t->lay, t->me, lo, hi);
  int64_t count = 1;
  for (int m = 0; m < rank; m++) {
    shape[m] = reduced[m] ? 1 : t->lay.shape[m];
    count *= shape[m];
    if (reduced[m]) lo[m] = 0, hi[m] = 1;
  }
  if (st == LT_OK) st = lt_tensor_full(t->ctx, rd, rank, shape, identity, &whole);
  if (st == LT_OK && !empty) st = lt__dist_box_view(whole, lo, hi, &view);
  if (st == LT_OK && !empty) st = lt_tensor_copy_into(view, part);
  size_t bytes = (size_t)count * lt_dtype_size(rd);
  void *buf = NULL;
  if (st == LT_OK && (buf = malloc(bytes + 1)) == NULL)
    st = lt__dist_fail(LT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  if (st == LT_OK) st = lt_tensor_to_host(whole, buf, bytes);
  st = lt__dist_agree(t->comm, st);
  bool own_op = st == LT_OK && (op == LT_REDUCE_MIN || op == LT_REDUCE_MAX);
  if (own_op) st = lt__dist_mpi(MPI_Op_create(nan_extreme(op, rd), 1, &mop), "MPI_Op_create");
  if (st == LT_OK && count > INT_MAX)
    st = lt__dist_fail(LT_ERR_UNSUPPORTED, "%s: a result of %lld elements is past MPI's count", fn,
                       (long long)count);
  if (st == LT_OK)
    st = lt__dist_mpi(MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, mt, mop, t->comm),
                      "lt_dist_reduce: MPI_Allreduce");
  if (own_op && mop != MPI_OP_NULL) MPI_Op_free(&mop);
  if (st == LT_OK) {
    int nproc = 1;
    MPI_Comm_size(t->comm, &nproc);
    if (nproc > 1) lt__dist_count((uint64_t)bytes); /* about the result's size; alone, nothing */
    int64_t kept[LT_MAX_RANK];
    int nk = 0;
    for (int m = 0; m < rank; m++)
      if (!reduced[m]) kept[nk++] = shape[m];
    st = lt_tensor_from_host(t->ctx, rd, nk, kept, NULL, buf, out);
  }
  free(buf);
  lt_tensor_destroy(view);
  lt_tensor_destroy(whole);
  lt_tensor_destroy(part);
  return st;
}
