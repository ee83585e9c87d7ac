/* SPDX-License-Identifier: MIT */
/* libtensor: reverse-mode automatic differentiation (a gradient tape) and optimisers.
 *
 * A tape records differentiable operations on tensors that require gradients. Operations are
 * recorded only when they go through the lt_ad_* calls below with a tape: the plain calls
 * (lt_add, lt_einsum, plans, ...) never look at a tape, so code that does not differentiate pays
 * nothing. Every lt_ad_* call computes exactly what the plain call of the same name computes;
 * with tape == NULL, with recording off, or when no input requires a gradient it only computes.
 *
 * Leaves are tensors marked with lt_tape_requires_grad; a result of a recorded op on a tracked
 * tensor is tracked too. lt_tape_backward accumulates d(output)/d(leaf) into each leaf's
 * gradient (read with lt_tape_grad). Records are kept by handle: another handle viewing the same
 * memory is a different tensor for the tape (use lt_ad_* views to derive tracked views).
 *
 * In-place safety: every write through the library (plan outputs, lt_tensor_copy_into,
 * lt_tensor_set, optimiser steps) bumps a version counter on the storage. A tensor saved for
 * backward and written afterwards makes lt_tape_backward fail with LT_ERR_INVALID_ARGUMENT and a
 * message naming the op and the tensor, never a silently wrong gradient. Writes through
 * lt_tensor_host_pointer or wrapped host memory are not seen.
 *
 * A tape is not thread-safe: use one per thread (plans stay shareable). */
#ifndef LT_TENSOR_AUTOGRAD_H
#define LT_TENSOR_AUTOGRAD_H

#include "base.h"
#include "index.h"
#include "ops.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lt_tape lt_tape;
typedef struct lt_optimizer lt_optimizer;

/* Flags of lt_tape_backward. */
typedef enum lt_backward_flags {
  LT_BACKWARD_DEFAULT = 0,
  /* Keep the recorded graph (and what it saved) so that backward can run again through it. */
  LT_BACKWARD_RETAIN_GRAPH = 1
} lt_backward_flags;

/* New empty tape on ctx, recording. */
LT_API lt_status lt_tape_create(lt_context *ctx, lt_tape **out);
/* Destroys a tape, its records and its gradients (handles returned by lt_tape_grad stay valid).
 * NULL ok. */
LT_API void lt_tape_destroy(lt_tape *tape);
/* Marks t as a leaf that requires a gradient (requires = true), or forgets it (false; its
 * gradient is dropped). Only floating dtypes can require gradients (LT_ERR_DTYPE). A tensor that
 * is already the result of a recorded op cannot be made a leaf (LT_ERR_INVALID_ARGUMENT). */
LT_API lt_status lt_tape_requires_grad(lt_tape *tape, const lt_tensor *t, bool requires);
/* *out = true if t is tracked by the tape (a leaf, or the result of a recorded op). */
LT_API lt_status lt_tape_is_tracked(const lt_tape *tape, const lt_tensor *t, bool *out);
/* Turns recording on or off (no_grad scopes) and returns the previous setting in *previous
 * (may be NULL). While off, lt_ad_* calls only compute. */
LT_API lt_status lt_tape_set_recording(lt_tape *tape, bool on, bool *previous);
/* A new handle on t's memory that the tape does not track (gradients stop there). */
LT_API lt_status lt_tape_detach(lt_tape *tape, const lt_tensor *t, lt_tensor **out);
/* The accumulated gradient of leaf t: a new handle (C-contiguous, t's shape and dtype) the caller
 * destroys, or *out = NULL when t has no gradient yet. */
LT_API lt_status lt_tape_grad(const lt_tape *tape, const lt_tensor *t, lt_tensor **out);
/* Replaces leaf t's gradient by a copy of grad (t's shape; converted to t's dtype), or drops it
 * when grad is NULL (the next backward starts from zero). */
LT_API lt_status lt_tape_set_grad(lt_tape *tape, const lt_tensor *t, const lt_tensor *grad);
/* Drops every leaf's gradient. */
LT_API lt_status lt_tape_zero_grads(lt_tape *tape);
/* Backpropagates from `output` (tracked by the tape) and adds d(output)/d(leaf) into every leaf
 * that output depends on. grad_output is the gradient of some scalar with respect to output
 * (output's shape; broadcastable), or NULL when output has one element (then 1). Without
 * LT_BACKWARD_RETAIN_GRAPH the records that output depends on are freed when backward completes
 * (records of other graphs stay), and a second backward through them is
 * LT_ERR_INVALID_ARGUMENT (their results are no longer tracked). Fails with LT_ERR_INVALID_ARGUMENT
 * for an untracked output, an output that went through a non-differentiable op (argmax,
 * integer results) or a saved tensor modified in place; then no leaf gradient has changed. */
LT_API lt_status lt_tape_backward(lt_tape *tape, const lt_tensor *output,
                                  const lt_tensor *grad_output, uint32_t flags);
/* Tells the tape that the handle t is about to be destroyed (or is no longer of interest): the
 * records only t's result needed, and what they saved, are released once no other recorded op
 * reads them (as PyTorch frees a graph whose results are gone). A leaf is forgotten as
 * lt_tape_requires_grad(t, false). An untracked t is fine (nothing happens). */
LT_API lt_status lt_tape_forget(lt_tape *tape, const lt_tensor *t);
/* Forgets every recorded op (keeps leaves and their gradients): start of a new training step. */
LT_API lt_status lt_tape_clear(lt_tape *tape);
/* What the recorded graphs currently hold for backward (for memory checks): *count, the saved
 * tensors (one per record that saved one: a chain of n unary or tensor-with-constant ops
 * holds n), and *bytes (may be NULL), the memory they keep alive, each storage counted once
 * however many records saved a view of it. Fails with LT_ERR_NULL_POINTER (tape or count
 * NULL), LT_ERR_INVALID_HANDLE (not a live tape) or LT_ERR_OUT_OF_MEMORY. */
LT_API lt_status lt_tape_saved_count(const lt_tape *tape, int64_t *count, size_t *bytes);

/* ---- differentiable operations: the plain call's semantics, recorded on the tape ---- */

/* lt_unary(op, a, out), recorded on `tape` when `a` is tracked (floor, sign and the other
 * piecewise-constant ops pass a zero gradient, as in PyTorch; logical not, invert, the
 * isnan/isinf/isfinite tests and any integer or bool result are not recorded). *out is new and
 * the caller's. Fails as lt_unary does, with
 * LT_ERR_NULL_POINTER / LT_ERR_INVALID_HANDLE for a NULL or dead tape, or LT_ERR_OUT_OF_MEMORY
 * while recording (then *out is NULL and nothing is recorded). */
LT_API lt_status lt_ad_unary(lt_tape *tape, lt_unary_op op, const lt_tensor *a, lt_tensor **out);
/* lt_binary(op, a, b, out) with NumPy broadcasting and promotion, recorded on `tape` when an
 * input is tracked; comparisons and other bool results are not recorded. Gradients of
 * broadcast inputs are summed back to their shapes. Fails as lt_binary and lt_ad_unary do. */
LT_API lt_status lt_ad_binary(lt_tape *tape, lt_binary_op op, const lt_tensor *a,
                              const lt_tensor *b, lt_tensor **out);
/* out = (scalars[0]*a op_ab scalars[1]*b) op_abc scalars[2]*c with NumPy broadcasting; c NULL
 * means out = scalars[0]*a op_ab scalars[1]*b (scalars[2] unused). scalars NULL means all 1. */
LT_API lt_status lt_ad_trinary(lt_tape *tape, lt_binary_op op_ab, lt_binary_op op_abc,
                               const lt_tensor *a, const lt_tensor *b, const lt_tensor *c,
                               const double *scalars, lt_tensor **out);
/* lt_reduce, recorded. ARGMAX/ARGMIN results are not differentiable. Gradients: MIN/MAX/MAXABS
 * split the gradient evenly between tied elements (as PyTorch's amax/amin); PROD is exact with
 * zeros in the input. */
LT_API lt_status lt_ad_reduce(lt_tape *tape, lt_reduce_op op, const lt_tensor *a, int n_axes,
                              const int *axes, bool keepdims, lt_tensor **out);
/* lt_einsum / lt_einsum_modes, recorded; each operand's gradient is an einsum planned through
 * the path optimiser. The modes form also covers contraction plans. */
LT_API lt_status lt_ad_einsum(lt_tape *tape, const char *expr, int n_inputs,
                              const lt_tensor *const *inputs, lt_tensor **out);
LT_API lt_status lt_ad_einsum_modes(lt_tape *tape, int n_inputs, const lt_tensor *const *inputs,
                                    const int32_t *const *modes, int rank_out,
                                    const int32_t *modes_out, lt_tensor **out);
/* lt_tensor_contiguous (copy, dtype conversion), recorded. */
LT_API lt_status lt_ad_contiguous(lt_tape *tape, const lt_tensor *a, lt_dtype dtype,
                                  lt_tensor **out);
/* Views (and lt_tensor_reshape), recorded. */
LT_API lt_status lt_ad_reshape(lt_tape *tape, const lt_tensor *a, int rank, const int64_t *shape,
                               lt_tensor **out);
LT_API lt_status lt_ad_permute(lt_tape *tape, const lt_tensor *a, const int *axes, lt_tensor **out);
LT_API lt_status lt_ad_slice(lt_tape *tape, const lt_tensor *a, int axis, int64_t start,
                             int64_t stop, int64_t step, lt_tensor **out);
LT_API lt_status lt_ad_select(lt_tape *tape, const lt_tensor *a, int axis, int64_t index,
                              lt_tensor **out);
LT_API lt_status lt_ad_broadcast_to(lt_tape *tape, const lt_tensor *a, int rank,
                                    const int64_t *shape, lt_tensor **out);
LT_API lt_status lt_ad_squeeze(lt_tape *tape, const lt_tensor *a, int axis, lt_tensor **out);
LT_API lt_status lt_ad_unsqueeze(lt_tape *tape, const lt_tensor *a, int axis, lt_tensor **out);
LT_API lt_status lt_ad_flip(lt_tape *tape, const lt_tensor *a, int axis, lt_tensor **out);
LT_API lt_status lt_ad_diagonal(lt_tape *tape, const lt_tensor *a, int64_t offset, int axis1,
                                int axis2, lt_tensor **out);
/* as_strided relative to a's storage, as lt_view_as_strided. Elements the view reads more than
 * once receive the sum of their gradients. */
LT_API lt_status lt_ad_as_strided(lt_tape *tape, const lt_tensor *a, int rank, const int64_t *shape,
                                  const int64_t *strides, int64_t offset, lt_tensor **out);

/* ---- issue 19: the vocabulary ops, recorded (each the plain call of the same name). Index
 * tensors and where's condition are saved (an in-place change of them makes backward fail) and
 * receive no gradient. ---- */

/* lt_softmax / lt_log_softmax (stats.h), recorded. They save their output. */
LT_API lt_status lt_ad_softmax(lt_tape *tape, const lt_tensor *a, int n_axes, const int *axes,
                               lt_tensor **out);
LT_API lt_status lt_ad_log_softmax(lt_tape *tape, const lt_tensor *a, int n_axes, const int *axes,
                                   lt_tensor **out);
/* lt_logsumexp, recorded (gradient: g times the softmax of a; saves a). */
LT_API lt_status lt_ad_logsumexp(lt_tape *tape, const lt_tensor *a, int n_axes, const int *axes,
                                 bool keepdims, lt_tensor **out);
/* lt_var / lt_std with ddof, recorded (save a; std is recomputed in backward). */
LT_API lt_status lt_ad_var(lt_tape *tape, const lt_tensor *a, int n_axes, const int *axes,
                           double ddof, bool keepdims, lt_tensor **out);
LT_API lt_status lt_ad_std(lt_tape *tape, const lt_tensor *a, int n_axes, const int *axes,
                           double ddof, bool keepdims, lt_tensor **out);
/* lt_cumsum / lt_cumprod, recorded. cumprod's gradient is exact with zeros in a. */
LT_API lt_status lt_ad_cumsum(lt_tape *tape, const lt_tensor *a, int axis, lt_tensor **out);
LT_API lt_status lt_ad_cumprod(lt_tape *tape, const lt_tensor *a, int axis, lt_tensor **out);
/* lt_take / lt_index_select / lt_take_along_axis (index.h), recorded: a's gradient is the
 * output gradient scatter-added at the index (repeated indices add up). */
LT_API lt_status lt_ad_take(lt_tape *tape, const lt_tensor *a, const lt_tensor *index, int axis,
                            lt_tensor **out);
LT_API lt_status lt_ad_index_select(lt_tape *tape, const lt_tensor *a, int axis,
                                    const lt_tensor *index, lt_tensor **out);
LT_API lt_status lt_ad_take_along_axis(lt_tape *tape, const lt_tensor *a, const lt_tensor *index,
                                       int axis, lt_tensor **out);
/* Out-of-place scatter-add (torch.scatter_add / index_add): *out = a C-contiguous copy of d
 * with lt_scatter_add(copy, axis, index, src) applied; d is not changed. Gradients: d gets the
 * output gradient, src gets it gathered at the index. Fails as lt_scatter_add. */
LT_API lt_status lt_ad_scatter_add(lt_tape *tape, const lt_tensor *d, int axis,
                                   const lt_tensor *index, const lt_tensor *src, lt_tensor **out);
/* lt_where, recorded: a gets the gradient where cond holds, b elsewhere, cond none. */
LT_API lt_status lt_ad_where(lt_tape *tape, const lt_tensor *cond, const lt_tensor *a,
                             const lt_tensor *b, lt_tensor **out);
/* lt_clip, recorded: a gets the gradient where lo <= a <= hi (bounds included, as PyTorch's
 * clamp), lo where a < lo <= hi, hi where max(a, lo) > hi. */
LT_API lt_status lt_ad_clip(lt_tape *tape, const lt_tensor *a, const lt_tensor *lo,
                            const lt_tensor *hi, lt_tensor **out);
/* lt_concatenate / lt_stack, recorded (at most 64 tensors when one of them is tracked, else
 * LT_ERR_UNSUPPORTED). */
LT_API lt_status lt_ad_concatenate(lt_tape *tape, int n, const lt_tensor *const *tensors, int axis,
                                   lt_tensor **out);
LT_API lt_status lt_ad_stack(lt_tape *tape, int n, const lt_tensor *const *tensors, int axis,
                             lt_tensor **out);
/* lt_split, recorded: each piece is a recorded slice of a (outs as lt_split). */
LT_API lt_status lt_ad_split(lt_tape *tape, const lt_tensor *a, int axis, int n_points,
                             const int64_t *points, lt_tensor **outs);

/* ---- optimisers: update parameters in place from their gradients on a tape ---- */

typedef enum lt_optim_kind {
  LT_OPTIM_SGD = 0,  /* p -= lr * (g + wd*p), with momentum, dampening and Nesterov as PyTorch */
  LT_OPTIM_ADAM = 1, /* Adam (L2 weight decay added to the gradient) */
  LT_OPTIM_ADAMW = 2 /* Adam with decoupled weight decay */
} lt_optim_kind;

typedef enum lt_optim_param {
  LT_OPTIM_LR = 0,           /* default 1e-3 */
  LT_OPTIM_MOMENTUM = 1,     /* SGD, default 0 */
  LT_OPTIM_DAMPENING = 2,    /* SGD, default 0 */
  LT_OPTIM_NESTEROV = 3,     /* SGD, 0 or 1, default 0 (needs momentum > 0, dampening 0) */
  LT_OPTIM_WEIGHT_DECAY = 4, /* default 0 (AdamW: 1e-2) */
  LT_OPTIM_BETA1 = 5,        /* default 0.9 */
  LT_OPTIM_BETA2 = 6,        /* default 0.999 */
  LT_OPTIM_EPS = 7           /* default 1e-8 */
} lt_optim_param;

/* An optimiser over n_params parameters (floating, any layout the plans accept) whose gradients
 * live on `tape`. It keeps its own handles to the parameters and its state (momentum, moments).
 * Parameters that share memory (one listed twice) are LT_ERR_INVALID_ARGUMENT: a step would
 * update them twice. */
LT_API lt_status lt_optim_create(lt_tape *tape, lt_optim_kind kind, int n_params,
                                 lt_tensor *const *params, lt_optimizer **out);
/* Sets a hyper-parameter (LT_ERR_INVALID_ARGUMENT for a value out of range or one the kind does
 * not use). */
LT_API lt_status lt_optim_set(lt_optimizer *opt, lt_optim_param which, double value);
LT_API lt_status lt_optim_get(const lt_optimizer *opt, lt_optim_param which, double *value);
/* One update of every parameter that has a gradient (others are skipped, as PyTorch does). */
LT_API lt_status lt_optim_step(lt_optimizer *opt);
/* Drops the gradients of the optimiser's parameters. */
LT_API lt_status lt_optim_zero_grad(lt_optimizer *opt);
/* NULL ok. The tape must outlive the optimiser's last step, not its destroy. */
LT_API void lt_optim_destroy(lt_optimizer *opt);

#ifdef __cplusplus
}
#endif
#endif
