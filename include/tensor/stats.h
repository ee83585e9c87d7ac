/* SPDX-License-Identifier: MIT */
/* libtensor: softmax, log_softmax, logsumexp, variance / standard deviation and cumulative
 * sums / products, as plans over mode labels and as NumPy-style one-shot calls. */
#ifndef LT_TENSOR_STATS_H
#define LT_TENSOR_STATS_H

#include "base.h"
#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cumulative (inclusive, in index order) operations along one mode. */
typedef enum lt_scan_op { LT_SCAN_SUM = 0, LT_SCAN_PROD = 1 } lt_scan_op;

/* Plans. As the other plan constructors (ops.h): tensors describe layouts only, modes are int32
 * labels, everything is validated here; lt_plan_execute takes inputs {A} and no scalars. The
 * output D may not overlap A and must be a floating dtype (i64 also for scans). Computed in the
 * plan's compute dtype (default: f64 for f64 or i64 inputs, else f32); sums inside a row
 * accumulate in double on the CPU. Failures: LT_ERR_NULL_POINTER, LT_ERR_INVALID_HANDLE,
 * LT_ERR_SHAPE_MISMATCH (a mode of D missing from A or of another extent), LT_ERR_INVALID_ARGUMENT
 * (bad or repeated modes, unknown op, negative ddof), LT_ERR_DTYPE, LT_ERR_ALIASING (D's
 * elements overlap each other), LT_ERR_CONTEXT_MISMATCH, LT_ERR_OUT_OF_MEMORY. */

/* D[md] = softmax of A over the `n_modes` modes listed in `modes` (each a mode of A; D has A's
 * modes in any order), or log_softmax when `log`: exp(A - max) / sum exp(A - max), one read of
 * each row where it fits in cache. Stable for any finite input (no overflow at 1e4); -inf
 * entries give 0 (log: -inf); a row that is all -inf (or holds +inf or NaN) gives NaN, as in
 * PyTorch. n_modes == 0 normalises each element alone (softmax 1, log_softmax 0). */
LT_API lt_status lt_plan_softmax(const lt_tensor *a, const int32_t *modes_a, int n_modes,
                                 const int32_t *modes, bool log, const lt_tensor *d,
                                 const int32_t *modes_d, const lt_plan_options *opts,
                                 lt_plan **out);
/* D[md] = log(sum exp(A)) over A's modes absent from D, shifted by the max for stability: an
 * all -inf (or empty) row gives -inf, a row holding +inf gives +inf, NaN propagates (as
 * scipy.special.logsumexp). */
LT_API lt_status lt_plan_logsumexp(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *d,
                                   const int32_t *modes_d, const lt_plan_options *opts,
                                   lt_plan **out);
/* D[md] = variance (or, with `std`, its square root) of A over A's modes absent from D:
 * sum (A - mean)^2 / max(n - ddof, 0) (n - ddof <= 0 gives inf or NaN, as NumPy; an empty row
 * NaN). Two-pass per chunk with the chunks combined exactly, accurate for 10^7-element f32
 * rows. ddof must be >= 0. */
LT_API lt_status lt_plan_variance(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *d,
                                  const int32_t *modes_d, double ddof, bool std,
                                  const lt_plan_options *opts, lt_plan **out);
/* D[md] = cumulative sum or product of A along mode `mode` (inclusive, in increasing index
 * order); D has A's modes in any order and a float or integer dtype. Integer and bool inputs
 * are scanned exactly in 64-bit integers, wrapping modulo 2^64 as NumPy's cumsum (then
 * narrowed to D's width); floats in the compute dtype. */
LT_API lt_status lt_plan_scan(const lt_tensor *a, const int32_t *modes_a, int32_t mode,
                              lt_scan_op op, const lt_tensor *d, const int32_t *modes_d,
                              const lt_plan_options *opts, lt_plan **out);

/* One-shot forms with positional axes (negative counts from the end; n_axes -1 = all axes; a
 * repeated or out-of-range axis is LT_ERR_INVALID_ARGUMENT). Results are new C-contiguous
 * tensors of a's dtype (f64 for integer and bool inputs, except scans, which give i64, or u64
 * for unsigned inputs, as NumPy). */
LT_API lt_status lt_softmax(const lt_tensor *a, int n_axes, const int *axes, lt_tensor **out);
LT_API lt_status lt_log_softmax(const lt_tensor *a, int n_axes, const int *axes, lt_tensor **out);
LT_API lt_status lt_logsumexp(const lt_tensor *a, int n_axes, const int *axes, bool keepdims,
                              lt_tensor **out);
LT_API lt_status lt_var(const lt_tensor *a, int n_axes, const int *axes, double ddof, bool keepdims,
                        lt_tensor **out);
LT_API lt_status lt_std(const lt_tensor *a, int n_axes, const int *axes, double ddof, bool keepdims,
                        lt_tensor **out);
/* Along one axis (as NumPy's cumsum/cumprod with an axis). */
LT_API lt_status lt_cumsum(const lt_tensor *a, int axis, lt_tensor **out);
LT_API lt_status lt_cumprod(const lt_tensor *a, int axis, lt_tensor **out);

#ifdef __cplusplus
}
#endif
#endif
