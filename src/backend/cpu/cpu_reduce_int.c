/* SPDX-License-Identifier: MIT */
/* Exact integer reductions (I64 / U64 compute): the float walks keep totals and argmax bests
 * in double, which loses integers above 2^53, so integer steps take this walk instead: an
 * output at a time (split across threads), the reduced space read a row at a time through the
 * integer chunk kernels, accumulated in 64-bit two's complement (wrapping as NumPy's int64
 * sums do). */
#include "backend/cpu/cpu_int_ops.h"
#include "backend/cpu/cpu_reduce.h"
#include "core/dtype.h"

/* Rounded, saturated scalar in the compute type's bits. */
static uint64_t int_scalar(double v, bool sgn) {
  return sgn ? (uint64_t)lt__f64_to_i64(nearbyint(v)) : lt__f64_to_u64(nearbyint(v));
}

static uint64_t start_value(const reduce_job *j, bool sgn) {
  switch (j->kind) {
  case LT__CPU_PROD: return 1;
  case LT__CPU_MIN: return sgn ? (uint64_t)INT64_MAX : UINT64_MAX;
  /* An empty MAXABS is 0; a non-empty one may be negative (the wrapped |INT_MIN|). */
  case LT__CPU_MAX:
    return !sgn || (j->pre == LT_UNARY_ABS && j->n_red == 0) ? 0 : (uint64_t)INT64_MIN;
  default: return 0;
  }
}

/* Bits of an integer input narrower than the compute's 64: its transformed values (opA, then
 * the abs of MAXABS) wrap to them before they are compared or summed, as NumPy applies the
 * transform in the input's dtype (|-128| is -128 in int8, so max |x| of int8 [-128, 3] is 3, not
 * a 128 that wraps to -128 when stored); 0 for 64-bit inputs and bool. */
static int narrow_bits(lt_dtype dt) {
  switch (dt) {
  case LT_I8:
  case LT_U8: return 8;
  case LT_I16:
  case LT_U16: return 16;
  case LT_I32:
  case LT_U32: return 32;
  default: return 0;
  }
}

static void wrap_to(uint64_t *v, int64_t n, int bits, bool is_signed) {
  int sh = 64 - bits;
  for (int64_t i = 0; i < n; i++)
    v[i] = is_signed ? (uint64_t)((int64_t)(v[i] << sh) >> sh) : v[i] << sh >> sh;
}

/* The reduced values of one output, a row of the reduced nest at a time, into acc (and, for
 * argmax/argmin, the first best position into *index). */
static uint64_t reduce_one(const reduce_job *j, int64_t base, bool sgn, int64_t *index) {
  const lt__reduce_step *s = j->step;
  const lt__cpu_kernels *k = j->k;
  const lt__cpu_nest *red = &j->red;
  int r = red->rank;
  int64_t len = r ? red->shape[r - 1] : 1, stride = r ? red->strides[IN][r - 1] : 0;
  int64_t rows = j->n_red / (len ? len : 1), pos = 0;
  uint64_t acc = start_value(j, sgn), buf[LT__CPU_CHUNK];
  bool is_max = s->op == LT_REDUCE_ARGMAX;
  int bits = narrow_bits(s->in.dtype);
  bool in_signed = lt_dtype_is_signed(s->in.dtype);
  lt_binary_op step = j->kind == LT__CPU_MIN ? LT_BINARY_MIN : LT_BINARY_MAX;
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, red, r ? r - 1 : 0, 0);
  for (int64_t row = 0; row < rows; row++, lt__cpu_odometer_next(&it)) {
    for (int64_t c0 = 0; c0 < len; c0 += LT__CPU_CHUNK) {
      int64_t n = len - c0 < LT__CPU_CHUNK ? len - c0 : LT__CPU_CHUNK;
      k->load(buf, s->in.mem, s->in.dtype, base + it.off[IN] + c0 * stride, stride, n);
      /* each transform in the input's width, as the OpenCL kernel (reduce.cl: lt_red_element);
       * SUMSQ's square is not one: it is exact in the 64-bit compute, as its i64/u64 result */
      if (s->unary != LT_UNARY_IDENTITY) {
        k->transform(buf, buf, n, s->unary, 1.0);
        if (bits) wrap_to(buf, n, bits, in_signed);
      }
      if (j->pre != LT_UNARY_IDENTITY) {
        k->transform(buf, buf, n, j->pre, 1.0);
        if (bits && j->pre == LT_UNARY_ABS) wrap_to(buf, n, bits, in_signed);
      }
      if (j->is_arg) {
        for (int64_t i = 0; i < n; i++, pos++)
          if (pos == 0 ||
              (is_max ? lt__int_less(acc, buf[i], sgn) : lt__int_less(buf[i], acc, sgn))) {
            acc = buf[i];
            *index = pos;
          }
        continue;
      }
      switch (j->kind) {
      case LT__CPU_SUM:
        for (int64_t i = 0; i < n; i++)
          acc += buf[i];
        break;
      case LT__CPU_PROD:
        for (int64_t i = 0; i < n; i++)
          acc *= buf[i];
        break;
      default:
        for (int64_t i = 0; i < n; i++)
          acc = lt__int_binary(acc, buf[i], step, sgn);
        break;
      }
    }
  }
  return acc;
}

static void run_outputs(void *arg, int64_t lo, int64_t hi) {
  const reduce_job *j = arg;
  const lt__reduce_step *s = j->step;
  const lt__cpu_kernels *k = j->k;
  bool sgn = s->compute == LT_I64;
  const lt__operand *c = s->has_c ? &s->c : &s->out;
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, &j->kept, j->kept.rank, lo);
  for (int64_t t = lo; t < hi; t++, lt__cpu_odometer_next(&it)) {
    int64_t index = 0;
    uint64_t r = j->n_red ? reduce_one(j, it.off[IN], sgn, &index) : start_value(j, sgn);
    if (j->is_arg) {
      ((int64_t *)s->out.mem)[it.off[OUT]] = index;
      continue;
    }
    if (s->alpha != 1.0) r *= int_scalar(s->alpha, sgn);
    if (s->beta != 0) {
      uint64_t cv;
      k->load(&cv, c->mem, c->dtype, it.off[C], 1, 1);
      r += cv * int_scalar(s->beta, sgn);
    }
    k->store(s->out.mem, s->out.dtype, it.off[OUT], 1, &r, 1);
  }
}

void lt__cpu_reduce_int(lt_context *ctx, reduce_job *j) {
  lt__cpu_parallel(ctx, j->n_out, j->n_out + j->n_out * j->n_red, run_outputs, j);
}
