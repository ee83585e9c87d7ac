/* SPDX-License-Identifier: MIT */
/* libtensor: tensors, zero-copy views, copies and .npy files. */
#ifndef LT_TENSOR_TENSOR_H
#define LT_TENSOR_TENSOR_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shapes and strides cross the ABI as int64_t arrays with an explicit rank; strides count
 * elements (not bytes) and may be 0 or negative. Rank 0 is a scalar. */

/* Called once when the library no longer needs wrapped host memory. */
typedef void (*lt_release_fn)(void *data, void *user);

/* Sentinel for lt_view_slice start/stop: "from the natural end for this step's sign". */
#define LT_SLICE_DEFAULT INT64_MIN
/* Sentinel for lt_view_squeeze: squeeze every size-1 axis. */
#define LT_ALL_AXES (-1000)

/* New tensor with uninitialised contents, C-contiguous. */
LT_API lt_status lt_tensor_empty(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                                 lt_tensor **out);
/* New C-contiguous tensor filled with zeros. */
LT_API lt_status lt_tensor_zeros(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                                 lt_tensor **out);
/* New C-contiguous tensor with every element set to `value` (converted to dtype; for an
 * integer dtype truncated toward zero). Fails with LT_ERR_OUT_OF_RANGE for an integer dtype when
 * `value` is NaN or its truncation lies outside the dtype's range (never saturated or wrapped),
 * and as lt_tensor_empty otherwise. */
LT_API lt_status lt_tensor_full(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                                double value, lt_tensor **out);
/* New C-contiguous tensor holding a copy of host data laid out with `strides` (NULL = C order)
 * from `data`, which points at element [0,...,0]. */
LT_API lt_status lt_tensor_from_host(lt_context *ctx, lt_dtype dtype, int rank,
                                     const int64_t *shape, const int64_t *strides, const void *data,
                                     lt_tensor **out);
/* Wraps host memory zero-copy (CPU contexts only). `data` points at element [0,...,0]; every
 * element reachable through shape/strides must be valid memory. `release` (may be NULL) is
 * called with `user` once the last view of it is gone. On failure `release` is not called. */
LT_API lt_status lt_tensor_wrap_host(lt_context *ctx, lt_dtype dtype, int rank,
                                     const int64_t *shape, const int64_t *strides, void *data,
                                     lt_release_fn release, void *user, lt_tensor **out);
/* Releases a tensor handle; storage lives on while other views use it. NULL ok. */
LT_API void lt_tensor_destroy(lt_tensor *t);

/* Copies the tensor's elements in C order, in its own dtype, into `dst` (dst_bytes >= nbytes). */
LT_API lt_status lt_tensor_to_host(const lt_tensor *t, void *dst, size_t dst_bytes);
/* Reads one element as double; negative indices count from the end as in NumPy. */
LT_API lt_status lt_tensor_get(const lt_tensor *t, const int64_t *index, double *value);
/* Writes one element (converted to the tensor's dtype); negative indices as in lt_tensor_get.
 * An integer tensor refuses NaN and values outside its range as lt_tensor_full does
 * (LT_ERR_OUT_OF_RANGE, the element unchanged); use lt_tensor_set_i64 / _u64 for exact or
 * wrapping writes. */
LT_API lt_status lt_tensor_set(lt_tensor *t, const int64_t *index, double value);
/* Exact element access for integer and bool tensors (issue 18 A): the value as int64 / uint64.
 * Reading a value the type cannot hold (a u64 >= 2^63 as i64, a negative as u64) or a float
 * tensor is LT_ERR_DTYPE; writing wraps to the tensor's width as a C cast to an unsigned type
 * does (bool: value != 0), and a float tensor is LT_ERR_DTYPE. */
LT_API lt_status lt_tensor_get_i64(const lt_tensor *t, const int64_t *index, int64_t *value);
/* The same as uint64 (a negative value is LT_ERR_DTYPE). */
LT_API lt_status lt_tensor_get_u64(const lt_tensor *t, const int64_t *index, uint64_t *value);
/* Writes an int64 exactly, wrapping to the tensor's width (float tensors: LT_ERR_DTYPE). */
LT_API lt_status lt_tensor_set_i64(lt_tensor *t, const int64_t *index, int64_t value);
/* Writes a uint64 exactly, wrapping to the tensor's width (float tensors: LT_ERR_DTYPE). */
LT_API lt_status lt_tensor_set_u64(lt_tensor *t, const int64_t *index, uint64_t value);
/* Host address of element [0,...,0] of a CPU tensor (LT_ERR_UNSUPPORTED on devices). */
LT_API lt_status lt_tensor_host_pointer(const lt_tensor *t, void **out);

/* Properties. On a NULL handle they return 0 / NULL / false. */
LT_API lt_dtype lt_tensor_dtype(const lt_tensor *t);
/* Number of axes (0 for a scalar). */
LT_API int lt_tensor_rank(const lt_tensor *t);
/* Pointer to `rank` extents, valid while the handle lives. */
LT_API const int64_t *lt_tensor_shape(const lt_tensor *t);
/* Pointer to `rank` strides in elements, valid while the handle lives. */
LT_API const int64_t *lt_tensor_strides(const lt_tensor *t);
/* Offset of element [0,...,0] from the start of the storage, in elements. */
LT_API int64_t lt_tensor_offset(const lt_tensor *t);
/* Number of elements (1 for rank 0). */
LT_API int64_t lt_tensor_numel(const lt_tensor *t);
/* numel * dtype size: the size of a contiguous copy. */
LT_API size_t lt_tensor_nbytes(const lt_tensor *t);
/* True if the elements are C-contiguous in memory (size-1 axes' strides ignored). */
LT_API bool lt_tensor_is_contiguous(const lt_tensor *t);
/* True if both tensors are views of the same storage. */
LT_API bool lt_tensor_shares_storage(const lt_tensor *a, const lt_tensor *b);
/* The context a tensor lives on. */
LT_API lt_context *lt_tensor_context(const lt_tensor *t);

/* Views: new handles sharing storage, O(rank), never copying. */

/* Reshape to `shape` (one extent may be -1). LT_ERR_NOT_VIEWABLE if strides do not allow it. */
LT_API lt_status lt_view_reshape(const lt_tensor *t, int rank, const int64_t *shape,
                                 lt_tensor **out);
/* Reorders axes: result axis i is input axis axes[i]. */
LT_API lt_status lt_view_permute(const lt_tensor *t, const int *axes, lt_tensor **out);
/* Swaps two axes (negative axes count from the end). */
LT_API lt_status lt_view_transpose(const lt_tensor *t, int axis0, int axis1, lt_tensor **out);
/* Python slice start:stop:step along one axis. start/stop are absolute positions (as returned
 * by Python's slice.indices: stop may be -1 for a negative step) or LT_SLICE_DEFAULT; positions
 * outside the axis are LT_ERR_OUT_OF_RANGE, step 0 is LT_ERR_INVALID_ARGUMENT. */
LT_API lt_status lt_view_slice(const lt_tensor *t, int axis, int64_t start, int64_t stop,
                               int64_t step, lt_tensor **out);
/* Indexes one axis away (t[..., index, ...]); negative index counts from the end. */
LT_API lt_status lt_view_select(const lt_tensor *t, int axis, int64_t index, lt_tensor **out);
/* Broadcasts to `shape` by NumPy rules (trailing alignment, zero strides). */
LT_API lt_status lt_view_broadcast_to(const lt_tensor *t, int rank, const int64_t *shape,
                                      lt_tensor **out);
/* Inserts a size-1 axis at position `axis` of the result (-1 = last). */
LT_API lt_status lt_view_unsqueeze(const lt_tensor *t, int axis, lt_tensor **out);
/* Removes a size-1 axis, or all of them with LT_ALL_AXES. */
LT_API lt_status lt_view_squeeze(const lt_tensor *t, int axis, lt_tensor **out);
/* Reverses one axis (negative stride). */
LT_API lt_status lt_view_flip(const lt_tensor *t, int axis, lt_tensor **out);
/* Diagonal of axes (axis1, axis2) with offset as numpy.diagonal: those axes are removed and
 * the diagonal is appended as the last axis. */
LT_API lt_status lt_view_diagonal(const lt_tensor *t, int64_t offset, int axis1, int axis2,
                                  lt_tensor **out);
/* Arbitrary view on t's storage; offset in elements from the storage start. Refuses any layout
 * reaching outside the storage. */
LT_API lt_status lt_view_as_strided(const lt_tensor *t, int rank, const int64_t *shape,
                                    const int64_t *strides, int64_t offset, lt_tensor **out);

/* Copies: */

/* New C-contiguous copy of any strided tensor, converted to `dtype` (LT_DTYPE_INVALID = same).
 * Float to integer conversion is checked: NaN, +-Inf or a value outside the integer dtype's
 * range is LT_ERR_OUT_OF_RANGE with a message (no output); finite values truncate toward
 * zero. Integer to integer conversion wraps (as NumPy's astype); to bool is value != 0. */
LT_API lt_status lt_tensor_contiguous(const lt_tensor *t, lt_dtype dtype, lt_tensor **out);
/* Reshape that returns a view when possible and a contiguous copy otherwise. */
LT_API lt_status lt_tensor_reshape(const lt_tensor *t, int rank, const int64_t *shape,
                                   lt_tensor **out);
/* Copies src into dst, broadcasting src to dst's shape and converting dtype. A src sharing
 * memory with dst is read completely first; a dst whose elements overlap each other (zero
 * strides) is refused (LT_ERR_ALIASING). Float to integer conversion is checked as in
 * lt_tensor_contiguous: NaN, +-Inf or a value outside dst's range is LT_ERR_OUT_OF_RANGE and
 * dst is left unchanged. */
LT_API lt_status lt_tensor_copy_into(lt_tensor *dst, const lt_tensor *src);
/* Copy of t (any layout) on another context, C-contiguous: CPU <-> OpenCL transfers. */
LT_API lt_status lt_tensor_to_context(const lt_tensor *t, lt_context *ctx, lt_tensor **out);

/* .npy files (format versions 1-3; every dtype but bf16, which NumPy has not: f2/f4/f8, i1-i8,
 * u1-u8, b1, either byte order, C or Fortran order). */

/* Loads a .npy file into a new tensor on ctx. Malformed files are LT_ERR_FORMAT: among them a
 * file with fewer bytes than its header's shape needs ("truncated data") and one with more
 * ("trailing data": unlike NumPy, which ignores them, extra bytes are refused, since they mean
 * the header and the data disagree). Reading stops at the first byte past the data, so an
 * endless stream fails promptly, and memory grows with the bytes actually read on pipes, so a
 * short stream that claims a huge shape reports truncated data, not out-of-memory. A missing
 * or unreadable file is LT_ERR_IO. The message names the path. */
LT_API lt_status lt_npy_load(lt_context *ctx, const char *path, lt_tensor **out);
/* Parses .npy bytes held in memory (the same rules; exactly the data must follow the header). */
LT_API lt_status lt_npy_load_buffer(lt_context *ctx, const void *bytes, size_t size,
                                    lt_tensor **out);

/* How a save reaches the disk. */
typedef enum lt_save_flags {
  LT_SAVE_DEFAULT = 0,
  /* fsync the file (and its folder) before the save returns: survives a power cut. */
  LT_SAVE_FSYNC = 1
} lt_save_flags;

/* Saves a tensor (any layout) as a little-endian C-order .npy file; bf16 is refused
 * (LT_ERR_DTYPE). A save never loses data: the file is written as a temporary beside the target
 * and renamed over it only once complete, so on any failure (LT_ERR_IO: disk full, a file-size
 * limit, no permission) an existing file keeps its old contents and no partial file is left. A
 * target that is not a regular file (a device such as /dev/stdout, a FIFO) is written in place
 * and never removed; a symbolic link's target is replaced and the link kept. A process whose
 * RLIMIT_FSIZE is exceeded gets SIGXFSZ from the system unless it ignores that signal (the save
 * then fails with LT_ERR_IO). */
LT_API lt_status lt_npy_save(const lt_tensor *t, const char *path);
/* lt_npy_save with flags (an OR of lt_save_flags; unknown bits are LT_ERR_INVALID_ARGUMENT). */
LT_API lt_status lt_npy_save_with_flags(const lt_tensor *t, const char *path, uint32_t flags);

#ifdef __cplusplus
}
#endif
#endif
