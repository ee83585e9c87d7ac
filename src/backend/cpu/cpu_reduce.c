/* SPDX-License-Identifier: MIT */
/* The strided reduction engine. The kept space and the reduced space become two loop nests
 * (normalised as in cpu_map.c) and one of two walks runs, split across threads:
 *   - inner: the reduced dims are the input's contiguous ones, so each output element reduces
 *     rows in chunks (blocked, 16-32 accumulators per chunk, chunk totals in double); when there
 *     are few outputs, each output's reduced range is split between threads and the partial
 *     results are combined afterwards;
 *   - outer: a kept dim is the input's contiguous one, so a chunk of outputs accumulates whole
 *     input rows elementwise (flushed into double every few rows).
 * Every op is one of sum/prod/min/max after a pre-transform (opA, then square for SUMSQ and
 * abs for MAXABS); NaN handling is the same on both walks: min/max return NaN if any input
 * is NaN, argmax/argmin return the first NaN's index. */
#include "backend/cpu/cpu_reduce.h"

static void classify(reduce_job *j) {
  switch (j->step->op) {
  case LT_REDUCE_PROD: j->kind = LT__CPU_PROD; break;
  case LT_REDUCE_MIN: j->kind = LT__CPU_MIN; break;
  case LT_REDUCE_MAX: j->kind = LT__CPU_MAX; break;
  case LT_REDUCE_MAXABS:
    j->kind = LT__CPU_MAX;
    j->pre = LT_UNARY_ABS;
    break;
  case LT_REDUCE_SUMSQ:
    j->kind = LT__CPU_SUM;
    j->pre = LT_UNARY_SQUARE;
    break;
  case LT_REDUCE_ARGMAX:
  case LT_REDUCE_ARGMIN: j->is_arg = true; break;
  default: j->kind = LT__CPU_SUM; break;
  }
}

static void build_nests(reduce_job *j) {
  const lt__reduce_step *s = j->step;
  lt__cpu_nest_init(&j->kept, s->rank, s->shape, 3);
  const lt__operand *c = s->has_c ? &s->c : &s->out;
  const lt__operand *ops[3] = {&s->in, &s->out, c};
  for (int q = 0; q < 3; q++) {
    j->kept.offset[q] = q == IN ? 0 : ops[q]->offset;
    if (s->rank) memcpy(j->kept.strides[q], ops[q]->strides, sizeof(int64_t) * (size_t)s->rank);
  }
  lt__cpu_nest_init(&j->red, s->red_rank, s->red_shape, 1);
  j->red.offset[IN] = s->in.offset;
  if (s->red_rank)
    memcpy(j->red.strides[IN], s->in_red_strides, sizeof(int64_t) * (size_t)s->red_rank);
  j->n_out = lt__cpu_nest_numel(&j->kept);
  j->n_red = lt__cpu_nest_numel(&j->red);
  lt__cpu_nest_squeeze(&j->kept);
  lt__cpu_nest_flip_negative(&j->kept, OUT);
  lt__cpu_nest_sort(&j->kept, OUT);
  lt__cpu_nest_fuse(&j->kept);
  if (j->n_red == 0) return;
  lt__cpu_nest_squeeze(&j->red);
  if (!j->is_arg) {
    /* Only the order of argmax's single dim matters (it reports positions). */
    lt__cpu_nest_flip_negative(&j->red, IN);
    lt__cpu_nest_sort(&j->red, IN);
    lt__cpu_nest_fuse(&j->red);
  }
  /* The kept walk starts at 0 for IN; the reduced walk carries the input's offset. */
}

lt_status lt__cpu_reduce(lt_context *ctx, const lt__reduce_step *s) {
  reduce_job j;
  memset(&j, 0, sizeof j);
  j.step = s;
  const lt__cpu_isa *isa = lt__cpu_isa_of(ctx);
  j.k = isa->kernels(s->compute);
  j.k64 = isa->kernels(LT_F64);
  classify(&j);
  build_nests(&j);
  if (j.n_out == 0) return LT_OK;
  if (lt__cpu_compute_is_int(s->compute)) {
    lt__cpu_reduce_int(ctx, &j);
    return LT_OK;
  }
  int64_t work = j.n_out + j.n_red * j.n_out;
  if (lt__cpu_reduce_outer_applies(&j))
    lt__cpu_reduce_outer(ctx, &j, work);
  else
    lt__cpu_reduce_inner(ctx, &j, work);
  return LT_OK;
}
