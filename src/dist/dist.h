/* SPDX-License-Identifier: MIT */
/* libtensor_mpi internals: the distributed tensor, its layout algebra, and the collective
 * helpers every lt_dist_* call shares. This layer sees only the public API (include/), like
 * any program linking libtensor: it is a client of the library, never a part of it. */
#ifndef LT_DIST_INTERNAL_H
#define LT_DIST_INTERNAL_H

#include "tensor/dist.h"

#include <stdbool.h>

/* Who holds what. Rank p (q = p - base) has grid coordinate c_m = (q / pstride[m]) % grid[m]
 * and holds its block only if sum c_m * pstride[m] == q (0 <= q): a row-major grid over the
 * whole communicator has pstride the suffix products and base 0; a permuted tensor permutes
 * pstride with its modes; a grid over part of the ranks (SUMMA's operand held by one process
 * column, a tensor held whole by root) leaves the others with empty blocks. */
typedef struct lt__dist_layout {
  int rank;
  int base;
  int64_t shape[LT_MAX_RANK];
  int64_t block[LT_MAX_RANK];
  int grid[LT_MAX_RANK];
  int pstride[LT_MAX_RANK];
} lt__dist_layout;

struct lt_dist_tensor {
  MPI_Comm comm; /* the caller's: never freed here */
  int nproc, me;
  lt_context *ctx;
  lt_dtype dtype;
  lt__dist_layout lay;
  lt_tensor *local; /* this rank's block, C-contiguous */
};

/* Returns a failing status at once (the callee set the message). */
#define LT_TRY_DIST(call)                                                                          \
  do {                                                                                             \
    lt_status lt_try_dist_st = (call);                                                             \
    if (lt_try_dist_st != LT_OK) return lt_try_dist_st;                                            \
  } while (0)

/* Sets lt_last_error from a format and returns status. */
lt_status lt__dist_fail(lt_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* LT_OK if an MPI call succeeded, else LT_ERR_DEVICE naming the call and MPI's message. */
lt_status lt__dist_mpi(int rc, const char *call);
/* Shares every rank's status: the first failing rank's status and message reach all ranks
 * (the failing rank keeps its own). Call before any exchange that a failed rank would skip. */
lt_status lt__dist_agree(MPI_Comm comm, lt_status st);
/* The MPI datatype of an lt_dtype (bool as bytes); MPI_DATATYPE_NULL for f16/bf16. */
MPI_Datatype lt__dist_mpi_type(lt_dtype dtype);
/* Adds to the process's received-bytes counter (lt_dist_bytes_received). */
void lt__dist_count(uint64_t bytes);

/* Fills a row-major layout over nproc ranks from shape, grid and block (NULL: ceil); names
 * the first bad entry in `fn`'s message. */
lt_status lt__dist_layout_init(lt__dist_layout *lay, int rank, const int64_t *shape,
                               const int *grid, const int64_t *block, int nproc, const char *fn);
/* A layout where rank `root` holds the whole tensor and everyone else nothing. */
void lt__dist_layout_whole(lt__dist_layout *lay, int rank, const int64_t *shape, int root);
/* Rank p's block [lo, hi) per mode; false when p holds nothing (hi may then be undefined). */
bool lt__dist_box(const lt__dist_layout *lay, int p, int64_t *lo, int64_t *hi);
/* A distributed tensor with layout lay and a zeroed local block. */
lt_status lt__dist_new(MPI_Comm comm, lt_context *ctx, lt_dtype dtype, const lt__dist_layout *lay,
                       lt_dist_tensor **out);
/* Validates a distributed tensor argument. */
lt_status lt__dist_check(const lt_dist_tensor *t, const char *fn, const char *what);

/* Moves data between layouts of one global shape with one MPI_Alltoallv: dst_local (this rank's
 * block under dst) receives the elements src_local (its block under src) and the other ranks
 * hold. Collective; both locals C-contiguous of the layouts' block extents. */
lt_status lt__dist_move(MPI_Comm comm, lt_dtype dtype, const lt__dist_layout *src,
                        const lt_tensor *src_local, const lt__dist_layout *dst,
                        lt_tensor *dst_local);
/* View of t's elements [lo, hi) per axis (a new handle). */
lt_status lt__dist_box_view(const lt_tensor *t, const int64_t *lo, const int64_t *hi,
                            lt_tensor **out);

#endif
