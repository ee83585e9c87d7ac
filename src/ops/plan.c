/* SPDX-License-Identifier: MIT */
/* Plan objects shared by every operation family: options, validation at execute, lifetime. */
#include "ops/plan.h"
#include "core/dtype.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal copies of these (on the stack) carry the tag too, so that they pass every check. */
static const lt_plan_options default_options = {
    .tag = LT__HANDLE_PLAN_OPTIONS,
    .compute = LT_DTYPE_INVALID,
    .output = LT_DTYPE_INVALID,
    .unary = {LT_UNARY_IDENTITY, LT_UNARY_IDENTITY, LT_UNARY_IDENTITY},
    .path = LT_PATH_AUTO,
    .memory_limit = 0,
    .lowp = LT_LOWP_FAST,
    .path_trials = LT__PATH_DEFAULT_TRIALS,
    .path_seconds = LT__PATH_DEFAULT_SECONDS,
    .path_seed = 0,
    .path_memory_weight = 0,
};

const lt_plan_options *lt__plan_options_default(void) { return &default_options; }

lt_status lt_plan_options_create(lt_plan_options **out) {
  LT_CHECK_NULL(out, "out");
  *out = malloc(sizeof **out);
  LT_RETURN_IF(*out == NULL, LT_ERR_OUT_OF_MEMORY, "lt_plan_options_create: out of memory");
  **out = default_options;
  return LT_OK;
}

void lt_plan_options_destroy(lt_plan_options *opts) {
  if (!lt__handle_may_destroy(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_destroy")) return;
  free(opts->path_pairs);
  opts->path_pairs = NULL;
  lt__handle_kill(opts, LT__HANDLE_PLAN_OPTIONS);
  lt__handle_retire(opts);
}

lt_status lt__check_options(const lt_plan_options *opts, const char *fn) {
  return opts == NULL ? LT_OK : lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, fn, "opts");
}

lt_status lt_plan_options_set_compute_dtype(lt_plan_options *opts, lt_dtype dtype) {
  LT_TRY(
      lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_set_compute_dtype", "opts"));
  LT_RETURN_IF(
      dtype != LT_F32 && dtype != LT_F64 && dtype != LT_I64 && dtype != LT_U64 &&
          dtype != LT_DTYPE_INVALID,
      LT_ERR_DTYPE,
      "lt_plan_options_set_compute_dtype: compute dtype must be f32, f64, i64 or u64, not %s",
      lt_dtype_name(dtype) ? lt_dtype_name(dtype) : "an invalid dtype");
  opts->compute = dtype;
  return LT_OK;
}

lt_status lt_plan_options_set_lowp_compute(lt_plan_options *opts, lt_lowp_compute mode) {
  LT_TRY(
      lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_set_lowp_compute", "opts"));
  LT_RETURN_IF(mode != LT_LOWP_FAST && mode != LT_LOWP_F32, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_lowp_compute: mode %d is neither LT_LOWP_FAST (0) nor "
               "LT_LOWP_F32 (1)",
               (int)mode);
  opts->lowp = mode;
  return LT_OK;
}

lt_status lt_plan_options_set_unary(lt_plan_options *opts, int operand, lt_unary_op op) {
  LT_TRY(lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_set_unary", "opts"));
  LT_RETURN_IF(operand < 0 || operand > 2, LT_ERR_OUT_OF_RANGE,
               "lt_plan_options_set_unary: operand index %d is outside [0, 2] (A, B, C)", operand);
  LT_RETURN_IF((int)op < LT_UNARY_IDENTITY || (int)op > LT_UNARY_SIGNBIT, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_unary: unknown unary op code %d", (int)op);
  opts->unary[operand] = op;
  return LT_OK;
}

lt_status lt_plan_options_set_path(lt_plan_options *opts, lt_path_algo algo) {
  LT_TRY(lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_set_path", "opts"));
  LT_RETURN_IF((int)algo < LT_PATH_AUTO || (int)algo > LT_PATH_PARTITION, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_path: unknown path algorithm %d", (int)algo);
  opts->path = algo;
  return LT_OK;
}

lt_status lt_plan_options_set_memory_limit(lt_plan_options *opts, int64_t bytes) {
  LT_TRY(
      lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_set_memory_limit", "opts"));
  LT_RETURN_IF(bytes < 0, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_options_set_memory_limit: memory limit %lld is negative", (long long)bytes);
  opts->memory_limit = bytes;
  return LT_OK;
}

lt_status lt_plan_options_set_output_dtype(lt_plan_options *opts, lt_dtype dtype) {
  LT_TRY(
      lt__handle_check(opts, LT__HANDLE_PLAN_OPTIONS, "lt_plan_options_set_output_dtype", "opts"));
  LT_RETURN_IF(dtype != LT_DTYPE_INVALID && !lt__dtype_valid(dtype), LT_ERR_DTYPE,
               "lt_plan_options_set_output_dtype: invalid output dtype %d", (int)dtype);
  opts->output = dtype;
  return LT_OK;
}

lt_status lt__plan_alloc(lt_context *ctx, lt__plan_kind kind, int n_inputs_max, lt_plan **out) {
  lt_plan *p = lt__host_alloc(ctx, sizeof *p);
  LT_RETURN_IF(p == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory allocating a plan");
  memset(p, 0, sizeof *p);
  p->tag = LT__HANDLE_PLAN;
  size_t bytes = sizeof(lt__layout) * (size_t)(n_inputs_max > 0 ? n_inputs_max : 1);
  p->inputs = lt__host_alloc(ctx, bytes);
  if (p->inputs == NULL) {
    lt__host_free(ctx, p, sizeof *p);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "out of memory allocating a plan");
  }
  memset(p->inputs, 0, bytes);
  p->n_inputs_max = n_inputs_max;
  p->inputs_capacity = n_inputs_max > 0 ? n_inputs_max : 1;
  p->kind = kind;
  p->ctx = ctx;
  lt__context_retain(ctx);
  *out = p;
  return LT_OK;
}

void lt__layout_from_tensor(const lt_tensor *t, lt__layout *layout) {
  layout->dtype = t->dtype;
  layout->rank = t->rank;
  memcpy(layout->shape, t->shape, sizeof(int64_t) * (size_t)t->rank);
  memcpy(layout->strides, t->strides, sizeof(int64_t) * (size_t)t->rank);
}

lt_status lt__plan_set_description(lt_plan *plan, const char *text) {
  size_t n = strlen(text) + 1;
  char *copy = lt__host_alloc(plan->ctx, n);
  LT_RETURN_IF(copy == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory for a plan description");
  memcpy(copy, text, n);
  if (plan->description) lt__host_free(plan->ctx, plan->description, strlen(plan->description) + 1);
  plan->description = copy;
  return LT_OK;
}

lt_dtype lt__plan_promoted(int n, const lt_tensor *const *ts) {
  lt_dtype d[16]; /* the distinct dtypes: there are 13 */
  int m = 0;
  for (int i = 0; i < n; i++)
    if (ts[i]) {
      lt_dtype t = ts[i]->dtype;
      bool seen = false;
      for (int j = 0; j < m; j++)
        seen |= d[j] == t;
      if (!seen && m < 16) d[m++] = t;
    }
  return m ? lt__dtype_promote_many(m, d) : LT_DTYPE_INVALID;
}

lt_status lt__plan_check_float_to_int(const char *call, lt_dtype compute, lt_dtype output) {
  LT_RETURN_IF(lt__dtype_is_float(compute) && !lt__dtype_is_float(output), LT_ERR_DTYPE,
               "%s: the operands compute in %s but the output is %s, which would truncate or wrap "
               "the results without a check; write into a floating output and convert it with "
               "lt_tensor_contiguous (which refuses NaN and out-of-range values)",
               call, lt_dtype_name(compute), lt_dtype_name(output));
  return LT_OK;
}

lt_status lt__plan_compute_dtype(const lt_plan_options *opts, int n, const lt_tensor *const *ts,
                                 lt_dtype *out) {
  if (opts && opts->compute != LT_DTYPE_INVALID) {
    LT_RETURN_IF(!lt__dtype_is_float(opts->compute) && opts->compute != LT_I64 &&
                     opts->compute != LT_U64,
                 LT_ERR_DTYPE, "contractions compute in f32, f64, i64 or u64, not %s",
                 lt_dtype_name(opts->compute));
    *out = opts->compute;
    return LT_OK;
  }
  /* Integer and bool operands alone compute exactly in 64-bit integers, wrapping as NumPy's
   * integer einsum and matmul do (products and sums modulo 2^64 narrow to any output width
   * unchanged); bool results are "any product nonzero", NumPy's or-of-ands. A float among
   * them makes the compute a float one (f64 then, as NumPy 2 promotes i64 + f32). */
  bool all_exact = true, any_f64 = false, any_exact = false, any_u64 = false;
  for (int i = 0; i < n; i++) {
    if (!ts[i]) continue;
    bool exact = lt__dtype_is_exact(ts[i]->dtype);
    all_exact &= exact;
    any_exact |= exact;
    any_f64 |= ts[i]->dtype == LT_F64;
    any_u64 |= ts[i]->dtype == LT_U64;
  }
  if (all_exact && any_exact)
    *out = any_u64 && lt__plan_promoted(n, ts) == LT_U64 ? LT_U64 : LT_I64;
  else
    *out = any_f64 || any_exact ? LT_F64 : LT_F32;
  return LT_OK;
}

lt_dtype lt__plan_map_compute(const lt_plan_options *opts, int n, const lt_tensor *const *ts,
                              bool float_op) {
  if (opts && opts->compute != LT_DTYPE_INVALID) return opts->compute;
  lt_dtype p = lt__plan_promoted(n, ts);
  if (lt__dtype_is_exact(p)) return float_op ? LT_F64 : p == LT_U64 ? LT_U64 : LT_I64;
  return p == LT_F64 ? LT_F64 : LT_F32;
}

bool lt__unary_is_float_op(lt_unary_op op) {
  switch (op) {
  case LT_UNARY_SQRT:
  case LT_UNARY_EXP:
  case LT_UNARY_LOG:
  case LT_UNARY_SIN:
  case LT_UNARY_COS:
  case LT_UNARY_TANH:
  case LT_UNARY_SIGMOID:
  case LT_UNARY_LOG1P:
  case LT_UNARY_EXPM1:
  case LT_UNARY_ERF:
  case LT_UNARY_GELU:
  case LT_UNARY_SILU:
  case LT_UNARY_SOFTPLUS:
  case LT_UNARY_RSQRT:
  case LT_UNARY_TAN:
  case LT_UNARY_ASIN:
  case LT_UNARY_ACOS:
  case LT_UNARY_ATAN:
  case LT_UNARY_SINH:
  case LT_UNARY_COSH:
  case LT_UNARY_ASINH:
  case LT_UNARY_ACOSH:
  case LT_UNARY_ATANH:
  case LT_UNARY_LOG2:
  case LT_UNARY_LOG10: return true;
  default: return false;
  }
}

bool lt__binary_is_float_op(lt_binary_op op) {
  return op == LT_BINARY_DIV || op == LT_BINARY_ATAN2 || op == LT_BINARY_HYPOT ||
         op == LT_BINARY_COPYSIGN || op == LT_BINARY_LOGADDEXP;
}

bool lt__unary_is_int_op(lt_unary_op op) { return op == LT_UNARY_INVERT; }

bool lt__binary_is_int_op(lt_binary_op op) {
  return op >= LT_BINARY_BITWISE_AND && op <= LT_BINARY_SHIFT_RIGHT;
}

const char *lt__unary_name(lt_unary_op op) {
  static const char *const names[] = {
      "identity", "neg",      "abs",      "sqrt",    "exp",         "log",    "sin",
      "cos",      "tanh",     "sigmoid",  "relu",    "reciprocal",  "square", "log1p",
      "expm1",    "floor",    "ceil",     "round",   "trunc",       "sign",   "erf",
      "gelu",     "silu",     "softplus", "rsqrt",   "logical_not", "invert", "isnan",
      "isinf",    "isfinite", "tan",      "arcsin",  "arccos",      "arctan", "sinh",
      "cosh",     "arcsinh",  "arccosh",  "arctanh", "log2",        "log10",  "signbit"};
  return (int)op >= 0 && (size_t)op < sizeof names / sizeof names[0] ? names[op] : "op";
}

const char *lt__binary_name(lt_binary_op op) {
  static const char *const names[] = {
      "add",           "multiply",    "minimum",     "maximum",      "subtract",    "divide",
      "power",         "equal",       "not_equal",   "less",         "less_equal",  "greater",
      "greater_equal", "logical_and", "logical_or",  "logical_xor",  "bitwise_and", "bitwise_or",
      "bitwise_xor",   "left_shift",  "right_shift", "floor_divide", "remainder",   "fmod",
      "arctan2",       "hypot",       "where",       "copysign",     "logaddexp"};
  return (int)op >= 0 && (size_t)op < sizeof names / sizeof names[0] ? names[op] : "op";
}

/* Fast path of check_layout: true when t matches (the message is only built on a mismatch,
 * keeping execution overhead low). */
static bool layout_matches(const lt_tensor *t, const lt__layout *want) {
  if (t == NULL || t->tag != LT__HANDLE_TENSOR || t->dtype != want->dtype || t->rank != want->rank)
    return false;
  bool empty = false;
  for (int i = 0; i < t->rank; i++) {
    if (t->shape[i] != want->shape[i]) return false;
    empty |= t->shape[i] == 0;
  }
  if (empty) return true; /* nothing is read or written: strides do not matter (NumPy's are 0) */
  for (int i = 0; i < t->rank; i++)
    if (t->shape[i] > 1 && t->strides[i] != want->strides[i]) return false;
  return true;
}

/* Compares a tensor with the layout the plan expects, naming the first difference. */
static lt_status check_layout(const lt_tensor *t, const lt__layout *want, const char *what) {
  LT_TRY(lt__handle_check(t, LT__HANDLE_TENSOR, "lt_plan_execute", what));
  LT_RETURN_IF(t->dtype != want->dtype, LT_ERR_LAYOUT_MISMATCH,
               "lt_plan_execute: %s has dtype %s but the plan was built for %s", what,
               lt_dtype_name(t->dtype), lt_dtype_name(want->dtype));
  LT_RETURN_IF(t->rank != want->rank, LT_ERR_LAYOUT_MISMATCH,
               "lt_plan_execute: %s has rank %d but the plan was built for rank %d", what, t->rank,
               want->rank);
  bool empty = false; /* extents first: a wrong extent shifts every stride outside it */
  for (int i = 0; i < t->rank; i++) {
    LT_RETURN_IF(t->shape[i] != want->shape[i], LT_ERR_LAYOUT_MISMATCH,
                 "lt_plan_execute: %s axis %d has extent %lld but the plan was built for %lld",
                 what, i, (long long)t->shape[i], (long long)want->shape[i]);
    empty |= t->shape[i] == 0;
  }
  for (int i = 0; i < t->rank && !empty; i++)
    LT_RETURN_IF(t->shape[i] > 1 && t->strides[i] != want->strides[i], LT_ERR_LAYOUT_MISMATCH,
                 "lt_plan_execute: %s axis %d has stride %lld but the plan was built for %lld",
                 what, i, (long long)t->strides[i], (long long)want->strides[i]);
  return LT_OK;
}

lt_status lt__plan_check_call(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                              const double *scalars, int n_scalars, lt_tensor *d) {
  if (!lt__handle_live(plan, LT__HANDLE_PLAN))
    return lt__handle_check(plan, LT__HANDLE_PLAN, "lt_plan_execute", "plan");
  LT_RETURN_IF(n_inputs < plan->n_inputs_min || n_inputs > plan->n_inputs_max,
               LT_ERR_INVALID_ARGUMENT, "lt_plan_execute: the plan takes %d to %d inputs, got %d",
               plan->n_inputs_min, plan->n_inputs_max, n_inputs);
  LT_RETURN_IF(n_inputs > 0 && inputs == NULL, LT_ERR_NULL_POINTER,
               "lt_plan_execute: inputs is NULL");
  LT_RETURN_IF(scalars != NULL && n_scalars != plan->n_scalars, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_execute: the plan takes %d scalars, got %d", plan->n_scalars, n_scalars);
  char what[32];
  for (int i = 0; i < n_inputs; i++) {
    if (!layout_matches(inputs[i], &plan->inputs[i])) {
      snprintf(what, sizeof what, "input %d", i);
      LT_TRY(check_layout(inputs[i], &plan->inputs[i], what));
    }
    if (inputs[i]->storage->ctx != plan->ctx) {
      snprintf(what, sizeof what, "input %d", i);
      return lt__context_mismatch("lt_plan_execute", what, inputs[i]->storage->ctx, "the plan",
                                  plan->ctx);
    }
  }
  if (!layout_matches(d, &plan->output)) LT_TRY(check_layout(d, &plan->output, "output"));
  if (d->storage->ctx != plan->ctx)
    return lt__context_mismatch("lt_plan_execute", "the output", d->storage->ctx, "the plan",
                                plan->ctx);
  return LT_OK;
}

lt_status lt_plan_execute(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                          const double *scalars, int n_scalars, lt_tensor *d) {
  LT_TRY(lt__plan_check_call(plan, inputs, n_inputs, scalars, n_scalars, d));
  /* D is written in place: a tape that saved it for backward must see it (the optimisers and
   * any caller-owned output went unnoticed before) */
  lt__storage_touch(d->storage);
  if (plan->ctx->backend->warm) {
    int64_t work = d->numel;
    for (int i = 0; i < n_inputs; i++)
      work += inputs[i]->numel;
    plan->ctx->backend->warm(plan->ctx, work);
  }
  return plan->run(plan, inputs, n_inputs, scalars ? scalars : plan->default_scalars, d);
}

lt_status lt_plan_create_output(const lt_plan *plan, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__handle_check(plan, LT__HANDLE_PLAN, "lt_plan_create_output", "plan"));
  return lt__tensor_new(plan->ctx, plan->output.dtype, plan->output.rank, plan->output.shape, out);
}

lt_status lt_plan_workspace_size(const lt_plan *plan, size_t *bytes) {
  LT_TRY(lt__handle_check(plan, LT__HANDLE_PLAN, "lt_plan_workspace_size", "plan"));
  LT_CHECK_NULL(bytes, "bytes");
  *bytes = plan->workspace_bytes;
  return LT_OK;
}

const char *lt_plan_describe(const lt_plan *plan) {
  if (lt__handle_check(plan, LT__HANDLE_PLAN, "lt_plan_describe", "plan") != LT_OK) return NULL;
  return plan->description ? plan->description : "";
}

void lt_plan_destroy(lt_plan *plan) {
  if (!lt__handle_may_destroy(plan, LT__HANDLE_PLAN, "lt_plan_destroy")) return;
  if (plan->destroy_impl) plan->destroy_impl(plan->impl);
  lt_context *ctx = plan->ctx;
  if (plan->description) lt__host_free(ctx, plan->description, strlen(plan->description) + 1);
  lt__host_free(ctx, plan->inputs, sizeof(lt__layout) * (size_t)plan->inputs_capacity);
  lt__handle_kill(plan, LT__HANDLE_PLAN);
  lt__handle_free(ctx, plan, sizeof *plan);
  lt__context_release(ctx);
}
