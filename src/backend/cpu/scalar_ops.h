/* Scalar semantics of unary and binary ops, shared by every CPU kernel. */
#ifndef LT_CPU_SCALAR_OPS_H
#define LT_CPU_SCALAR_OPS_H

#include "tensor.h"

#include <math.h>

static inline double lt__unary_f64(lt_unary_op op, double x) {
  switch (op) {
  case LT_UNARY_IDENTITY: return x;
  case LT_UNARY_NEG: return -x;
  case LT_UNARY_ABS: return fabs(x);
  case LT_UNARY_SQRT: return sqrt(x);
  case LT_UNARY_EXP: return exp(x);
  case LT_UNARY_LOG: return log(x);
  case LT_UNARY_SIN: return sin(x);
  case LT_UNARY_COS: return cos(x);
  case LT_UNARY_TANH: return tanh(x);
  case LT_UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
  case LT_UNARY_RELU: return x > 0 ? x : (x != x ? x : 0.0);
  case LT_UNARY_RECIPROCAL: return 1.0 / x;
  case LT_UNARY_SQUARE: return x * x;
  }
  return x;
}

/* MIN/MAX propagate NaN (unlike fmin/fmax). */
static inline double lt__binary_f64(lt_binary_op op, double a, double b) {
  switch (op) {
  case LT_BINARY_ADD: return a + b;
  case LT_BINARY_MUL: return a * b;
  case LT_BINARY_MIN: return (a != a || b != b) ? a + b : (a < b ? a : b);
  case LT_BINARY_MAX: return (a != a || b != b) ? a + b : (a > b ? a : b);
  case LT_BINARY_SUB: return a - b;
  case LT_BINARY_DIV: return a / b;
  case LT_BINARY_POW: return pow(a, b);
  }
  return a;
}

#endif
