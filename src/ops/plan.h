/* SPDX-License-Identifier: MIT */
/* Internal shape of plans and plan options, shared by every operation family (ops/, einsum/). */
#ifndef LT_OPS_PLAN_H
#define LT_OPS_PLAN_H

#include "core/object.h"

/* Default einsum path budget: greedy trials and a time cap in seconds. */
#define LT__PATH_DEFAULT_TRIALS 64
#define LT__PATH_DEFAULT_SECONDS 0.5

struct lt_plan_options {
  uint32_t tag;     /* LT__HANDLE_PLAN_OPTIONS while alive (core/handle.h) */
  lt_dtype compute; /* LT_DTYPE_INVALID = default rule */
  lt_dtype output;  /* LT_DTYPE_INVALID = natural dtype */
  lt_unary_op unary[3];
  lt_path_algo path;
  int64_t memory_limit; /* 0 = unlimited */
  lt_lowp_compute lowp; /* f16/bf16 GEMM arithmetic (LT_LOWP_FAST by default) */
  /* einsum path search (issue 22): budget, seed, objective, caller's path */
  int path_trials;
  double path_seconds;
  uint64_t path_seed;
  double path_memory_weight;
  bool path_pairs_set;
  int64_t n_path_pairs;
  int64_t (*path_pairs)[2]; /* owned (malloc) */
};

/* A layout a plan was built for; execution checks tensors against it (offset excluded). */
typedef struct lt__layout {
  lt_dtype dtype;
  int rank;
  int64_t shape[LT_MAX_RANK];
  int64_t strides[LT_MAX_RANK];
} lt__layout;

typedef enum lt__plan_kind {
  LT__PLAN_PERMUTATION,
  LT__PLAN_BINARY,
  LT__PLAN_TRINARY,
  LT__PLAN_REDUCTION,
  LT__PLAN_CONTRACTION,
  LT__PLAN_EINSUM,
  /* index family (ops/index.c, ops/sort.c) */
  LT__PLAN_GATHER,
  LT__PLAN_SCATTER,
  LT__PLAN_SORT,
  LT__PLAN_ROWS /* softmax family, var/std, scans (ops/rows.c) */
} lt__plan_kind;

struct lt_plan {
  uint32_t tag; /* LT__HANDLE_PLAN while alive (core/handle.h) */
  lt__plan_kind kind;
  lt_context *ctx;                /* retained */
  int n_inputs_min, n_inputs_max; /* accepted input counts */
  lt__layout *inputs;             /* n_inputs_max expected input layouts */
  int inputs_capacity; /* layouts allocated, what destroy frees (n_inputs_max may be lower) */
  lt__layout output;
  int n_scalars; /* how many scalars execute reads */
  double default_scalars[3];
  size_t workspace_bytes;
  char *description; /* owned, NUL-terminated */
  /* Runs the family-specific steps; inputs/output were already validated. */
  lt_status (*run)(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                   const double *scalars, lt_tensor *d);
  void (*destroy_impl)(void *impl);
  void *impl;
};

/* LT_OK for NULL (the defaults) or a live options handle; LT_ERR_INVALID_HANDLE otherwise. */
lt_status lt__check_options(const lt_plan_options *opts, const char *fn);
/* lt_plan_execute's checks of a call (counts, handles, layouts, contexts; messages name
 * lt_plan_execute), without running anything. */
lt_status lt__plan_check_execute(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                                 const double *scalars, int n_scalars, const lt_tensor *d);
/* Default options when the caller passes NULL. */
const lt_plan_options *lt__plan_options_default(void);
/* lt_plan_execute's checks of a call (counts, handles, layouts, contexts), its messages
 * included; LT_OK when plan->run may be called. */
lt_status lt__plan_check_call(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                              const double *scalars, int n_scalars, lt_tensor *d);
/* Allocates a zeroed plan on ctx (retains ctx) with room for n_inputs_max input layouts. */
lt_status lt__plan_alloc(lt_context *ctx, lt__plan_kind kind, int n_inputs_max, lt_plan **out);
/* Records a tensor's layout (without offset). */
void lt__layout_from_tensor(const lt_tensor *t, lt__layout *layout);
/* Sets the description text (copied). */
lt_status lt__plan_set_description(lt_plan *plan, const char *text);
/* Compute dtype of contractions and einsum: integers and bool alone compute exactly in I64
 * (U64 when they promote to u64); with a float among them F64 if any input is F64 or exact,
 * else F32. opts may override with F32, F64, I64 or U64 (others are LT_ERR_DTYPE). */
/* NumPy's promotion of the inputs' dtypes (NULL tensors skipped; none: LT_DTYPE_INVALID). */
lt_dtype lt__plan_promoted(int n, const lt_tensor *const *ts);
/* LT_ERR_DTYPE (naming `call`) for a plan that would store a float compute dtype into an
 * integer or bool output: its values would be truncated or wrapped without the NaN and range
 * check lt_tensor_contiguous makes. */
lt_status lt__plan_check_float_to_int(const char *call, lt_dtype compute, lt_dtype output);
lt_status lt__plan_compute_dtype(const lt_plan_options *opts, int n, const lt_tensor *const *ts,
                                 lt_dtype *out);
/* Compute dtype of elementwise and reduction plans (issue 18 A): opts' if set, else from the
 * inputs' promoted dtype: F64 / F32 for floats, I64 (U64 for u64) for integers and bool, F64
 * for those when `float_op` (the op or a unary is a float function). NULL tensors are
 * skipped. */
lt_dtype lt__plan_map_compute(const lt_plan_options *opts, int n, const lt_tensor *const *ts,
                              bool float_op);
/* Whether a unary / binary op is a float function (integer inputs compute it in f64), and
 * whether it takes integers and bool only. */
bool lt__unary_is_float_op(lt_unary_op op);
bool lt__binary_is_float_op(lt_binary_op op);
bool lt__unary_is_int_op(lt_unary_op op);
bool lt__binary_is_int_op(lt_binary_op op);
/* Names of ops, for messages ("bitwise_and"); "op" for unknown codes. */
const char *lt__unary_name(lt_unary_op op);
const char *lt__binary_name(lt_binary_op op);

#endif
