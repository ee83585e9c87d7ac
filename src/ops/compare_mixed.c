/* SPDX-License-Identifier: MIT */
/* Comparisons of u64 with a signed integer dtype. NumPy compares them exactly, but their
 * promoted dtype is f64, whose compute rounds values past 2^53 (u64 2^53 + 1 == i64 2^53, and
 * 2^63 - 1 == 2^63). A negative signed value is below every u64, so the answer is
 * where(signed < 0, what that case gives, the comparison in u64): three exact passes. */
#include "ops/compare_mixed.h"

#include "core/dtype.h"
#include "core/error.h"
#include "core/object.h"

bool lt__compare_is_mixed_sign(lt_binary_op op, lt_dtype a, lt_dtype b) {
  if (op < LT_BINARY_EQ || op > LT_BINARY_GE) return false;
  return (a == LT_U64 && lt__dtype_is_signed_int(b)) || (b == LT_U64 && lt__dtype_is_signed_int(a));
}

/* What a op b is when the signed operand is negative (so below the u64 one). */
static bool when_negative(lt_binary_op op, bool a_is_signed) {
  bool a_below = a_is_signed; /* the signed operand is the smaller one */
  switch (op) {
  case LT_BINARY_EQ: return false;
  case LT_BINARY_NE: return true;
  case LT_BINARY_LT:
  case LT_BINARY_LE: return a_below;
  default: return !a_below; /* GT, GE */
  }
}

lt_status lt__compare_mixed_sign(lt_binary_op op, const lt_tensor *a, const lt_tensor *b,
                                 lt_tensor **out) {
  bool a_is_signed = a->dtype != LT_U64;
  const lt_tensor *s = a_is_signed ? a : b;
  lt_context *ctx = s->storage->ctx;
  lt_tensor *zero = NULL, *negative = NULL, *as_u64 = NULL, *in_u64 = NULL, *fixed = NULL;
  lt_status st = lt_tensor_zeros(ctx, s->dtype, 0, NULL, &zero);
  if (st == LT_OK) st = lt_binary(LT_BINARY_LT, s, zero, &negative);
  /* the signed operand's bits as u64: negatives wrap, and are masked below */
  if (st == LT_OK) st = lt_tensor_contiguous(s, LT_U64, &as_u64);
  if (st == LT_OK) st = lt_binary(op, a_is_signed ? as_u64 : a, a_is_signed ? b : as_u64, &in_u64);
  if (st == LT_OK)
    st = lt_tensor_full(ctx, LT_BOOL, 0, NULL, when_negative(op, a_is_signed) ? 1.0 : 0.0, &fixed);
  if (st == LT_OK) st = lt_where(negative, fixed, in_u64, out);
  lt_tensor_destroy(fixed);
  lt_tensor_destroy(in_u64);
  lt_tensor_destroy(as_u64);
  lt_tensor_destroy(negative);
  lt_tensor_destroy(zero);
  return st;
}
