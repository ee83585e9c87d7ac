/* SPDX-License-Identifier: MIT */
/* The small pieces every pair lowering shares (pair.c, pair_direct.c): mode lookups in a view,
 * step operands over a mode order, and the final map into D. */
#include "lower/pair.h"

#include <string.h>

int64_t lt__mview_stride(const lt__mview *v, int32_t mode) {
  for (int i = 0; i < v->rank; i++)
    if (v->mode[i] == mode) return v->stride[i];
  return 0;
}

bool lt__mview_has(const lt__mview *v, int32_t mode) {
  for (int i = 0; i < v->rank; i++)
    if (v->mode[i] == mode) return true;
  return false;
}

void lt__pair_operand_over(const lt__mview *v, int rank, const int32_t *modes, lt__operand *op) {
  op->mem = NULL;
  op->offset = v->offset;
  op->dtype = v->dtype;
  for (int i = 0; i < rank; i++)
    op->strides[i] = lt__mview_stride(v, modes[i]);
}

/* Output of the final map: D = in0 [* in1] + beta*C, with C = D itself when there is none. */
void lt__pair_add_beta_term(const lt__pair *p, lt__step *s, int slot) {
  lt__map_step *m = &s->u.map;
  const lt__mview *c = p->has_c ? &p->c : &p->d;
  lt__pair_operand_over(c, p->d.rank, p->d.mode, &m->in[slot]);
  m->unary[slot] = p->has_c ? p->unary[2] : LT_UNARY_IDENTITY;
  s->buf[slot] = c->buf;
  s->scalar[slot] = p->beta;
  m->n_in = slot + 1;
  if (slot == 1)
    m->op_ab = LT_BINARY_ADD;
  else
    m->op_abc = LT_BINARY_ADD;
  s->drop_last_if_beta_zero = p->beta == LT__SCALAR_BETA;
}

lt__step *lt__pair_map_into_d(lt__program *prog, const lt__pair *p) {
  lt__step *s = lt__program_add(prog, LT__STEP_MAP);
  if (s == NULL) return NULL;
  lt__map_step *m = &s->u.map;
  m->rank = p->d.rank;
  for (int i = 0; i < p->d.rank; i++)
    m->shape[i] = p->extent[p->d.mode[i]];
  lt__pair_operand_over(&p->d, p->d.rank, p->d.mode, &m->out);
  s->buf[3] = p->d.buf;
  m->compute = p->compute;
  return s;
}
