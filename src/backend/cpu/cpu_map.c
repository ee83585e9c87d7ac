/* Generic strided elementwise map (placeholder engine: correct, odometer order). */
#include "backend/cpu/cpu.h"
#include "backend/cpu/scalar_ops.h"
#include "core/dtype.h"

static double map_one(const lt__map_step *s, const int64_t *off) {
  double acc = s->scalars[0];
  if (s->n_in >= 1) acc *= lt__unary_f64(s->unary[0], lt__load_f64(s->in[0].mem, s->in[0].dtype, off[0]));
  if (s->n_in >= 2)
    acc = lt__binary_f64(s->op_ab, acc,
                         s->scalars[1] * lt__unary_f64(s->unary[1], lt__load_f64(s->in[1].mem, s->in[1].dtype, off[1])));
  if (s->n_in >= 3)
    acc = lt__binary_f64(s->op_abc, acc,
                         s->scalars[2] * lt__unary_f64(s->unary[2], lt__load_f64(s->in[2].mem, s->in[2].dtype, off[2])));
  if (s->compute == LT_F32) acc = (float)acc;
  return acc;
}

lt_status lt__cpu_map(lt_context *ctx, const lt__map_step *s) {
  int64_t numel = 1;
  for (int d = 0; d < s->rank; d++) numel *= s->shape[d];
  int64_t idx[LT_MAX_RANK] = {0};
  int64_t off[4];
  for (int k = 0; k < s->n_in; k++) off[k] = s->in[k].offset;
  off[3] = s->out.offset;
  for (int64_t n = 0; n < numel; n++) {
    lt__store_f64(s->out.mem, s->out.dtype, off[3], map_one(s, off));
    for (int d = s->rank - 1; d >= 0; d--) {
      if (++idx[d] < s->shape[d]) {
        for (int k = 0; k < s->n_in; k++) off[k] += s->in[k].strides[d];
        off[3] += s->out.strides[d];
        break;
      }
      for (int k = 0; k < s->n_in; k++) off[k] -= (s->shape[d] - 1) * s->in[k].strides[d];
      off[3] -= (s->shape[d] - 1) * s->out.strides[d];
      idx[d] = 0;
    }
  }
  return LT_OK;
}
