/* SPDX-License-Identifier: MIT */
/* See map_rules.h. */
#include "backend/common/map_rules.h"

bool lt__compute_holds(lt_dtype compute, lt_dtype d) {
  size_t bits = lt_dtype_size(d) * 8;
  bool is_float = d == LT_F16 || d == LT_BF16 || d == LT_F32 || d == LT_F64;
  if (compute == LT_I64 || compute == LT_U64) return !is_float;
  if (compute == LT_F64) return is_float || bits <= 32;
  return (is_float && d != LT_F64) || bits <= 16;
}

bool lt__map_is_bitcopy(const lt__map_step *s) {
  return s->n_in == 1 && s->in[0].dtype == s->out.dtype && s->unary[0] == LT_UNARY_IDENTITY &&
         s->scalars[0] == 1.0 && lt__compute_holds(s->compute, s->out.dtype);
}

const lt__map_step *lt__map_without_zero_term(const lt__map_step *s, lt__map_step *tmp) {
  if (s->n_in != 1 || s->scalars[0] != 0.0) return s;
  *tmp = *s;
  tmp->n_in = 0;
  tmp->scalars[0] = 0.0;
  return tmp;
}
