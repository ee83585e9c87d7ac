/* SPDX-License-Identifier: MIT */
/* Direct strided contraction for tiny problems: no packing, no BLAS call overhead. */
#include "backend/cpu/cpu.h"
#include "core/dtype.h"

/* Advances an odometer over dims [lo, hi) of shape; returns false when it wraps around. */
static bool odometer_next(int lo, int hi, const int64_t *shape, int64_t *idx, int64_t *oa,
                          int64_t *ob, const int64_t *sa, const int64_t *sb) {
  for (int d = hi - 1; d >= lo; d--) {
    if (++idx[d] < shape[d]) {
      *oa += sa[d], *ob += sb[d];
      return true;
    }
    *oa -= (shape[d] - 1) * sa[d], *ob -= (shape[d] - 1) * sb[d];
    idx[d] = 0;
  }
  return false;
}

/* Sum of a*b along the innermost summed dim (d = rank - 1). */
static double inner_products(const lt__contract_step *s, int64_t oa, int64_t ob) {
  int d = s->rank - 1;
  int64_t sa = s->a.strides[d], sb = s->b.strides[d];
  double acc = 0.0;
  /* Accumulating in double is at least as accurate as the compute dtype asks for. */
  for (int64_t i = 0; i < s->shape[d]; i++)
    acc += lt__load_f64(s->a.mem, s->a.dtype, oa + i * sa) *
           lt__load_f64(s->b.mem, s->b.dtype, ob + i * sb);
  return acc;
}

static double reduce_products(const lt__contract_step *s, int64_t oa, int64_t ob) {
  if (s->rank == s->out_rank)
    return lt__load_f64(s->a.mem, s->a.dtype, oa) * lt__load_f64(s->b.mem, s->b.dtype, ob);
  for (int d = s->out_rank; d < s->rank; d++)
    if (s->shape[d] == 0) return 0.0;
  if (s->rank - s->out_rank == 1) return inner_products(s, oa, ob);
  int64_t idx[LT_MAX_RANK];
  for (int d = s->out_rank; d < s->rank - 1; d++)
    idx[d] = 0;
  double acc = 0.0;
  do {
    acc += inner_products(s, oa, ob);
  } while (
      odometer_next(s->out_rank, s->rank - 1, s->shape, idx, &oa, &ob, s->a.strides, s->b.strides));
  return acc;
}

lt_status lt__cpu_contract(lt_context *ctx, const lt__contract_step *s) {
  for (int d = 0; d < s->out_rank; d++)
    if (s->shape[d] == 0) return LT_OK;
  const lt__operand *c = s->has_c ? &s->c : &s->out;
  int64_t idx[LT_MAX_RANK];
  for (int d = 0; d < s->out_rank; d++)
    idx[d] = 0;
  int64_t oa = s->a.offset, ob = s->b.offset;
  int64_t od = s->out.offset, oc = c->offset;
  do {
    double v = s->alpha * reduce_products(s, oa, ob);
    if (s->beta != 0) v += s->beta * lt__load_f64(c->mem, c->dtype, oc);
    lt__store_f64(s->out.mem, s->out.dtype, od, s->compute == LT_F32 ? (double)(float)v : v);
    /* The output offsets move with the same odometer as the inputs. */
    int d = s->out_rank - 1;
    for (; d >= 0; d--) {
      if (++idx[d] < s->shape[d]) {
        oa += s->a.strides[d], ob += s->b.strides[d];
        od += s->out.strides[d], oc += c->strides[d];
        break;
      }
      oa -= (s->shape[d] - 1) * s->a.strides[d], ob -= (s->shape[d] - 1) * s->b.strides[d];
      od -= (s->shape[d] - 1) * s->out.strides[d], oc -= (s->shape[d] - 1) * c->strides[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  } while (true);
  return LT_OK;
}
