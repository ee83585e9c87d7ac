/* SPDX-License-Identifier: MIT */
/* libtensor_mpi: tensors and einsum over MPI (issue 24). A separate library, libtensor_mpi.so
 * (built when LT_WITH_MPI finds MPI; link -ltensor_mpi -ltensor and MPI), so that libtensor.so
 * never depends on MPI and its ABI does not change with the build option. Not included by
 * tensor.h: include this header (it includes <mpi.h>) where MPI is used.
 *
 * Every lt_dist_* call taking a communicator or a distributed tensor is collective: all ranks
 * of the communicator call it, in the same order, with the same arguments except where a
 * parameter says "at root". A failure on any rank (bad input, out of memory) is shared before
 * data moves, so every rank returns an error status (the failing rank its own, the others the
 * same status with the message "rank R failed: <its message>") instead of waiting forever.
 * Arguments that differ between ranks where they must agree (a NULL tensor on one rank only,
 * different shapes) are outside this promise. A rank that dies is MPI's business: OpenMPI's
 * mpirun then ends the whole job with an error ("exited with non-zero status"); with the
 * default error handler (MPI_ERRORS_ARE_FATAL) a failed MPI call aborts the job too, and under
 * MPI_ERRORS_RETURN it becomes LT_ERR_DEVICE with MPI's message. */
#ifndef LT_TENSOR_DIST_H
#define LT_TENSOR_DIST_H

#include <mpi.h>

#include "../tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor in blocks over the ranks of a communicator: mode m of global extent shape[m] is cut
 * into grid[m] blocks of block[m] elements (the last one shorter or empty), and the rank at
 * grid coordinates (c_0, ..., c_{r-1}) (row-major: rank = sum c_m * prod_{m' > m} grid[m'])
 * holds the block [c_m * block[m], min((c_m + 1) * block[m], shape[m])) of every mode as an
 * lt_tensor of its own (C-contiguous, on its context). */
typedef struct lt_dist_tensor lt_dist_tensor;

/* Creates a zero-filled distributed tensor (collective). grid: processes per mode, their
 * product the communicator's size; block: block extent per mode, NULL for ceil(shape / grid)
 * (each >= 1 and block * grid >= shape). ctx: this rank's context. LT_ERR_INVALID_ARGUMENT for a
 * grid or block that does not fit, LT_ERR_NULL_POINTER for a missing pointer. */
LT_API lt_status lt_dist_tensor_create(MPI_Comm comm, lt_context *ctx, lt_dtype dtype, int rank,
                                       const int64_t *shape, const int *grid, const int64_t *block,
                                       lt_dist_tensor **out);
/* Destroys a distributed tensor (local, not collective). NULL ok. */
LT_API void lt_dist_tensor_destroy(lt_dist_tensor *t);
/* This rank's block (owned by t: valid until t is destroyed; write into it freely). NULL for a
 * NULL t. */
LT_API lt_tensor *lt_dist_tensor_local(const lt_dist_tensor *t);
/* Global description of t (any output may be NULL): rank, and per mode shape, grid and block
 * (arrays of rank entries). LT_ERR_NULL_POINTER for a NULL t. */
LT_API lt_status lt_dist_tensor_info(const lt_dist_tensor *t, int *rank, int64_t *shape, int *grid,
                                     int64_t *block);
/* Where this rank's block lies: start[m] <= global index < stop[m] (empty when equal). */
LT_API lt_status lt_dist_tensor_local_range(const lt_dist_tensor *t, int64_t *start, int64_t *stop);
/* Fills t from `global` (read at root only: any layout, t's global shape, any dtype converted
 * to t's; other ranks may pass NULL). Collective. LT_ERR_SHAPE_MISMATCH at root for a wrong
 * shape (reported on every rank). */
LT_API lt_status lt_dist_tensor_scatter(lt_dist_tensor *t, int root, const lt_tensor *global);
/* Gathers t into a new C-contiguous tensor at root (*out; NULL on the other ranks) on root's
 * block context. Collective. */
LT_API lt_status lt_dist_tensor_gather(const lt_dist_tensor *t, int root, lt_tensor **out);

/* A copy of t in another distribution of the same communicator (grid, block as in
 * lt_dist_tensor_create), moved with one MPI_Alltoallv. Collective. */
LT_API lt_status lt_dist_redistribute(const lt_dist_tensor *t, const int *grid,
                                      const int64_t *block, lt_dist_tensor **out);
/* The distributed transpose: mode m of *out is mode axes[m] of t. Every rank permutes its own
 * block; nothing is communicated (the grid's modes move with the tensor's, so a rank keeps its
 * block; *out's grid may then be other than row-major, which every lt_dist_* call accepts).
 * LT_ERR_INVALID_ARGUMENT for axes that are no permutation. */
LT_API lt_status lt_dist_permute(const lt_dist_tensor *t, const int *axes, lt_dist_tensor **out);
/* Reduces t over n_axes axes (n_axes = -1: all) with LT_REDUCE_SUM, PROD, MIN or MAX into a new
 * tensor every rank receives (local reduction, then one MPI_Allreduce). The result dtype is
 * lt_reduce's (sums of integers are i64); MIN and MAX propagate NaN from any rank, as lt_reduce.
 * LT_ERR_UNSUPPORTED for other operations, for MIN/MAX of integer or bool tensors and for a
 * result past 2^31 - 1 elements (MPI's count), LT_ERR_DTYPE for f16/bf16 (no MPI datatype). */
LT_API lt_status lt_dist_reduce(const lt_dist_tensor *t, lt_reduce_op op, int n_axes,
                                const int *axes, lt_tensor **out);

/* C[modes_c] = sum over the other labels of A[modes_a] * B[modes_b], distributed (SUMMA): A and
 * B are redistributed onto a pr x pc process grid (one free label of A split over the rows, one
 * free label of B over the columns, one contracted label over both), then each panel of the
 * contracted label is broadcast along process rows (A) and columns (B) and multiplied into the
 * local block of C. Labels in A, B and C are batch labels (never split); labels of A or B alone
 * and not in C are summed locally. *out has modes_c's order and the pr x pc distribution
 * (lt_dist_redistribute moves it elsewhere). Both operands must share the communicator and
 * dtype. LT_ERR_INVALID_ARGUMENT for a label of C in neither operand, mismatched extents or a
 * repeated label in one operand (LT_ERR_UNSUPPORTED). */
LT_API lt_status lt_dist_contract(const lt_dist_tensor *a, const int32_t *modes_a,
                                  const lt_dist_tensor *b, const int32_t *modes_b, int rank_c,
                                  const int32_t *modes_c, lt_dist_tensor **out);
/* Distributed einsum ("ij,jk,kl->il": letters and an explicit "->"; no ellipsis): rank 0 finds a
 * contraction path for the global shapes (lt_einsum_find_path with opts; NULL for defaults),
 * broadcasts it, and every pairwise step runs as lt_dist_contract. At least two operands.
 * LT_ERR_PARSE for an expression outside that form. */
LT_API lt_status lt_dist_einsum(const char *expr, int n_inputs, const lt_dist_tensor *const *inputs,
                                const lt_plan_options *opts, lt_dist_tensor **out);

/* Sliced einsum over ranks: every rank holds the full operands (inputs, on its ctx) and plans
 * expr with opts (a memory limit set there decides the slicing; the search is deterministic
 * for a seed), rank 0's tree and slice count are broadcast and checked against every rank's,
 * each rank runs its contiguous share of the slices (lt_plan_execute_slices), and
 * MPI_Allreduce sums the shares: *out, a new C-contiguous tensor of the einsum's natural dtype,
 * holds the whole result on every rank. opts may be NULL (then nothing is sliced and rank 0
 * computes alone). LT_ERR_INTERNAL on every rank when a rank planned another tree (a search cut
 * short by its time budget: give an explicit path); LT_ERR_DTYPE for f16, bf16 and bool
 * results; errors of lt_plan_einsum otherwise. */
LT_API lt_status lt_dist_einsum_sliced(MPI_Comm comm, const char *expr, int n_inputs,
                                       const lt_tensor *const *inputs, const lt_plan_options *opts,
                                       lt_tensor **out);

/* Bytes this process has received from other ranks in lt_dist_* calls since the last reset
 * (point-to-point parts of all-to-alls and broadcasts; what the rank already held is not
 * counted). Process-wide. */
LT_API uint64_t lt_dist_bytes_received(void);
/* Sets the counter of lt_dist_bytes_received to zero. */
LT_API void lt_dist_bytes_reset(void);

#ifdef __cplusplus
}
#endif
#endif
