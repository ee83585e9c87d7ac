/* SPDX-License-Identifier: MIT */
/* Lowering of one pairwise contraction D = alpha*opA(A).opB(B) + beta*C over mode labels
 * into backend steps. Shared by lt_plan_contraction and every step of an einsum path.
 *
 * Strategy (chosen at plan time, see pair.c): modes only in one input are reduced first;
 * size-0 modes give beta*C; no contracted mode: one elementwise map; tiny problems: the
 * backend's direct contraction; otherwise batched GEMM over (batch, M, N, K) groups, passing
 * each operand to BLAS in place when its strides allow, packing it into workspace otherwise.
 * A packing micro-kernel path (tensor blocks straight into SIMD kernels) would be one more
 * strategy here that emits a new backend step from the same grouped description; the front
 * ends (contract.c, einsum) would not change. */
#ifndef LT_LOWER_PAIR_H
#define LT_LOWER_PAIR_H

#include "lower/program.h"

/* A strided operand described over mode ids (each mode at most once). */
typedef struct lt__mview {
  lt__bufref buf;
  int64_t offset;
  lt_dtype dtype;
  int rank;
  int32_t mode[LT_MAX_RANK];
  int64_t stride[LT_MAX_RANK];
} lt__mview;

typedef struct lt__pair {
  const int64_t *extent; /* extent of every mode id */
  lt__mview a, b;
  /* d.buf.kind == LT__BUF_NONE: the lowering allocates D in workspace (compute dtype,
   * contiguous, in a mode order that suits it) and fills d in; d.rank/d.mode give its modes. */
  lt__mview d;
  bool has_c;
  lt__mview c; /* C over d's modes, in d's order */
  lt_unary_op unary[3];
  lt_dtype compute;
  lt__scalar_role alpha, beta;
  bool gemm_any_strides;        /* the backend's GEMM takes matrices with no unit stride */
  const lt__backend_caps *caps; /* the backend's limits and cost figures (set by lt__lower_pair) */
  /* Set by lt__lower_pair when it emits a GEMM step, for plan descriptions: the engine the
   * backend chose (NULL if it names none) and m, n, k and the batch count. */
  const char *gemm_engine;
  int64_t gemm_shape[4];
} lt__pair;


/* How a lowered pair runs, for plan descriptions. */
typedef enum lt__how {
  LT__HOW_EMPTY,
  LT__HOW_FILL,
  LT__HOW_ELEMENTWISE,
  LT__HOW_DIRECT,
  LT__HOW_GEMM,
  LT__HOW_BATCHED_GEMM
} lt__how;

const char *lt__how_name(lt__how how);

/* Appends " (m x n x k, batch b, <engine>)" for a pair lowered to GEMM, nothing otherwise:
 * the plan's shape as descriptions show it (same for A.B and B.A). */
void lt__pair_describe_gemm(const lt__pair *p, lt__how how, char *text, size_t size);

/* Swaps A and B (with their unary ops) into an order that depends only on their dtypes,
 * extents, strides and places in D and in each other, never on which came first: the lowering
 * breaks ties between equally priced plans by operand order, so this makes A.B and B.A one
 * plan, and one speed (the product commutes; each operand's buffer travels with it).
 * lt__lower_pair calls it first. */
void lt__pair_canonical_order(lt__pair *p);

/* Appends the steps of one pairwise contraction to prog. */
lt_status lt__lower_pair(lt_context *ctx, lt__pair *p, lt__program *prog, lt__how *how);

/* Stride of `mode` in v, 0 if v lacks it. */
int64_t lt__mview_stride(const lt__mview *v, int32_t mode);
bool lt__mview_has(const lt__mview *v, int32_t mode);

#endif
