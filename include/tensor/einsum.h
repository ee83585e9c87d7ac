/* libtensor: einsum (NumPy-complete) with contraction-path optimisation. */
#ifndef LT_TENSOR_EINSUM_H
#define LT_TENSOR_EINSUM_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Plans an einsum expression ("ij,jk->ik", "...ii->...i", ",ij", implicit output) for the
 * layouts of `inputs`. `d` describes the output layout, or NULL for a C-contiguous output of
 * the natural dtype. Execute with inputs = the operands, scalars {alpha, beta}:
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

#ifdef __cplusplus
}
#endif
#endif
