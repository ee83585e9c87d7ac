/* SPDX-License-Identifier: MIT */
/* libtensor: indexing (gather, scatter-add, boolean masks), joining (concatenate, stack,
 * split), creation (arange, linspace, eye, ones, *_like) and sorting (sort, argsort, topk).
 * Axes are NumPy axes (negative counts from the end). Index tensors hold any integer dtype
 * (LT_I8..LT_U64, LT_I64; not bool); a negative index counts from the end of its axis as in
 * NumPy, and an index outside [-extent, extent) is never used to read: the call fails with
 * LT_ERR_OUT_OF_RANGE and a message naming the call, the operand, the axis, the index value
 * and its position. */
#ifndef LT_TENSOR_INDEX_H
#define LT_TENSOR_INDEX_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- gather and scatter ---- */

/* Plan for D = take(A, INDEX, axis) (NumPy np.take): D's shape is A's with `axis` replaced by
 * INDEX's whole shape; D[..., i..., ...] = A[..., INDEX[i...], ...]. Inputs {A, INDEX}; no
 * scalars. D has A's dtype. Fails at creation with LT_ERR_SHAPE_MISMATCH (D's shape),
 * LT_ERR_DTYPE (INDEX not an integer dtype, D's dtype not A's), LT_ERR_OUT_OF_RANGE (axis) and
 * LT_ERR_ALIASING (D's elements overlap); at execution also LT_ERR_OUT_OF_RANGE for a bad
 * index (D's contents are then unspecified). */
LT_API lt_status lt_plan_take(const lt_tensor *a, int axis, const lt_tensor *index,
                              const lt_tensor *d, const lt_plan_options *opts, lt_plan **out);
/* Plan for D = take_along_axis(A, INDEX, axis) (NumPy np.take_along_axis): INDEX has A's rank
 * and broadcasts against A on every axis but `axis`; D has the broadcast shape with INDEX's
 * extent on `axis`. Inputs {A, INDEX}. Failures as lt_plan_take. */
LT_API lt_status lt_plan_take_along_axis(const lt_tensor *a, int axis, const lt_tensor *index,
                                         const lt_tensor *d, const lt_plan_options *opts,
                                         lt_plan **out);
/* Plan for D[..., INDEX[j], ...] += SRC[..., j, ...] along `axis` of D, in place (D is read and
 * written). INDEX is either 1-D with SRC's extent on `axis` (torch index_add) or of SRC's shape
 * (torch scatter_add); SRC has D's extents off `axis` and D's dtype. Repeated indices
 * accumulate, in increasing j, so the result is the same on every thread count. Inputs
 * {SRC, INDEX}. Failures as lt_plan_take (a bad index leaves D partly updated). */
LT_API lt_status lt_plan_scatter_add(const lt_tensor *src, int axis, const lt_tensor *index,
                                     const lt_tensor *d, const lt_plan_options *opts,
                                     lt_plan **out);

/* One-shot np.take(a, index, axis): a new tensor. */
LT_API lt_status lt_take(const lt_tensor *a, const lt_tensor *index, int axis, lt_tensor **out);
/* torch.index_select: lt_take with a 1-D (or rank-0 promoted to 1-D) index. */
LT_API lt_status lt_index_select(const lt_tensor *a, int axis, const lt_tensor *index,
                                 lt_tensor **out);
/* One-shot np.take_along_axis(a, index, axis): a new tensor. */
LT_API lt_status lt_take_along_axis(const lt_tensor *a, const lt_tensor *index, int axis,
                                    lt_tensor **out);
/* In place: d[..., index[j], ...] += src[..., j, ...] along `axis` (see lt_plan_scatter_add). */
LT_API lt_status lt_scatter_add(lt_tensor *d, int axis, const lt_tensor *index,
                                const lt_tensor *src);
/* Boolean-mask selection a[mask] (NumPy): mask's shape equals a's leading mask-rank extents;
 * mask is LT_BOOL (any other dtype counts nonzero as true); elements where it is true, in C order, give a new tensor of shape
 * (count, a's remaining extents...). The mask is read on the host. LT_ERR_SHAPE_MISMATCH
 * names the first axis where the shapes differ. */
LT_API lt_status lt_mask_select(const lt_tensor *a, const lt_tensor *mask, lt_tensor **out);
/* Positions of the nonzero elements of a 1-D or N-D tensor in C order as an LT_I64 tensor of
 * shape (count, rank) (np.argwhere). Read on the host. */
LT_API lt_status lt_argwhere(const lt_tensor *a, lt_tensor **out);

/* ---- joining and splitting ---- */

/* np.concatenate: n tensors of one dtype and context, equal extents except on `axis`, joined
 * along it. A view when the inputs are consecutive pieces of one storage along `axis` (as
 * lt_split returns them), else a new C-contiguous tensor. LT_ERR_SHAPE_MISMATCH names the
 * operand and axis; LT_ERR_DTYPE / LT_ERR_CONTEXT_MISMATCH name the operand. */
LT_API lt_status lt_concatenate(int n, const lt_tensor *const *tensors, int axis, lt_tensor **out);
/* np.stack: n tensors of one shape joined along a new axis (in [-(rank+1), rank]). */
LT_API lt_status lt_stack(int n, const lt_tensor *const *tensors, int axis, lt_tensor **out);
/* np.split with split points: outs[0..n_points] receive views of a between the sorted points
 * along `axis` (points beyond the extent clamp, as NumPy's array_split; a decreasing point
 * gives an empty piece). On failure no view is left in outs (all NULL). */
LT_API lt_status lt_split(const lt_tensor *a, int axis, int n_points, const int64_t *points,
                          lt_tensor **outs);

/* ---- creation (computed on the host, then placed on the context's device) ---- */

/* np.arange(start, stop, step): ceil((stop - start) / step) elements start + i*step (none when
 * that is <= 0); for an integer dtype with whole start and step, computed in 64-bit integers
 * (exact above 2^53). LT_ERR_INVALID_ARGUMENT for step 0 or non-finite arguments,
 * LT_ERR_OUT_OF_RANGE when an integer dtype cannot hold the first or last element. */
LT_API lt_status lt_arange(lt_context *ctx, lt_dtype dtype, double start, double stop, double step,
                           lt_tensor **out);
/* np.linspace(start, stop, num, endpoint); integer dtypes take the floor of each value, as
 * NumPy 2. num >= 0 (else LT_ERR_INVALID_ARGUMENT);
 * LT_ERR_OUT_OF_RANGE when an integer dtype cannot hold the first or last element. */
LT_API lt_status lt_linspace(lt_context *ctx, lt_dtype dtype, double start, double stop,
                             int64_t num, bool endpoint, lt_tensor **out);
/* np.eye(n, m, k): ones on the k-th diagonal of an n x m matrix. */
LT_API lt_status lt_eye(lt_context *ctx, lt_dtype dtype, int64_t n, int64_t m, int64_t k,
                        lt_tensor **out);
/* A tensor of ones. */
LT_API lt_status lt_ones(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                         lt_tensor **out);
/* New C-contiguous tensors with t's shape and context, and `dtype` (LT_DTYPE_INVALID: t's):
 * filled with `value`, ones, zeros, or uninitialised. */
LT_API lt_status lt_full_like(const lt_tensor *t, lt_dtype dtype, double value, lt_tensor **out);
LT_API lt_status lt_ones_like(const lt_tensor *t, lt_dtype dtype, lt_tensor **out);
LT_API lt_status lt_zeros_like(const lt_tensor *t, lt_dtype dtype, lt_tensor **out);
LT_API lt_status lt_empty_like(const lt_tensor *t, lt_dtype dtype, lt_tensor **out);

/* ---- sorting ---- */

/* Flags of lt_plan_sort. */
typedef enum lt_sort_flags {
  LT_SORT_ASCENDING = 0,  /* smallest first, NaN last (NumPy) */
  LT_SORT_DESCENDING = 1, /* largest first, NaN first (torch.topk) */
  LT_SORT_INDICES = 2     /* write positions (LT_I64) instead of values */
} lt_sort_flags;

/* Plan for D = the first k elements of A sorted along `axis` (stable: equal elements keep their
 * order), as values (D has A's dtype) or positions (LT_SORT_INDICES, D is LT_I64). D has A's
 * shape with extent k on `axis`, 0 <= k <= A's extent. Inputs {A}. */
LT_API lt_status lt_plan_sort(const lt_tensor *a, int axis, int64_t k, int flags,
                              const lt_tensor *d, const lt_plan_options *opts, lt_plan **out);
/* np.sort(a, axis) (stable), descending when asked. */
LT_API lt_status lt_sort(const lt_tensor *a, int axis, bool descending, lt_tensor **out);
/* np.argsort(a, axis, kind="stable") as LT_I64, descending when asked. */
LT_API lt_status lt_argsort(const lt_tensor *a, int axis, bool descending, lt_tensor **out);
/* torch.topk(a, k, axis, largest, sorted=True): values and LT_I64 indices (either out pointer
 * may be NULL when not wanted; both NULL is LT_ERR_NULL_POINTER, both the same pointer
 * LT_ERR_INVALID_ARGUMENT). */
LT_API lt_status lt_topk(const lt_tensor *a, int64_t k, int axis, bool largest, lt_tensor **values,
                         lt_tensor **indices);

#ifdef __cplusplus
}
#endif
#endif
