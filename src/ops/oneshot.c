/* SPDX-License-Identifier: MIT */
/* NumPy-style one-shot operations: positional axes, broadcasting by trailing alignment, a new
 * output tensor. Each builds a mode-label plan, runs it once and destroys it. */
#include "core/dtype.h"
#include "core/error.h"
#include "ops/compare_mixed.h"
#include "ops/plan.h"

#include <stdio.h>
#include <string.h>

/* The float a float function of an integer or bool gives (NumPy: the smallest that holds it). */
static lt_dtype float_of(lt_dtype d) {
  return lt__dtype_is_float(d) ? d : lt__dtype_promote(d, LT_F16);
}

/* Result dtype of a binary op as NumPy 2 gives it (ops.h), or a refusal naming the operands. */
static lt_status binary_result_dtype(const char *api, lt_binary_op op, lt_dtype a, lt_dtype b,
                                     lt_dtype *out) {
  lt_dtype p = lt__dtype_promote(a, b);
  const char *name = lt__binary_name(op);
  if (op >= LT_BINARY_EQ && op <= LT_BINARY_LOGICAL_XOR) {
    *out = LT_BOOL;
    return LT_OK;
  }
  LT_RETURN_IF(op == LT_BINARY_WHERE, LT_ERR_INVALID_ARGUMENT,
               "%s: where takes three operands (lt_where)", api);
  LT_RETURN_IF(op == LT_BINARY_SUB && p == LT_BOOL, LT_ERR_DTYPE,
               "%s: subtract of bool a and bool b is not supported (as NumPy): use logical_xor",
               api);
  LT_RETURN_IF(lt__binary_is_int_op(op) && !lt__dtype_is_exact(p), LT_ERR_DTYPE,
               "%s: %s needs integer or bool operands, not a %s and b %s", api, name,
               lt_dtype_name(a), lt_dtype_name(b));
  if (lt__binary_is_float_op(op)) {
    /* NumPy's true division of integers (and bools) is float64 whatever their width. */
    /* Else each operand's own float, then promoted: NumPy casts each to float on its own
     * (arctan2 of int8 and uint8 is f16; through their int16 promotion it was f32). */
    *out = op == LT_BINARY_DIV && lt__dtype_is_exact(p)
               ? LT_F64
               : lt__dtype_promote(float_of(a), float_of(b));
    return LT_OK;
  }
  bool to_i8 = op == LT_BINARY_POW || op == LT_BINARY_FLOOR_DIVIDE || op == LT_BINARY_REMAINDER ||
               op == LT_BINARY_FMOD || op == LT_BINARY_SHIFT_LEFT || op == LT_BINARY_SHIFT_RIGHT;
  *out = p == LT_BOOL && to_i8 ? LT_I8 : p;
  return LT_OK;
}

/* Modes 0..rank-1 for the output, and trailing-aligned modes for an input of rank r. */
static void trailing_modes(int out_rank, int rank, int32_t *modes) {
  for (int i = 0; i < rank; i++)
    modes[i] = (int32_t)(out_rank - rank + i);
}

/* Runs a one-input or two-input plan into a fresh output, destroying the output on failure. */
static lt_status run_once(lt_plan *plan, const lt_tensor *const *ins, int n, lt_tensor *o,
                          lt_tensor **out) {
  lt_status st = lt_plan_execute(plan, ins, n, NULL, 0, o);
  lt_plan_destroy(plan);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  *out = o;
  return LT_OK;
}

/* An integer raised to a negative integer power has no integer result (2 ** -1): refused as
 * NumPy and PyTorch do, rather than truncated to 0. One pass over b's minimum. */
static lt_status check_int_exponent(const lt_tensor *b) {
  if (!lt__dtype_is_signed_int(b->dtype) || b->numel == 0) return LT_OK;
  lt_tensor *lowest = NULL;
  int64_t v = 0;
  lt_status st = lt_reduce(LT_REDUCE_MIN, b, -1, NULL, false, &lowest);
  if (st == LT_OK) st = lt_tensor_get_i64(lowest, NULL, &v);
  lt_tensor_destroy(lowest);
  LT_TRY(st);
  LT_RETURN_IF(v < 0, LT_ERR_INVALID_ARGUMENT,
               "lt_binary: power of integers to negative integer powers (b holds %lld) is not "
               "allowed, as NumPy: use a float dtype",
               (long long)v);
  return LT_OK;
}

lt_status lt_binary(lt_binary_op op, const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_binary: a"));
  LT_TRY(lt__check_tensor(b, "lt_binary: b"));
  int rank = a->rank > b->rank ? a->rank : b->rank;
  int64_t shape[LT_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int64_t ea = ia >= 0 ? a->shape[ia] : 1, eb = ib >= 0 ? b->shape[ib] : 1;
    LT_RETURN_IF(ea != eb && ea != 1 && eb != 1, LT_ERR_SHAPE_MISMATCH,
                 "lt_binary: operands do not broadcast: axis %d has extent %lld in a but %lld "
                 "in b (aligned from the right)",
                 i, (long long)ea, (long long)eb);
    shape[i] = ea == 1 ? eb : ea;
  }
  int32_t md[LT_MAX_RANK], ma[LT_MAX_RANK], mb[LT_MAX_RANK];
  trailing_modes(rank, rank, md);
  trailing_modes(rank, a->rank, ma);
  trailing_modes(rank, b->rank, mb);
  lt_tensor *o;
  if (a->storage->ctx != b->storage->ctx)
    return lt__context_mismatch("lt_binary", "a", a->storage->ctx, "b", b->storage->ctx);
  lt_dtype dtype = LT_DTYPE_INVALID;
  LT_TRY(binary_result_dtype("lt_binary", op, a->dtype, b->dtype, &dtype));
  if (lt__compare_is_mixed_sign(op, a->dtype, b->dtype))
    return lt__compare_mixed_sign(op, a, b, out);
  LT_TRY(lt__tensor_new(a->storage->ctx, dtype, rank, shape, &o));
  lt_plan *plan;
  lt_status st = lt_plan_binary(a, ma, b, mb, op, o, md, NULL, &plan);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  const lt_tensor *ins[2] = {a, b};
  if (op == LT_BINARY_POW && lt__dtype_is_exact(dtype)) st = check_int_exponent(b);
  if (st != LT_OK) {
    lt_plan_destroy(plan);
    lt_tensor_destroy(o);
    return st;
  }
  return run_once(plan, ins, 2, o, out);
}

lt_status lt_add(const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  return lt_binary(LT_BINARY_ADD, a, b, out);
}
lt_status lt_sub(const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  return lt_binary(LT_BINARY_SUB, a, b, out);
}
lt_status lt_mul(const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  return lt_binary(LT_BINARY_MUL, a, b, out);
}
lt_status lt_div(const lt_tensor *a, const lt_tensor *b, lt_tensor **out) {
  return lt_binary(LT_BINARY_DIV, a, b, out);
}

/* Result dtype of a unary op (ops.h): float functions give a float, the predicates bool,
 * the rest keep the dtype; -bool is refused as NumPy does. */
static lt_status unary_result_dtype(lt_unary_op op, lt_dtype a, lt_dtype *out) {
  LT_RETURN_IF(op == LT_UNARY_NEG && a == LT_BOOL, LT_ERR_DTYPE,
               "lt_unary: negative of a bool a is not supported (as NumPy): use logical_not");
  LT_RETURN_IF(op == LT_UNARY_SIGN && a == LT_BOOL, LT_ERR_DTYPE,
               "lt_unary: sign of a bool a is not supported (as NumPy)");
  LT_RETURN_IF(op == LT_UNARY_INVERT && !lt__dtype_is_exact(a), LT_ERR_DTYPE,
               "lt_unary: invert needs an integer or bool a, not %s", lt_dtype_name(a));
  if (op == LT_UNARY_NOT || op == LT_UNARY_ISNAN || op == LT_UNARY_ISINF ||
      op == LT_UNARY_ISFINITE || op == LT_UNARY_SIGNBIT)
    *out = LT_BOOL;
  else if (lt__unary_is_float_op(op))
    *out = float_of(a);
  else if (a == LT_BOOL && op == LT_UNARY_SQUARE)
    *out = LT_I8; /* NumPy has no bool loop for square: bools square as int8 */
  else
    *out = a;
  return LT_OK;
}

lt_status lt_unary(lt_unary_op op, const lt_tensor *a, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_unary: a"));
  LT_RETURN_IF((int)op < LT_UNARY_IDENTITY || (int)op > LT_UNARY_SIGNBIT, LT_ERR_INVALID_ARGUMENT,
               "lt_unary: unknown unary op code %d", (int)op);
  lt_plan_options opts = *lt__plan_options_default();
  LT_TRY(lt_plan_options_set_unary(&opts, 0, op));
  int32_t modes[LT_MAX_RANK];
  trailing_modes(a->rank, a->rank, modes);
  lt_tensor *o;
  lt_dtype dtype = LT_DTYPE_INVALID;
  LT_TRY(unary_result_dtype(op, a->dtype, &dtype));
  LT_TRY(lt__tensor_new(a->storage->ctx, dtype, a->rank, a->shape, &o));
  lt_plan *plan;
  lt_status st = lt_plan_permutation(a, modes, o, modes, &opts, &plan);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  return run_once(plan, &a, 1, o, out);
}

/* Marks the reduced axes of a rank-`rank` tensor; -1 axes means all. */
static lt_status reduced_axes(const char *api, int rank, int n_axes, const int *axes,
                              bool *reduced) {
  memset(reduced, 0, sizeof(bool) * LT_MAX_RANK);
  if (n_axes == -1) {
    for (int i = 0; i < rank; i++)
      reduced[i] = true;
    return LT_OK;
  }
  LT_RETURN_IF(n_axes < 0 || n_axes > rank, LT_ERR_INVALID_ARGUMENT,
               "%s: %d axes requested for a rank-%d tensor", api, n_axes, rank);
  LT_RETURN_IF(n_axes > 0 && axes == NULL, LT_ERR_NULL_POINTER, "%s: axes is NULL", api);
  for (int i = 0; i < n_axes; i++) {
    int ax;
    LT_TRY(lt__normalize_axis(axes[i], rank, api, &ax));
    LT_RETURN_IF(reduced[ax], LT_ERR_INVALID_ARGUMENT, "%s: axis %d is repeated", api, axes[i]);
    reduced[ax] = true;
  }
  return LT_OK;
}

/* NumPy's reduction dtypes: integer sums and products widen to 64 bits, mean is a float. */
static lt_dtype reduce_result_dtype(lt_reduce_op op, lt_dtype a) {
  if (!lt__dtype_is_exact(a)) return a;
  if (op == LT_REDUCE_MEAN) return LT_F64;
  if (op == LT_REDUCE_SUM || op == LT_REDUCE_PROD || op == LT_REDUCE_SUMSQ)
    return a == LT_U8 || a == LT_U16 || a == LT_U32 || a == LT_U64 ? LT_U64 : LT_I64;
  return a;
}

/* lt_reduce and its argmax/argmin forms; `api` names the public function in messages. */
static lt_status reduce_axes(const char *api, lt_reduce_op op, const lt_tensor *a, int n_axes,
                             const int *axes, bool keepdims, lt_tensor **out) {
  LT_RETURN_IF(out == NULL, LT_ERR_NULL_POINTER, "%s: out is NULL", api);
  *out = NULL;
  char what[64];
  snprintf(what, sizeof what, "%s: a", api);
  LT_TRY(lt__check_tensor(a, what));
  bool reduced[LT_MAX_RANK];
  LT_TRY(reduced_axes(api, a->rank, n_axes, axes, reduced));
  bool arg = op == LT_REDUCE_ARGMAX || op == LT_REDUCE_ARGMIN;
  int n_reduced = 0;
  for (int i = 0; i < a->rank; i++)
    n_reduced += reduced[i];
  LT_RETURN_IF(arg && n_reduced != 1, LT_ERR_INVALID_ARGUMENT,
               "%s: argmax and argmin take exactly one axis, not %d", api, n_reduced);
  int32_t ma[LT_MAX_RANK], md[LT_MAX_RANK];
  int64_t kept_shape[LT_MAX_RANK], full_shape[LT_MAX_RANK];
  int kept = 0;
  for (int i = 0; i < a->rank; i++) {
    ma[i] = i;
    full_shape[i] = reduced[i] ? 1 : a->shape[i];
    if (!reduced[i]) {
      md[kept] = i;
      kept_shape[kept++] = a->shape[i];
    }
  }
  lt_dtype dtype = arg ? LT_I64 : reduce_result_dtype(op, a->dtype);
  lt_tensor *o, *view;
  LT_TRY(lt__tensor_new(a->storage->ctx, dtype, keepdims ? a->rank : kept,
                        keepdims ? full_shape : kept_shape, &o));
  lt_status st = lt_view_reshape(o, kept, kept_shape, &view);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  lt_plan *plan;
  st = lt_plan_reduction(a, ma, NULL, NULL, op, view, md, NULL, &plan);
  if (st == LT_OK) {
    st = lt_plan_execute(plan, &a, 1, NULL, 0, view);
    lt_plan_destroy(plan);
  }
  lt_tensor_destroy(view);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  *out = o;
  return LT_OK;
}

lt_status lt_reduce(lt_reduce_op op, const lt_tensor *a, int n_axes, const int *axes, bool keepdims,
                    lt_tensor **out) {
  return reduce_axes("lt_reduce", op, a, n_axes, axes, keepdims, out);
}

lt_status lt_argmax(const lt_tensor *a, int axis, lt_tensor **out) {
  return reduce_axes("lt_argmax", LT_REDUCE_ARGMAX, a, 1, &axis, false, out);
}

lt_status lt_argmin(const lt_tensor *a, int axis, lt_tensor **out) {
  return reduce_axes("lt_argmin", LT_REDUCE_ARGMIN, a, 1, &axis, false, out);
}

lt_status lt_permute(const lt_tensor *a, const int *axes, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(a, "lt_permute: a"));
  LT_RETURN_IF(a->rank > 0 && axes == NULL, LT_ERR_NULL_POINTER, "lt_permute: axes is NULL");
  lt_tensor *view;
  LT_TRY(lt_view_permute(a, axes, &view));
  lt_status st = lt_tensor_contiguous(view, LT_DTYPE_INVALID, out);
  lt_tensor_destroy(view);
  return st;
}
