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
  bool gemm_any_strides;   /* the backend's GEMM takes matrices with no unit stride */
  bool gemm_16bit;         /* ... and f16 / bf16 A and B under f32 compute */
  bool gemm_store_16bit;   /* ... and stores an f16 / bf16 C from f32 compute */
  bool lowp_exact;         /* those in IEEE f32 arithmetic (LT_LOWP_F32) */
  int64_t gemm_line_max_k; /* ... reads inputs by lines of a non-innermost mode up to this k */
  bool lines_off;          /* the lowering's choice: such inputs are packed instead */
  /* An integer contraction run as an exact float GEMM: its integer compute, in which alpha,
   * beta and D's conversion are applied (LT_DTYPE_INVALID otherwise). */
  lt_dtype int_compute;
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

/* Pieces of lt__lower_pair shared by its files (pair.c, pair_direct.c). */
void lt__pair_operand_over(const lt__mview *v, int rank, const int32_t *modes, lt__operand *op);
/* Output of the final map: D = in0 [* in1] + beta*C, with C = D itself when there is none. */
void lt__pair_add_beta_term(const lt__pair *p, lt__step *s, int slot);
/* The float dtype in which p, an integer contraction over k terms, runs exactly as a GEMM
 * (every product and partial sum an integer the float holds), or LT_DTYPE_INVALID (pair_int.c). */
lt_dtype lt__pair_exact_float_compute(const lt__pair *p, int64_t k);
/* Sums the modes of v that neither `other` nor p's D has into workspace (a reduce step); v
 * becomes that workspace and *unary the identity, which the reduction applied. */
lt_status lt__pair_reduce_private(lt__program *prog, lt__pair *p, lt__mview *v,
                                  const lt__mview *other, lt_unary_op *unary);
/* Contiguous workspace view over `modes` (C order) of `dtype`. */
lt_status lt__pair_ws_view(lt__program *prog, const int64_t *extent, int rank, const int32_t *modes,
                           lt_dtype dtype, lt__mview *out);
/* Materialises `src` over `modes` into fresh workspace (conversion and unary on the way). */
lt_status lt__pair_pack(lt__program *prog, const int64_t *extent, const lt__mview *src,
                        lt_unary_op unary, int rank, const int32_t *modes, lt_dtype dtype,
                        lt__mview *out);
/* A map step writing D over its own modes (NULL when out of memory). */
lt__step *lt__pair_map_into_d(lt__program *prog, const lt__pair *p);
/* Some contracted mode has extent 0: D = beta*C. */
lt_status lt__pair_lower_fill(lt__program *prog, const lt__pair *p);
/* No contracted mode: D = alpha*A*B + beta*C elementwise. */
lt_status lt__pair_lower_elementwise(lt__program *prog, const lt__pair *p);
/* One direct-kernel step over D's modes and the nk contracted modes k. */
lt_status lt__pair_lower_direct(lt__program *prog, const lt__pair *p, int nk, const int32_t *k);

#endif
