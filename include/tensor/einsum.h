/* SPDX-License-Identifier: MIT */
/* libtensor: einsum (NumPy-complete) with contraction-path optimisation. */
#ifndef LT_TENSOR_EINSUM_H
#define LT_TENSOR_EINSUM_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Plans an einsum expression ("ij,jk->ik", "...ii->...i", ",ij", implicit output) for the
 * layouts of `inputs`. `d` describes the output layout, or NULL for a C-contiguous output of
 * the inputs' promoted dtype (lt_dtype_promote over all of them, as NumPy's einsum).
 * Execute with inputs = the operands, scalars {alpha, beta}:
 * D = alpha * einsum(...) + beta * D. */
LT_API lt_status lt_plan_einsum(const char *expr, int n_inputs, const lt_tensor *const *inputs,
                                const lt_tensor *d, const lt_plan_options *opts, lt_plan **out);
/* Same with integer labels: modes[i] holds rank(inputs[i]) labels; modes_out the output's. */
LT_API lt_status lt_plan_einsum_modes(int n_inputs, const lt_tensor *const *inputs,
                                      const int32_t *const *modes, int rank_out,
                                      const int32_t *modes_out, const lt_tensor *d,
                                      const lt_plan_options *opts, lt_plan **out);
/* One-shot einsum into a new tensor, using the context's plan cache (opts may be NULL). */
LT_API lt_status lt_einsum(const char *expr, int n_inputs, const lt_tensor *const *inputs,
                           const lt_plan_options *opts, lt_tensor **out);
/* One-shot einsum into an existing output tensor (any layout). */
LT_API lt_status lt_einsum_into(const char *expr, int n_inputs, const lt_tensor *const *inputs,
                                const lt_plan_options *opts, lt_tensor *d);
/* One-shot integer-label einsum into a new tensor. */
LT_API lt_status lt_einsum_modes(int n_inputs, const lt_tensor *const *inputs,
                                 const int32_t *const *modes, int rank_out,
                                 const int32_t *modes_out, const lt_plan_options *opts,
                                 lt_tensor **out);

/* ---- contraction paths (search budget, explicit paths, tree introspection, slicing) ---- */

/* Budget of the LT_PATH_AUTO search for networks beyond exact search: `trials` randomised
 * greedy runs (>= 1; default 64) and a cap of `seconds` of planning (> 0; default 0.5), the
 * rest going to subtree refinement. The result is deterministic for a seed unless the time
 * cap cuts the search short. Returns
 * LT_ERR_INVALID_ARGUMENT for trials < 1 or seconds not > 0. */
LT_API lt_status lt_plan_options_set_path_budget(lt_plan_options *opts, int trials, double seconds);
/* Seed of the randomised path search (default 0). */
LT_API lt_status lt_plan_options_set_path_seed(lt_plan_options *opts, uint64_t seed);
/* Path objective: cost + memory_weight * (elements every step writes), as cotengra's
 * 'combo'; 0 (the default) minimises the cost alone. LT_ERR_INVALID_ARGUMENT if negative
 * or not finite. */
LT_API lt_status lt_plan_options_set_path_cost(lt_plan_options *opts, double memory_weight);
/* An explicit contraction path, NumPy/opt_einsum style: pair s names two positions in the
 * current operand list; both leave it and their result is appended at the end. n_pairs must
 * be the operand count - 1 (checked when planning: bad positions or counts give
 * LT_ERR_INVALID_ARGUMENT naming the pair). The pairs are copied; n_pairs = -1 clears the
 * path (pairs may then be NULL). LT_ERR_NULL_POINTER for NULL pairs with n_pairs > 0. */
LT_API lt_status lt_plan_options_set_explicit_path(lt_plan_options *opts, int64_t n_pairs,
                                                   const int64_t (*pairs)[2]);

/* Pairwise steps of an einsum plan (operands - 1; 0 for one operand). LT_ERR_INVALID_ARGUMENT
 * for a plan that is no einsum plan. */
LT_API lt_status lt_plan_einsum_n_steps(const lt_plan *plan, int64_t *n_steps);
/* Step `step` of an einsum plan's tree. pair: the positions it contracts in the operand list
 * * (two int64s, NumPy style, result appended); ssa: its two operands as ids (inputs 0..n-1, step
 * s's result n+s); cost: product of the extents the step touches (per slice); size: elements of its
 * result (per slice). Any output pointer may be NULL. LT_ERR_INVALID_ARGUMENT for a step
 * outside [0, n_steps) or a plan that is no einsum plan. */
LT_API lt_status lt_plan_einsum_step(const lt_plan *plan, int64_t step, int64_t *pair, int64_t *ssa,
                                     double *cost, double *size);
/* Slicing of an einsum plan (set when a memory limit required it): *n_sliced labels, the
 * first `cap` of them written to labels (letters as 0..25 'A'..'Z', 26..51 'a'..'z'; integer
 * labels as given), *n_slices runs, *overhead = total cost with slicing / without. Any output
 * pointer may be NULL. LT_ERR_INVALID_ARGUMENT for a plan that is no einsum plan. */
LT_API lt_status lt_plan_einsum_slicing(const lt_plan *plan, int *n_sliced, int32_t *labels,
                                        int cap, double *n_slices, double *overhead);
/* Runs slices [first, first + count) of an einsum plan (issue 24: each worker of a distributed
 * run takes a share). Slice numbers run over the sliced labels as lt_plan_einsum_slicing lists
 * them, the first fastest; a plan that slices nothing has one slice (number 0). inputs,
 * scalars {alpha, beta} and d as lt_plan_execute, and D = alpha * (sum of the range's slices) +
 * beta * D over all of D, also where no slice of the range writes (so ranges run with beta = 0
 * into separate outputs add up to the whole einsum; count = 0 only scales D). Fails as
 * lt_plan_execute, with LT_ERR_INVALID_ARGUMENT for a plan that is no einsum plan or a range
 * outside [0, slice count]. */
LT_API lt_status lt_plan_execute_slices(const lt_plan *plan, int64_t first, int64_t count,
                                        const lt_tensor *const *inputs, int n_inputs,
                                        const double *scalars, int n_scalars, lt_tensor *d);
/* A contraction path for operands of the given shapes and integer labels, without tensors or
 * a plan (as np.einsum_path). pairs (n_inputs - 1 rows) receives the path; *cost the sum of
 * the steps' extent products, *largest the elements of the largest intermediate (either may
 * be NULL; past the double range they read +inf, while the search still orders such paths
 * by their log2 cost). Any number of operands. Errors as lt_plan_einsum_modes. */
LT_API lt_status lt_einsum_find_path(int n_inputs, const int *ranks, const int64_t *const *shapes,
                                     const int32_t *const *modes, int rank_out,
                                     const int32_t *modes_out, const lt_plan_options *opts,
                                     int64_t (*pairs)[2], double *cost, double *largest);

#ifdef __cplusplus
}
#endif
#endif
