/* Strided reduction (placeholder engine: correct, one output element at a time). */
#include "backend/cpu/cpu.h"
#include "backend/cpu/scalar_ops.h"
#include "core/dtype.h"

#include <math.h>

static int64_t product(int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= shape[d];
  return n;
}

/* Offset of linear index n in a row-major walk of shape with the given strides. */
static int64_t linear_offset(int rank, const int64_t *shape, const int64_t *strides, int64_t n) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; d--) {
    off += (n % shape[d]) * strides[d];
    n /= shape[d];
  }
  return off;
}

lt_status lt__cpu_reduce(lt_context *ctx, const lt__reduce_step *s) {
  int64_t nout = product(s->rank, s->shape), nred = product(s->red_rank, s->red_shape);
  for (int64_t o = 0; o < nout; o++) {
    int64_t base = s->in.offset + linear_offset(s->rank, s->shape, s->in.strides, o);
    double acc;
    int64_t arg = 0;
    switch (s->op) {
    case LT_REDUCE_PROD: acc = 1; break;
    case LT_REDUCE_MIN: acc = INFINITY; break;
    case LT_REDUCE_MAX: acc = -INFINITY; break;
    default: acc = 0; break;
    }
    bool seen_nan = false;
    for (int64_t r = 0; r < nred; r++) {
      double x = lt__unary_f64(s->unary, lt__load_f64(s->in.mem, s->in.dtype,
                   base + linear_offset(s->red_rank, s->red_shape, s->in_red_strides, r)));
      switch (s->op) {
      case LT_REDUCE_SUM: case LT_REDUCE_MEAN: acc += x; break;
      case LT_REDUCE_PROD: acc *= x; break;
      case LT_REDUCE_MIN: acc = lt__binary_f64(LT_BINARY_MIN, acc, x); break;
      case LT_REDUCE_MAX: acc = lt__binary_f64(LT_BINARY_MAX, acc, x); break;
      case LT_REDUCE_SUMSQ: acc += x * x; break;
      case LT_REDUCE_MAXABS: acc = lt__binary_f64(LT_BINARY_MAX, acc, fabs(x)); break;
      case LT_REDUCE_ARGMAX:
      case LT_REDUCE_ARGMIN:
        if (seen_nan) break;
        if (x != x) { seen_nan = true; arg = r; break; }
        if (r == 0 || (s->op == LT_REDUCE_ARGMAX ? x > acc : x < acc)) { acc = x; arg = r; }
        break;
      }
    }
    int64_t oo = s->out.offset + linear_offset(s->rank, s->shape, s->out.strides, o);
    if (s->op == LT_REDUCE_ARGMAX || s->op == LT_REDUCE_ARGMIN) {
      lt__store_f64(s->out.mem, s->out.dtype, oo, (double)arg);
      continue;
    }
    if (s->op == LT_REDUCE_MEAN) acc = nred ? acc / (double)nred : NAN;
    double v = s->alpha * acc;
    if (s->beta != 0) {
      const lt__operand *c = s->has_c ? &s->c : &s->out;
      int64_t co = c->offset + linear_offset(s->rank, s->shape, c->strides, o);
      v += s->beta * lt__load_f64(c->mem, c->dtype, co);
    }
    lt__store_f64(s->out.mem, s->out.dtype, oo, v);
  }
  return LT_OK;
}
